// Package interop holds tests that drive the rpcedge demo server
// (cmd/rpcedge, built from the parent module) with real third-party
// clients: the official MCP Go SDK client (both protocol generations) and
// the official MCP TypeScript SDK client (node/ts_client.mjs, on the Node
// tools node/install.sh installs from the pinned node/package-lock.json),
// against the default demo and the conformance fixtures (-demo
// conformance): progress and log notifications, sampling, elicitation,
// roots and input_required rounds. conformance.sh runs the official MCP
// conformance suite the same way. The A2A streams are driven by the A2A Go
// SDK (0.3 wire) and the A2A JavaScript SDK, 0.3.14 on the 0.3 wire
// (node/a2a_client.mjs) and 1.3.0, installed beside it as @a2a-js/sdk-v1, on
// the 1.0 wire (node/a2a_client_v1.mjs). It is a module of its own so that the
// clients never enter the main module's dependencies.
package interop
