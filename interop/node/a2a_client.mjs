// Drives rpcedge's A2A streams with the A2A JavaScript SDK's client
// (@a2a-js/sdk 0.3, JSON-RPC, A2A 0.3 shapes): sendMessageStream and
// resubscribeTask against the demo's skills, checking every event against
// the 0.3 shapes (kind-tagged Task, status-update with its final flag,
// artifact-update with append and lastChunk) and the order the spec asks
// for. Prints one JSON line {"failures":[...],"events":N,...}; exits 1 on a
// failure.
//
//   node a2a_client.mjs http://127.0.0.1:PORT
import { A2AClient } from "@a2a-js/sdk/client";

const base = process.argv[2];
const failures = [];
const fail = (what) => failures.push(what);
let events = 0;

const states = new Set(["submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"]);
const isStr = (v) => typeof v === "string" && v.length > 0;
const iso = (v) => typeof v === "string" && !Number.isNaN(Date.parse(v));

function checkStatus(where, st) {
  if (!st || !states.has(st.state)) fail(`${where}: status.state ${JSON.stringify(st)}`);
  if (st && st.timestamp !== undefined && !iso(st.timestamp)) fail(`${where}: status.timestamp ${st.timestamp}`);
  if (st && st.message && (st.message.kind !== "message" || st.message.role !== "agent")) fail(`${where}: status.message ${JSON.stringify(st.message)}`);
}

function checkParts(where, parts) {
  if (!Array.isArray(parts) || parts.length === 0) return fail(`${where}: parts ${JSON.stringify(parts)}`);
  for (const p of parts) {
    if (!["text", "file", "data"].includes(p.kind)) fail(`${where}: part kind ${JSON.stringify(p)}`);
    if (p.kind === "text" && typeof p.text !== "string") fail(`${where}: text part ${JSON.stringify(p)}`);
  }
}

// check validates one stream event in the 0.3 shape and returns its kind.
function check(where, ev) {
  events++;
  switch (ev.kind) {
    case "task":
      if (!isStr(ev.id) || !isStr(ev.contextId)) fail(`${where}: task ids ${JSON.stringify(ev)}`);
      checkStatus(where, ev.status);
      for (const m of ev.history ?? []) {
        if (m.kind !== "message" || !isStr(m.messageId)) fail(`${where}: history ${JSON.stringify(m)}`);
        checkParts(`${where} history`, m.parts);
      }
      for (const a of ev.artifacts ?? []) checkParts(`${where} artifact`, a.parts);
      break;
    case "message":
      if (!isStr(ev.messageId) || ev.role !== "agent") fail(`${where}: message ${JSON.stringify(ev)}`);
      checkParts(where, ev.parts);
      break;
    case "status-update":
      if (!isStr(ev.taskId) || !isStr(ev.contextId) || typeof ev.final !== "boolean") fail(`${where}: status-update ${JSON.stringify(ev)}`);
      checkStatus(where, ev.status);
      break;
    case "artifact-update":
      if (!isStr(ev.taskId) || !isStr(ev.contextId) || !ev.artifact || !isStr(ev.artifact.artifactId)) fail(`${where}: artifact-update ${JSON.stringify(ev)}`);
      if (ev.append !== undefined && typeof ev.append !== "boolean") fail(`${where}: append ${ev.append}`);
      if (ev.lastChunk !== undefined && typeof ev.lastChunk !== "boolean") fail(`${where}: lastChunk ${ev.lastChunk}`);
      checkParts(where, ev.artifact?.parts);
      break;
    default:
      fail(`${where}: unknown event ${JSON.stringify(ev)}`);
  }
  return ev.kind;
}

const message = (text, messageId) => ({ kind: "message", role: "user", messageId, parts: [{ kind: "text", text }] });

const client = await A2AClient.fromCardUrl(`${base}/.well-known/agent-card.json`);
const card = await client.getAgentCard();
if (card.capabilities?.streaming !== true || card.capabilities?.pushNotifications !== false) fail(`card capabilities ${JSON.stringify(card.capabilities)}`);

