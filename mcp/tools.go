package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Tool describes a tool for registration with Server.AddTool.
type Tool struct {
	// Name identifies the tool in tools/call. Required; unique.
	Name string
	// Title is an optional display name (sent from 2025-06-18 on).
	Title string
	// Description tells a model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the arguments, compiled at
	// registration: draft 2020-12 unless its $schema names another
	// dialect; its root must have "type": "object", as MCP requires.
	// Schemas inside the compiled subset (see the package doc) are checked
	// without allocating; every other valid schema is checked by the JSON
	// Schema library. A $ref to a document outside the schema needs that
	// document supplied (Server.AddSchemaDocument): nothing is fetched.
	// Empty means {"type":"object"}: any object.
	InputSchema string
	// OutputSchema is the optional JSON Schema of the result's
	// structuredContent (MCP 2025-06-18 on), compiled as InputSchema is.
	// When set, a result that is not an error must carry structuredContent
	// that passes it: a handler whose result does not is answered 500 /
	// -32603 and its result is never sent. Listed by tools/list from
	// 2025-06-18 on.
	OutputSchema string
	// Handler runs the tool. Required.
	Handler ToolHandler
	// Scopes are the OAuth scopes a caller's access token must hold to
	// call the tool, besides the endpoint's own (see WithAuth). A call
	// without them is refused 403 with error="insufficient_scope" naming
	// every scope it needs, after the tool is found (row 16) and before
	// its arguments are looked at (row 17). Scopes need WithAuth: a tool
	// with scopes on a server without it is a registration error.
	// Transports without authorization (stdio) do not check them.
	Scopes []string
	// Streaming says the handler may send progress or log messages, or
	// (under 2025-xx) requests to the client, while it runs (Call.Progress,
	// Call.Log, Call.Ask): a call that may then runs through
	// fastserver.Request.Stream, so that the first message turns its answer
	// into a stream. Other tools keep the plain path, and those methods
	// return ErrNotStreaming.
	Streaming bool
	// Task says whether calls may go on as tasks (SEP-2663, the
	// io.modelcontextprotocol/tasks extension of MCP 2026-07-28): the
	// handler calls Call.StartTask where its long part begins (see
	// StartTask). TaskRequired refuses the calls of clients that do not
	// declare the extension, before the handler. Default TaskNone.
	Task TaskSupport
}

// ToolHandler runs a tool whose arguments have passed its input schema.
type ToolHandler interface {
	// CallTool appends the result's content to c. Returning nil answers
	// the content (with isError if c.SetError was called). Returning an
	// *fastserver.Error (or an error wrapping one) answers that JSON-RPC
	// error instead: the call did not happen. Any other error means the
	// tool ran and failed: the answer is a result with isError: true and
	// the error's text as its only content.
	CallTool(c *Call) error
}

// ToolFunc adapts a function to ToolHandler.
type ToolFunc func(c *Call) error

// CallTool calls f(c).
func (f ToolFunc) CallTool(c *Call) error { return f(c) }

var _ ToolHandler = ToolFunc(nil)

// tool is a registered Tool with its compiled schema.
type tool struct {
	Tool
	in  *toolSchema
	out *toolSchema // nil: no output schema

	scopes    auth.ScopeSet
	forbidden *fastserver.Error // the 403 of a token without scopes

	// plain says the name holds no quote or backslash: a request's raw
	// JSON string whose content equals it names this tool, unescaped.
	plain bool

	// headers are the input schema's x-mcp-header annotations, whose
	// Mcp-Param headers a call's arguments are checked against (row 12).
	headers []paramHeader
}

