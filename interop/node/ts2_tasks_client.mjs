// Drives the tasks extension (SEP-2663, "io.modelcontextprotocol/tasks",
// MCP 2026-07-28) of cmd/rpcedge -demo conformance from Node, over real
// HTTP, with the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in package-lock.json) pinned to
// 2026-07-28.
//
// The SDK has no task API: its 2026-07-28 codec rejects a tools/call
// answered with resultType "task" (SdkError UNSUPPORTED_RESULT_TYPE), and it
// offers nothing to poll, answer or cancel a task (the experimental tasks of
// @modelcontextprotocol/sdk 1.32.2 are the 2025-11-25 design: tasks/result,
// tasks/list, no tasks/update, no resultType). What it does know of
// SEP-2663 is the transport's side: for tasks/get, tasks/update and
// tasks/cancel sent with client.request it sets Mcp-Name to params.taskId.
// So the calls that create tasks are plain fetch POSTs with the 2026-07-28
// headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) and params._meta
// (protocol version, client info, clientCapabilities.extensions); tasks/get,
// tasks/update and tasks/cancel go through the SDK's client.request (its
// envelope declares the extension: Client's capabilities), with a pass-through
// result schema; the checks are this script's.
//
// Flows (run concurrently; each task polled with tasks/get, honouring
// pollIntervalMs up to 1 s, at most 30 polls and within the script's 20 s):
// slow_compute (0.3 s) to completed; confirm_delete's elicitation answered
// through tasks/update (a key not asked for first, ignored), accepted and
// declined; a 30 s slow_compute cancelled; failing_job (completed, isError)
// and protocol_error_job (failed, -32603 inlined); and the refusals: an
// unknown task -32602, tasks methods and a task-required tool without the
// extension -32021 (HTTP 400), an Mcp-Name that is not the taskId -32020,
// tasks/list -32601 (HTTP 404). Run from the directory install.sh prints
// (so the client resolves), with the endpoint URL as the only argument.
// Prints one JSON line of what it saw; exits 1 when a check fails.
import { isDeepStrictEqual } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = process.argv[2];
const version = "2026-07-28";
const EXT = "io.modelcontextprotocol/tasks";
const started = Date.now();
const deadline = started + 20_000; // every loop stops by then
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  return ok;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const j = (v) => JSON.stringify(v);

// A Standard Schema that passes any result: the SDK has no schema for the
// extension's results, and the checks below read them.
const anyResult = { "~standard": { version: 1, vendor: "rpcedge-interop", validate: (value) => ({ value }) } };
const opts = { timeout: 5000 };

const withTasks = { elicitation: { form: {} }, extensions: { [EXT]: {} } };
const withoutTasks = { elicitation: { form: {} } };

// Every POST the SDK clients send: method, Mcp-Method, Mcp-Name, the
// body's taskId, the answer's status.
const posts = [];
const recordingFetch = async (input, init = {}) => {
  if ((init.method ?? "GET") !== "POST") return fetch(input, init);
  const headers = new Headers(init.headers);
  let body = {};
  try {
    body = JSON.parse(init.body);
  } catch {}
  const post = { method: body.method, mcpMethod: headers.get("mcp-method"), mcpName: headers.get("mcp-name"), taskId: body.params?.taskId };
  posts.push(post);
  const response = await fetch(input, { ...init, signal: init.signal ?? AbortSignal.timeout(5000) });
  post.status = response.status;
  return response;
};

async function connect(name, capabilities) {
  const client = new Client({ name, version: "1.0.0" }, { versionNegotiation: { mode: { pin: version } }, capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch }));
  return client;
}
const sdk = await connect("rpcedge-interop-ts2-tasks", withTasks);
const plain = await connect("rpcedge-interop-ts2-no-tasks", withoutTasks);
const seen = { protocolVersion: sdk.getNegotiatedProtocolVersion?.(), serverExtensions: sdk.getServerCapabilities()?.extensions };
check(seen.protocolVersion === version, `negotiated ${seen.protocolVersion}, want ${version}`);
check(isDeepStrictEqual(Object.keys(seen.serverExtensions ?? {}), [EXT]), `server/discover extensions ${j(seen.serverExtensions)}, want ${EXT}`);

