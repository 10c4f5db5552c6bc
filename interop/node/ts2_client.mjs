// Drives the regional_query tool of cmd/rpcedge -demo conformance with the
// official MCP TypeScript SDK v2 client (@modelcontextprotocol/client,
// pinned in package-lock.json) pinned to protocol 2026-07-28, which mirrors
// the arguments its inputSchema marks with "x-mcp-header" into Mcp-Param-*
// headers (SEP-2243). Checks that every encoding the client produces (plain
// ASCII, the =?base64?...?= sentinel for non-ASCII, padded and
// sentinel-looking strings, integers, booleans, omitted optionals) is
// accepted and the tool sees the arguments sent; then, through a custom
// fetch that rewrites or drops Mcp-Param-Region, that the server refuses
// the call with HTTP 400 and -32020. Run from the directory install.sh
// prints (so the client resolves), with the endpoint URL as the only
// argument. Prints one JSON line of what it saw; exits 1 when a check fails.
import { isDeepStrictEqual } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = process.argv[2];
const version = "2026-07-28";
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};
const b64 = (s) => `=?base64?${Buffer.from(s, "utf8").toString("base64")}?=`;

// Every POST the client sends, with its MCP headers and the answer's
// status. tamper, when set, edits the headers of tools/call POSTs before
// they leave (and is recorded as what was actually sent).
const posts = [];
let tamper = null;
const recordingFetch = async (input, init = {}) => {
  if ((init.method ?? "GET") !== "POST") return fetch(input, init);
  const headers = new Headers(init.headers);
  let method;
  try {
    method = JSON.parse(init.body).method;
  } catch {
    method = undefined;
  }
  if (method === "tools/call" && tamper) tamper(headers);
  const mcp = {};
  for (const [k, v] of headers) if (k.startsWith("mcp-")) mcp[k] = v;
  const post = { method, headers: mcp };
  posts.push(post);
  const response = await fetch(input, { ...init, headers });
  post.status = response.status;
  return response;
};

const client = new Client(
  { name: "rpcedge-interop-ts2", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: version } } },
);
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
await client.connect(transport);
const seen = { protocolVersion: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion, era: client.getProtocolEra() };
check(seen.protocolVersion === version, `negotiated ${seen.protocolVersion}, want ${version}`);
check(seen.era === "modern", `era ${seen.era}, want modern`);

// A call before tools/list: the client holds no schema, so it sends no
// Mcp-Param headers; the server refuses the call (the value is present,
// the header missing), and the client refetches tools/list and retries
// with the headers.
const coldFrom = posts.length;
let cold;
try {
  cold = await client.callTool({ name: "regional_query", arguments: { region: "cold", query: "q0" } });
} catch (e) {
  cold = { error: { code: e?.code, message: String(e?.message ?? e) } };
}
const coldPosts = posts.slice(coldFrom).map((p) => ({ method: p.method, status: p.status, region: p.headers["mcp-param-region"] }));
seen.cold = coldPosts;
check(
  isDeepStrictEqual(coldPosts, [
    { method: "tools/call", status: 400, region: undefined },
    { method: "tools/list", status: 200, region: undefined },
    { method: "tools/call", status: 200, region: "cold" },
  ]),
  `cold call: POSTs ${JSON.stringify(coldPosts)}`,
);
check(cold.content?.[0]?.text === '{"region":"cold","query":"q0"}', `cold call: ${JSON.stringify(cold)}`);

// The tool must survive the client's x-mcp-header validation (it drops
// tools whose annotations break a constraint).
const tools = await client.listTools();
const rq = tools.tools.find((t) => t.name === "regional_query");
check(rq !== undefined, `regional_query missing from tools/list: ${tools.tools.map((t) => t.name)}`);

// callTool records the tools/call POSTs it made (a header mismatch makes
// the client refetch tools/list and retry once) and the outcome.
async function call(name, args) {
  const from = posts.length;
  const out = { name, args };
  try {
    const r = await client.callTool({ name: "regional_query", arguments: args });
    out.result = r;
  } catch (e) {
    out.error = { code: e?.code, message: String(e?.message ?? e) };
  }
  out.posts = posts.slice(from).filter((p) => p.method === "tools/call");
  return out;
}