// 1. The stream skill: task, then chunk / status pairs, then completed.
const text = `chunks for the JS SDK ${Date.now()}`;
const order = [];
let chunks = "";
let taskId, last;
let k = 0;
for await (const ev of client.sendMessageStream({ message: message(text, `js-1-${Date.now()}`), metadata: { skillId: "stream", chunks: 6, delayMs: 10 } })) {
  const kind = check("stream skill", ev);
  order.push(kind);
  if (kind === "task") taskId = ev.id;
  else if (ev.taskId !== taskId) fail(`stream skill: taskId ${ev.taskId} != ${taskId}`);
  if (kind === "artifact-update") {
    if (ev.append !== k > 0 || ev.lastChunk !== (k === 5)) fail(`chunk ${k}: append ${ev.append} lastChunk ${ev.lastChunk}`);
    chunks += ev.artifact.parts.map((p) => p.text).join("");
    k++;
  }
  if (kind === "status-update" && ev.final !== (ev.status.state === "completed")) fail(`status ${ev.status.state} final ${ev.final}`);
  last = ev;
}
const wantOrder = ["task", ...Array(5).fill(["artifact-update", "status-update"]).flat(), "artifact-update", "status-update"].join(" ");
if (order.join(" ") !== wantOrder) fail(`stream skill order: ${order.join(" ")}`);
if (chunks !== text) fail(`stream skill chunks: ${JSON.stringify(chunks)}`);
if (last?.kind !== "status-update" || last.status.state !== "completed" || last.final !== true) fail(`stream skill last event ${JSON.stringify(last)}`);

// 2. Echo: a task complete at once is a stream of one event.
const echo = [];
for await (const ev of client.sendMessageStream({ message: message("hello", `js-2-${Date.now()}`) })) echo.push(ev);
if (echo.length !== 1 || check("echo", echo[0]) !== "task" || echo[0].status.state !== "completed" || echo[0].artifacts?.[0]?.parts?.[0]?.text !== "hello") fail(`echo stream ${JSON.stringify(echo)}`);

// 3. The wait skill: resubscribe to it, cancel it from another client, see
// the stream end with canceled.
let waitId;
const first = client.sendMessageStream({ message: message("hold", `js-3-${Date.now()}`), metadata: { skillId: "wait", seconds: 60 } });
for await (const ev of first) {
  if (check("wait", ev) !== "task" || ev.status.state !== "working") fail(`wait first event ${JSON.stringify(ev)}`);
  waitId = ev.id;
  break;
}
const sub = [];
const other = await A2AClient.fromCardUrl(`${base}/.well-known/agent-card.json`);
for await (const ev of client.resubscribeTask({ id: waitId })) {
  sub.push(check("resubscribe", ev));
  if (sub.length === 1) {
    if (ev.id !== waitId || ev.status.state !== "working") fail(`resubscribe first event ${JSON.stringify(ev)}`);
    setTimeout(async () => {
      const res = await other.cancelTask({ id: waitId });
      if (res.error || res.result?.status?.state !== "canceled") fail(`cancelTask ${JSON.stringify(res)}`);
    }, 100);
  } else if (ev.kind !== "status-update" || ev.status.state !== "canceled" || ev.final !== true || ev.taskId !== waitId) {
    fail(`resubscribe event ${JSON.stringify(ev)}`);
  }
}
if (sub.join(" ") !== "task status-update") fail(`resubscribe order: ${sub.join(" ")}`);

// 4. Refusals: resubscribing to a finished task, and to an unknown one.
const refusals = [];
for (const [id, code] of [[waitId, "-32004"], ["no-such-task", "-32001"]]) {
  try {
    for await (const ev of client.resubscribeTask({ id })) fail(`resubscribe ${id}: event ${JSON.stringify(ev)}`);
    fail(`resubscribe ${id}: no error`);
  } catch (e) {
    refusals.push(String(e.message).slice(0, 120));
    // The 0.3 SDK reads a stream's refusal only from a non-2xx answer; the
    // contract answers 200 with the JSON-RPC error, which it reports as a
    // Content-Type mismatch. Either way it must not be taken as a stream.
    if (!String(e.message).includes(code) && !String(e.message).includes("Content-Type")) fail(`resubscribe ${id}: ${e.message}`);
  }
}

console.log(JSON.stringify({ failures, events, streamOrder: order.join(" "), resubscribe: sub.join(" "), refusals }));
process.exit(failures.length ? 1 : 0);
