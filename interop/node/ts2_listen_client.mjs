// Opens a subscriptions/listen stream (MCP 2026-07-28, SEP-2575) with the
// official MCP TypeScript SDK v2 client (@modelcontextprotocol/client,
// pinned in package-lock.json) over streamable HTTP, pinned to 2026-07-28,
// and reports what arrives on it. Its public API: Client.listen(filter)
// sends the request and resolves with an McpSubscription once
// notifications/subscriptions/acknowledged arrives (honoredFilter is the
// ack's params.notifications); the stream's notifications/resources/updated
// reach the handler registered with setNotificationHandler; close() aborts
// the listen request's stream and sends notifications/cancelled; closed
// resolves with why the subscription ended ('local', 'graceful', 'remote').
//
// Arguments: the endpoint URL, then the resource URIs to follow (the
// filter's resourceSubscriptions). Run from the directory install.sh
// prints (so the client resolves), e.g. with --input-type=module -e SOURCE,
// which leaves standard input to the commands:
//
//	close → close the subscription (the client stays connected)
//	exit  → close the client and exit 0 (as does the end of the input)
//
// Prints one JSON line per event, in the order seen:
//
//	{"event":"ack","protocolVersion":..,"era":..,"honoredFilter":{..}}
//	{"event":"updated","uri":..,"subscriptionId":..}
//	{"event":"closed","cause":"local"|"graceful"|"remote"}
//	{"event":"error","message":..}             (then exits 1)
//	{"event":"timeout"}                        (after 30 s; exits 1)
import { createInterface } from "node:readline";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const args = process.argv.slice(1);
if (args[0] === "-") args.shift(); // the script read from standard input
const [url, ...uris] = args;
const version = "2026-07-28";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const print = (v) => process.stdout.write(JSON.stringify(v) + "\n");

let client;
const finish = async (code) => {
  clearTimeout(bound);
  await client?.close().catch(() => {});
  process.exit(code);
};
const bound = setTimeout(() => {
  print({ event: "timeout" });
  finish(1);
}, 30_000);

try {
  client = new Client(
    { name: "rpcedge-interop-ts2-listen", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: version } } },
  );
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    print({ event: "updated", uri: n.params?.uri, subscriptionId: n.params?._meta?.[SUBSCRIPTION_ID] ?? null });
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const sub = await client.listen({ resourceSubscriptions: uris }, { timeout: 10_000 });
  print({
    event: "ack",
    protocolVersion: client.getNegotiatedProtocolVersion(),
    era: client.getProtocolEra(),
    honoredFilter: sub.honoredFilter,
  });
  sub.closed.then((cause) => print({ event: "closed", cause }));

  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const cmd = line.trim();
    if (cmd === "close") {
      await sub.close();
      await sub.closed; // printed by the handler above
    } else if (cmd === "exit") {
      break;
    } else if (cmd !== "") {
      print({ event: "error", message: `unknown command ${JSON.stringify(cmd)}` });
      await finish(1);
    }
  }
  await finish(0);
} catch (e) {
  print({ event: "error", message: String(e?.message ?? e), code: e?.code ?? null });
  await finish(1);
}
