// Drives rpcedge's A2A streams on the 1.0 wire with the A2A JavaScript SDK's
// 1.x client (@a2a-js/sdk 1.3.0, installed as @a2a-js/sdk-v1): the client the
// SDK's ClientFactory builds from the agent card (the JSONRPC interface of
// protocolVersion 1.0, A2A-Version: 1.0 on every request), SendStreamingMessage,
// SubscribeToTask and CancelTask against the demo's skills.
//
// Every event is checked twice: as the SDK parsed it (StreamResponse with its
// payload case), and as it came on the wire, through a fetch that keeps a copy
// of each SSE body. The SDK's parser is lenient (it takes snake_case, numbers
// for enums, ignores unknown members), so the wire copy is held to the 1.0
// shapes strictly: a JSON-RPC response whose result has exactly one of task,
// message, statusUpdate, artifactUpdate; only the members the 1.0 messages
// define (no 0.3 kind or final); TASK_STATE_* and ROLE_* enum names; Parts
// with exactly one of text, raw, url, data; RFC 3339 timestamps.
//
// Prints one JSON line {"failures":[...],...}; exits 1 on a failure.
//
//   node a2a_client_v1.mjs http://127.0.0.1:PORT
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk-v1/client";
import { Role, TaskState, parseSseStream } from "@a2a-js/sdk-v1";

const base = process.argv[2];
const failures = [];
const fail = (what) => failures.push(what);
const short = (v) => JSON.stringify(v)?.slice(0, 300);

// --- The wire copy -----------------------------------------------------------

// wire records every request the SDK sends and, for an SSE answer, the data
// of each event, read from a clone of the response beside the SDK's reader.
const wire = [];
async function recordingFetch(url, init) {
  const rec = { url: String(url), method: init?.method ?? "GET", headers: new Headers(init?.headers) };
  if (typeof init?.body === "string") rec.body = JSON.parse(init.body);
  wire.push(rec);
  const res = await fetch(url, init);
  rec.status = res.status;
  rec.contentType = res.headers.get("content-type") ?? "";
  if (rec.contentType.startsWith("text/event-stream")) {
    const copy = res.clone();
    rec.events = [];
    rec.read = (async () => {
      for await (const ev of parseSseStream(copy)) rec.events.push(ev.data);
    })().catch((e) => fail(`${rec.body?.method}: reading the wire copy: ${e}`));
  }
  return res;
}

// --- The 1.0 shapes, strictly ------------------------------------------------

