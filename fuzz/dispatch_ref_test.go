package fuzz

// NOTE: the reference for rows 11 to 19.
//
// FuzzServer's rows 1 to 10 come from the strict JSON reference; this
// file gives the answer to a valid message from the contract's §2 rows 11
// to 19, §4 (MCP headers and methods by version) and §5 (A2A), for the
// demo content the harness serves (server_harness_test.go): tools echo
// {"text": string} and add {"a": number, "b": number}, the resource
// rpcedge://about, the prompt greet (argument name, required; prompt
// arguments are strings); one A2A skill, echo, and a card without
// streaming, push notifications or an extended card. It reads params
// with the reference's own walker (refMembers: names unescaped), never
// with decode's.
//
// An outcome is a set of acceptable (status, code) pairs, or undecided
// (nil): where the contract does not fix the answer, only allowedPairs
// holds the server to §2. Where the contract and the implementation
// read a corner differently and the contract is not explicit, both
// answers are accepted (the or method), and the comment says which:
//
//   - a protocol version in _meta that is not a string: "missing" (400 /
//     -32602, the server) or "differs" (400 / -32020);
//   - a header line repeated whose combined value still equals the body:
//     "two lines fail their row even when they agree" against "judged as
//     all its lines combined" — -32020 or on;
//   - a =?base64?…?= payload that only a lenient decoder reads
//     (non-canonical trailing bits, no padding): the contract says the
//     form is decoded, not how strictly;
//   - historyLength of GetTask that is not null and not digits (1e2, -1):
//     the contract does not say.
//
// Left undecided: completion/complete past its params shape, ListTasks,
// SendMessage once its skill and params pass (the agent's answer), a
// 2026-07-28 tools/call carrying requestState (an opaque state).

import (
	"bytes"
	"encoding/base64"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rpcedge/rpcedge/decode"
)

// outcome is what the reference expects of a valid message.
type outcome struct {
	pairs []pair // acceptable answers; nil: undecided
	why   string
	// result, for a 200 result, checks it: "" or what is wrong.
	result func(result []byte) string
}

func want1(status, code int, why string) outcome {
	return outcome{pairs: []pair{{status, code}}, why: why}
}

func undecided(why string) outcome { return outcome{why: why} }

// or accepts p too, unless o is undecided already.
func (o outcome) or(ps ...pair) outcome {
	if o.pairs != nil {
		o.pairs = append(o.pairs, ps...)
	}
	return o
}

func (o outcome) allows(p pair) bool {
	if o.pairs == nil {
		return true
	}
	for _, q := range o.pairs {
		if q == p {
			return true
		}
	}
	return false
}

// reqHeader is one optional header as the server must read it: all its
// lines trimmed and combined with ", " (contract: "Header fields …").
type reqHeader struct {
	present bool
	v       string
	lines   int
}

// reqHeaders are the headers of a request the rows read.
type reqHeaders struct {
	ct, ce, mpv, mmeth, mname, a2av, origin reqHeader
}

// headersOf computes the headers buildRequest sends for in.
func headersOf(in serverInput) reqHeaders {
	one := func(bit uint32, v string) reqHeader {
		if in.flags&bit == 0 {
			return reqHeader{}
		}
		v = strings.Trim(v, " \t")
		h := reqHeader{present: true, v: v, lines: 1}
		if doubledBit(in.flags) == bit {
			h.v, h.lines = v+", "+v, 2
		}
		return h
	}
	return reqHeaders{
		ct:     one(flagCT, in.ct),
		ce:     one(flagCE, in.ce),
		mpv:    one(flagMCPVersion, in.mpv),
		mmeth:  one(flagMCPMethod, in.mmeth),
		mname:  one(flagMCPName, in.mname),
		a2av:   one(flagA2AVersion, in.a2av),
		origin: one(flagOrigin, in.origin),
	}
}

// sentinel prefix and suffix of SEP-2243's base64 form.
const (
	b64Open  = "=?base64?"
	b64Close = "?="
)

