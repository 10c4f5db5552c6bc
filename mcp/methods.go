package mcp

import (
	"errors"
	"strconv"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// CompletionRequest is a completion/complete request: which argument of
// which prompt or resource template the client wants suggestions for.
type CompletionRequest struct {
	// Ref is "ref/prompt" or "ref/resource".
	Ref string
	// Name is the prompt's name (ref/prompt) or the template's URI
	// template, or a resource's URI (ref/resource).
	Name string
	// Argument is the name of the argument (or template variable).
	Argument string
	// Value is what the user has typed so far.
	Value string
	// Context holds the values of arguments already resolved
	// (params.context.arguments), nil when none were sent.
	Context map[string]string
}

// Completion is the answer to a CompletionRequest.
type Completion struct {
	// Values are the suggestions, best first; at most 100 are sent (MCP's
	// limit), HasMore is set when there were more.
	Values []string
	// Total is the number of suggestions in all, when known; 0 omits it.
	Total int
	// HasMore says there are more suggestions than Values.
	HasMore bool
}

// Completer answers completion/complete for the prompts and templates the
// request names, which exist (the server checked). An *fastserver.Error
// is answered as that error; any other error is 500 / -32603.
type Completer func(r *fastserver.Request, req CompletionRequest) (Completion, error)

// WithCompleter sets the function that answers completion/complete.
// Default: none, and completion/complete answers every argument of an
// existing prompt or template with no suggestions.
func WithCompleter(f Completer) Option {
	return func(s *Server) error {
		if f == nil {
			return errors.New("mcp: WithCompleter needs a function")
		}
		s.completer = f
		return nil
	}
}

var (
	errRefMissing      = fastserver.InvalidParams("ref", "params.ref must be an object with type ref/prompt (and name) or ref/resource (and uri)")
	errArgumentMissing = fastserver.InvalidParams("argument", "params.argument must be an object with a string name and value")
	errContextInvalid  = fastserver.InvalidParams("context.arguments", "params.context.arguments must be an object of strings")
)

// maxCompletionValues is MCP's limit on completion.values.
const maxCompletionValues = 100

// serveComplete answers completion/complete. It owns its params, so that
// rows 15 to 17 come in the contract's order: params that are not an
// object or a ref that is missing, malformed or given twice (-32602), then
// a prompt or resource that does not exist (-32601), then a member given
// twice in params or a bad argument (-32602).
func (s *Server) serveComplete(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	switch m.ParamsType {
	case decode.ParamsAbsent:
		return dst, errRefMissing
	case decode.ParamsOther:
		return dst, errParamsNotObject
	}
	var req CompletionRequest
	ref, n := decode.Lookup(m.Params, "ref")
	if n != 1 || kindOf(ref) != kindObject {
		return dst, errRefMissing
	}
	typ, _ := decode.Lookup(ref, "type")
	var key string
	switch {
	case decode.StringIs(typ, "ref/prompt"):
		req.Ref, key = "ref/prompt", "name"
	case decode.StringIs(typ, "ref/resource"):
		req.Ref, key = "ref/resource", "uri"
	default:
		return dst, errRefMissing
	}
	name, n := decode.Lookup(ref, key)
	if n != 1 || !isString(name) {
		return dst, errRefMissing
	}
	req.Name = string(decode.AppendUnquoted(nil, name))
	if req.Ref == "ref/prompt" {
		if _, ok := s.promptIdx[req.Name]; !ok {
			return dst, unknown("prompt", name)
		}
	} else if _, ok := s.tmplIndex[req.Name]; !ok {
		if _, ok := s.resIndex[req.Name]; !ok {
			return dst, unknownResource(req.Name)
		}
	}
	// Row 17 after row 16: a member given twice in params is refused
	// only once the target is known to exist.
	if decode.DuplicateName(m.Params) {
		return dst, duplicateIn(m.Params, "")
	}
	arg, n := decode.Lookup(m.Params, "argument")
	if n != 1 || kindOf(arg) != kindObject {
		return dst, errArgumentMissing
	}
	an, _ := decode.Lookup(arg, "name")
	av, _ := decode.Lookup(arg, "value")
	if !isString(an) || !isString(av) {
		return dst, errArgumentMissing
	}
	req.Argument = string(decode.AppendUnquoted(nil, an))
	req.Value = string(decode.AppendUnquoted(nil, av))
	if ctx, n := decode.Lookup(m.Params, "context"); n == 1 {
		args, _ := decode.Lookup(ctx, "arguments")
		if kindOf(ctx) != kindObject || args != nil && kindOf(args) != kindObject {
			return dst, errContextInvalid
		}
		if args != nil {
			req.Context = map[string]string{}
			var it decode.Members
			for it.Reset(args); it.Next(); {
				if !isString(it.Value()) {
					return dst, errContextInvalid
				}
				req.Context[memberName(&it)] = string(decode.AppendUnquoted(nil, it.Value()))
			}
		}
	}
	var c Completion
	if s.completer != nil {
		var err error
		if c, err = s.completer(r, req); err != nil {
			return dst, err
		}
	}
	v := RequestVersion(r)
	dst = s.openResult(dst, v)
	dst = append(dst, `"completion":{"values":[`...)
	values := c.Values
	if len(values) > maxCompletionValues {
		values, c.HasMore = values[:maxCompletionValues], true
	}
	for i, val := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = decode.AppendString(dst, val)
	}
	dst = append(dst, ']')
	if c.Total > 0 {
		dst = append(dst, `,"total":`...)
		dst = strconv.AppendInt(dst, int64(c.Total), 10)
	}
	if c.HasMore {
		dst = append(dst, `,"hasMore":true`...)
	}
	dst = append(dst, '}')
	return s.closeResult(dst, v), nil
}

