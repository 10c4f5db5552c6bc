package fastserver

import (
	"context"
	"strconv"
	"strings"

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
// returns, may be kept after the handler returns.
type Request struct {
	// Msg is the decoded message: a request, or a notification for
	// Endpoint.Check.
	Msg *decode.Message
	// Version is the endpoint's own per-request value: Endpoint.Check may
	// set it (for example to the protocol version in use) for Route and
	// the handler to read. It starts at 0.
	Version int

	header *fasthttp.RequestHeader
	ctx    context.Context
}

// Reset prepares r for a call: the request header it came with, the
// decoded message and the context the handler runs under (nil means
// context.Background). The server calls it; tests of hooks and handlers
// may too.
func (r *Request) Reset(header *fasthttp.RequestHeader, m *decode.Message, ctx context.Context) {
	r.Msg = m
	r.Version = 0
	r.header = header
	r.ctx = ctx
}

// Header returns the value of the named request header (case-insensitive
// name), or nil when it is absent. The slice is valid until the handler
// returns.
func (r *Request) Header(name string) []byte {
	if r.header == nil {
		return nil
	}
	return peekHeader(r.header, name)
}

// empty is what peekHeader returns for a header present with no value.
var empty = []byte{}

// peekHeader returns the value of the named header, a non-nil empty slice
// for one present with an empty value, and nil for an absent one. fasthttp's
// Peek alone may return nil for a present, empty header (it depends on
// where the header landed in its reused storage), so a nil is checked with
// PeekAll. For the headers fasthttp keeps in fields of their own, empty and
// absent cannot be told apart and read as absent.
func peekHeader(h *fasthttp.RequestHeader, name string) []byte {
	v := h.Peek(name)
	if len(v) > 0 {
		return v
	}
	if isFieldHeader(name) {
		return nil
	}
	if v != nil || len(h.PeekAll(name)) > 0 {
		return empty
	}
	return nil
}

// HasHeader reports whether the named header is present, even if empty.
// For the headers fasthttp keeps in fields of their own (Content-Type,
// Content-Length, Host, User-Agent, Cookie, Transfer-Encoding,
// Connection) an empty value cannot be told from an absent one and counts
// as absent.
func (r *Request) HasHeader(name string) bool {
	return r.Header(name) != nil
}

// isFieldHeader reports whether fasthttp keeps the header in a field of
// its own, where Peek returns an empty value for an absent header.
func isFieldHeader(name string) bool {
	for _, f := range [...]string{"Content-Type", "Content-Length", "Host", "User-Agent", "Cookie", "Transfer-Encoding", "Connection"} {
		if len(name) == len(f) && strings.EqualFold(name, f) {
			return true
		}
	}
	return false
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
// grace period. Handlers that wait should select on Done.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
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
	// Route resolves a request's method (rows 14 and 16). It is required.
	Route func(r *Request) Route
	// Labels lists every Route.Label the endpoint can return, for
	// metrics. Labels not listed are counted as "other".
	Labels []string
	// Err, when set, is a construction mistake (a duplicate registration,
	// say): the server's New fails with it.
	Err error
}