// AddTool registers a tool. It fails (and records the mistake for Err and
// the Endpoint) for an empty or duplicate name, a nil handler, an input
// or output schema that is not a valid JSON Schema (for its dialect's
// metaschema), whose root is not "type": "object", that repeats a member
// name, or whose $ref names a document not supplied (ErrRemoteRef), for
// an input schema whose "x-mcp-header" annotations break a constraint of
// MCP 2026-07-28 (see the package doc's header rules), or after Endpoint
// was called.
func (s *Server) AddTool(t Tool) error {
	if err := s.register("tool", t.Name); err != nil {
		return s.fail(err)
	}
	if t.Handler == nil {
		return s.fail(fmt.Errorf("mcp: tool %q registered with a nil handler", t.Name))
	}
	if _, dup := s.toolIndex[t.Name]; dup {
		return s.fail(fmt.Errorf("mcp: tool %q registered twice", t.Name))
	}
	if !utf8.ValidString(t.Title) || !utf8.ValidString(t.Description) {
		return s.fail(fmt.Errorf("mcp: tool %q: title and description must be valid UTF-8", t.Name))
	}
	if t.Task > TaskRequired {
		return s.fail(fmt.Errorf("mcp: tool %q: unknown task support %v", t.Name, t.Task))
	}
	in, err := compileToolSchema(t.InputSchema, t.Name, "input", s.schemaDocs, s.schemaPaths)
	if err != nil {
		return s.fail(fmt.Errorf("mcp: tool %q: %w", t.Name, err))
	}
	rt := &tool{Tool: t, in: in, plain: !strings.ContainsAny(t.Name, `"\\`)}
	if rt.headers, err = scanParamHeaders(in.json); err != nil {
		return s.fail(fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err))
	}
	if len(trimWS([]byte(t.OutputSchema))) > 0 {
		if rt.out, err = compileToolSchema(t.OutputSchema, t.Name, "output", s.schemaDocs, s.schemaPaths); err != nil {
			return s.fail(fmt.Errorf("mcp: tool %q: %w", t.Name, err))
		}
	}
	if len(t.Scopes) > 0 {
		if s.auth == nil {
			return s.fail(fmt.Errorf("mcp: tool %q requires scopes but the server has no WithAuth", t.Name))
		}
		set, err := s.auth.Require(t.Scopes...)
		if err != nil {
			return s.fail(fmt.Errorf("mcp: tool %q: %w", t.Name, err))
		}
		rt.Tool.Scopes = append([]string(nil), t.Scopes...)
		rt.scopes, rt.forbidden = set, s.auth.Forbidden(set)
	}
	s.tools = append(s.tools, rt)
	s.toolIndex[t.Name] = rt
	return nil
}

// Refusals of tools/call, prompts/get and resources/read (rows 15 to 17).
// They are shared and must not be modified.
var (
	errParamsNotObject = fastserver.InvalidParams("params", "params must be an object")
	errNameAbsent      = fastserver.InvalidParams("name", "params.name is required")
	errNameTwice       = fastserver.InvalidParams("name", "params.name is given twice")
	errNameNotString   = fastserver.InvalidParams("name", "params.name must be a string")
	errURIMissing      = fastserver.InvalidParams("uri", "params.uri is required")
	errURITwice        = fastserver.InvalidParams("uri", "params.uri is given twice")
	errURINotString    = fastserver.InvalidParams("uri", "params.uri must be a string")
	errArgsNotObject   = fastserver.InvalidParams("arguments", "params.arguments must be an object")
	errCursor          = fastserver.InvalidParams("cursor", "unknown cursor: this server answers every list on one page")
)

// target reads the member of params that names the target of tools/call,
// prompts/get (by "name") or resources/read (by "uri"), and the
// arguments, checking row 15: params an object, the target present once
// and a string. In the same pass it notes whether any member name of
// params repeats (row 17, answered after row 16 by the caller).
func target(m *decode.Message, key string) (name, args []byte, dup bool, err *fastserver.Error) {
	name, args, _, dup, err = targetX(m, key, nil)
	return name, args, dup, err
}

// argsCheck lets the walk over a tools/call's params (targetX) check the
// arguments against the named tool's schema as it meets them, so that
// they are walked once: by the schema check, which finds their end,
// instead of by a skip and then the check.
type argsCheck struct {
	s    *Server
	c    *Call // the call being walked: its index, its last tool
	tool *tool // the tool whose schema found the arguments valid, or nil
}