// carries compares a header value with what the body says (the method,
// or the unescaped params.name / params.uri), decoding the =?base64?…?=
// form first. sure is false when only a lenient base64 decoder (no
// padding, non-canonical trailing bits) makes them equal.
func carries(h, want string) (match, sure bool) {
	if len(h) < len(b64Open)+len(b64Close) || !strings.HasPrefix(h, b64Open) || !strings.HasSuffix(h, b64Close) {
		return h == want, true
	}
	payload := h[len(b64Open) : len(h)-len(b64Close)]
	if b, err := base64.StdEncoding.Strict().DecodeString(payload); err == nil {
		return string(b) == want, true
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(payload); err == nil && string(b) == want {
			return true, false
		}
	}
	return false, true
}

// members are the members of a JSON object, as the reference reads
// them, with the lookups the rows need.
type members []refMember

func membersOf(obj []byte) members {
	ms, ok := refMembers(obj)
	if !ok {
		return nil
	}
	return ms
}

// all returns the values of every member named name, in order.
func (ms members) all(name string) [][]byte {
	var out [][]byte
	for _, m := range ms {
		if m.name == name {
			out = append(out, m.value)
		}
	}
	return out
}

func (ms members) dup() bool {
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.name] {
			return true
		}
		seen[m.name] = true
	}
	return false
}

// elements returns the elements of a valid JSON array, or nil.
func elements(arr []byte) [][]byte {
	d := jsontext.NewDecoder(bytes.NewReader(arr), refOpts...)
	if d.PeekKind() != '[' {
		return nil
	}
	d.ReadToken()
	var out [][]byte
	for d.PeekKind() != ']' {
		v, err := d.ReadValue()
		if err != nil {
			return nil
		}
		out = append(out, bytes.Clone(v))
	}
	return out
}

func kindOf(v []byte) jsontext.Kind { return jsontext.Value(v).Kind() }

func text(v []byte) string { return string(unquote(v)) }

