package mcp

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Call is one tools/call as a ToolHandler sees it: the arguments, already
// checked against the tool's input schema, and the result being built.
// Content added to a Call is written straight into the answer, escaped
// as it is added, so a tool that echoes its arguments allocates nothing.
// Through it a handler also sends progress and log messages and asks the
// client for input (see Progress, Log and Ask); a prompt's Render gets a
// Call for the same purpose.
//
// The server reuses Calls: a handler must not keep c, nor any slice it
// returns, after CallTool returns. A Call is not safe for concurrent use.
type Call struct {
	r    *fastserver.Request
	m    *decode.Message
	args []byte
	v    Version

	callExchange // streams and input (exchange.go)
	tool         *tool

	buf           []byte // the answer so far: result head, then content items
	items         int
	isError       bool
	structured    []byte // a copy of structuredContent
	hasStructured bool
	scratch       []byte   // unescaped argument strings
	idx           argIndex // the declared arguments the schema check found
	lastArg       []byte   // the value Arg found last without idx

	// The walk over params of a tools/call (targetX), made by the
	// endpoint's Check (checkHeaders) or by serveToolsCall.
	walked bool
	w      walked
	// checked is the tool whose schema found w.args valid in the walk
	// (argsCheck), idx then filled in; nil when serveToolsCall checks.
	checked *tool
	// The tool findTool found last and its server, kept across calls.
	lastSrv  *Server
	lastTool *tool
	// kept says a Request keeps this Call (getCall) rather than the
	// pool; busy says a request of that Request's is using it.
	kept bool
	busy bool

	// Tasks (tasks.go): startTask says the handler's StartTask asked for
	// one; task is set on the Call that runs in a task.
	startTask bool
	task      *task
}

// walk walks the params of the tools/call m once, for the header rules
// and serveToolsCall, checking the arguments against the schema of the
// tool of s that params names, when the name comes first.
func (c *Call) walk(m *decode.Message, s *Server) {
	ac := argsCheck{s: s, c: c}
	walkTarget(m, "name", &ac, &c.w)
	c.checked = ac.tool
	c.walked = true
}

// headerTool returns the tool of s the walked tools/call names when its
// input schema marks arguments with x-mcp-header, else nil. The tool the
// walk's schema check found is taken as it is; a call whose arguments it
// did not check (they failed, or came before the name) looks the name up.
func (c *Call) headerTool(s *Server) *tool {
	t := c.checked
	if t == nil && c.w.err == nil {
		t, _ = c.findTool(s, c.w.name)
	}
	if t == nil || len(t.headers) == 0 {
		return nil
	}
	return t
}

var calls = sync.Pool{New: func() any { return new(Call) }}

// getCall returns a Call for a request of r: the one kept with r's pooled
// server call (Request.Keep) when it is free, else one from the pool,
// which a server's Request keeps when it keeps none yet (a Request made
// with Reset does not: the Call would go with it, not back to the pool).
func getCall(r *fastserver.Request) *Call {
	if c, ok := r.Keep.(*Call); ok && !c.busy {
		c.busy = true
		return c
	}
	c := calls.Get().(*Call)
	if r.Keep == nil && r.Reused() {
		r.Keep, c.kept = c, true
		c.busy = true
	}
	return c
}

// reclaim frees the Call r keeps when a request before this one left it
// busy — its tool or prompt panicked, or a hook of the caller's refused
// the request after Check had made the Call — so that it serves again. It
// runs in the endpoints' Check, a request's first hook, when nothing can
// hold the Call: the requests of one Request run one after another.
func reclaim(r *fastserver.Request) {
	if c, ok := r.Keep.(*Call); ok && c.busy {
		c.release()
	}
}

// maxKeep bounds the scratch space a pooled Call keeps between calls.
const maxKeep = 64 << 10

func (c *Call) release() {
	c.r, c.m, c.args, c.buf = nil, nil, nil, nil
	c.items, c.isError, c.hasStructured = 0, false, false
	c.callExchange.reset()
	c.tool = nil
	c.idx, c.lastArg = argIndex{}, nil
	c.walked, c.checked = false, nil
	c.w = walked{}
	c.startTask, c.task = false, nil
	c.structured = reuse(c.structured)
	c.scratch = reuse(c.scratch)
	if c.kept {
		c.busy = false // back with its server call
		return
	}
	calls.Put(c)
}

