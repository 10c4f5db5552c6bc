package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// inputServer has tools and a prompt that ask the client for input, a
// template, and a completer.
func inputServer(t testing.TB, opts ...Option) (*Server, *fastserver.Endpoint) {
	t.Helper()
	opts = append(opts, WithCompleter(func(r *fastserver.Request, req CompletionRequest) (Completion, error) {
		if req.Value == "boom" {
			return Completion{}, &fastserver.Error{Code: -32042, Message: "no"}
		}
		var vals []string
		for i := range 150 {
			vals = append(vals, fmt.Sprintf("%s%s-%d-%s", req.Value, req.Argument, i, req.Context["other"]))
		}
		if req.Value == "few" {
			vals = vals[:2]
		}
		return Completion{Values: vals, Total: len(vals)}, nil
	}))
	s, err := New(Info{Name: "in", Version: "1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ask := `{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	s.AddTool(Tool{Name: "two", Handler: ToolFunc(func(c *Call) error {
		if !c.HasState() {
			if err := c.SetState([]byte(`{"round":1}`)); err != nil {
				return err
			}
		}
		a, err := c.Elicit("first", []byte(ask))
		if err != nil {
			return err
		}
		b, err := c.Sample("second", []byte(`{"messages":[],"maxTokens":5}`))
		if err != nil {
			return err
		}
		c.AddText(string(a) + "|" + string(b) + "|" + string(c.State()))
		return nil
	})})
	s.AddTool(Tool{Name: "both", Handler: ToolFunc(func(c *Call) error {
		_, e1 := c.Elicit("e", []byte(ask))
		_, e2 := c.ListRoots("r")
		if err := errors.Join(e1, e2); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})})
	s.AddTool(Tool{Name: "big", Handler: ToolFunc(func(c *Call) error {
		if err := c.SetState([]byte(`"` + strings.Repeat("x", 2000) + `"`)); err != nil {
			return err
		}
		_, err := c.Elicit("e", []byte(ask))
		return err
	})})
	s.AddTool(Tool{Name: "notstreaming", Handler: ToolFunc(func(c *Call) error {
		c.AddText(fmt.Sprint(errors.Is(c.Progress(1, 2, ""), ErrNotStreaming), errors.Is(c.LogText(LogInfo, "", "x"), ErrNotStreaming)))
		return nil
	})})
	s.AddPrompt(Prompt{Name: "ctx", Render: func(c *Call, args map[string]string) (*PromptResult, error) {
		v, err := c.Elicit("context", []byte(ask))
		if err != nil {
			return nil, err
		}
		return &PromptResult{Messages: []PromptMessage{{Text: string(v)}}}, nil
	}})
	s.AddResourceTemplate(ResourceTemplate{URITemplate: "t://item/{id}/x{+rest}", Description: "items", MIMEType: "text/plain",
		Read: func(r *fastserver.Request, uri string, vars map[string]string) ([]ResourceContents, error) {
			if vars["id"] == "none" {
				return nil, nil
			}
			return []ResourceContents{{Text: "id=" + vars["id"] + " rest=" + vars["rest"]}}, nil
		}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return s, s.Endpoint()
}

// call26 calls tool name under 2026-07-28 with extra params members and
// client capabilities caps.
func call26(t testing.TB, ep *fastserver.Endpoint, name, caps, extra string) answer {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},` + meta + extra + `}}`
	return exchange(t, ep, v26("tools/call", HeaderName, name), body)
}

const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	Meta          map[string]any             `json:"_meta"`
	Content       []struct{ Text string }    `json:"content"`
}

func parseIR(t testing.TB, a answer) inputRequired {
	t.Helper()
	if a.Status != 200 || a.Code != 0 {
		t.Fatalf("answer %+v", a)
	}
	var ir inputRequired
	if err := json.Unmarshal(a.Result, &ir); err != nil {
		t.Fatal(err)
	}
	return ir
}

func TestInputRequiredRounds(t *testing.T) {
	_, ep := inputServer(t)
	r1 := parseIR(t, call26(t, ep, "two", allCaps, ""))
	if r1.ResultType != "input_required" || len(r1.InputRequests) != 1 || r1.RequestState == "" || r1.Meta[metaServerInfoKey] == nil {
		t.Fatalf("round 1: %+v", r1)
	}
	if got := string(r1.InputRequests["first"]); !strings.HasPrefix(got, `{"method":"elicitation/create","params":{"message":"name?"`) {
		t.Errorf("round 1 request %s", got)
	}
	state := func(s string) string { return `,"requestState":` + string(decode.AppendString(nil, s)) }
	r2 := parseIR(t, call26(t, ep, "two", allCaps, `,"inputResponses":{"first":{"action":"accept","content":{"name":"Ada"}}}`+state(r1.RequestState)))
	if r2.ResultType != "input_required" || r2.InputRequests["second"] == nil || r2.InputRequests["first"] != nil || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2: %+v", r2)
	}
	// Round 3 sends only the second answer: the first comes from the state.
	r3 := parseIR(t, call26(t, ep, "two", allCaps, `,"inputResponses":{"second":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`+state(r2.RequestState)))
	if r3.ResultType != "complete" || len(r3.Content) != 1 ||
		r3.Content[0].Text != `{"action":"accept","content":{"name":"Ada"}}|{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}|{"round":1}` {
		t.Fatalf("round 3: %s", call26(t, ep, "two", allCaps, `,"inputResponses":{"second":{}}`+state(r2.RequestState)).Result)
	}

	// Tampered, truncated, foreign and not-a-string states are -32602.
	for name, st := range map[string]string{
		"tampered":    r1.RequestState + "-TAMPERED",
		"flipped":     strings.Replace(r1.RequestState, r1.RequestState[5:6], "A", 1) + "",
		"no mac":      strings.Split(r1.RequestState, ".")[0],
		"empty":       "",
		"other key":   otherKeyState(t, r1.RequestState),
		"not base64!": "!!!.!!!",
	} {
		if st == r1.RequestState {
			continue
		}
		a := call26(t, ep, "two", allCaps, `,"inputResponses":{"first":{"action":"accept"}}`+state(st))
		if a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "requestState" {
			t.Errorf("%s state: %+v", name, a)
		}
	}
	if a := call26(t, ep, "two", allCaps, `,"requestState":5`); a.Code != decode.CodeInvalidParams {
		t.Errorf("number state: %+v", a)
	}
	// A state is bound to its tool.
	if a := call26(t, ep, "both", allCaps, state(r1.RequestState)); a.Code != decode.CodeInvalidParams || !strings.Contains(a.Msg, "another request") {
		t.Errorf("state of another tool: %+v", a)
	}
}

// otherKeyState re-signs the body of state with another key.
func otherKeyState(t testing.TB, state string) string {
	c := stateCodec{key: []byte(strings.Repeat("k", 32)), ttl: time.Minute, max: defaultStateMax}
	body, _ := b64url.DecodeString(strings.Split(state, ".")[0])
	var m struct {
		B string          `json:"b"`
		A json.RawMessage `json:"a"`
		U json.RawMessage `json:"u"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	s, err := c.encode(m.B, m.A, m.U, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStateCodec(t *testing.T) {
	c := stateCodec{ttl: time.Minute, max: 1024}
	if err := c.generateKey(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s, err := c.encode("tools/call x", []byte(`{"k":{"a":1}}`), []byte(`[1,2]`), now)
	if err != nil {
		t.Fatal(err)
	}
	raw := decode.AppendString(nil, s)
	d, e := c.decode(raw, "tools/call x", now.Add(59*time.Second))
	if e != nil || string(d.answers) != `{"k":{"a":1}}` || string(d.user) != `[1,2]` {
		t.Fatalf("decode: %+v %v", d, e)
	}
	if _, e := c.decode(raw, "tools/call x", now.Add(61*time.Second)); e != errStateExpired {
		t.Errorf("expired: %v", e)
	}
	if _, e := c.decode(raw, "tools/call y", now); e != errStateBinding {
		t.Errorf("binding: %v", e)
	}
	if _, err := c.encode("tools/call x", []byte(`{"k":"`+strings.Repeat("x", 1000)+`"}`), nil, now); err == nil {
		t.Error("a state over the limit was issued")
	}
}

func TestInputRequiredLimitAndOptions(t *testing.T) {
	_, ep := inputServer(t, WithStateLimit(1024))
	if a := call26(t, ep, "big", allCaps, ""); a.Status != 500 {
		t.Errorf("state over the limit: %+v", a)
	}
	for _, o := range []Option{WithStateKey([]byte("short")), WithStateTTL(0), WithStateLimit(10)} {
		if _, err := New(Info{Name: "x", Version: "1"}, o); err == nil {
			t.Error("a bad state option was accepted")
		}
	}
	// A shared key lets another server take the next round.
	key := []byte(strings.Repeat("s", 32))
	_, ep1 := inputServer(t, WithStateKey(key))
	_, ep2 := inputServer(t, WithStateKey(key))
	r1 := parseIR(t, call26(t, ep1, "two", allCaps, ""))
	r2 := parseIR(t, call26(t, ep2, "two", allCaps, `,"inputResponses":{"first":{"action":"decline"}},"requestState":`+string(decode.AppendString(nil, r1.RequestState))))
	if r2.ResultType != "input_required" || r2.InputRequests["second"] == nil {
		t.Errorf("second instance: %+v", r2)
	}
}

func TestInputResponsesChecked(t *testing.T) {
	_, ep := inputServer(t)
	for _, in := range []string{`null`, `5`, `[]`, `{"first":12345}`, `{"first":"x"}`, `{"first":{},"first":{}}`} {
		a := call26(t, ep, "two", allCaps, `,"inputResponses":`+in)
		if a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "inputResponses" {
			t.Errorf("inputResponses %s: %+v", in, a)
		}
	}
	// Unknown keys are ignored; a missing one is asked for again.
	r := parseIR(t, call26(t, ep, "two", allCaps, `,"inputResponses":{"nope":{"action":"accept"}}`))
	if r.ResultType != "input_required" || r.InputRequests["first"] == nil {
		t.Errorf("wrong key: %+v", r)
	}
	// Under 2025-xx inputResponses is just an unknown member.
	a := exchange(t, ep, hdr{HeaderProtocolVersion, "2025-11-25"}, call(`"name":"notstreaming","inputResponses":null`))
	if a.Code != 0 {
		t.Errorf("2025: %+v", a)
	}
}

func TestInputCapabilities(t *testing.T) {
	_, ep := inputServer(t)
	// Every asked capability is checked: the first undeclared one is -32021.
	a := call26(t, ep, "two", `{"sampling":{}}`, "")
	if a.Status != 400 || a.Code != CodeMissingCapability || string(a.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Errorf("undeclared elicitation: %+v %s", a, a.Data)
	}
	a = call26(t, ep, "both", `{"elicitation":{},"roots":[]}`, "")
	if a.Code != CodeMissingCapability || string(a.Data) != `{"requiredCapabilities":{"roots":{}}}` {
		t.Errorf("roots not an object: %+v %s", a, a.Data)
	}
	r := parseIR(t, call26(t, ep, "both", allCaps, ""))
	if len(r.InputRequests) != 2 || !strings.Contains(string(r.InputRequests["r"]), `"method":"roots/list","params":{}`) {
		t.Errorf("both: %+v", r)
	}
}

func TestPromptRenderInputRequired(t *testing.T) {
	_, ep := inputServer(t)
	get := func(extra string) answer {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
		body := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"ctx",` + meta + extra + `}}`
		return exchange(t, ep, v26("prompts/get", HeaderName, "ctx"), body)
	}
	r1 := parseIR(t, get(""))
	if r1.ResultType != "input_required" || r1.InputRequests["context"] == nil {
		t.Fatalf("round 1: %+v", r1)
	}
	a := get(`,"inputResponses":{"context":{"action":"accept","content":{"name":"x"}}},"requestState":` + string(decode.AppendString(nil, r1.RequestState)))
	if a.Code != 0 || !strings.Contains(string(a.Result), `"messages":[{"role":"user","content":{"type":"text","text":"{\"action\"`) {
		t.Errorf("round 2: %+v %s", a, a.Result)
	}
	// Under 2025-xx a prompt's Ask needs a stream this call does not have.
	a = exchange(t, ep, nil, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"ctx"}}`)
	if a.Status != 500 {
		t.Errorf("2025: %+v", a)
	}
}

func TestNotStreamingTool(t *testing.T) {
	_, ep := inputServer(t)
	a := call26(t, ep, "notstreaming", allCaps, `,"_meta":{}`)
	if a.Code != decode.CodeInvalidParams {
		// _meta given twice is refused by the header rules.
		t.Logf("duplicate _meta: %+v", a)
	}
	a = call26(t, ep, "notstreaming", allCaps, "")
	if !strings.Contains(string(a.Result), `"text":"true true"`) {
		t.Errorf("notstreaming: %s", a.Result)
	}
}

func TestTemplates(t *testing.T) {
	_, ep := inputServer(t)
	for _, v := range Versions() {
		a := exchange(t, ep, headersFor(v, "resources/templates/list"), req("resources/templates/list", meta26))
		m := obj(t, a.Result)
		list, _ := m["resourceTemplates"].([]any)
		if len(list) != 1 {
			t.Fatalf("%v: %s", v, a.Result)
		}
		if _, hint := m["ttlMs"]; hint != v.Stateless() {
			t.Errorf("%v: caching hint %v", v, hint)
		}
	}
	read := func(uri string) answer {
		return exchange(t, ep, v26("resources/read", HeaderName, uri), req("resources/read", `"uri":`+string(decode.AppendString(nil, uri))+`,`+meta26))
	}
	a := read("t://item/a%20b/x/deep/path?q=1")
	if !strings.Contains(string(a.Result), `"uri":"t://item/a%20b/x/deep/path?q=1","mimeType":"text/plain","text":"id=a b rest=/deep/path?q=1"`) ||
		!strings.Contains(string(a.Result), `"ttlMs"`) {
		t.Errorf("template read: %+v %s", a, a.Result)
	}
	for _, uri := range []string{"t://item//x1", "t://item/a/b/x1", "t://item/a", "t://other", "t://item/none/x1"} {
		a := read(uri)
		if a.Code != decode.CodeMethodNotFound || string(a.Data) != `{"uri":`+string(decode.AppendString(nil, uri))+`}` {
			t.Errorf("%s: %+v %s", uri, a, a.Data)
		}
	}
	for _, bad := range []string{"", "x{", "x}", "{a}{b}", "{a}x{a}", "{a,b}", "{#a}", "{}"} {
		s, _ := New(Info{Name: "x", Version: "1"})
		read := func(*fastserver.Request, string, map[string]string) ([]ResourceContents, error) { return nil, nil }
		if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: bad, Read: read}); err == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
}

func TestComplete(t *testing.T) {
	_, ep := inputServer(t)
	complete := func(params string) answer {
		return exchange(t, ep, v26("completion/complete"), req("completion/complete", params+meta26))
	}
	a := complete(`"ref":{"type":"ref/prompt","name":"ctx"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"other":"o"}},`)
	m := obj(t, a.Result)
	c, _ := m["completion"].(map[string]any)
	vals, _ := c["values"].([]any)
	if m["resultType"] != "complete" || len(vals) != 100 || c["hasMore"] != true || c["total"] != 150.0 || vals[0] != "va-0-o" {
		t.Errorf("completion: %s", a.Result)
	}
	a = complete(`"ref":{"type":"ref/resource","uri":"t://item/{id}/x{+rest}"},"argument":{"name":"id","value":"few"},`)
	if !strings.Contains(string(a.Result), `"completion":{"values":["fewid-0-","fewid-1-"],"total":2}`) {
		t.Errorf("few: %s", a.Result)
	}
	for params, code := range map[string]int{
		`"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""},`:                                 decode.CodeMethodNotFound,
		`"ref":{"type":"ref/resource","uri":"t://nope"},"argument":{"name":"a","value":""},`:                            decode.CodeMethodNotFound,
		`"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"a","value":""},`:                                      decode.CodeInvalidParams,
		`"argument":{"name":"a","value":""},`:                                                                           decode.CodeInvalidParams,
		`"ref":{"type":"ref/prompt","name":"ctx"},"argument":{"name":"a"},`:                                             decode.CodeInvalidParams,
		`"ref":{"type":"ref/prompt","name":"ctx"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"x":1}},`: decode.CodeInvalidParams,
		`"ref":{"type":"ref/prompt","name":"ctx"},"argument":{"name":"a","value":"boom"},`:                              -32042,
		// Rows 15, 16, 17 in order: a member given twice in params is
		// refused only for a target that exists; a ref given twice first.
		`"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""},"x":1,"x":2,`:                               decode.CodeMethodNotFound,
		`"x":[],"ref":{"type":"ref/resource","uri":"t://nope"},"\u0078":0,"argument":{"name":"a","value":""},`:                    decode.CodeMethodNotFound,
		`"ref":{"type":"ref/prompt","name":"ctx"},"argument":{"name":"a","value":"v"},"x":1,"x":2,`:                               decode.CodeInvalidParams,
		`"argument":{"name":"a","value":"v"},"argument":{"name":"a","value":"v"},"ref":{"type":"ref/prompt","name":"ctx"},`:       decode.CodeInvalidParams,
		`"ref":{"type":"ref/prompt","name":"nope"},"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""},`: decode.CodeInvalidParams,
	} {
		if a := complete(params); a.Code != code {
			t.Errorf("%s: %+v", params, a)
		}
	}
	v25 := hdr{HeaderProtocolVersion, "2025-11-25"}
	for _, params := range []string{`[]`, `"ref"`, `null`} {
		body := `{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":` + params + `}`
		if a := exchange(t, ep, v25, body); a.Code != decode.CodeInvalidParams || !strings.Contains(a.Msg, "params must be an object") {
			t.Errorf("params %s: %+v", params, a)
		}
	}
	// Without a completer: no suggestions.
	_, plain := testServer(t)
	a = exchange(t, plain, nil, req("completion/complete", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"A"}`))
	if string(a.Result) != `{"completion":{"values":[]}}` {
		t.Errorf("no completer: %s", a.Result)
	}
}

func TestSetLevelAndSubscribe(t *testing.T) {
	_, ep := inputServer(t)
	v25 := hdr{HeaderProtocolVersion, "2025-11-25"}
	for params, code := range map[string]int{
		`"level":"debug"`: 0, `"level":"emergency"`: 0, `"level":"\u0069nfo"`: 0,
		`"level":"INFO"`: decode.CodeInvalidParams, `"level":1`: decode.CodeInvalidParams, ``: decode.CodeInvalidParams,
	} {
		a := exchange(t, ep, v25, req("logging/setLevel", params))
		if a.Code != code || code == 0 && string(a.Result) != `{}` {
			t.Errorf("setLevel %s: %+v", params, a)
		}
	}
	for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		for params, code := range map[string]int{
			`"uri":"t://item/1/x2"`: 0, `"uri":"t://nope"`: decode.CodeMethodNotFound,
			`"uri":5`: decode.CodeInvalidParams, ``: decode.CodeInvalidParams, `"uri":"a","uri":"a"`: decode.CodeInvalidParams,
			// Row 16 before row 17: a member given twice in params is
			// refused only for a resource that exists.
			`"uri":"t://nope","x":1,"x":2`: decode.CodeMethodNotFound, `"x":1,"\u0078":2,"uri":"t://nope"`: decode.CodeMethodNotFound,
			`"uri":"t://item/1/x2","x":1,"x":2`: decode.CodeInvalidParams,
		} {
			a := exchange(t, ep, v25, req(m, params))
			if a.Code != code || code == 0 && string(a.Result) != `{}` {
				t.Errorf("%s %s: %+v", m, params, a)
			}
		}
		for _, params := range []string{`[]`, `"t://item/1/x2"`, `null`} {
			body := `{"jsonrpc":"2.0","id":7,"method":"` + m + `","params":` + params + `}`
			if a := exchange(t, ep, v25, body); a.Code != decode.CodeInvalidParams || !strings.Contains(a.Msg, "params must be an object") {
				t.Errorf("%s params %s: %+v", m, params, a)
			}
		}
	}
}
