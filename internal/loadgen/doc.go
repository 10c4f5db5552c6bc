// Package loadgen is a JSON-RPC 2.0 load generator that checks every
// answer against the rpcedge wire contract (shared/spec/contract.md). It
// is the logic behind cmd/loadgen.
//
// # What it sends
//
// Each request has one of the shapes of Shape, picked at random by the
// weights of Config.Mix (DefaultMix: calls only), or is Config.Body with
// its id rewritten. Every request carries a fresh id (integers and strings
// alternate) and every call a fresh text, so no answer can be memoised;
// the text includes escapes and non-ASCII characters, and is compared
// after unescaping, so any correct JSON spelling of it passes.
// Config.TextSize pads every text with plain words to a fixed size
// (SmallTextSize: the small fixture's). With
// Config.MCPVersion the MCP headers are sent (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) and, for 2026-07-28, params._meta.
//
// # What it checks
//
// Each answer is judged against what its request must get: the status,
// Content-Type (application/json on one line, or none on a 202; no
// Transfer-Encoding beside Content-Length), the envelope (one JSON
// object, jsonrpc "2.0", exactly one of result and error, no method, no
// member name twice in any object at any depth), the id (the request's
// own, byte for byte, or null for parse errors and batches), the error
// code, and for echo calls the text of the result. Bytes a server sends
// after an answer are wrong: in the same read, or (open loop) found on the
// idle connection before its next request. With Config.Events the
// answers to Body must be streamed (text/event-stream, lines ending in
// CR, LF or CRLF): exactly that many JSON-RPC notifications, each
// checked, then the response, checked as a call's, and no event with data
// after it (comments may follow); Report.Events counts them. With Config.A2A as well the stream
// is an A2A one: every event a response to the request whose result is an
// A2A stream response, in the spec's order (a task first, or a message
// alone; updates of that task; a final status last, 0.3's final flag on it
// alone). Report.FirstEvent times each stream's first event. A wrong answer is
// counted once, in the first Class that fails, and the first few are kept
// verbatim (Report.Examples). The JSON reader is strict RFC 8259 and
// allocation-free.
//
// # Closed and open loops
//
// A run issues requests until its duration is over (or its count is
// handed out), then waits for the answers in flight, at most Config.Drain
// after a duration; requests/s is over the issuing window alone
// (Report.IssuingS), the drain reported apart.
//
// Without Config.Rate each connection sends its next request as soon as
// the answer to the previous one is in, and latency runs from the send.
// With Config.Rate requests are due on a fixed timetable shared by all
// connections; a free connection takes the next slot and sends when it
// comes, and latency runs from the slot's time, so a server stall shows
// in the percentiles of every request it delayed, not only of those in
// flight (coordinated omission). Report.LatencyUncorrected gives the
// figure measured from the actual send for comparison,
// Report.MissedSlots the requests sent more than SlotTolerance late, and
// Report.Unsent the slots that came and went without a free connection
// (a server that stalls holds every connection): those are in the
// corrected latency at the time they had waited by the end of the run,
// and any at all fail the run. Transport failures and timeouts are in
// every latency at the time they waited.
//
// # Engines
//
// Connections are plain HTTP/1.1 keep-alive, one request in flight each
// (no pipelining), written and read by hand: requests are built into a
// reused buffer, answers parsed in place, nothing allocated per request
// once warm. On Linux the "epoll" engine runs the connections of each
// core from one locked thread with raw non-blocking sockets, as wrk does
// (see Config.SharedProcess for its one trade-off); "netconn" is one
// goroutine per connection over net.Conn and runs everywhere. With
// Config.Spin (cmd/loadgen's default) a closed-loop epoll thread with
// nothing ready polls for a while before it sleeps: over loopback the
// client's receive path, its wakeup included, runs in the server's write,
// so a client asleep between answers adds to the server's cost of every
// answer, and more to a slower server's (it leaves the client idle more
// often); Report.Waits counts how the waits ended.
//
// # Lifetimes
//
// A Report is the caller's. Its Examples are copies, clipped to 2 KiB per
// side. Config is read, never modified, and may be reused.
//
// # Security
//
// loadgen sends what it is told to whatever address it is given; point
// it only at servers you run. Each answer is bounded (64 KiB of head,
// 64 MiB in all), each request by Config.Timeout, each run by duration
// (and Config.Drain after it) or count; -body files by MaxBodySize.
package loadgen
