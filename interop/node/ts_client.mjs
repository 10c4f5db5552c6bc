// Drives cmd/rpcedge -demo conformance with the official MCP TypeScript SDK
// client (pinned in package-lock.json): progress and log notifications on
// streamed answers, and sampling and elicitation requests on the request's
// stream, answered by POSTing the response. Run from the directory
// install.sh prints (so the SDK resolves), with the endpoint URL as the
// only argument; or, over stdio, with the server's command and its
// arguments (the SDK's StdioClientTransport runs it: notifications and
// requests to the client are lines, the responses lines written back).
// Prints one JSON line of what it saw; exits 1 when a check fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

const client = new Client(
  { name: "rpcedge-interop-ts", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {} } },
);
const logs = [];
let sampled = 0;
let elicited = 0;
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(n.params.data);
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  sampled++;
  return {
    role: "assistant",
    content: { type: "text", text: "sampled by the TS SDK: " + req.params.messages[0].content.text },
    model: "ts-model",
    stopReason: "endTurn",
  };
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicited++;
  return { action: "accept", content: { username: "ts-user", email: "ts@example.com" } };
});

const transport = url.startsWith("http")
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command: url, args: process.argv.slice(3), stderr: "ignore" });
await client.connect(transport);
// The progress notifications as the transport hands them to the SDK, in
// order: what the server sent. The SDK's own onprogress runs each one in
// a microtask, while it takes the response at once and drops the call's
// progress handler: over stdio, where the last notification and the
// response come in one read, it loses that notification ("unknown
// token"; SDK 1.32.2, shared/protocol.js _onnotification/_onresponse).
const wire = [];
const deliver = transport.onmessage;
transport.onmessage = (msg, extra) => {
  if (msg.method === "notifications/progress") wire.push(msg.params.progress);
  deliver(msg, extra);
};
client.onerror = () => {};
const seen = { transport: url.startsWith("http") ? "http" : "stdio", protocolVersion: transport.protocolVersion };

const progress = [];
const p = await client.callTool(
  { name: "test_tool_with_progress", arguments: {} },
  undefined,
  { onprogress: (pr) => progress.push(pr.progress) },
);
check(JSON.stringify(wire) === "[0,50,100]", `progress sent ${JSON.stringify(wire)}`);
if (seen.transport === "http") {
  check(JSON.stringify(progress) === "[0,50,100]", `progress ${JSON.stringify(progress)}`);
} else {
  check(["[0,50]", "[0,50,100]"].includes(JSON.stringify(progress)), `progress ${JSON.stringify(progress)}`);
}
check(p.content?.[0]?.text === "Progress test completed", `progress result ${JSON.stringify(p)}`);

await client.setLoggingLevel("info");
const l = await client.callTool({ name: "test_tool_with_logging", arguments: {} });
check(logs.length === 3 && logs[0] === "Tool execution started", `logs ${JSON.stringify(logs)}`);
check(!l.isError, "logging result is an error");

const s = await client.callTool({ name: "test_sampling", arguments: { prompt: "hello" } });
check(s.content?.[0]?.text === "LLM response: sampled by the TS SDK: hello", `sampling ${JSON.stringify(s)}`);

const e = await client.callTool({ name: "test_elicitation", arguments: { message: "who are you?" } });
check(e.content?.[0]?.text?.includes('"username":"ts-user"'), `elicitation ${JSON.stringify(e)}`);
check(sampled === 1 && elicited === 1, `sampled ${sampled}, elicited ${elicited}`);

const plain = await client.callTool({ name: "test_simple_text", arguments: {} });
check(plain.content?.[0]?.text === "This is a simple text response for testing.", `plain ${JSON.stringify(plain)}`);

await client.close();
Object.assign(seen, { wire, progress, logs, sampled, elicited, failures });
console.log(JSON.stringify(seen));
process.exit(failures.length ? 1 : 0);