// LogLevel is the severity of a log message (RFC 5424's, as MCP names
// them), ordered: LogDebug is the least severe.
type LogLevel uint8

// The log levels.
const (
	LogDebug LogLevel = iota
	LogInfo
	LogNotice
	LogWarning
	LogError
	LogCritical
	LogAlert
	LogEmergency

	numLogLevels = iota
)

var logLevelNames = [numLogLevels]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// String returns the level's wire name, such as "warning".
func (l LogLevel) String() string {
	if l >= numLogLevels {
		return "unknown"
	}
	return logLevelNames[l]
}

// parseLogLevel reads a raw JSON string naming a level.
func parseLogLevel(v []byte) (LogLevel, bool) {
	if !isString(v) {
		return 0, false
	}
	for l, name := range logLevelNames {
		if decode.StringIs(v, name) {
			return LogLevel(l), true
		}
	}
	return 0, false
}

var errLevelInvalid = fastserver.InvalidParams("level", "params.level must be one of debug, info, notice, warning, error, critical, alert, emergency")

// serveSetLevel answers logging/setLevel (2025-xx): the level is checked
// and set on the request's session (WithSessions) or, over stdio, on its
// stream's (StreamEndpoint); without either it cannot outlive the request
// and log messages of later requests are sent at every level (MCP lets a
// server choose when no level was set).
func (s *Server) serveSetLevel(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	if m.ParamsType != decode.ParamsObject {
		return dst, errLevelInvalid
	}
	lv, n := decode.Lookup(m.Params, "level")
	level, ok := parseLogLevel(lv)
	if n != 1 || !ok {
		return dst, errLevelInvalid
	}
	if ss := s.sessionOf(r); ss != nil {
		ss.mu.Lock()
		ss.level, ss.levelSet = level, true
		ss.mu.Unlock()
	}
	return append(dst, s.empty[RequestVersion(r)]...), nil
}

// serveSubscribe answers resources/subscribe and resources/unsubscribe
// (2025-xx): the uri must name a resource or match a template (else
// -32601, as resources/read); the answer is the empty result. The
// subscription is the session's (WithSessions: updates on its GET
// stream) or, over stdio, the stream's (updates written as lines between
// the answers); without either the server does not declare the subscribe
// capability, and a subscription is acknowledged and has no effect.
func (s *Server) serveSubscribe(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	uri, _, dup, ferr := target(m, "uri") // row 15, as resources/read
	if ferr != nil {
		return dst, ferr
	}
	u := string(decode.AppendUnquoted(nil, uri))
	if _, ok := s.resIndex[u]; !ok {
		if t, _ := s.findTemplate(u); t == nil {
			return dst, unknownResource(u)
		}
	}
	if dup { // row 17, once the resource is known to exist
		return dst, duplicateIn(m.Params, "")
	}
	if ss := s.sessionOf(r); ss != nil {
		max := stdioSubscriptions
		if ss != streamSessionOf(r) {
			max = s.sessions.opts.Subscriptions
		}
		ss.mu.Lock()
		switch {
		case string(m.Method) != "resources/subscribe":
			if ss.subs[u] {
				delete(ss.subs, u)
				ss.subBytes -= len(u)
			}
		case ss.subs[u]:
		case len(ss.subs) >= max || ss.subBytes+len(u) > 64<<10:
			n := len(ss.subs)
			ss.mu.Unlock()
			return dst, &fastserver.Error{Code: decode.CodeInvalidParams,
				Message: "the session is subscribed to " + strconv.Itoa(n) + " resources, the most it may be (SessionOptions.Subscriptions): unsubscribe first"}
		default:
			ss.subs[u] = true
			ss.subBytes += len(u)
		}
		ss.mu.Unlock()
	}
	return append(dst, s.empty[RequestVersion(r)]...), nil
}
