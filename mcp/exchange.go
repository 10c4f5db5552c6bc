package mcp

// NOTE: what a handler sends besides its result.
//
// Notifications (Call.Progress, Call.Log) and requests to the client
// (Call.Ask and its forms Elicit, Sample, ListRoots) follow the version:
//
//   - Progress goes out when the request carries _meta.progressToken; log
//     messages at or above the level the request asks for
//     (_meta["io.modelcontextprotocol/logLevel"] under 2026-07-28, none
//     when it asks for none) and, under 2025-xx, at every level (this
//     server keeps no session for logging/setLevel to set one).
//     They go on the request's own stream (fastserver.Request.Stream): the
//     first one turns the answer into text/event-stream (over stdio they
//     are lines written before the answer). Only tools
//     registered with Streaming run that way, so that every other call
//     keeps the plain path; for them Progress, Log and the 2025-xx form of
//     Ask return ErrNotStreaming.
//   - Ask under 2026-07-28 never uses the stream (SEP-2322): the answer is
//     looked up in the request's inputResponses and in the answers of
//     earlier rounds carried by its requestState; when it is not there
//     the request is recorded and Ask returns ErrInputRequired, which the
//     handler returns, and the call is answered with an input_required
//     result listing every request recorded and a new requestState (see
//     state.go). The handler runs again from the start on the next round.
//     A request needing a capability the client's clientCapabilities does
//     not declare fails with 400 / -32021.
//   - Ask under 2025-xx sends the request on the stream and waits for the
//     client's response POST (fastserver.Stream.Call; over stdio, the
//     response line).