// reuse empties a buffer for the next call, dropping it when it grew large.
func reuse(b []byte) []byte {
	if cap(b) > maxKeep {
		return nil
	}
	return b[:0]
}

// Request returns the request being served: its headers and Context. It
// is nil in a task (StartTask), which outlives its request.
func (c *Call) Request() *fastserver.Request { return c.r }

// Context returns the context the call runs under: on a request, the
// handler deadline's, also cancelled when the server shuts down past its
// grace period, when the client cancels the request (over stdio,
// notifications/cancelled: context.Canceled) and when it goes away (over
// HTTP under 2026-07-28, its connection closed while the tool ran:
// fastserver.ErrClientGone, looked for once the tool has run 2 s; under
// 2025-xx, which says a disconnect is no cancellation, the tool runs on;
// a streamed answer's closed stream: fastserver.ErrStreamClosed); in a
// task, the task's (cancelled by
// tasks/cancel, the task's TTL or Server.Close).
func (c *Call) Context() context.Context {
	if c.task != nil {
		return c.task.ctx
	}
	return c.r.Context()
}

// Version returns the protocol version in use.
func (c *Call) Version() Version { return c.v }

// Arguments returns the raw arguments object, valid JSON that passed the
// input schema ({} when the call had no arguments). It is valid until
// the handler returns.
func (c *Call) Arguments() []byte { return c.args }

// Arg returns the raw JSON value of the named argument (case-sensitive,
// escapes in names resolved), or nil when there is none. It is valid until
// the handler returns.
func (c *Call) Arg(name string) []byte {
	if v, ok := c.idx.lookup(name); ok {
		return v
	}
	v, _ := decode.Lookup(c.args, name)
	c.lastArg = v
	return v
}

// Argument accessors. Each returns the value or an error, never a
// quiet zero: the error is a *fastserver.Error (-32602, data naming the
// field, "arguments.<name>") that a handler returns as it is, and the
// client is told which argument was wrong. A tool whose input schema
// declares the argument required and typed never meets the error; the
// accessors do not trust that, so a schema that says less cannot turn a
// bad argument into a wrong result.

// argError is the refusal of an argument: -32602 naming it.
func argError(name, want string) error {
	return fastserver.InvalidParams("arguments."+name, "argument "+name+" must be "+want)
}

// ArgString returns the named argument's text with escapes resolved, or
// an error when it is absent or not a string. The slice lives in the
// Call's scratch space: valid until the handler returns, and not to be
// appended to.
func (c *Call) ArgString(name string) ([]byte, error) {
	v := c.Arg(name)
	if !isString(v) {
		return nil, argError(name, "a string")
	}
	start := len(c.scratch)
	c.scratch = decode.AppendUnquoted(c.scratch, v)
	return c.scratch[start:len(c.scratch):len(c.scratch)], nil
}