// try checks the arguments, whose value starts it.Rest, for the tool
// named by the raw JSON string name (met before them in params), and
// takes the value when they are valid.
func (ac *argsCheck) try(name []byte, it *decode.Members) {
	t, ok := ac.c.findTool(ac.s, name)
	if !ok {
		return
	}
	if n := t.in.checkArgumentsIn(it.Rest(), &ac.c.idx); n > 0 && it.TakeValue(n) {
		ac.tool = t
	}
}

// findTool returns s's tool named by the raw JSON string name. A pooled
// Call remembers the last tool it found and for which server, and
// compares the name with it before hashing it into the index.
func (c *Call) findTool(s *Server, name []byte) (*tool, bool) {
	if t := c.lastTool; t != nil && c.lastSrv == s && t.plain && len(name) == len(t.Name)+2 &&
		string(name[1:len(name)-1]) == t.Name {
		return t, true
	}
	t, ok := lookup(s.toolIndex, name)
	if ok {
		c.lastSrv, c.lastTool = s, t
	}
	return t, ok
}

// targetX is target that also returns the members of params the exchange
// reads (_meta, inputResponses, requestState), found in the same walk.
// With ac (tools/call), arguments that follow the name are checked
// against the tool's schema in the walk (argsCheck).
func targetX(m *decode.Message, key string, ac *argsCheck) (name, args []byte, xp exchangeParams, dup bool, err *fastserver.Error) {
	var w walked
	walkTarget(m, key, ac, &w)
	return w.name, w.args, w.xp, w.dup, w.err
}

// walked is what the walk over params found (targetX's results), kept
// in place in a pooled Call: a struct of some 200 bytes that is not
// copied from the walk to the Call and on.
type walked struct {
	name, args []byte
	xp         exchangeParams
	dup        bool
	err        *fastserver.Error
}

// walkTarget is targetX writing its results into w, which it clears
// first.
func walkTarget(m *decode.Message, key string, ac *argsCheck, w *walked) {
	*w = walked{}
	missing, twice, notString := errNameAbsent, errNameTwice, errNameNotString
	if key == "uri" {
		missing, twice, notString = errURIMissing, errURITwice, errURINotString
	}
	switch m.ParamsType {
	case decode.ParamsAbsent:
		w.err = missing
		return
	case decode.ParamsOther:
		w.err = errParamsNotObject
		return
	}
	n := 0
	var (
		set  nameSet
		it   decode.Members
		name []byte
		dup  bool
	)
	xp := &w.xp
	xp.seen.object = true
	for it.Reset(m.Params); it.NextName(); {
		if ac != nil && n == 1 && ac.tool == nil && it.NameIs("arguments") && isString(name) {
			ac.try(name, &it)
		}
		if !it.TakeValue(0) {
			break
		}
		if set.add(&it) {
			dup = true
		}
		switch {
		case it.NameIs(key):
			name = it.Value()
			n++
			xp.seen.src, xp.seen.srcN = name, n
		case key == "name" && it.NameIs("arguments"):
			w.args = it.Value()
		case it.NameIs("_meta"):
			xp.meta = it.Value()
			xp.seen.meta = xp.meta
			xp.seen.metaN++
		case it.NameIs("inputResponses"):
			xp.inputs = it.Value()
		case it.NameIs("requestState"):
			xp.state = it.Value()
		}
	}
	switch {
	case n == 0:
		w.args, w.err = nil, missing
		return
	case n > 1:
		w.args, w.err = nil, twice
		return
	case !isString(name):
		w.args, w.err = nil, notString
		return
	}
	if !dup && set.overflow {
		dup = decode.DuplicateName(m.Params)
	}
	w.name, w.dup = name, dup
}

// duplicateIn refuses params or arguments holding a member name twice
// (row 17); prefix is "" for params, "arguments." for arguments.
func duplicateIn(obj []byte, prefix string) *fastserver.Error {
	name, _ := duplicateName(obj)
	field := clip(prefix + name)
	return fastserver.InvalidParams(field, "the member "+field+" is given twice")
}