const states = new Set(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"]);
const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;
const isStr = (v) => typeof v === "string" && v.length > 0;
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// only fails on a member the 1.0 message does not define.
function only(where, v, allowed) {
  if (!isObj(v)) return fail(`${where}: not an object: ${short(v)}`);
  for (const k of Object.keys(v)) if (!allowed.includes(k)) fail(`${where}: member ${k} is not in the 1.0 shape: ${short(v)}`);
}

function wirePart(where, p) {
  only(where, p, ["text", "raw", "url", "data", "metadata", "filename", "mediaType"]);
  const content = ["text", "raw", "url", "data"].filter((k) => p?.[k] !== undefined);
  if (content.length !== 1) fail(`${where}: a Part has exactly one of text, raw, url, data: ${short(p)}`);
  if (p?.text !== undefined && typeof p.text !== "string") fail(`${where}: text ${short(p)}`);
}

function wireParts(where, parts) {
  if (!Array.isArray(parts) || parts.length === 0) return fail(`${where}: parts ${short(parts)}`);
  parts.forEach((p, i) => wirePart(`${where} part ${i}`, p));
}

function wireMessage(where, m, role) {
  only(where, m, ["messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds"]);
  if (!isStr(m?.messageId)) fail(`${where}: messageId ${short(m)}`);
  if (m?.role !== role) fail(`${where}: role ${m?.role}, want ${role}`);
  wireParts(where, m?.parts);
}

function wireStatus(where, st) {
  only(where, st, ["state", "message", "timestamp"]);
  if (!states.has(st?.state)) fail(`${where}: state ${short(st?.state)}`);
  if (st?.timestamp !== undefined && !(rfc3339.test(st.timestamp) && !Number.isNaN(Date.parse(st.timestamp)))) fail(`${where}: timestamp ${st.timestamp}`);
  if (st?.message !== undefined) wireMessage(`${where} message`, st.message, "ROLE_AGENT");
}

function wireArtifact(where, a) {
  only(where, a, ["artifactId", "name", "description", "parts", "metadata", "extensions"]);
  if (!isStr(a?.artifactId)) fail(`${where}: artifactId ${short(a)}`);
  wireParts(where, a?.parts);
}

// wireEvent checks one SSE event's data as a JSON-RPC response to request id
// carrying a 1.0 StreamResponse, and returns the name of its payload.
function wireEvent(where, data, id) {
  let env;
  try {
    env = JSON.parse(data);
  } catch (e) {
    return fail(`${where}: data is not JSON: ${data.slice(0, 200)}`);
  }
  only(where, env, ["jsonrpc", "id", "result"]);
  if (env.jsonrpc !== "2.0" || env.id !== id) fail(`${where}: envelope ${short({ jsonrpc: env.jsonrpc, id: env.id })}, want id ${id}`);
  const r = env.result;
  const keys = isObj(r) ? Object.keys(r) : [];
  if (keys.length !== 1 || !["task", "message", "statusUpdate", "artifactUpdate"].includes(keys[0])) return fail(`${where}: a StreamResponse has exactly one payload: ${short(r)}`);
  const v = r[keys[0]];
  switch (keys[0]) {
    case "task":
      only(where, v, ["id", "contextId", "status", "artifacts", "history", "metadata"]);
      if (!isStr(v?.id) || !isStr(v?.contextId)) fail(`${where}: task ids ${short(v)}`);
      wireStatus(`${where} status`, v?.status);
      (v?.history ?? []).forEach((m, i) => wireMessage(`${where} history ${i}`, m, m?.role === "ROLE_USER" ? "ROLE_USER" : "ROLE_AGENT"));
      (v?.artifacts ?? []).forEach((a, i) => wireArtifact(`${where} artifact ${i}`, a));
      break;
    case "message":
      wireMessage(where, v, "ROLE_AGENT");
      break;
    case "statusUpdate":
      only(where, v, ["taskId", "contextId", "status", "metadata"]);
      if (!isStr(v?.taskId) || !isStr(v?.contextId)) fail(`${where}: statusUpdate ids ${short(v)}`);
      wireStatus(`${where} status`, v?.status);
      break;
    case "artifactUpdate":
      only(where, v, ["taskId", "contextId", "artifact", "append", "lastChunk", "metadata"]);
      if (!isStr(v?.taskId) || !isStr(v?.contextId)) fail(`${where}: artifactUpdate ids ${short(v)}`);
      for (const k of ["append", "lastChunk"]) if (v?.[k] !== undefined && typeof v[k] !== "boolean") fail(`${where}: ${k} ${short(v[k])}`);
      wireArtifact(`${where} artifact`, v?.artifact);
      break;
  }
  return keys[0];
}

// wireStream returns the record of the last request of method, after its
// SSE copy is read, with every event checked; want is the payload order.
async function wireStream(where, method, want) {
  const rec = wire.filter((r) => r.body?.method === method).at(-1);
  if (!rec) return fail(`${where}: no ${method} request on the wire`);
  await rec.read;
  if (rec.status !== 200 || !rec.contentType.startsWith("text/event-stream")) fail(`${where}: answered ${rec.status} ${rec.contentType}`);
  const order = rec.events.map((d, i) => wireEvent(`${where} wire event ${i}`, d, rec.body.id));
  if (want && order.join(" ") !== want) fail(`${where}: wire order ${order.join(" ")}, want ${want}`);
  return rec;
}

// --- The SDK's view ----------------------------------------------------------

const stateName = (s) => TaskState[s] ?? String(s);
const textOf = (parts) => (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const message = (text, messageId) => ({ messageId, role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }] });
// within bounds every stream: a hang fails here, not at the Go test's deadline.
const opts = () => ({ signal: AbortSignal.timeout(20000) });

