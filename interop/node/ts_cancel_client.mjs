// Drives an rpcedge MCP server with sessions (the interop test's own, its
// URL the only argument) with the official MCP TypeScript SDK client
// (1.32.2, 2025-11-25): a tools/call of "wait" aborted through its
// AbortSignal after the tool has started (the SDK POSTs
// notifications/cancelled in the session), then a tools/call of "say"
// that must answer. Run from the directory install.sh prints. Prints one
// JSON line of what it saw; exits 1 when a check fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.argv[2];
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

const client = new Client({ name: "rpcedge-interop-ts-cancel", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const seen = { protocolVersion: transport.protocolVersion, session: !!transport.sessionId };
check(seen.session, "no session id from initialize");

const ac = new AbortController();
setTimeout(() => ac.abort("the user gave up"), 500);
const started = Date.now();
try {
  await client.callTool({ name: "wait", arguments: {} }, undefined, { signal: ac.signal, timeout: 20000 });
  check(false, "the aborted call answered");
} catch (e) {
  seen.aborted = String(e);
}
seen.abortedAfterMs = Date.now() - started;

const text = "après " + Math.random().toString(36).slice(2);
const r = await client.callTool({ name: "say", arguments: { text } });
seen.say = r.content?.[0]?.text;
check(seen.say === text, "say answered " + JSON.stringify(r));

await client.close();
seen.failures = failures;
console.log(JSON.stringify(seen));
process.exit(failures.length ? 1 : 0);