// invalidArguments refuses arguments that fail a schema or a prompt's
// argument list, naming the field.
func invalidArguments(field, msg string) *fastserver.Error {
	field = clip(field)
	return fastserver.InvalidParams(field, "invalid arguments: "+field+" "+msg)
}

// maxEcho bounds the bytes of client text (names, paths) an error
// message or its data repeats, so a refusal stays small.
const maxEcho = 256

// clip shortens s to at most maxEcho bytes, on a rune boundary, marking
// the cut with "…".
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	i := maxEcho
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// lookup finds the entry a raw JSON string names, without allocating
// for names of up to 256 bytes once unescaped.
func lookup[T any](index map[string]T, v []byte) (T, bool) {
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		t, ok := index[string(raw)]
		return t, ok
	}
	var buf [256]byte
	u := decode.AppendUnquoted(buf[:0], v)
	t, ok := index[string(u)]
	return t, ok
}

// unknown answers row 16: a tool, prompt or resource that does not exist
// is 200 / -32601 (MCP's own examples use -32602; the contract departs).
func unknown(kind string, v []byte) *fastserver.Error {
	return &fastserver.Error{
		Code:    decode.CodeMethodNotFound,
		Message: "unknown " + kind + ": " + clip(string(decode.AppendUnquoted(nil, v))),
	}
}

// serveToolsCall answers tools/call in the contract's order: row 15
// (params, name), row 16 (the tool exists), row 17 (duplicates in params,
// arguments an object without duplicates, the input schema), then the
// handler.
func (s *Server) serveToolsCall(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	// The endpoint's Check walked params already (checkHeaders), unless
	// the request came another way (a stream).
	c, _ := r.Memo.(*Call)
	if c != nil {
		r.Memo = nil // (over stdio Memo holds the stream's session: sessionOf)
	}
	if c == nil || !c.walked || c.m != nil {
		if c != nil {
			c.release()
		}
		c = getCall(r)
		c.walk(m, s)
	}
	name, args, dup, ferr := c.w.name, c.w.args, c.w.dup, c.w.err
	fail := func(e error) ([]byte, error) {
		c.release()
		return dst, e
	}
	if ferr != nil {
		return fail(ferr)
	}
	t, ok := c.checked, c.checked != nil // found by the walk (argsCheck)
	if !ok {
		t, ok = c.findTool(s, name)
	}
	if !ok {
		return fail(unknown("tool", name))
	}
	// Row 16a: the tool's scopes. A request that reached here through
	// an endpoint with WithAuth carries its token; one without (stdio)
	// came through a transport that has no authorization.
	if t.scopes != 0 {
		if tok := auth.FromRequest(r); tok != nil && !tok.Scopes.Has(t.scopes) {
			return fail(t.forbidden)
		}
	}
	if dup {
		return fail(duplicateIn(m.Params, ""))
	}
	if args == nil {
		args = emptyObject
	} else if kindOf(args) != kindObject {
		return fail(errArgsNotObject)
	}
	if c.checked != t { // else the walk over params checked them (argsCheck)
		if e := t.in.validateArguments(args, &c.idx); e != nil {
			if e == dupMember {
				return fail(duplicateIn(args, "arguments."))
			}
			return fail(invalidArguments(e.field("arguments"), e.msg))
		}
	}

	v := RequestVersion(r)
	c.r, c.args, c.v, c.m = r, args, v, m
	c.tool = t
	c.sess = s.sessionOf(r)
	if e := c.begin(s, v, "tools/call", t.Name, &c.w.xp, t.Streaming, auth.FromRequest(r)); e != nil {
		return fail(e)
	}
	if t.Task == TaskRequired && (!v.Stateless() || !clientTakesTasks(c.meta)) {
		return fail(errTasksMissing)
	}
	if t.Streaming && c.wantsStream(v) {
		return r.Stream(dst, c)
	}
	return c.runTool(dst)
}

// ServeStream runs the call's tool with its stream (fastserver.StreamHandler).
func (c *Call) ServeStream(st *fastserver.Stream, dst []byte) ([]byte, error) {
	c.st = st
	return c.runTool(dst)
}