const factory = () =>
  new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch }),
  });

// 0. The card: the factory picks the JSONRPC interface of version 1.0.
const client = await factory().createFromUrl(base);
const card = await client.getAgentCard();
const iface = (card.supportedInterfaces ?? []).find((i) => i.protocolBinding === "JSONRPC" && i.protocolVersion === "1.0");
if (!iface || !iface.url.endsWith("/a2a")) fail(`card supportedInterfaces ${short(card.supportedInterfaces)}`);
if (card.capabilities?.streaming !== true || card.capabilities?.pushNotifications !== false) fail(`card capabilities ${short(card.capabilities)}`);
for (const id of ["echo", "wait", "stream"]) if (!card.skills?.some((s) => s.id === id)) fail(`card has no skill ${id}`);
if (client.protocolVersion !== "1.0") fail(`client protocolVersion ${client.protocolVersion}`);

// 1. The stream skill: Task (working) first, then chunk and status pairs, the
// last status completed; the chunks rebuild the text.
const chunksN = 4 + Math.floor(Math.random() * 5);
const text = `chunks for the 1.x JS SDK ${Date.now()} ${Math.random().toString(36).slice(2)}`;
const order = [];
let chunks = "";
let task, last;
let k = 0;
for await (const ev of client.sendMessageStream({ message: message(text, `v1-1-${Date.now()}`), metadata: { skillId: "stream", chunks: chunksN, delayMs: 5 } }, opts())) {
  const c = ev.payload?.$case;
  const v = ev.payload?.value;
  order.push(c);
  if (order.length === 1) {
    if (c !== "task" || v.status?.state !== TaskState.TASK_STATE_WORKING) fail(`stream skill first event ${short(ev)}`);
    task = v;
    if (textOf(v.history?.[0]?.parts) !== text || v.history?.[0]?.role !== Role.ROLE_USER) fail(`stream skill history ${short(v.history)}`);
    continue;
  }
  if (v?.taskId !== task?.id || v?.contextId !== task?.contextId) fail(`stream skill ids ${v?.taskId}/${v?.contextId} != ${task?.id}/${task?.contextId}`);
  if (c === "artifactUpdate") {
    if (v.append !== k > 0 || v.lastChunk !== (k === chunksN - 1)) fail(`chunk ${k}: append ${v.append} lastChunk ${v.lastChunk}`);
    if (v.artifact?.artifactId !== "stream") fail(`chunk ${k}: artifactId ${v.artifact?.artifactId}`);
    chunks += textOf(v.artifact?.parts);
    k++;
  } else if (c === "statusUpdate") {
    const want = k === chunksN ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_WORKING;
    if (v.status?.state !== want) fail(`status after chunk ${k}: ${stateName(v.status?.state)}, want ${stateName(want)}`);
    if (v.status?.message?.role !== Role.ROLE_AGENT) fail(`status message ${short(v.status?.message)}`);
  } else fail(`stream skill event ${short(ev)}`);
  last = ev;
}
const wantOrder = ["task", ...Array(chunksN).fill(["artifactUpdate", "statusUpdate"]).flat()].join(" ");
if (order.join(" ") !== wantOrder) fail(`stream skill order: ${order.join(" ")}`);
if (chunks !== text) fail(`stream skill chunks: ${short(chunks)}`);
if (last?.payload?.$case !== "statusUpdate" || last.payload.value.status?.state !== TaskState.TASK_STATE_COMPLETED) fail(`stream skill last event ${short(last)}`);
await wireStream("stream skill", "SendStreamingMessage", wantOrder);

// 2. Echo: a task complete at once is a stream of one Task.
const echoText = `hello ${Date.now()}`;
const echo = [];
for await (const ev of client.sendMessageStream({ message: message(echoText, `v1-2-${Date.now()}`) }, opts())) echo.push(ev);
const e0 = echo[0]?.payload;
if (echo.length !== 1 || e0?.$case !== "task" || e0.value.status?.state !== TaskState.TASK_STATE_COMPLETED || textOf(e0.value.artifacts?.[0]?.parts) !== echoText) fail(`echo stream ${short(echo)}`);
await wireStream("echo", "SendStreamingMessage", "task");