const cases = [
  {
    name: "plain ASCII, integer, true",
    args: { region: "us-east-1", priority: 42, dryRun: true, query: "q1" },
    want: { "mcp-param-region": "us-east-1", "mcp-param-priority": "42", "mcp-param-dryrun": "true" },
  },
  {
    name: "non-ASCII, largest safe integer, false",
    args: { region: "Zürich 北", priority: 9007199254740991, dryRun: false, query: "q2" },
    want: { "mcp-param-region": b64("Zürich 北"), "mcp-param-priority": "9007199254740991", "mcp-param-dryrun": "false" },
  },
  {
    name: "leading and trailing spaces, optionals omitted",
    args: { region: "  padded  ", query: "q3" },
    want: { "mcp-param-region": b64("  padded  ") },
  },
  {
    name: "sentinel-looking value, zero",
    args: { region: "=?base64?abc?=", priority: 0, query: "q4" },
    want: { "mcp-param-region": b64("=?base64?abc?="), "mcp-param-priority": "0" },
  },
  {
    name: "optionals omitted",
    args: { region: "eu-west-1", query: "q5" },
    want: { "mcp-param-region": "eu-west-1" },
  },
  {
    name: "empty string",
    args: { region: "", query: "q6" },
    want: { "mcp-param-region": "=?base64??=" },
  },
  {
    name: "inner tab",
    args: { region: "a\tb", dryRun: true, query: "q7" },
    want: { "mcp-param-region": "a\tb", "mcp-param-dryrun": "true" },
  },
  {
    // Beyond 2^53-1 the client mirrors nothing; the server needs nothing.
    name: "unsafe integer not mirrored",
    args: { region: "us-west-2", priority: 9007199254740992, query: "q8" },
    want: { "mcp-param-region": "us-west-2" },
  },
];

const calls = [];
const paramHeaders = (p) => Object.fromEntries(Object.entries(p?.headers ?? {}).filter(([k]) => k.startsWith("mcp-param-")));
for (const c of cases) {
  const r = await call(c.name, c.args);
  calls.push({ name: c.name, sent: r.posts.map((p) => ({ status: p.status, headers: paramHeaders(p) })), error: r.error });
  if (r.error) {
    check(false, `${c.name}: ${JSON.stringify(r.error)}`);
    continue;
  }
  check(r.posts.length === 1 && r.posts[0].status === 200, `${c.name}: tools/call POSTs ${JSON.stringify(r.posts)}`);
  check(isDeepStrictEqual(paramHeaders(r.posts[0]), c.want), `${c.name}: sent ${JSON.stringify(paramHeaders(r.posts[0]))}, want ${JSON.stringify(c.want)}`);
  check(r.posts[0]?.headers["mcp-protocol-version"] === version, `${c.name}: MCP-Protocol-Version ${r.posts[0]?.headers["mcp-protocol-version"]}`);
  check(r.posts[0]?.headers["mcp-name"] === "regional_query", `${c.name}: Mcp-Name ${r.posts[0]?.headers["mcp-name"]}`);
  check(!r.result.isError, `${c.name}: isError ${JSON.stringify(r.result)}`);
  let echoed;
  try {
    echoed = JSON.parse(r.result.content?.[0]?.text);
  } catch {
    echoed = undefined;
  }
  check(isDeepStrictEqual(echoed, c.args), `${c.name}: tool saw ${r.result.content?.[0]?.text}, sent ${JSON.stringify(c.args)}`);
}

// The same client with its headers edited on the way out. A control first:
// the region re-encoded with the sentinel still carries the same value.
const args = { region: "us-east-1", priority: 7, query: "tampered" };
const tampers = [
  { name: "region re-encoded as sentinel (same value)", edit: (h) => h.set("mcp-param-region", b64("us-east-1")), ok: true },
  { name: "region rewritten", edit: (h) => h.set("mcp-param-region", "eu-west-1"), ok: false },
  { name: "region rewritten as sentinel", edit: (h) => h.set("mcp-param-region", b64("eu-west-1")), ok: false },
  { name: "region dropped", edit: (h) => h.delete("mcp-param-region"), ok: false },
  { name: "priority rewritten", edit: (h) => h.set("mcp-param-priority", "8"), ok: false },
];
const refusals = [];
for (const t of tampers) {
  tamper = t.edit;
  const r = await call(t.name, args);
  tamper = null;
  refusals.push({ name: t.name, sent: r.posts.map((p) => ({ status: p.status, headers: paramHeaders(p) })), error: r.error });
  if (t.ok) {
    check(!r.error && !r.result?.isError, `${t.name}: ${JSON.stringify(r.error ?? r.result)}`);
    check(r.posts.length === 1 && r.posts[0].status === 200, `${t.name}: tools/call POSTs ${JSON.stringify(r.posts)}`);
    continue;
  }
  check(r.error?.code === -32020, `${t.name}: error ${JSON.stringify(r.error ?? r.result)}, want code -32020`);
  // The client retries once after refetching tools/list; both refused.
  check(r.posts.length >= 1 && r.posts.every((p) => p.status === 400), `${t.name}: tools/call POSTs ${JSON.stringify(r.posts)}, want all 400`);
}

// An untampered call afterwards still works (the refusals left the
// session usable).
const after = await call("after the refusals", { region: "ap-south-1", query: "q9" });
check(!after.error && JSON.parse(after.result?.content?.[0]?.text ?? "null")?.region === "ap-south-1", `after: ${JSON.stringify(after.error ?? after.result)}`);

await client.close();
Object.assign(seen, { calls, refusals, failures });
console.log(JSON.stringify(seen));
process.exit(failures.length ? 1 : 0);
