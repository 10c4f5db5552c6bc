// Package fastserver serves JSON-RPC 2.0 endpoints over HTTP/1.1 with
// github.com/valyala/fasthttp, answering every request with the status
// line, JSON-RPC code, id and headers of rpcedge's wire contract.
//
//	var ms fastserver.Methods
//	ms.HandleFunc("echo", func(r *fastserver.Request, dst []byte) ([]byte, error) {
//		v, _ := decode.Lookup(r.Msg.Params, "text")
//		return append(dst, v...), nil // the JSON result, appended
//	})
//	s, err := fastserver.New(fastserver.Config{}, ms.Endpoint("/rpc", decode.IDsJSONRPC))
//	err = s.ListenAndServe() // 127.0.0.1:8080 unless Config.Addr says otherwise
//
// The mcp and a2a packages build richer Endpoints; cmd/rpcedge serves both.
//
// # The pipeline
//
// A POST to an endpoint runs the contract's checks in order, and the first
// that fails decides the answer:
//
//	 1 Origin not allowed                      403 / -32600
//	 2 rate limit reached                      429 / -32603, Retry-After, closed
//	2a not authorized (Endpoint.Authorize)     the hook's answer: 401/400/403 with WWW-Authenticate (package auth)
//	 3 Content-Type not application/json       415 / -32600
//	 4 Content-Encoding not served             415 / -32600
//	 5 Content-Length over the ceiling         413 / -32600
//	 6 in-flight body budget spent             503 / -32603, Retry-After
//	 7 the body, as it streams in: batch 400/-32600, syntax 400/-32700,
//	   depth 400/-32600, ceiling 413/-32600 (the first in byte order)
//	 8 not an object, 9 duplicate top-level name,
//	10 envelope (jsonrpc, method, id type)     400 / -32600
//	11 protocol version not served             Endpoint.Check
//	12 headers disagree with the body          Endpoint.Check
//	13 a notification                          202, no body, no Content-Type
//	14 unknown method                          404 / -32601 (Route.Handler nil)
//	15 params not an object                    200 / -32602 (unless Route.OwnParams)
//	16 refused outright                        Route.Refuse
//	17 duplicate names in params               200 / -32602 (unless Route.OwnParams)
//	18 panic, failure, deadline                500 / -32603
//	19 success                                 200, result
//
// Row 2a runs only for an endpoint with an Authorize hook (package auth
// gives one); it sees the request line and the header section, never the
// body, and its refusal carries the hook's header fields (an Error's
// Header). A handler's or Route's *Error may carry header fields too.
// GET /metrics may be guarded by Config.MetricsGuard.
//
// Rows 1 to 9 answer "id": null; later rows echo the request's id when it
// is present and of a type the endpoint accepts, verbatim. Rows 1 to 6 are
// decided from the headers, before the body is read; a request with
// Expect: 100-continue that they refuse gets 417 and never sends its body;
// one to a path nothing serves gets its 404, and one with a method its path
// does not take its 405, the same way.
// An answer decided before the body was read to its end (rows 1 to 7) is
// written on the hijacked connection, which is then half-closed, drained
// for a bounded time and size, and closed, so that the client sees the
// answer rather than a reset.
//
// # Framing: what the body stream is
//
// fasthttp hands a request over in one of these states (fastserver sets
// StreamRequestBody with a one-byte prefetch), and each gets a definite
// answer:
//
//	neither Content-Length nor Transfer-Encoding   no stream; the body has length zero (RFC 9112 §6.3)
//	                                               and is answered as an empty body: 400 / -32700,
//	                                               or an earlier row (403, 415, ...); HTTP/1.1 and
//	                                               HTTP/1.0 keep-alive connections go on
//	Content-Length: 0                               a stream that ends at once: the same
//	Content-Length: N                               a stream of N bytes, its first byte prefetched;
//	                                               a connection that ends before N bytes is an
//	                                               incomplete body (RFC 9112 §8): 400 / -32700
//	Transfer-Encoding: chunked                      a stream of the chunks' data; chunk extensions
//	                                               are skipped; trailer fields are merged into
//	                                               fasthttp's header after the last chunk, and no
//	                                               check reads them (see "Header fields")
//	Expect: 100-continue (HTTP/1.1)                 rows 1 to 6 decide before the body: 417, or
//	                                               100 Continue and then one of the above
//	a fasthttp.Server that does not stream          no stream; the body in memory (Handler)
//
// Framing fasthttp refuses before the handler (two Content-Length lines,
// a signed or spaced length, Transfer-Encoding on HTTP/1.0, a second
// Transfer-Encoding line) is answered 400 in plain text by the error
// handler, and a transfer coding it does not implement 501 (RFC 9112
// §6.1, as nginx and net/http answer). Of what it lets through,
// fastserver refuses what nginx refuses: Transfer-Encoding: identity 501,
// Transfer-Encoding beside Content-Length 400 (a smuggling vector: RFC
// 9112 §6.1 allows refusing it), and obsolete line folding 400 (RFC 9112
// §5.2); each in plain text, with the connection closed.
//
// # Header fields
//
// Before any byte of the body is read, the server takes one snapshot of
// the header section exactly as it came off the wire, in one pass: every
// field a row reads is the combination of all its lines, joined with ", "
// in order (RFC 9110 §5.3). A field that holds one value (Origin,
// Content-Type, the protocol headers, Authorization) therefore fails its
// row when it comes in two lines, even two that agree; and trailer fields
// take part in no check (RFC 9110 §6.5.1). Request.Header reads the same
// snapshot. Behind trusted proxies the rate-limit key is the rightmost
// address of the forwarding header (X-Forwarded-For, or RFC 7239
// Forwarded: Config.ProxyHeader) that is not itself a trusted proxy.
//
// # Panics
//
// fasthttp recovers no panic. fastserver recovers in every function
// fasthttp calls (the handler, the Expect and error handlers, the early
// answer's hijacked connection): a panic anywhere in a request's path is
// logged once with its stack, counted in rpcedge_panics_total{where}, and
// answered 500 / -32603 ("id": null) when nothing was written yet, with
// the connection closed; the request's body budget, deadline and pooled
// state are released or dropped. A handler's own panic is answered with
// the request's id. No panic ends the process.
//
// # Handlers
//
// A Handler appends its JSON result to the answer buffer (no copy, no
// allocation); Typed wraps a function of typed params and result, decoded
// and encoded with github.com/bytedance/sonic (case-sensitive names, exact
// numbers, copied strings), params whose decoded form would pass 6× their
// size + 64 KiB refused -32602 before sonic runs (contract §3; see Typed).
// An *Error returned by a handler is answered
// with its code; any other error, a panic or a handler past the deadline
// is answered 500 / -32603 and the server keeps serving. Handlers get a
// context with the deadline (Request.Context), cancelled also when
// shutdown's grace period ends.
//
// # Streamed answers
//
// A handler whose answer may stream ends with return r.Stream(dst, h):
// the StreamHandler h runs on a goroutine of its own and sends JSON-RPC
// messages on its Stream. One that sends nothing is answered exactly as a
// plain handler; the first Send makes the answer 200 text/event-stream
// (when the request's Accept allows it, see AcceptsEventStream, and
// Config.MaxStreams and the client's Config.MaxClientStreams allow),
// each message one "data:" event, the final response the last event.
// Events are queued in two bounded buffers (StreamBuffer) that the
// connection's goroutine writes as they fill, coalescing events a fast
// handler queues between writes; a slow reader makes Send wait, never
// memory grow. Every write has its own write timeout; a failed write
// cancels the handler's context. Stream.Call sends a request of the
// server's own and waits for the client's response POST (answered 202,
// matched by a random id). ServeEvents streams events that answer no
// call (an MCP session's GET stream). stream.go has the details and the
// measurements behind the design.
//
// # Lifetimes
//
// A Request, its Msg and everything they return borrow from the request
// being served: nothing may be kept after the handler returns. The dst a
// handler appends to is the server's; the handler returns it extended.
// Server methods are safe for concurrent use; a Methods registry is safe
// for concurrent lookups once registration is over.
//
// # Operation
//
// GET /healthz answers "ok"; GET /metrics exposes Prometheus text
// (requests by endpoint, method — registered names only, "other" for the
// rest — status and code; latency and body-size histograms; requests in
// flight; panics by stage and handler timeouts). Other methods on an endpoint get
// 405 with Allow: POST, OPTIONS, unless Endpoint.Other answers them (after
// row 1: a foreign Origin is 403); OPTIONS answers CORS preflights, which
// allow POST, OPTIONS and Endpoint.OtherMethods. Answers
// of at least 1 KiB are compressed with zstd or gzip when Accept-Encoding
// allows. There is no log line per request unless Config.AccessLog.
// fasthttp's own messages (a request it could not parse, say) go to
// Config.Logger as warnings with source=fasthttp, without the request
// bytes fasthttp quotes into them, cut at 512 bytes, at most 20 a second.
// Shutdown stops accepting, lets accepted requests finish, and closes.
//
// # Security
//
// Every limit of Config has a safe default, and 0 means that default,
// never "unlimited": a 1 MiB body ceiling on wire and decoded bytes,
// enforced on the stream (fasthttp's MaxRequestBodySize does not hold for
// streamed bodies, so fastserver keeps fasthttp's prefetch at one byte and
// counts itself); nesting depth 1000; a 256 MiB in-flight body budget
// across connections (a body charged as its bytes arrive, a compressed
// one 128 KiB for its decompressors and then twice its decoded bytes);
// a 10 s handler deadline; 8 KiB of headers; 10 s read and write and 60 s
// idle timeouts; 10,000 connections. Origins are refused unless loopback or
// configured, so a web page cannot drive a local agent server. The rate
// limit, off by default, keys clients by peer address (IPv6 by /64) and
// believes X-Forwarded-For (or RFC 7239 Forwarded, Config.ProxyHeader)
// only from configured proxies, in a table of bounded size.
//
// # Allocations
//
// Once warm, fastserver allocates nothing per request: the per-request
// state is pooled per endpoint, answers are built in place and swapped
// into the response, metrics are counted on preallocated counters, and
// handler deadlines come from one watchdog goroutine rather than a timer
// per request. fasthttp's connection loop itself allocates 24 bytes after
// each streamed request (the io.LimitReader of its requestStream.discard).
//
// # Connection timeouts
//
// Config.ReadTimeout, WriteTimeout and IdleTimeout are enforced by the
// same watchdog, not by fasthttp's per-request deadlines (three clock
// reads and three timer updates a request, 5–8 % of a small request's
// CPU): each connection Serve or ServeConn serves is in a phase (reading a
// request, its handler running, writing the answer, idle) and the
// watchdog gives one that overstays its phase an expired deadline, so the
// blocked read or write fails as fasthttp's own deadline would have made
// it fail. A timeout takes effect no earlier than configured and at most
// two watchdog ticks later (a tick is a twentieth of the shortest timeout,
// between 5 and 100 ms). A handler's run has no connection timeout (the
// handler deadline bounds it), and a streamed answer gives each write its
// own WriteTimeout.
package fastserver