// raw POSTs a request with plain fetch, as a client without a task API
// would: the 2026-07-28 headers and _meta envelope, the extension declared
// unless ext is false, Mcp-Name the tool's name or the taskId unless given.
let rawID = 1;
async function raw(method, params, { ext = true, mcpName } = {}) {
  const headers = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": version,
    "Mcp-Method": method,
  };
  const name = mcpName ?? (method === "tools/call" ? params.name : params.taskId);
  if (name !== undefined) headers["Mcp-Name"] = name;
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "rpcedge-interop-fetch", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": ext ? withTasks : withoutTasks,
  };
  const id = rawID++;
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: j({ jsonrpc: "2.0", id, method, params: { ...params, _meta } }),
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  let msg;
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const m = JSON.parse(line.slice(5));
      if (m.id === id) msg = m;
    }
  } else {
    msg = JSON.parse(text);
  }
  return { status: response.status, msg };
}

// sdkErr runs an SDK call that must fail and returns its code.
async function sdkErr(f) {
  try {
    const r = await f();
    return { ok: r };
  } catch (e) {
    return { code: e?.code, message: String(e?.message ?? e) };
  }
}

const isoTime = (s) => typeof s === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s));
const textOf = (result) => (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");

// create starts a task with a raw tools/call and checks the
// CreateTaskResult.
async function create(what, name, args) {
  const { status, msg } = await raw("tools/call", { name, arguments: args });
  const r = msg?.result;
  check(status === 200, `${what}: tools/call HTTP ${status}, want 200: ${j(msg)}`);
  if (!check(r?.resultType === "task", `${what}: tools/call answered ${j(msg)}, want a CreateTaskResult`)) return undefined;
  check(typeof r.taskId === "string" && r.taskId.length > 0, `${what}: taskId ${j(r.taskId)}`);
  check(r.status === "working", `${what}: created ${r.status}, want working`);
  check(Number.isInteger(r.pollIntervalMs) && r.pollIntervalMs > 0, `${what}: pollIntervalMs ${r.pollIntervalMs}`);
  check(Number.isInteger(r.ttlMs) && r.ttlMs > 0, `${what}: ttlMs ${r.ttlMs}`);
  check(isoTime(r.createdAt) && isoTime(r.lastUpdatedAt), `${what}: times ${r.createdAt} ${r.lastUpdatedAt}`);
  check(!("content" in r) && !("result" in r) && !("error" in r), `${what}: CreateTaskResult carries an outcome: ${j(r)}`);
  return r;
}

const getTask = (taskId, client = sdk) => client.request({ method: "tasks/get", params: { taskId } }, anyResult, opts);
const updateTask = (taskId, inputResponses) => sdk.request({ method: "tasks/update", params: { taskId, inputResponses } }, anyResult, opts);
const cancelTask = (taskId) => sdk.request({ method: "tasks/cancel", params: { taskId } }, anyResult, opts);
const emptyResult = (r) => Object.keys(r ?? {}).every((k) => k === "_meta");

// poll gets the task until until(task) holds: the first get at once, then
// every pollIntervalMs (50 ms to 1 s), at most 30 gets, within the deadline.
// Statuses seen (the CreateTaskResult's first) are appended to seq without
// repeats, statusMessages of a working task added to messages.
async function poll(what, taskId, seq, until, messages = new Set()) {
  for (let i = 0; i < 30 && Date.now() < deadline; i++) {
    const t = await getTask(taskId);
    if (seq.at(-1) !== t.status) seq.push(t.status);
    check(t.taskId === taskId, `${what}: tasks/get answered task ${t.taskId}, want ${taskId}`);
    if (t.status === "working" && t.statusMessage !== undefined) messages.add(t.statusMessage);
    if (until(t)) return t;
    await sleep(Math.min(Math.max(t.pollIntervalMs ?? 1000, 50), 1000));
  }
  check(false, `${what}: task ${taskId} did not get there within 30 polls / the deadline; statuses ${seq}`);
  return undefined;
}
const terminal = (t) => ["completed", "failed", "cancelled"].includes(t.status);

// completes runs a tool as a task to its end and checks the statuses and
// the outcome.
async function completes(what, name, args, wantSeq, want) {
  const out = { what };
  const c = await create(what, name, args);
  if (!c) return out;
  const seq = [c.status];
  const messages = new Set();
  const t = await poll(what, c.taskId, seq, terminal, messages);
  out.statuses = seq;
  out.statusMessages = [...messages];
  if (!t) return out;
  check(isDeepStrictEqual(seq, wantSeq), `${what}: statuses ${j(seq)}, want ${j(wantSeq)}`);
  check(Date.parse(t.lastUpdatedAt) >= Date.parse(t.createdAt), `${what}: lastUpdatedAt ${t.lastUpdatedAt} before createdAt ${t.createdAt}`);
  check(t.createdAt === c.createdAt, `${what}: createdAt changed from ${c.createdAt} to ${t.createdAt}`);
  out.text = textOf(t.result);
  out.isError = t.result?.isError === true;
  out.error = t.error;
  want(t, out);
  return out;
}

async function slowFlow() {
  return completes("slow_compute", "slow_compute", { seconds: 0.3, label: "interop" }, ["working", "completed"], (t, out) => {
    check(out.text === "computed interop in 0.3s" && !out.isError, `slow_compute: result ${j(t.result)}`);
    check(t.error === undefined && t.inputRequests === undefined, `slow_compute: completed with ${j(t)}`);
    for (const m of out.statusMessages) check(m === "computing interop", `slow_compute: statusMessage ${j(m)}`);
  });
}

async function failingFlow() {
  return completes("failing_job", "failing_job", {}, ["working", "completed"], (t, out) => {
    check(out.isError && out.text === "the job failed: no such input", `failing_job: result ${j(t.result)}, want isError`);
    check(t.error === undefined, `failing_job: error ${j(t.error)}, a tool's failure is a completed task`);
  });
}

async function protocolErrorFlow() {
  return completes("protocol_error_job", "protocol_error_job", {}, ["working", "failed"], (t) => {
    check(t.error?.code === -32603 && t.error?.message === "the job's backend answered garbage", `protocol_error_job: error ${j(t.error)}`);
    check(t.result === undefined, `protocol_error_job: failed with a result ${j(t.result)}`);
  });
}

// confirmFlow answers confirm_delete's elicitation through tasks/update.
async function confirmFlow(filename, confirm, wantText) {
  const what = `confirm_delete ${filename}`;
  const out = { what };
  const c = await create(what, "confirm_delete", { filename });
  if (!c) return out;
  const seq = [c.status];
  let t = await poll(what, c.taskId, seq, (t) => t.status !== "working");
  if (!t) return (out.statuses = seq), out;
  check(t.status === "input_required", `${what}: ${t.status}, want input_required: ${j(t)}`);
  const ask = t.inputRequests?.confirm_delete;
  check(isDeepStrictEqual(Object.keys(t.inputRequests ?? {}), ["confirm_delete"]), `${what}: inputRequests ${j(t.inputRequests)}`);
  check(
    ask?.method === "elicitation/create" && ask?.params?.message === `Delete ${filename}?` && ask?.params?.requestedSchema?.properties?.confirm?.type === "boolean",
    `${what}: input request ${j(ask)}`,
  );
  check(t.result === undefined && t.error === undefined, `${what}: input_required with an outcome ${j(t)}`);
  // An answer to a key that was not asked for is ignored.
  const u0 = await updateTask(c.taskId, { something_else: { action: "accept", content: { confirm: true } } });
  check(emptyResult(u0), `${what}: tasks/update answered ${j(u0)}, want an empty result`);
  t = await getTask(c.taskId);
  check(t.status === "input_required" && ask !== undefined && isDeepStrictEqual(t.inputRequests?.confirm_delete, ask), `${what}: after an answer to no request: ${j(t)}`);
  const u = await updateTask(c.taskId, { confirm_delete: { action: "accept", content: { confirm } } });
  check(emptyResult(u), `${what}: tasks/update answered ${j(u)}, want an empty result`);
  t = await poll(what, c.taskId, seq, terminal);
  out.statuses = seq;
  if (!t) return out;
  out.text = textOf(t.result);
  check(
    isDeepStrictEqual(seq, ["working", "input_required", "completed"]) || isDeepStrictEqual(seq, ["working", "input_required", "working", "completed"]),
    `${what}: statuses ${j(seq)}`,
  );
  check(out.text === wantText && t.result?.isError !== true, `${what}: result ${j(t.result)}, want ${wantText}`);
  check(t.inputRequests === undefined, `${what}: completed with inputRequests ${j(t.inputRequests)}`);
  return out;
}

// cancelFlow cancels a 30 s slow_compute while it works.
async function cancelFlow() {
  const what = "cancel slow_compute";
  const out = { what };
  const c = await create(what, "slow_compute", { seconds: 30, label: "long" });
  if (!c) return out;
  const seq = [c.status];
  let t = await getTask(c.taskId);
  seq.push(t.status);
  check(t.status === "working", `${what}: before the cancel ${t.status}, want working`);
  const r = await cancelTask(c.taskId);
  check(emptyResult(r), `${what}: tasks/cancel answered ${j(r)}, want an empty result`);
  t = await getTask(c.taskId);
  seq.push(t.status);
  out.afterCancel = t;
  await sleep(300);
  const later = await getTask(c.taskId);
  seq.push(later.status);
  check(
    later.status === "cancelled" && later.result === undefined && later.error === undefined,
    `${what}: 300 ms after the cancel ${j(later)}, want cancelled without an outcome`,
  );
  const again = await cancelTask(c.taskId);
  check(emptyResult(again), `${what}: a second tasks/cancel answered ${j(again)}, want an empty result`);
  const collapsed = seq.filter((s, i) => i === 0 || seq[i - 1] !== s);
  check(isDeepStrictEqual(collapsed, ["working", "cancelled"]), `${what}: statuses ${j(seq)}`);
  check(Date.now() - Date.parse(c.createdAt) < 10_000, `${what}: took too long`);
  out.statuses = collapsed;
  out.statusMessageAfterCancel = later.statusMessage;
  return out;
}

// refusals: the SDK's own calls and raw POSTs the server must refuse.
async function refusals(aTaskId) {
  const out = {};
  out.unknownGet = await sdkErr(() => getTask("no-such-task"));
  out.unknownUpdate = await sdkErr(() => updateTask("no-such-task", { x: { action: "decline" } }));
  out.unknownCancel = await sdkErr(() => cancelTask("no-such-task"));
  for (const k of ["unknownGet", "unknownUpdate", "unknownCancel"]) check(out[k].code === -32602, `${k}: ${j(out[k])}, want -32602`);

  // Without the extension: the tasks methods, even on an existing task,
  // and the task-required tool.
  out.noExtGet = await sdkErr(() => getTask(aTaskId, plain));
  out.noExtCall = await sdkErr(() => plain.callTool({ name: "failing_job", arguments: {} }, undefined, opts));
  for (const k of ["noExtGet", "noExtCall"]) check(out[k].code === -32021, `${k}: ${j(out[k])}, want -32021`);
  const rawGet = await raw("tasks/get", { taskId: aTaskId }, { ext: false });
  const rawCall = await raw("tools/call", { name: "failing_job", arguments: {} }, { ext: false });
  out.noExtRaw = [rawGet.status, rawGet.msg?.error?.code, rawCall.status, rawCall.msg?.error?.code];
  check(isDeepStrictEqual(out.noExtRaw, [400, -32021, 400, -32021]), `without the extension: HTTP status and codes ${j(out.noExtRaw)}, want 400 -32021 twice`);
  check(
    isDeepStrictEqual(rawCall.msg?.error?.data, { requiredCapabilities: { extensions: { [EXT]: {} } } }),
    `failing_job without the extension: data ${j(rawCall.msg?.error?.data)}`,
  );

  // Mcp-Name must be the taskId; tasks/list is gone.
  const mismatch = await raw("tasks/get", { taskId: aTaskId }, { mcpName: aTaskId + "x" });
  const list = await raw("tasks/list", {});
  out.mismatch = [mismatch.status, mismatch.msg?.error?.code];
  out.tasksList = [list.status, list.msg?.error?.code];
  check(isDeepStrictEqual(out.mismatch, [400, -32020]), `Mcp-Name not the taskId: ${j(mismatch)}`);
  check(isDeepStrictEqual(out.tasksList, [404, -32601]), `tasks/list: ${j(list)}`);

  // Calls answered on their request: a client without the extension gets
  // slow_compute's result (no task); 0 s is the immediate-result shortcut
  // even with it; greet has no task.
  const inline = await sdkErr(() => plain.callTool({ name: "slow_compute", arguments: { seconds: 0.2, label: "inline" } }, undefined, opts));
  const zero = await sdkErr(() => sdk.callTool({ name: "slow_compute", arguments: { seconds: 0 } }, undefined, opts));
  const greet = await sdkErr(() => sdk.callTool({ name: "greet", arguments: { name: "Ada" } }, undefined, opts));
  out.inline = [textOf(inline.ok), textOf(zero.ok), textOf(greet.ok)];
  check(isDeepStrictEqual(out.inline, ["computed inline in 0.2s", "computed job in 0s", "Hello, Ada!"]), `calls without a task: ${j([inline, zero, greet])}`);

  // The SDK itself: a call answered with a task is an error to it.
  out.sdkTaskCall = await sdkErr(() => sdk.callTool({ name: "slow_compute", arguments: { seconds: 0.1, label: "sdk" } }, undefined, opts));
  check(
    out.sdkTaskCall.code === "UNSUPPORTED_RESULT_TYPE",
    `the SDK's callTool on a task: ${j(out.sdkTaskCall)}; if the SDK now takes task results, drive the flows through its task API`,
  );
  return out;
}

let summary;
try {
  // A task for the refusals to name, then everything at once.
  const a = await create("refusals' task", "slow_compute", { seconds: 0.1, label: "target" });
  const [slow, confirmed, declined, cancelled, failing, protocolError, refused] = await Promise.all([
    slowFlow(),
    confirmFlow("notes.txt", true, "deleted notes.txt"),
    confirmFlow("keep.txt", false, "kept keep.txt"),
    cancelFlow(),
    failingFlow(),
    protocolErrorFlow(),
    refusals(a?.taskId ?? "missing"),
  ]);
  // Every tasks/* POST the SDK sent named its task in Mcp-Name.
  const taskPosts = posts.filter((p) => p.method?.startsWith("tasks/"));
  for (const p of taskPosts) {
    check(p.mcpMethod === p.method && p.mcpName === p.taskId, `the SDK sent ${p.method} with Mcp-Method ${p.mcpMethod}, Mcp-Name ${p.mcpName}, taskId ${p.taskId}`);
  }
  check(taskPosts.length >= 20, `only ${taskPosts.length} tasks/* POSTs from the SDK`);
  summary = { ...seen, flows: { slow, confirmed, declined, cancelled, failing, protocolError }, refusals: refused, sdkTaskPosts: taskPosts.length };
} catch (e) {
  check(false, `unexpected: ${e?.stack ?? e}`);
  summary = { ...seen };
}
await Promise.allSettled([sdk.close(), plain.close()]);
summary.elapsedMs = Date.now() - started;
summary.failures = failures;
console.log(j(summary));
process.exit(failures.length === 0 ? 0 : 1);