// 2b. SendMessage (not streamed) of the stream skill, whose task stays working
// while its chunks go: with the SDK's own configuration the answer is the
// task once completed (A2A 1.0: without returnImmediately the operation MUST
// wait for a terminal or interrupted state); asked returnImmediately, the
// task as the agent left it, working.
{
  const waited = `waited for ${Date.now()}`;
  const res = await client.sendMessage({ message: message(waited, `v1-2b-${Date.now()}`), metadata: { skillId: "stream", chunks: 3, delayMs: 20 } }, opts());
  // The SDK hands back the Task itself (or the Message) for SendMessage.
  const t = res?.payload?.$case === "task" ? res.payload.value : res;
  if (t?.status?.state !== TaskState.TASK_STATE_COMPLETED || textOf(t.artifacts?.[0]?.parts) !== waited) fail(`SendMessage (SDK defaults): ${short(res)}, want the completed task`);
  const rec = wire.filter((r) => r.body?.method === "SendMessage").at(-1);
  if (!rec || rec.body.params?.configuration?.returnImmediately === true) fail(`SendMessage on the wire: ${short(rec?.body?.params?.configuration)}`);
  const now = await client.sendMessage({ message: message("at once", `v1-2c-${Date.now()}`), metadata: { skillId: "stream", chunks: 3, delayMs: 20 }, configuration: { returnImmediately: true } }, opts());
  if ((now?.payload?.$case === "task" ? now.payload.value : now)?.status?.state !== TaskState.TASK_STATE_WORKING) fail(`SendMessage returnImmediately: ${short(now)}, want the working task`);
}

// 3. The wait skill: the sending stream and a subscription from the same
// client both stay open until a CancelTask from another client; both end
// with a canceled status.
let gotTask;
const first = new Promise((resolve) => (gotTask = resolve));
const sender = (async () => {
  const seen = [];
  for await (const ev of client.sendMessageStream({ message: message("hold", `v1-3-${Date.now()}`), metadata: { skillId: "wait", seconds: 60 } }, opts())) {
    seen.push(ev);
    if (seen.length === 1) gotTask(ev.payload?.value?.id);
  }
  return seen;
})().catch((e) => (gotTask(undefined), fail(`wait stream: ${e}`), []));
const waitId = await first;
const sendRec = wire.filter((r) => r.body?.method === "SendStreamingMessage").at(-1);
const sub = [];
const other = await factory().createFromUrl(base);
let canceled;
for await (const ev of client.resubscribeTask({ id: waitId }, opts())) {
  const c = ev.payload?.$case;
  const v = ev.payload?.value;
  sub.push(c);
  if (sub.length === 1) {
    if (c !== "task" || v.id !== waitId || v.status?.state !== TaskState.TASK_STATE_WORKING) fail(`subscribe first event ${short(ev)}`);
    canceled = other.cancelTask({ id: waitId }, opts()).then(
      (t) => t.status?.state === TaskState.TASK_STATE_CANCELED || fail(`CancelTask answered ${short(t)}`),
      (e) => fail(`CancelTask: ${e}`),
    );
  } else if (c !== "statusUpdate" || v.status?.state !== TaskState.TASK_STATE_CANCELED || v.taskId !== waitId) {
    fail(`subscribe event ${short(ev)}`);
  }
}
await canceled;
if (sub.join(" ") !== "task statusUpdate") fail(`subscribe order: ${sub.join(" ")}`);
const sent = await sender;
const sentOrder = sent.map((ev) => ev.payload?.$case).join(" ");
if (sentOrder !== "task statusUpdate" || sent[0]?.payload?.value?.status?.state !== TaskState.TASK_STATE_WORKING || sent[1]?.payload?.value?.status?.state !== TaskState.TASK_STATE_CANCELED) fail(`wait stream: ${short(sent)}`);
await wireStream("subscribe", "SubscribeToTask", "task statusUpdate");
if (sendRec) {
  await sendRec.read;
  const o = sendRec.events.map((d, i) => wireEvent(`wait wire event ${i}`, d, sendRec.body.id)).join(" ");
  if (o !== "task statusUpdate") fail(`wait wire order ${o}`);
}

