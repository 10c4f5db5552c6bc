// Package servers holds the candidates of the serving benchmarks: the same
// MCP tool, echo, served by rpcedge and by its peers, each on a net.Listener
// the caller provides (an in-memory one in BenchmarkServe, a loopback TCP
// one in the load matrix through cmd/benchserver).
//
// Every candidate answers POST /mcp with a JSON-RPC 2.0 tools/call of tool
// echo, arguments {"text": string}, with
//
//	{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<text>}],"resultType":"complete",…}}
//
// under MCP 2026-07-28: the version the MCP Go SDK's client sends, with
// the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and
// params._meta["io.modelcontextprotocol/protocolVersion"]. The SDK
// servers also need Accept: application/json, text/event-stream.
//
// The candidates (see Names):
//
//	rpcedge        fastserver + mcp, echo registered as internal/demo does
//	mcp-go-sdk     github.com/modelcontextprotocol/go-sdk v1.8.0,
//	               NewStreamableHTTPHandler{Stateless, JSONResponse}, net/http
//	mark3labs      github.com/mark3labs/mcp-go v1.2.1,
//	               NewStreamableHTTPServer(WithStateLess(true)), net/http
//	nethttp-json   net/http + encoding/json, a hand-written JSON-RPC handler
//	fasthttp-json  fasthttp + encoding/json, the same handler
//	floor          fasthttp, a fixed answer with the id and text spliced in
//	               by a byte scan: no JSON parsing (the floor of TARGETS.md)
//
// and diagnostics (see Diagnostics), which the load matrix runs only
// when ONLY names them:
//
//	floor-stream   the floor's handler behind fasthttp configured as
//	               fastserver configures it (streamed body, its buffer
//	               sizes and headers)
//	floor-spin     floor-stream burning, per request, the CPU time
//	               rpcedge's pipeline adds in process (BENCH_FLOOR_SPIN_NS,
//	               default FloorSpinNanos), without system calls
//	floor-wrap     floor-stream with each accepted connection in a
//	               wrapper that changes nothing, as fastserver's Serve
//	               wraps them (fasthttp then loses its writev)
//
// None of them pins a core or sets GOMAXPROCS: the caller does
// (taskset, the GOMAXPROCS variable, b.RunParallel).
package servers