// mcpMethods are the methods served, by version (contract §4).
var (
	mcpAll    = []string{"server/discover", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list", "prompts/list", "prompts/get", "completion/complete"}
	mcpLegacy = []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)

func mcpKnown(method, version string) bool {
	for _, m := range mcpAll {
		if m == method {
			return true
		}
	}
	if version == "2026-07-28" {
		return false
	}
	for _, m := range mcpLegacy {
		if m == method {
			return true
		}
	}
	return false
}

const (
	metaVersion = "io.modelcontextprotocol/protocolVersion"
	metaCaps    = "io.modelcontextprotocol/clientCapabilities"
)

// refMCP is rows 11 to 19 on /mcp for the valid message e.
func refMCP(h reqHeaders, e expected) outcome {
	var alts []pair // answers the contract leaves open besides the one below
	done := func(o outcome) outcome { return o.or(alts...) }
	mismatch := func(why string) outcome { return done(want1(400, -32020, "row 12: "+why)) }
	metaBad := func(why string) outcome { return done(want1(400, -32602, "§4 (2026-07-28 _meta): "+why)) }

	version := "2025-03-26"
	if h.mpv.present {
		if !mcpVersions[h.mpv.v] {
			return want1(400, -32022, "row 11: MCP-Protocol-Version "+h.mpv.v+" is not served")
		}
		version = h.mpv.v
	}
	request := e.kind == decode.KindRequest
	strict := request && version == "2026-07-28"
	method := string(e.method)

	if h.mmeth.present {
		match, sure := carries(h.mmeth.v, method)
		switch {
		case !match && sure:
			return mismatch("Mcp-Method " + h.mmeth.v + " differs from the method")
		case !sure || h.mmeth.lines > 1:
			alts = append(alts, pair{400, -32020})
		}
	} else if strict {
		return mismatch("Mcp-Method is required under 2026-07-28")
	}

	src := ""
	switch method {
	case "tools/call", "prompts/get":
		src = "name"
	case "resources/read":
		src = "uri"
	}
	pobj := e.paramsType == decode.ParamsObject
	var pm members
	if pobj {
		pm = membersOf(e.params)
	}

	if strict {
		metas := pm.all("_meta")
		switch {
		case len(metas) > 1:
			return mismatch("_meta given twice")
		case !pobj:
			return metaBad("params missing or not an object")
		case len(metas) == 0 || kindOf(metas[0]) != '{':
			return metaBad("_meta missing or not an object")
		}
		mm := membersOf(metas[0])
		vers, caps := mm.all(metaVersion), mm.all(metaCaps)
		switch {
		case len(vers) > 1:
			return mismatch("the protocol version key given twice in _meta")
		case len(vers) == 0:
			return metaBad("no protocol version in _meta")
		case kindOf(vers[0]) != '"':
			return done(outcome{pairs: []pair{{400, -32602}, {400, -32020}}, why: "§4: the protocol version in _meta is not a string"})
		case text(vers[0]) != h.mpv.v:
			return mismatch("the protocol version in _meta differs from the header")
		case len(caps) == 0:
			return metaBad("no clientCapabilities in _meta")
		case kindOf(caps[len(caps)-1]) != '{':
			return metaBad("clientCapabilities is not an object")
		}
		if src != "" && !h.mname.present {
			return mismatch("Mcp-Name is required for " + method)
		}
	}
	if src != "" && h.mname.present {
		vals := pm.all(src)
		if len(vals) != 1 || kindOf(vals[0]) != '"' {
			return mismatch("Mcp-Name present, params." + src + " absent, twice or not a string")
		}
		match, sure := carries(h.mname.v, text(vals[0]))
		switch {
		case !match && sure:
			return mismatch("Mcp-Name " + h.mname.v + " differs from params." + src)
		case !sure || h.mname.lines > 1:
			alts = append(alts, pair{400, -32020})
		}
	}
	if !request {
		return done(want1(202, 0, "row 13: a notification"))
	}
	if !mcpKnown(method, version) {
		return done(want1(404, -32601, "row 14: "+method+" is not a method under "+version))
	}
	return done(mcpMethod(method, version, e, pobj, pm))
}

// mcpMethod is rows 15 to 19 for a known MCP method.
func mcpMethod(method, version string, e expected, pobj bool, pm members) outcome {
	bad := func(why string) outcome { return want1(200, -32602, why) }
	ok := want1(200, 0, "row 19")
	switch method {
	case "tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe":
		return mcpTarget(method, version, e, pobj, pm)
	case "completion/complete":
		if !pobj {
			return bad("row 15: completion/complete needs params, an object")
		}
		return undecided("completion/complete: not modelled")
	}
	// The server checks params itself for the other methods (rows 15, 17).
	if e.paramsType == decode.ParamsOther {
		return bad("row 15: params not an object")
	}
	if pm.dup() {
		return bad("row 17: a member name twice in params")
	}
	switch method {
	case "tools/list", "resources/list", "prompts/list", "resources/templates/list":
		if len(pm.all("cursor")) > 0 {
			return bad("a cursor the server never issued (it answers one page)")
		}
	case "logging/setLevel":
		levels := map[string]bool{"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true, "alert": true, "emergency": true}
		lv := pm.all("level")
		if !pobj || len(lv) != 1 || kindOf(lv[0]) != '"' || !levels[text(lv[0])] {
			return bad("logging/setLevel needs params.level, a log level")
		}
	}
	return ok
}

// mcpTarget is rows 15 to 19 of the methods that name a tool, a prompt
// or a resource.
func mcpTarget(method, version string, e expected, pobj bool, pm members) outcome {
	bad := func(why string) outcome { return want1(200, -32602, why) }
	key := "name"
	if strings.HasPrefix(method, "resources/") {
		key = "uri"
	}
	// Row 15.
	if !pobj {
		return bad("row 15: params absent or not an object")
	}
	names := pm.all(key)
	switch {
	case len(names) == 0:
		return bad("row 15: params." + key + " missing")
	case len(names) > 1:
		return bad("row 15: params." + key + " given twice")
	case kindOf(names[0]) != '"':
		return bad("row 15: params." + key + " not a string")
	}
	target := text(names[0])
	// Row 16.
	known := map[string]bool{
		"tools/call": target == "echo" || target == "add", "prompts/get": target == "greet",
	}[method] || key == "uri" && target == "rpcedge://about"
	if !known {
		return want1(200, -32601, "row 16: no "+method+" target "+target)
	}
	// Row 17.
	if pm.dup() {
		return bad("row 17: a member name twice in params")
	}
	switch method {
	case "resources/subscribe", "resources/unsubscribe":
		return want1(200, 0, "row 19")
	case "resources/read":
		o := want1(200, 0, "row 19")
		o.result = func(res []byte) string {
			c := membersOf(res).all("contents")
			if len(c) == 1 {
				if items := elements(c[0]); len(items) == 1 {
					t := membersOf(items[0]).all("text")
					if len(t) == 1 && kindOf(t[0]) == '"' && text(t[0]) == "rpcedge fuzz server" {
						return ""
					}
				}
			}
			return "resources/read of rpcedge://about: want one item with its text"
		}
		return o
	}
	args := []byte("{}")
	if as := pm.all("arguments"); len(as) == 1 {
		args = as[0]
	}
	if kindOf(args) != '{' {
		return bad("row 17: arguments not an object")
	}
	am := membersOf(args)
	if am.dup() {
		return bad("row 17: a member name twice in arguments")
	}
	one := func(name string, kind jsontext.Kind) ([]byte, bool) {
		v := am.all(name)
		if len(v) != 1 || kindOf(v[0]) != kind {
			return nil, false
		}
		return v[0], true
	}
	o := want1(200, 0, "row 19")
	switch target {
	case "echo":
		t, ok := one("text", '"')
		if !ok {
			return bad("row 17: echo needs arguments.text, a string")
		}
		o.result = toolText("echo", text(t))
	case "add":
		a, okA := one("a", '0')
		b, okB := one("b", '0')
		if !okA || !okB {
			return bad("row 17: add needs arguments.a and .b, numbers")
		}
		o.result = toolText("add", string(a)+"+"+string(b))
	case "greet":
		for _, m := range am {
			if kindOf(m.value) != '"' {
				return bad("row 17: prompt arguments are strings")
			}
		}
		n, ok := one("name", '"')
		if !ok {
			return bad("row 17: greet needs arguments.name")
		}
		want := "Please greet " + text(n)
		o.result = func(res []byte) string {
			msgs := membersOf(res).all("messages")
			if len(msgs) != 1 {
				return "greet: no messages"
			}
			items := elements(msgs[0])
			if len(items) != 1 {
				return "greet: want one message"
			}
			mm := membersOf(items[0])
			role, content := mm.all("role"), mm.all("content")
			if len(role) != 1 || string(role[0]) != `"user"` || len(content) != 1 {
				return "greet: want a user message with content"
			}
			if t := membersOf(content[0]).all("text"); len(t) != 1 || kindOf(t[0]) != '"' || text(t[0]) != want {
				return "greet: want the text " + want
			}
			return ""
		}
	}
	if version == "2026-07-28" && method == "tools/call" {
		if len(pm.all("requestState")) > 0 {
			return undecided("a requestState (opaque, signed by the server)")
		}
		if in := pm.all("inputResponses"); len(in) == 1 {
			im := membersOf(in[0])
			valid := kindOf(in[0]) == '{' && !im.dup()
			for _, m := range im {
				valid = valid && kindOf(m.value) == '{'
			}
			if !valid {
				return bad("inputResponses must be an object of objects")
			}
		}
	}
	return o
}

// toolText checks a tool result with one text item, tx.
func toolText(tool, tx string) func([]byte) string {
	return func(res []byte) string {
		rm := membersOf(res)
		if e := rm.all("isError"); len(e) > 0 && string(e[0]) != "false" {
			return tool + ": an isError result"
		}
		c := rm.all("content")
		if len(c) != 1 || kindOf(c[0]) != '[' {
			return tool + ": no content array"
		}
		items := elements(c[0])
		if len(items) != 1 || kindOf(items[0]) != '{' {
			return tool + ": want one content item"
		}
		im := membersOf(items[0])
		typ, t := im.all("type"), im.all("text")
		if len(typ) != 1 || text(typ[0]) != "text" || len(t) != 1 || kindOf(t[0]) != '"' {
			return tool + ": want a text item"
		}
		if got := text(t[0]); got != tx {
			return tool + ": the text came back as " + got + ", want " + tx
		}
		return ""
	}
}

// a2aMethods are A2A 1.0's names and 0.3's aliases (contract §5) and how
// the demo card answers them before params: 0 served, else a refusal at
// row 16.
var a2aMethods = map[string]int{
	"SendMessage": 0, "message/send": 0,
	"GetTask": 0, "tasks/get": 0,
	"CancelTask": 0, "tasks/cancel": 0,
	"ListTasks": 0,
	// The card declares streaming: false, no extended card, no push.
	"SendStreamingMessage": -32004, "message/stream": -32004,
	"SubscribeToTask": -32004, "tasks/resubscribe": -32004,
	"GetExtendedAgentCard": -32004, "agent/getAuthenticatedExtendedCard": -32004,
	"CreateTaskPushNotificationConfig": -32003, "GetTaskPushNotificationConfig": -32003,
	"ListTaskPushNotificationConfigs": -32003, "DeleteTaskPushNotificationConfig": -32003,
	"tasks/pushNotificationConfig/set": -32003, "tasks/pushNotificationConfig/get": -32003,
	"tasks/pushNotificationConfig/list": -32003, "tasks/pushNotificationConfig/delete": -32003,
}

// refA2A is rows 11 to 19 on /a2a for the valid message e.
func refA2A(h reqHeaders, e expected) outcome {
	bad := func(why string) outcome { return want1(200, -32602, why) }
	if h.a2av.present && h.a2av.v != "1.0" && h.a2av.v != "0.3" {
		return want1(400, -32009, "row 11: A2A-Version "+h.a2av.v)
	}
	if e.kind != decode.KindRequest {
		return want1(202, 0, "row 13: a notification")
	}
	method := string(e.method)
	refusal, known := a2aMethods[method]
	switch {
	case !known:
		return want1(404, -32601, "row 14: "+method+" is not an A2A method")
	case refusal != 0:
		return want1(200, refusal, "row 16: "+method+" refused outright")
	}
	pobj := e.paramsType == decode.ParamsObject
	var pm members
	if pobj {
		pm = membersOf(e.params)
	}
	switch method {
	case "GetTask", "tasks/get", "CancelTask", "tasks/cancel":
		// §5: params first (id a string, else -32602), then -32001 or
		// -32002; no task id of this server can be guessed.
		if !pobj || pm.dup() {
			return bad("§5: params absent, not an object, or a name twice")
		}
		ids := pm.all("id")
		if len(ids) == 0 || kindOf(ids[0]) != '"' {
			return bad("§5: params.id must be a string")
		}
		if method == "GetTask" || method == "tasks/get" {
			if hl := pm.all("historyLength"); len(hl) > 0 && string(hl[0]) != "null" {
				digits := strings.Trim(string(hl[0]), "0123456789") == ""
				if !digits {
					return want1(200, -32001, "an unknown task").or(pair{200, -32602})
				}
			}
		}
		return want1(200, -32001, "§5: an unknown task")
	case "SendMessage", "message/send":
		// §5: metadata.skillId when present, before the message.
		if e.paramsType == decode.ParamsOther {
			return bad("row 15: params not an object")
		}
		metas := pm.all("metadata")
		switch {
		case len(metas) > 1:
			return bad("metadata twice in params")
		case len(metas) == 1 && string(metas[0]) != "null":
			if kindOf(metas[0]) != '{' {
				return bad("metadata not an object")
			}
			skills := membersOf(metas[0]).all("skillId")
			switch {
			case len(skills) > 1:
				return bad("metadata.skillId twice")
			case len(skills) == 1 && kindOf(skills[0]) != '"':
				return bad("§5: metadata.skillId not a string")
			case len(skills) == 1 && text(skills[0]) != "echo":
				return want1(200, -32004, "§5: skill "+text(skills[0])+" is not on the card")
			}
		}
		if !pobj {
			return bad("params (with the message) missing")
		}
		if pm.dup() {
			return bad("row 17: a member name twice in params")
		}
		return undecided("SendMessage: the message itself is not modelled")
	}
	return undecided(method + ": not modelled")
}

// dispatchSeeds lead FuzzServer to rows 11 to 19: each target and its
// refusals, Mcp-Name plain and in the base64 form, 2026-07-28's _meta,
// A2A's task and skill checks, and each optional header on two lines.
func dispatchSeeds() []serverInput {
	v25 := uint32(flagCT | flagMCPVersion)
	call := func(params string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
	}
	req := func(method, params string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"r","method":"` + method + `","params":` + params + `}`)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	mcp := func(body []byte) serverInput {
		return serverInput{body, "application/json", "", "2025-11-25", "", "", "", "", v25}
	}
	named := func(body []byte, mname string) serverInput {
		s := mcp(body)
		s.mname, s.flags = mname, s.flags|flagMCPName
		return s
	}
	v26 := func(body []byte, mmeth, mname string) serverInput {
		return serverInput{body, "application/json", "", "2026-07-28", mmeth, mname, "", "", v25 | flagMCPMethod | flagMCPName}
	}
	a2a := func(body string) serverInput {
		return serverInput{[]byte(body), "application/json", "", "", "", "", "1.0", "", flagCT | flagA2AVersion | 1}
	}
	double := func(s serverInput, i uint32) serverInput {
		s.flags |= i << 20
		return s
	}
	echo := call(`{"name":"echo","arguments":{"text":"hi"}}`)
	seeds := []serverInput{
		// Rows 15 to 17 and 19 of tools/call.
		mcp(call(`{"name":"echo","arguments":{"text":"hi"},"x":1,"x":2}`)),
		mcp(call(`{"name":"echo","a":1,"arguments":{"text":"hi"},"\u0061":2}`)),
		mcp(call(`{"name":"echo","arguments":{"text":"hi","text":"ho"}}`)),
		mcp(call(`{"name":"echo","arguments":{"text":"hi","t\u0065xt":"ho"}}`)),
		mcp(call(`{"name":"nope","arguments":{}}`)),
		mcp(call(`{"name":1}`)),
		mcp(call(`{"name":"echo","name":"echo","arguments":{"text":"hi"}}`)),
		mcp(call(`[]`)),
		mcp(call(`null`)),
		mcp(call(`{"arguments":{"text":"hi"}}`)),
		mcp(call(`{"name":"echo","arguments":"text"}`)),
		mcp(call(`{"name":"echo","arguments":{"text":5}}`)),
		mcp(call(`{"name":"echo"}`)),
		mcp(call(`{"name":"ech\u006f","arguments":{"Text":"hi","text":"caf\u00e9 \"q\" \ud83d\ude00 \\ \/"}}`)),
		mcp(call(`{"name":"add","arguments":{"a":"1","b":2}}`)),
		mcp(call(`{"name":"add","arguments":{"a":-1.5e3,"b":0}}`)),
		// prompts/get, resources/read, the other methods.
		mcp(req("prompts/get", `{"name":"greet","arguments":{"name":"Ada"}}`)),
		mcp(req("prompts/get", `{"name":"greet","arguments":{"name":"Ada","x":1}}`)),
		mcp(req("prompts/get", `{"name":"greet","arguments":{}}`)),
		mcp(req("prompts/get", `{"name":"greet","arguments":{"name":"a","name":"b"}}`)),
		mcp(req("prompts/get", `{"name":"nope"}`)),
		mcp(req("resources/read", `{"uri":"rpcedge:\/\/about"}`)),
		mcp(req("resources/read", `{"uri":"rpcedge://about","uri":"rpcedge://about"}`)),
		mcp(req("resources/read", `{"uri":"rpcedge://about","x":1,"x":1}`)),
		mcp(req("resources/read", `{"uri":"rpcedge://nope"}`)),
		mcp(req("resources/subscribe", `{"uri":"rpcedge://about"}`)),
		mcp(req("tools/list", `{"cursor":"x"}`)),
		mcp(req("tools/list", `{"a":1,"a":2}`)),
		mcp(req("prompts/list", `"x"`)),
		mcp(req("logging/setLevel", `{"level":"debug"}`)),
		mcp(req("logging/setLevel", `{"level":"loud"}`)),
		mcp(req("completion/complete", `[1]`)),
		mcp(req("tools/nope", `{}`)),
		mcp(req("notifications/initialized", `{}`)),
		mcp([]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`)),
		// Mcp-Name (row 12): plain, base64, a mismatch, a method without a name.
		named(echo, "echo"),
		named(echo, "=?base64?ZWNobw==?="),
		named(echo, "=?base64?ZWNobx==?="),
		named(echo, "=?base64?ZWNobw?="),
		named(echo, "ECHO"),
		named(call(`{"arguments":{}}`), "echo"),
		named(req("resources/read", `{"uri":"rpcedge://about"}`), "rpcedge://about"),
		named(req("tools/list", `{}`), "anything"),
		named([]byte(`{"jsonrpc":"2.0","method":"prompts/get","params":{"name":"x"}}`), "greet"),
		// 2026-07-28: _meta, Mcp-Method and Mcp-Name required.
		v26(call(`{"name":"echo","arguments":{"text":"hi"},`+meta+`}`), "tools/call", "echo"),
		v26(call(`{"name":"echo","arguments":{"text":"hi"}}`), "tools/call", "echo"),
		v26(call(`{"name":"echo","arguments":{"text":"hi"},"_meta":{}}`), "tools/call", "echo"),
		v26(call(`{"name":"echo",`+meta+`,`+meta+`}`), "tools/call", "echo"),
		v26(call(`{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`), "tools/call", "echo"),
		v26(call(`{"name":"echo","arguments":{"text":"hi"},"inputResponses":[],`+meta+`}`), "tools/call", "echo"),
		v26(req("ping", `{`+meta+`}`), "ping", ""),
		v26(req("tools/list", `{`+meta+`}`), "=?base64?dG9vbHMvbGlzdA==?=", ""),
		// A2A (§5).
		a2a(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","historyLength":-1}}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"t"}}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"CancelTask"}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":{"skillId":"nope"},"message":{}}}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":{"skillId":7}}}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":{"skillId":"echo"},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":[]}`),
		a2a(`{"jsonrpc":"2.0","id":1,"method":"getTask","params":{}}`),
		// Each optional header on two lines.
		double(mcp(echo), 1),
		double(serverInput{echo, "application/json", "gzip", "2025-11-25", "", "", "", "", v25 | flagCE | flagCompress}, 2),
		double(mcp(echo), 3),
		double(serverInput{echo, "application/json", "", "2025-11-25", "tools/call", "", "", "", v25 | flagMCPMethod}, 4),
		double(named(echo, "echo"), 5),
		double(a2a(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`), 6),
		double(serverInput{echo, "application/json", "", "2025-11-25", "", "", "", "http://localhost", v25 | flagOrigin}, 7),
		double(serverInput{nil, "", "", "", "", "", "", "http://localhost", flagOrigin | 3<<11}, 7),
	}
	return seeds
}