// 3b. Joining the stream skill midway: the subscription's Task carries the
// artifact as far as it has come; the chunks after it append the rest, none
// lost or repeated between the snapshot and the events.
const midN = 8;
const midText = `joined midway ${Date.now()} ${Math.random().toString(36).slice(2)}`;
let joined;
const joinedAt = new Promise((resolve) => (joined = resolve));
const midSender = (async () => {
  let n = 0;
  for await (const ev of client.sendMessageStream({ message: message(midText, `v1-3b-${Date.now()}`), metadata: { skillId: "stream", chunks: midN, delayMs: 150 } }, opts())) {
    if (++n === 4) joined(ev.payload?.value?.taskId); // after the second chunk and its status
  }
  return n;
})().catch((e) => (joined(undefined), fail(`midway sender: ${e}`), 0));
const midId = await joinedAt;
const mid = [];
let midSoFar = "";
let midLast;
// 150 ms between chunks: the subscription has about 0.9 s to arrive before
// the task completes, on a loaded machine too.
try {
  for await (const ev of other.resubscribeTask({ id: midId }, opts())) {
    const c = ev.payload?.$case;
    const v = ev.payload?.value;
    mid.push(c);
    midLast = v?.status?.state;
    if (mid.length === 1) {
      if (c !== "task" || v.id !== midId || v.status?.state !== TaskState.TASK_STATE_WORKING) fail(`midway first event ${short(ev)}`);
      midSoFar = textOf(v.artifacts?.find((a) => a.artifactId === "stream")?.parts);
      if (!midText.startsWith(midSoFar) || midSoFar === "") fail(`midway snapshot artifact ${short(v.artifacts)}`);
    } else if (c === "artifactUpdate") {
      if (v.append !== true) fail(`midway chunk without append ${short(v)}`);
      midSoFar += textOf(v.artifact?.parts);
    } else if (c !== "statusUpdate") fail(`midway event ${short(ev)}`);
    else if (v.status?.state !== TaskState.TASK_STATE_WORKING && v.status?.state !== TaskState.TASK_STATE_COMPLETED) fail(`midway status ${short(v)}`);
  }
} catch (e) {
  fail(`midway subscribe: ${e.name} ${e.message}`);
}
if (mid.at(-1) !== "statusUpdate" || midLast !== TaskState.TASK_STATE_COMPLETED) fail(`midway order ${mid.join(" ")}, last state ${stateName(midLast)}`);
if (midSoFar !== midText) fail(`midway text ${short(midSoFar)}, want ${short(midText)}`);
if ((await midSender) !== 1 + 2 * midN) fail(`midway sender saw ${await midSender} events`);
await wireStream("midway", "SubscribeToTask");

// 4. Refusals, as the SDK's typed errors: subscribing to a canceled and to a
// completed task (UnsupportedOperationError, -32004), to an unknown task
// (TaskNotFoundError, -32001); canceling a canceled task
// (TaskNotCancelableError, -32002).
const refusals = [];
const refused = async (what, call, name, code) => {
  try {
    const r = call();
    if (r[Symbol.asyncIterator]) for await (const ev of r) fail(`${what}: event ${short(ev)}`);
    else fail(`${what}: answered ${short(await r)}`);
    fail(`${what}: no error`);
  } catch (e) {
    refusals.push(`${what}: ${e.name} ${e.envelopeCode}`);
    if (e.name !== name || e.envelopeCode !== code) fail(`${what}: ${e.name} ${e.envelopeCode} ${e.message}, want ${name} ${code}`);
  }
  const rec = wire.at(-1);
  if (rec.status !== 200 || !rec.contentType.startsWith("application/json")) fail(`${what}: answered ${rec.status} ${rec.contentType}`);
};
await refused("subscribe canceled", () => client.resubscribeTask({ id: waitId }, opts()), "UnsupportedOperationError", -32004);
await refused("subscribe completed", () => client.resubscribeTask({ id: task?.id }, opts()), "UnsupportedOperationError", -32004);
await refused("subscribe unknown", () => client.resubscribeTask({ id: `no-such-task-${Date.now()}` }, opts()), "TaskNotFoundError", -32001);
await refused("cancel canceled", () => other.cancelTask({ id: waitId }, opts()), "TaskNotCancelableError", -32002);