import (
	"crypto/sha256"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Errors of the exchange methods of Call.
var (
	// ErrInputRequired is returned by Ask (2026-07-28) when the client has
	// not answered yet: the handler returns it (or an error wrapping it)
	// and the call is answered with an input_required result.
	ErrInputRequired = errors.New("mcp: input required from the client")
	// ErrNotStreaming is returned by Progress, Log and (2025-xx) Ask of a
	// tool that is not registered with Streaming: its answer cannot carry
	// notifications or requests.
	ErrNotStreaming = errors.New("mcp: the tool is not registered with Streaming, so its answer cannot carry notifications or requests")
	// ErrNoStream is returned by Ask under 2025-xx when the answer cannot
	// stream (the client does not accept text/event-stream, or too many
	// streams are open): the request cannot reach the client.
	ErrNoStream = errors.New("mcp: the answer cannot stream, so the request cannot reach the client")
)

// ClientError is the error a client answered a request to it with (Ask
// under 2025-xx). A handler that returns it fails as any tool does: a
// result with isError.
type ClientError struct {
	// Method is the request the client refused.
	Method string
	// Code, Message and Data are the client's JSON-RPC error.
	Code    int
	Message string
	Data    []byte
}

// Error returns "mcp: the client answered METHOD with CODE MESSAGE".
func (e *ClientError) Error() string {
	return "mcp: the client answered " + e.Method + " with " + strconv.Itoa(e.Code) + " " + e.Message
}

// callExchange is the part of a Call that deals with the stream and with
// input from the client.
type callExchange struct {
	srv       *Server
	st        *fastserver.Stream // the call's stream; nil when it runs without one
	streaming bool               // the tool may stream (Tool.Streaming)
	method    string             // what a requestState is bound to: the method…
	target    string             // … the tool or prompt name…
	who       *auth.Token        // … and the token's holder (WithAuth), nil without
	meta      []byte             // params._meta, nil when none
	inputs    []byte             // params.inputResponses (2026-07-28), nil when none
	state     stateData          // the verified requestState
	hasState  bool

	progress []byte // _meta.progressToken, raw
	logMin   LogLevel
	logs     bool // log messages are wanted

	asks      []byte // this round's input requests: "key":{…},…
	used      []byte // answers used this round: "key":{…},…
	user      []byte // the handler's state for the next round
	userSet   bool
	note      []byte // a notification being built
	caps      []byte // _meta clientCapabilities, once looked up
	capsFound bool
	sess      *session // the 2025-xx session the request names, or nil
}

func (x *callExchange) reset() {
	asks, used, user, note := reuse(x.asks), reuse(x.used), reuse(x.user), reuse(x.note)
	// Cleared in place and the buffers put back: a literal with them
	// would be built on the stack and copied over (twice the stores).
	*x = callExchange{}
	x.asks, x.used, x.user, x.note = asks, used, user, note
}

// params are the members of params that the exchange reads, found in
// the walk that reads the target (target in tools.go).
type exchangeParams struct {
	meta, inputs, state []byte
	seen                paramsSeen // for the header rules (check.go)
}

var (
	errInputsNotObject = fastserver.InvalidParams("inputResponses", "params.inputResponses must be an object whose values are objects")
)

// begin prepares the exchange of a call to method on name under v, and
// checks the members of params it reads. The tool's streaming decides
// what Progress and Log may do.
func (x *callExchange) begin(s *Server, v Version, method, name string, p *exchangeParams, streaming bool, who *auth.Token) *fastserver.Error {
	x.srv, x.streaming, x.who = s, streaming, who
	x.meta = p.meta
	if !v.Stateless() {
		x.logs, x.logMin = true, LogDebug
		if x.sess != nil {
			x.sess.mu.Lock()
			if x.sess.levelSet {
				x.logMin = x.sess.level
			}
			x.sess.mu.Unlock()
		}
		if streaming && kindOf(x.meta) == kindObject {
			x.progress = progressToken(x.meta)
		}
		return nil
	}
	x.method, x.target = method, name
	if p.inputs != nil {
		if !inputResponses(p.inputs) {
			return errInputsNotObject
		}
		x.inputs = p.inputs
	}
	if p.state != nil {
		d, err := s.states.decode(p.state, x.binding(), time.Now())
		if err != nil {
			return err
		}
		x.state, x.hasState = d, true
	}
	if streaming && kindOf(x.meta) == kindObject {
		x.progress = progressToken(x.meta)
		if lv, n := decode.Lookup(x.meta, metaLogLevelKey); n == 1 {
			if l, ok := parseLogLevel(lv); ok {
				x.logs, x.logMin = true, l
			}
		}
	}
	return nil
}

// inputResponses reports whether v is what inputResponses must be: an
// object, no name twice, of objects.
func inputResponses(v []byte) bool {
	if kindOf(v) != kindObject || decode.DuplicateName(v) {
		return false
	}
	var it decode.Members
	for it.Reset(v); it.Next(); {
		if kindOf(it.Value()) != kindObject {
			return false
		}
	}
	return true
}

// binding is what a requestState of the call is bound to. Under
// WithAuth that includes who holds the token: a state carries the
// answers of earlier rounds (a user's consent, say), which must not serve
// another user who obtained it. The holder is hashed, as the state's body
// is readable.
func (x *callExchange) binding() string {
	b := x.method + " " + x.target
	if x.who == nil {
		return b
	}
	return b + " " + holderHash(x.who)
}

// holderHash names who holds tok: a hash of the principal (issuer and
// subject, or a token of its own when it names neither subject nor
// client) and the client.
func holderHash(tok *auth.Token) string {
	h := sha256.New()
	for _, f := range []string{tok.Principal(), tok.ClientID} {
		h.Write(strconv.AppendInt(nil, int64(len(f)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return b64url.EncodeToString(h.Sum(nil)[:16])
}

// progressToken returns _meta.progressToken when it is a string or an
// integer.
func progressToken(meta []byte) []byte {
	tok, n := decode.Lookup(meta, "progressToken")
	if n != 1 || !(isString(tok) || isInteger(tok)) {
		return nil
	}
	return tok
}

func isInteger(v []byte) bool {
	if kindOf(v) != kindNumber {
		return false
	}
	for _, ch := range v {
		if ch == '.' || ch == 'e' || ch == 'E' {
			return false
		}
	}
	return true
}

// wantsStream reports whether a Streaming tool's call may send anything
// on a stream: under 2026-07-28 only progress and asked-for logs go
// there; under 2025-xx logs always may, and requests to the client.
func (x *callExchange) wantsStream(v Version) bool {
	if !v.Stateless() {
		return true
	}
	return x.progress != nil || x.logs
}

// Progress sends a progress notification for the call, when the request
// carries a progressToken: progress so far, out of total (0: unknown),
// with an optional message. Without a token, or when the answer cannot
// stream, it does nothing and returns nil; it returns ErrNotStreaming for
// a tool not registered with Streaming, and an error of the stream
// (fastserver.ErrStreamClosed) when the client has gone, which the
// handler should return. In a task (StartTask) it sends nothing: a
// non-empty message becomes the task's statusMessage, and once the task
// is cancelled it returns the Context's error.
func (c *Call) Progress(progress, total float64, message string) error {
	if c.task != nil {
		if err := c.task.ctx.Err(); err != nil {
			return err
		}
		c.task.note(c.srv.tasks, message)
		return nil
	}
	if !c.streaming {
		return ErrNotStreaming
	}
	if c.progress == nil {
		return nil
	}
	if send, err := c.streamState(); !send {
		return err
	}
	if math.IsNaN(progress) || math.IsInf(progress, 0) || math.IsNaN(total) || math.IsInf(total, 0) {
		return errors.New("mcp: progress and total must be finite numbers")
	}
	b := append(c.note[:0], `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, c.progress...)
	b = append(b, `,"progress":`...)
	b = appendNumber(b, progress)
	if total > 0 {
		b = append(b, `,"total":`...)
		b = appendNumber(b, total)
	}
	if message != "" {
		b = append(b, `,"message":`...)
		b = decode.AppendString(b, message)
	}
	b = append(b, "}}"...)
	c.note = b
	return c.st.Send(b)
}

// appendNumber appends f as a JSON number.
func appendNumber(b []byte, f float64) []byte {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// Log sends a log message (notifications/message) at level, from logger
// (empty: none), whose data is the raw JSON value data (a string, an
// object…), when the request wants messages of that level (see the
// package doc). Otherwise, or when the answer cannot stream, it does
// nothing and returns nil; it returns ErrNotStreaming for a tool not
// registered with Streaming, an error for data that is not valid JSON,
// and an error of the stream when the client has gone. In a task
// (StartTask) nothing is sent.
func (c *Call) Log(level LogLevel, logger string, data []byte) error {
	if !c.streaming && c.task == nil {
		return ErrNotStreaming
	}
	data = trimWS(data)
	if len(data) == 0 || !decode.Valid(data) {
		return errNotJSON
	}
	if level >= numLogLevels {
		return errors.New("mcp: unknown log level")
	}
	if c.task != nil {
		return nil // a task has no stream
	}
	if !c.logs || level < c.logMin {
		return nil
	}
	if send, err := c.streamState(); !send {
		return err
	}
	b := append(c.note[:0], `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":`...)
	b = decode.AppendString(b, level.String())
	if logger != "" {
		b = append(b, `,"logger":`...)
		b = decode.AppendString(b, logger)
	}
	b = append(b, `,"data":`...)
	b = append(b, data...)
	b = append(b, "}}"...)
	c.note = b
	return c.st.Send(b)
}

// LogText is Log with a text message as the data.
func (c *Call) LogText(level LogLevel, logger, text string) error {
	if c.task != nil {
		return nil // a task has no stream
	}
	if !c.streaming {
		return ErrNotStreaming
	}
	if !c.logs || level < c.logMin {
		return nil
	}
	if send, err := c.streamState(); !send {
		return err
	}
	return c.Log(level, logger, decode.AppendString(nil, text))
}

func (x *callExchange) live() bool { return x.st != nil && x.st.Live() }

// streamState says whether the call's stream takes events now (send), or
// else what Progress and Log return: nil when the answer cannot stream at
// all (no stream: the tool runs plain, or the stream was refused), the
// stream's error once it has closed or the call's context has ended
// (found by review on 2026-12-06: they returned nil for a client that had
// gone, and the tool ran on to its end).
func (x *callExchange) streamState() (send bool, err error) {
	if x.st == nil {
		return false, nil
	}
	switch err := x.st.Err(); {
	case err == nil:
		return true, nil
	case errors.Is(err, fastserver.ErrStreamNotAccepted), errors.Is(err, fastserver.ErrStreamLimit),
		errors.Is(err, fastserver.ErrStreamUnavailable):
		return false, nil
	default:
		return false, err
	}
}

// capabilityOf names the client capability a request to the client needs.
func capabilityOf(method string) string {
	switch method {
	case "sampling/createMessage":
		return "sampling"
	case "elicitation/create":
		return "elicitation"
	case "roots/list":
		return "roots"
	}
	return ""
}

// ClientSupports reports whether the client declares the named capability
// ("sampling", "elicitation", "roots", …): under 2026-07-28 from the
// request's clientCapabilities; under 2025-xx from initialize's, kept by
// the session the request names (WithSessions), and without one it
// reports true (the client refuses a request it cannot serve).
func (c *Call) ClientSupports(capability string) bool {
	if !c.v.Stateless() {
		if c.sess != nil {
			v, n := decode.Lookup(c.sess.caps, capability)
			return n == 1 && kindOf(v) == kindObject
		}
		return true
	}
	if !c.capsFound {
		c.capsFound = true
		if kindOf(c.meta) == kindObject {
			c.caps, _ = decode.Lookup(c.meta, metaCapabilitiesKey)
		}
	}
	v, n := decode.Lookup(c.caps, capability)
	return n == 1 && kindOf(v) == kindObject
}

// missingCapability refuses a call that needs a capability the client did
// not declare: 400 / -32021.
func missingCapability(capability string) *fastserver.Error {
	data := append([]byte(`{"requiredCapabilities":{`), decode.AppendString(nil, capability)...)
	data = append(data, ":{}}}"...)
	return &fastserver.Error{Status: 400, Code: CodeMissingCapability,
		Message: "the request needs the client capability " + capability + ", which it does not declare", Data: data}
}

// Ask asks the client for input: a request of method ("elicitation/create",
// "sampling/createMessage", "roots/list") with params (a JSON object, nil
// for none), under the key that names it within the call (any string,
// unique per request; it matters under 2026-07-28 only). It returns the
// client's result (the ElicitResult, CreateMessageResult or
// ListRootsResult), valid until the handler returns.
//
// Under 2026-07-28 it returns the answer when the client sent it (this
// round or an earlier one) and otherwise ErrInputRequired, which the
// handler returns so that the call is answered input_required (call Ask
// for every input it can ask for at once before returning it); a
// capability the client did not declare fails with 400 / -32021. Under
// 2025-xx the request goes on the call's stream and Ask waits for the
// client's response (fastserver.Config.ClientResponseTimeout at most);
// that needs a tool registered with Streaming (else ErrNotStreaming) and,
// over HTTP, a client that accepts text/event-stream (else ErrNoStream;
// over stdio the request and the response are lines); when the
// request names a session (WithSessions) whose client did not declare
// the capability the method needs, nothing is sent and Ask fails (the
// tool fails with it, isError).
func (c *Call) Ask(key, method string, params []byte) ([]byte, error) {
	if params != nil {
		params = trimWS(params)
		if kindOf(params) != kindObject || !decode.Valid(params) {
			return nil, errors.New("mcp: Ask needs params that are one JSON object")
		}
	}
	if cp := capabilityOf(method); cp != "" && !c.ClientSupports(cp) {
		// Only capabilities the client declared may be used (MCP
		// lifecycle); under 2025-xx only a session knows them.
		if c.v.Stateless() {
			return nil, missingCapability(cp)
		}
		return nil, errors.New("mcp: the client did not declare the " + cp + " capability when it initialized its session")
	}
	if !c.v.Stateless() {
		switch {
		case !c.streaming:
			return nil, ErrNotStreaming
		case !c.live():
			return nil, ErrNoStream
		}
		res, err := c.st.Call(method, params)
		if fe, ok := errors.AsType[*fastserver.Error](err); ok {
			// The client refused the request: the tool fails (its own
			// error), the call does not answer with the client's code.
			return nil, &ClientError{Method: method, Code: fe.Code, Message: fe.Message, Data: fe.Data}
		}
		return res, err
	}
	if v, n := decode.Lookup(c.inputs, key); n == 1 {
		c.used = appendMember(c.used, key, v)
		return v, nil
	}
	if c.hasState {
		if v, n := decode.Lookup(c.state.answers, key); n == 1 {
			c.used = appendMember(c.used, key, v)
			return v, nil
		}
	}
	req := append([]byte(`{"method":`), decode.AppendString(nil, method)...)
	if params == nil {
		params = emptyObject
	}
	req = append(append(append(req, `,"params":`...), params...), '}')
	c.asks = appendMember(c.asks, key, req)
	return nil, ErrInputRequired
}

// appendMember appends "key":value to a list of members.
func appendMember(b []byte, key string, value []byte) []byte {
	if len(b) > 0 {
		b = append(b, ',')
	}
	b = decode.AppendString(b, key)
	b = append(b, ':')
	return append(b, value...)
}

// Elicit asks the user, through the client, for the input described by
// params (an ElicitRequest's params: message and requestedSchema). See Ask.
func (c *Call) Elicit(key string, params []byte) ([]byte, error) {
	return c.Ask(key, "elicitation/create", params)
}

// Sample asks the client's model for a completion described by params (a
// CreateMessageRequest's params: messages, maxTokens…). See Ask.
func (c *Call) Sample(key string, params []byte) ([]byte, error) {
	return c.Ask(key, "sampling/createMessage", params)
}

// ListRoots asks the client for its roots. See Ask.
func (c *Call) ListRoots(key string) ([]byte, error) {
	return c.Ask(key, "roots/list", nil)
}

// HasState reports whether the request carried a requestState that
// verified: it is a later round of an input exchange (2026-07-28).
func (c *Call) HasState() bool { return c.hasState }

// State returns the handler's own state of the previous round (what it
// gave SetState), raw JSON, or nil. It is valid until the handler returns.
func (c *Call) State() []byte { return c.state.user }

// SetState keeps v, one JSON value, in the requestState of the
// input_required answer, for the next round's State. The state is signed,
// not encrypted: it must not hold secrets.
func (c *Call) SetState(v []byte) error {
	v = trimWS(v)
	if len(v) == 0 || !decode.Valid(v) {
		return errNotJSON
	}
	c.user = append(c.user[:0], v...)
	c.userSet = true
	return nil
}

// appendInputRequired appends the input_required result of the round to
// dst (2026-07-28).
func (x *callExchange) appendInputRequired(dst []byte) ([]byte, error) {
	s := x.srv
	user := x.state.user
	if x.userSet {
		user = x.user
	}
	answers := append(append([]byte{'{'}, x.used...), '}')
	state, err := s.states.encode(x.binding(), answers, user, time.Now())
	if err != nil {
		return dst, err
	}
	dst = append(dst, `{"resultType":"input_required","inputRequests":{`...)
	dst = append(dst, x.asks...)
	dst = append(dst, `},"requestState":`...)
	dst = decode.AppendString(dst, state)
	return append(dst, s.meta...), nil
}