// ArgBool returns the named argument, or an error when it is absent or
// not true or false.
func (c *Call) ArgBool(name string) (bool, error) {
	switch string(c.Arg(name)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, argError(name, "true or false")
}

// ArgNumber returns the named argument's number exactly as it was sent
// (its JSON text: 12345678901234567890, 1e400, 0.1), or an error when it
// is absent or not a number. It is the exact alternative to ArgFloat and
// ArgInt, for values that fit neither; valid until the handler returns.
func (c *Call) ArgNumber(name string) ([]byte, error) {
	v := c.Arg(name)
	if kindOf(v) != kindNumber {
		return nil, argError(name, "a number")
	}
	return v, nil
}

// ArgFloat returns the named argument as the nearest float64, or an error
// when it is absent, not a number, beyond float64's range, or an integer
// float64 cannot hold exactly (beyond 2^53, where two integers share one
// float64: ArgInt or ArgNumber keep those exact). A fraction such as 0.1
// is rounded to the nearest float64, as JSON numbers are by definition
// of float64.
func (c *Call) ArgFloat(name string) (float64, error) {
	v := c.Arg(name)
	if kindOf(v) != kindNumber {
		return 0, argError(name, "a number")
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, argError(name, "a number within float64's range")
	}
	if math.Abs(f) > 1<<53 && f == math.Trunc(f) {
		if i, ok := decimalInt(v); !ok || float64(i) != f || int64(f) != i {
			return 0, argError(name, "a number a float64 holds exactly (use an integer below 2^53)")
		}
	}
	return f, nil
}

// ArgInt returns the named argument as an int64, or an error when it is
// absent, not a number, has a fractional part, or lies outside int64's
// range. 1.0 and 1e3 count as integers (JSON Schema's reading). The
// conversion is exact.
func (c *Call) ArgInt(name string) (int64, error) {
	v := c.Arg(name)
	if kindOf(v) != kindNumber {
		return 0, argError(name, "an integer")
	}
	i, ok := decimalInt(v)
	if !ok {
		return 0, argError(name, "an integer within int64's range")
	}
	return i, nil
}

// decimalInt converts a JSON number with no fractional part to int64
// exactly.
func decimalInt(v []byte) (int64, bool) {
	d := parseDecimal(v)
	if !d.isInteger() {
		return 0, false
	}
	if d.zero {
		return 0, true
	}
	if d.point > 19 {
		return 0, false
	}
	var u uint64
	for i := int64(0); i < d.point; i++ {
		digit := uint64(0)
		if k := d.start + int(i); k < d.end {
			digit = uint64(d.digit(k) - '0')
		}
		if u > (math.MaxUint64-digit)/10 {
			return 0, false
		}
		u = u*10 + digit
	}
	switch {
	case !d.neg && u <= math.MaxInt64:
		return int64(u), true
	case d.neg && u <= 1<<63:
		return int64(-u), true // -u wraps to MinInt64 for u == 1<<63
	}
	return 0, false
}

// AddText adds a text content item, {"type":"text","text":…}, escaping
// text as JSON requires (invalid UTF-8 becomes U+FFFD).
func (c *Call) AddText(text string) {
	c.sep()
	c.buf = appendTextItem(c.buf, text)
}

// AddTextJSON adds a text content item whose text is the raw JSON string
// raw, quotes included, copied as it is: the way to echo an argument
// without unescaping and escaping it again. raw would typically come from
// Arg. A raw that is not one valid JSON string is refused with an error.
func (c *Call) AddTextJSON(raw []byte) error {
	raw = trimWS(raw)
	if !isString(raw) || !c.isArg(raw) && !decode.Valid(raw) {
		return errNotJSONString
	}
	c.sep()
	c.buf = append(c.buf, `{"type":"text","text":`...)
	c.buf = append(c.buf, raw...)
	c.buf = append(c.buf, '}')
	return nil
}

// AddContentJSON adds a content item given as raw JSON, such as
// {"type":"image","data":"…","mimeType":"image/png"}. It must be one valid
// JSON object; it is copied as it is.
func (c *Call) AddContentJSON(item []byte) error {
	item = trimWS(item)
	if kindOf(item) != kindObject || !decode.Valid(item) {
		return errNotJSONObject
	}
	c.sep()
	c.buf = append(c.buf, item...)
	return nil
}

// SetStructuredContent sets the result's structuredContent to the raw
// JSON value v (it is copied). A v that is not valid JSON is refused with
// an error. Under 2025-06-18 and 2025-11-25 MCP types structuredContent
// as an object: a result with another value is answered 500 / -32603
// instead (2026-07-28 takes any value).
func (c *Call) SetStructuredContent(v []byte) error {
	v = trimWS(v)
	if len(v) == 0 || !decode.Valid(v) {
		return errNotJSON
	}
	c.structured = append(c.structured[:0], v...)
	c.hasStructured = true
	return nil
}

// SetError marks the result isError: true. The call happened, and its
// content says what went wrong, for the model to read.
func (c *Call) SetError() { c.isError = true }

var (
	errNotJSONString = errors.New("mcp: AddTextJSON needs one valid JSON string")
	errNotJSONObject = errors.New("mcp: AddContentJSON needs one valid JSON object")
	errNotJSON       = errors.New("mcp: SetStructuredContent needs one valid JSON value")
)

func (c *Call) sep() {
	if c.items > 0 {
		c.buf = append(c.buf, ',')
	}
	c.items++
}

// isArg reports whether v is exactly a value Arg returned (the same
// bytes of the arguments, validated with them): no need to validate it
// again. A slice of the arguments that is not one whole value (a string
// cut short, a string and what follows it) is not (found by review on
// 2026-12-06: AddTextJSON took any slice inside params, and
// Arg("text")[:5] made an answer that was not JSON).
func (c *Call) isArg(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if len(c.lastArg) == len(v) && &c.lastArg[0] == &v[0] {
		return true
	}
	return c.idx.holds(v)
}

func appendTextItem(dst []byte, text string) []byte {
	dst = append(dst, `{"type":"text","text":`...)
	dst = decode.AppendString(dst, text)
	return append(dst, '}')
}