// runTool runs the tool and builds its answer, then releases c.
func (c *Call) runTool(dst []byte) ([]byte, error) {
	s, v := c.srv, c.v
	start := len(dst)
	c.buf = append(s.openResult(dst, v), `"content":[`...)
	err := c.tool.Handler.CallTool(c)
	dst = c.buf
	if err == nil {
		if ferr := c.tool.checkOutput(c); ferr != nil {
			c.release()
			return dst[:start], ferr
		}
		dst = c.endResult(dst)
		c.release()
		return s.closeResult(dst, v), nil
	}
	defer c.release()
	if c.startTask && errors.Is(err, ErrRunAsTask) {
		return c.createTask(dst[:start])
	}
	if fe, ok := errors.AsType[*fastserver.Error](err); ok {
		return dst[:start], fe // a refusal (-32021 included) wins over a request for input
	}
	if errors.Is(err, ErrInputRequired) && v.Stateless() && len(c.asks) > 0 {
		return c.appendInputRequired(dst[:start])
	}
	if errors.Is(err, fastserver.ErrStreamClosed) {
		return dst[:start], err // the client is gone: nobody reads the answer
	}
	return failedResult(s, dst[:start], v, err), nil
}

// endResult closes the content a handler built and adds isError and
// structuredContent: the members of the result of a call that returned
// nil, up to its closeResult.
func (c *Call) endResult(dst []byte) []byte {
	dst = append(dst, ']')
	if c.isError {
		dst = append(dst, `,"isError":true`...)
	}
	if c.hasStructured {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, c.structured...)
	}
	return dst
}

// failedResult appends the result of a tool that ran and failed with
// err: isError, the error's text its only content.
func failedResult(s *Server, dst []byte, v Version, err error) []byte {
	dst = append(s.openResult(dst, v), `"content":[`...)
	dst = appendTextItem(dst, err.Error())
	dst = append(dst, `],"isError":true`...)
	return s.closeResult(dst, v)
}

var emptyObject = []byte("{}")

// checkOutput holds a result to the protocol's and the tool's output
// schema: under 2025-xx structuredContent is an object; a result that is
// not an error must carry structuredContent that passes the tool's
// schema. A result that does not is the server's fault (500 / -32603),
// and it is never sent.
func (t *tool) checkOutput(c *Call) *fastserver.Error {
	if c.hasStructured && !c.v.Stateless() && kindOf(c.structured) != kindObject {
		// 2025-06-18 and 2025-11-25 type structuredContent as an object
		// ({[key: string]: unknown}), and clients that check the result
		// (the TypeScript SDK) fail the whole call on anything else
		// (found by review on 2026-12-06: arrays, strings and null went
		// out as set).
		return outputError("structuredContent must be a JSON object under " + c.v.String())
	}
	if t.out == nil || c.isError {
		return nil
	}
	if !c.hasStructured {
		return outputError("the tool declares an output schema but its result has no structuredContent")
	}
	if e := t.out.validate(c.structured); e != nil {
		return outputError("the result's " + clip(e.field("structuredContent")) + " " + e.msg + " (the tool's output schema)")
	}
	return nil
}

// outputError is the answer to a result that breaks its tool's output
// schema.
func outputError(msg string) *fastserver.Error {
	return &fastserver.Error{Status: 500, Code: decode.CodeInternalError, Message: "tool result refused: " + msg}
}

// serveToolsList answers tools/list from the list rendered at Endpoint.
func (s *Server) serveToolsList(r *fastserver.Request, dst []byte) ([]byte, error) {
	if err := checkCursor(r.Msg); err != nil {
		return dst, err
	}
	return append(dst, s.lists[RequestVersion(r)].tools...), nil
}

// checkCursor refuses a cursor: this server never returns nextCursor, so
// no cursor is one it issued (-32602, as MCP answers an invalid cursor).
func checkCursor(m *decode.Message) *fastserver.Error {
	if m.ParamsType != decode.ParamsObject {
		return nil
	}
	if _, n := decode.Lookup(m.Params, "cursor"); n > 0 {
		return errCursor
	}
	return nil
}
