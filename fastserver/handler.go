package fastserver

import (
	"context"
	"strconv"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// Error is a JSON-RPC error answer, returned by handlers and endpoint hooks
// to refuse a call. It is an error, so handlers may return it through
// wrapping layers; the server finds it with errors.As.
type Error struct {
	// Status is the HTTP status of the answer; 0 means 200.
	Status int
	// Code is the JSON-RPC error code.
	Code int
	// Message is error.message: a short text for a person reading a log.
	Message string
	// Data is error.data as raw JSON; nil for none. It must be valid JSON.
	Data []byte
	// RetryAfter, when positive, adds a Retry-After header of that many
	// seconds to the HTTP answer (a 503 for a dependency that is down,
	// for example).
	RetryAfter int
	// Header lists response header fields sent with the answer, such as
	// the WWW-Authenticate challenge of a 401 or a 403; nil for none.
	// Values must be valid header values (no CR or LF).
	Header []HeaderField
}

// HeaderField is one response header field of an Error's answer.
type HeaderField struct {
	Name, Value string
}

// Error returns "fastserver: CODE MESSAGE".
func (e *Error) Error() string {
	return "fastserver: " + strconv.Itoa(e.Code) + " " + e.Message
}

// NewError returns an Error answered with status 200.
func NewError(code int, message string) *Error {
	return &Error{Code: code, Message: message}
}

// InvalidParams returns a -32602 error whose data names the offending
// field: {"field":"<field>"}. field may be a dotted path.
func InvalidParams(field, message string) *Error {
	data := append([]byte(`{"field":`), decode.AppendString(nil, field)...)
	data = append(data, '}')
	return &Error{Code: decode.CodeInvalidParams, Message: message, Data: data}
}

// Request is the call being served, as the endpoint hooks and the handler
// see it. The server reuses Requests: nothing in one, nor anything it
// returns, may be kept after the handler returns — except Keep, which is
// the endpoint's own and lives on with the Request.
type Request struct {
	// Msg is the decoded message: a request, or a notification for
	// Endpoint.Check.
	Msg *decode.Message
	// Version is the endpoint's own per-request value: Endpoint.Check may
	// set it (for example to the protocol version in use) for Route and
	// the handler to read. It starts at 0.
	Version int
	// Auth is what Endpoint.Authorize let the request through with (the
	// verified access token, say), for Check, Route and the handler; nil
	// when the endpoint has no Authorize. It is reset for every request.
	Auth any
	// Memo is the endpoint's own note from Check to Route and the
	// handler: what Check worked out that they would otherwise work
	// out again (the members of params it walked, say). Its meaning is
	// the endpoint's; the server sets it to nil before Check runs, and
	// nothing in it may be kept after the handler returns.
	Memo any
	// GoneCancels, set by Endpoint.Check, asks that the handler's context
	// end with ErrClientGone when the client goes away (closes its
	// connection; over net/http, the request's context ends) while the
	// handler runs, looked for once it has run 2 s: MCP 2026-07-28 takes
	// a disconnect for the request's cancellation. Unset, a handler runs
	// on when its client leaves, its answer lost: what MCP 2025-xx asks
	// ("Disconnection SHOULD NOT be interpreted as the client cancelling
	// its request") and what work that must finish (an A2A task's)
	// needs. A streamed answer's handler is cancelled when its client
	// leaves either way (ErrStreamClosed). It is reset for every request.
	GoneCancels bool
	// Keep is the endpoint's own value kept with the pooled call that
	// serves its requests: set by one request, found again by a later
	// one the same call serves (a per-call cache that costs no pool's
	// Get and Put: scratch space, say). The server never reads, resets
	// or clears it; what is kept there must hold nothing a later request
	// may see, from the same client or another, so each request resets
	// what it reuses. On a Request made with Reset (Reused reports false)
	// Keep goes with the Request.
	Keep any

	header *fasthttp.RequestHeader
	at     int64     // when the server began serving the request (monoNow), or 0
	wall   time.Time // Time's answer, once asked
	f      *fields   // the header snapshot the server took, or nil
	ctx    context.Context
	st     *Stream // the call's stream (stream.go); nil outside a Server
}

// Reset prepares r for a call: the request header it came with, the
// decoded message and the context the handler runs under (nil means
// context.Background). The server calls its own equivalent; tests of hooks
// and handlers call Reset with a header built in memory.
func (r *Request) Reset(header *fasthttp.RequestHeader, m *decode.Message, ctx context.Context) {
	r.Msg = m
	r.Version = 0
	r.Auth = nil
	r.Memo = nil
	r.GoneCancels = false
	r.at, r.wall = 0, time.Time{}
	r.header = header
	r.f = nil
	r.ctx = ctx
	r.st = nil
}

// Cancel ends the handler's context with context.Canceled, as a client's
// cancellation does, for an endpoint that matches a cancellation to the
// request itself (MCP's notifications/cancelled within a session over
// HTTP, say); its answer is still written over HTTP (-32603 "request
// cancelled"), as an HTTP request needs one. It may be called from any
// goroutine, but only while the request's handler runs: once the handler
// returns, r serves another request. Called before the handler starts,
// the handler starts cancelled. It does nothing on a Request made with
// Reset.
func (r *Request) Cancel() {
	if r.st == nil || r.st.c == nil {
		return
	}
	r.st.c.cancel()
}

// Reused reports whether r is one of the server's own Requests, reused
// for every request one pooled call serves (Keep lives on between them),
// rather than one made with Reset.
func (r *Request) Reused() bool { return r.f != nil }

// reset is Reset with the server's header snapshot. It keeps r.Auth,
// which the authorization row set before the body was read.
func (r *Request) reset(f *fields, m *decode.Message, ctx context.Context) {
	r.Msg = m
	r.Version = 0
	r.Memo = nil
	r.GoneCancels = false
	r.header = f.hdr
	r.f = f
	r.ctx = ctx
}

// Header returns the value of the named request header field
// (case-insensitive name): all of its lines in the header section joined
// with ", " in order, as RFC 9110 §5.3 combines them; a non-nil empty
// slice for a field present with an empty value; nil for an absent one.
// Trailer fields after a chunked body are never returned. The slice is
// valid until the handler returns.
//
// A field that holds one value (an origin, a media type, a version, a
// method name, a token) is therefore never judged by its first line
// alone: two lines read as "a, b", which no such value equals. Where a
// value may itself hold ", " (a URI, a free text), HeaderLines also says
// how many lines there were.
func (r *Request) Header(name string) []byte {
	v, _ := r.headerLines(name)
	return v
}

// headerLines is Header that also returns how many lines the field came
// in.
func (r *Request) headerLines(name string) ([]byte, int) {
	if r.f != nil {
		return r.f.lookup(name)
	}
	if r.header == nil {
		return nil, 0
	}
	f := new(fields)
	f.snapshot(r.header)
	return f.lookup(name)
}

// A HeaderKey is a request header field name looked up once, for
// Request.HeaderOf: the fields the server's own rows read (Origin,
// Content-Type, Authorization, the MCP and A2A headers and others) are
// then found without comparing the name each time. Make keys once, as
// package variables. The zero HeaderKey names no field.
type HeaderKey struct {
	name string
	slot uint8 // 1 + the field's place in the server's header snapshot, or 0
}

// NewHeaderKey returns the key of the named field (any case).
func NewHeaderKey(name string) HeaderKey {
	k := HeaderKey{name: name}
	if f := lookupField(name); f != numFields {
		k.slot = uint8(f) + 1
	}
	return k
}

// Name returns the field name the key was made with.
func (k HeaderKey) Name() string { return k.name }

// HeaderOf returns what Header returns for k's name.
func (r *Request) HeaderOf(k HeaderKey) []byte {
	if k.slot != 0 && r.f != nil {
		return r.f.val[k.slot-1]
	}
	return r.Header(k.name)
}

// HeaderLines returns what HeaderOf returns for k and how many lines of
// the field the header section holds (0 when it is absent; counted up to
// 255). A field that holds one value may be refused for coming in more
// than one line whatever its combined value: a body value "a, b" equals
// the lines "a" and "b" combined, while an intermediary that reads one
// line sees "a".
func (r *Request) HeaderLines(k HeaderKey) (value []byte, lines int) {
	if k.slot != 0 && r.f != nil {
		return r.f.val[k.slot-1], r.f.count(field(k.slot - 1))
	}
	return r.headerLines(k.name)
}

// empty is the value of a field present with no value.
var empty = []byte{}

// HasHeader reports whether the named header field is present, even if
// empty.
func (r *Request) HasHeader(name string) bool {
	return r.Header(name) != nil
}

// RequestURI returns the request-target as it came in the request line
// (path and query), or nil for a request without one. The slice is valid
// until the handler returns.
func (r *Request) RequestURI() []byte {
	if r.header == nil {
		return nil
	}
	return r.header.RequestURI()
}

// Time returns when the server began serving the request, or the current
// time for a Request the server did not start. The server times requests
// on the monotonic clock; the first call reads the wall clock and takes
// the time served so far from it, so the answer is as right as time.Now
// even after the wall clock was stepped.
func (r *Request) Time() time.Time {
	if r.at == 0 {
		return time.Now()
	}
	if r.wall.IsZero() {
		now := time.Now()
		r.wall = now.Add(-time.Duration(monoNow() - r.at))
	}
	return r.wall
}

// Host returns the request's Host header.
func (r *Request) Host() []byte {
	if r.header == nil {
		return nil
	}
	return r.header.Host()
}

// Context returns the context the call runs under: it carries the
// handler deadline and is cancelled when the server shuts down past its
// grace period, when the client goes away while the handler runs (a
// streamed answer's: ErrStreamClosed; another's, if Check set
// GoneCancels: ErrClientGone, looked for once the handler has run 2 s),
// and, on a stream of messages, when the
// client cancels the request (Endpoint.Cancel: context.Canceled).
// Handlers that wait should select on Done.
func (r *Request) Context() context.Context {
	if ctx := r.ctx; ctx != nil { // read once: never a nil Context
		return ctx
	}
	return context.Background()
}

// Stopping returns a channel that is closed when the server begins to
// shut down (Server.Shutdown), for a handler that waits for something
// other than its own work (an A2A SendMessage waiting for its task to
// end, say): it should then answer with what it has, before the grace
// period ends and its context is cancelled. On a stream of messages it
// is closed when ServeLines' context is done. It is nil, never closed,
// for a Request not served by a Server.
func (r *Request) Stopping() <-chan struct{} {
	if r.st == nil {
		return nil
	}
	return r.st.Stopping()
}

// Handler serves one JSON-RPC method.
type Handler interface {
	// ServeRPC appends the call's JSON result to dst and returns the
	// extended slice. It must append exactly one valid JSON value. To
	// refuse, it returns an *Error (answered with its code, status 200
	// unless set); any other error is answered 500 / -32603. Params are
	// in r.Msg.Params.
	ServeRPC(r *Request, dst []byte) ([]byte, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(r *Request, dst []byte) ([]byte, error)

// ServeRPC calls f(r, dst).
func (f HandlerFunc) ServeRPC(r *Request, dst []byte) ([]byte, error) { return f(r, dst) }

var _ Handler = HandlerFunc(nil)

// Route is where Endpoint.Route sends a request.
type Route struct {
	// Handler serves the call; nil means the method is unknown for the
	// version in use: 404 / -32601 (row 14 of the contract).
	Handler Handler
	// Label names the method in metrics. It must come from a fixed set
	// (the registered method names): the server never labels by what the
	// client sent. Empty means "other".
	Label string
	// Refuse, when set, is answered at once (row 16: a method refused
	// outright), before params are looked at.
	Refuse *Error
	// OwnParams says the handler checks params itself (rows 15 to 17 in
	// its own order). Otherwise the server answers -32602 for params that
	// are present and not an object (row 15) and for a member name given
	// twice in params (row 17) before it calls the handler.
	OwnParams bool
}

// Endpoint is JSON-RPC served at one path, as the mcp and a2a packages
// build it.
type Endpoint struct {
	// Path is where the endpoint is served, such as "/mcp".
	Path string
	// IDs is the set of id types the endpoint accepts (row 10).
	IDs decode.IDPolicy
	// Check, when set, decides rows 11 and 12 for every valid message,
	// notifications included, from headers and the message; it may set
	// r.Version. A non-nil result refuses the message with its status
	// and code (usually 400).
	Check func(r *Request) *Error
	// Authorize, when set, decides the endpoint's authorization row (2a
	// in the package doc: after the rate limit, before Content-Type) from
	// the request line and header section alone, before any byte of the
	// body is read. r.Msg is nil then; r.Header, r.RequestURI and r.Host
	// work. It may set r.Auth for the later hooks and the handler. A
	// non-nil result refuses the request with its status, code and
	// header fields (a 401 and its WWW-Authenticate challenge, say), and
	// "id": null. It must be safe for concurrent use.
	Authorize func(r *Request) *Error
	// Route resolves a request's method (rows 14 and 16). It is required.
	Route func(r *Request) Route
	// Labels lists every Route.Label the endpoint can return, for
	// metrics. Labels not listed are counted as "other".
	Labels []string
	// Err, when set, is a construction mistake (a duplicate registration,
	// say): the server's New fails with it.
	Err error
	// ResponseScope, when set, binds the server's own requests to clients
	// (Stream.Call) to whoever may answer them. The scope of the request
	// whose stream sends a call is recorded with the call, and a client's
	// response POSTed to the endpoint is delivered only when ResponseScope
	// of that POST names the same scope (the same token holder and MCP
	// session, say); a response from another scope is refused as one that
	// answers no request the server awaits. A non-nil *Error refuses the
	// POST with its status and code (404 for a session that ended, say).
	// It runs after Authorize (r.Auth is set); r.Msg is the request making
	// the call, or the response. Default nil: whoever holds a call's id
	// (128 random bits, sent only on the call's stream) may answer it.
	ResponseScope func(r *Request) (string, *Error)
	// ExposeHeaders lists the answer's header fields that a browser
	// script on an allowed origin may read besides the CORS-safelisted
	// ones (Access-Control-Expose-Headers): "Mcp-Session-Id", say.
	// Default none.
	ExposeHeaders []string
	// Other, when set, is offered the requests to Path with a method
	// other than POST and OPTIONS (an MCP session's GET stream and
	// DELETE, say) and returns whether it answered; the requests it does
	// not answer get 405 with Allow: POST, OPTIONS. Default none.
	Other func(s *Server, ctx *fasthttp.RequestCtx) bool
	// OtherMethods, when not nil, lists the methods Other may answer
	// ("GET", "DELETE"): a request with another method gets 405 without
	// Other being asked, and, with Expect: 100-continue, gets it in
	// place of 100 Continue, before its body is sent. With OtherMethods
	// nil every method is offered to Other, and such a request gets
	// 100 Continue first. Default nil.
	OtherMethods []string
	// Cancel, when set, is asked about every notification a stream of
	// messages (ServeLines) brings, as soon as it is read: ahead of the
	// calls read before it, which may still wait or run. A non-nil result
	// is the raw id of the request the notification cancels (MCP's
	// notifications/cancelled over stdio, say). The requests read before
	// it with that id (string ids compared by their text, escapes
	// resolved; other ids byte for byte) that are not answered yet are
	// cancelled: one still waiting is never served, a running handler's
	// context ends with context.Canceled, and neither gets an answer.
	// The notification itself is then served in its turn as any other.
	// Over HTTP Cancel is not asked: there an endpoint matches a
	// cancellation to its request itself (Request.Cancel), or takes the
	// client's disconnect for one (Request.GoneCancels). Cancel is asked on
	// ServeLines' reading goroutine, before Check (which cannot gate it)
	// and while Check and the handlers of earlier messages run: it must
	// be safe for that, and must not block (reading waits for it). It
	// must not keep or modify m's slices; a panic in it costs the
	// cancellation only. Default nil: a stream's requests are never
	// cancelled.
	Cancel func(m *decode.Message) []byte
	// Lines, when set, is called by ServeLines as it begins to serve the
	// endpoint on a stream of messages, with send: it writes msg (one
	// JSON-RPC message of the server's own, a notification) to the stream
	// as one line, whole, between the answers and events of the calls
	// (CR and LF made spaces), from any goroutine, and returns once it is
	// written; it fails with ErrStreamClosed once ServeLines is returning,
	// and with the write's error when the output fails. Lines returns a
	// function that ServeLines calls as it returns, after which send
	// writes nothing. It is for notifications that answer no call (MCP's
	// resource updates to a stdio client subscribed to them). send blocks
	// while the output does: a caller that must not wait queues. A panic
	// in Lines is logged and the stream served without it. Default nil.
	Lines func(send func(msg []byte) error) (stop func())
}

// takesOther reports whether a request to the endpoint with method m
// (not POST or OPTIONS) is offered to Other.
func (ep *Endpoint) takesOther(m []byte) bool {
	if ep.Other == nil {
		return false
	}
	if ep.OtherMethods == nil {
		return true
	}
	for _, o := range ep.OtherMethods {
		if string(m) == o {
			return true
		}
	}
	return false
}