// 5. The requests: A2A-Version 1.0 on each, the 1.0 method names.
const methods = [];
for (const r of wire) {
  if (r.headers.get("A2A-Version") !== "1.0") fail(`${r.method} ${r.url}: A2A-Version ${r.headers.get("A2A-Version")}`);
  if (r.body) methods.push(r.body.method);
}
const wantMethods = new Set(["SendStreamingMessage", "SendMessage", "SubscribeToTask", "CancelTask"]);
if (methods.some((m) => !wantMethods.has(m)) || wantMethods.size !== new Set(methods).size) fail(`methods on the wire: ${methods.join(" ")}`);

const requests = wire.length;
const wireEvents = wire.reduce((n, r) => n + (r.events?.length ?? 0), 0);

// 6. The SDK's v0.3 compatibility layer (legacyCompat) on an interface of
// protocolVersion 0.3: A2A-Version 0.3, message/stream and tasks/resubscribe,
// the 0.3 events translated to the SDK's 1.0 types; a refusal read as the
// typed error (the 0.3.14 SDK reads it only as a Content-Type mismatch).
const legacy = await new ClientFactory({
  transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch, legacyCompat: { enabled: true } })],
}).createFromAgentCard({ ...card, supportedInterfaces: [{ url: iface?.url ?? `${base}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" }] });
if (legacy.protocolVersion !== "0.3") fail(`legacy client protocolVersion ${legacy.protocolVersion}`);
const legacyText = `through the compat layer ${Date.now()}`;
const legacyOrder = [];
let legacyChunks = "";
let legacyTask;
for await (const ev of legacy.sendMessageStream({ message: message(legacyText, `v1-6-${Date.now()}`), metadata: { skillId: "stream", chunks: 3, delayMs: 5 } }, opts())) {
  const c = ev.payload?.$case;
  legacyOrder.push(c);
  if (c === "task") legacyTask = ev.payload.value;
  if (c === "artifactUpdate") legacyChunks += textOf(ev.payload.value.artifact?.parts);
  if (c === "statusUpdate" && legacyOrder.length === 7 && ev.payload.value.status?.state !== TaskState.TASK_STATE_COMPLETED) fail(`legacy last status ${short(ev)}`);
}
if (legacyOrder.join(" ") !== "task artifactUpdate statusUpdate artifactUpdate statusUpdate artifactUpdate statusUpdate") fail(`legacy order: ${legacyOrder.join(" ")}`);
if (legacyChunks !== legacyText) fail(`legacy chunks: ${short(legacyChunks)}`);
const lrec = wire.at(-1);
await lrec.read;
const lkinds = (lrec.events ?? []).map((d) => JSON.parse(d).result?.kind).join(" ");
if (lrec.body?.method !== "message/stream" || lrec.headers.get("A2A-Version") !== "0.3" || lkinds !== "task artifact-update status-update artifact-update status-update artifact-update status-update") fail(`legacy wire: ${lrec.body?.method} A2A-Version ${lrec.headers.get("A2A-Version")} kinds ${lkinds}`);
await refused("legacy subscribe completed", () => legacy.resubscribeTask({ id: legacyTask?.id }, opts()), "UnsupportedOperationError", -32004);
if (wire.at(-1).body?.method !== "tasks/resubscribe") fail(`legacy subscribe: method ${wire.at(-1).body?.method}`);

console.log(JSON.stringify({ failures, requests, wireEvents, streamOrder: order.join(" "), subscribe: sub.join(" "), midway: mid.join(" "), refusals, legacyOrder: legacyOrder.join(" ") }));
process.exit(failures.length ? 1 : 0);
