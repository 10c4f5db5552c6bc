package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

var h25 = hdr{HeaderProtocolVersion, "2025-11-25"}

// TestToolsCallRows checks rows 15 to 17 for tools/call, in order.
func TestToolsCallRows(t *testing.T) {
	_, ep := testServer(t)
	const (
		params   = decode.CodeInvalidParams
		notFound = decode.CodeMethodNotFound
	)
	tests := []struct {
		name  string
		body  string
		code  int
		field string
	}{
		// Row 15.
		{"params absent", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, params, "name"},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["echo"]}`, params, "params"},
		{"params null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, params, "params"},
		{"params empty", call(``), params, "name"},
		{"name missing", call(`"arguments":{"text":"hi"}`), params, "name"},
		{"name a number", call(`"name":1`), params, "name"},
		{"name null", call(`"name":null`), params, "name"},
		{"name an object", call(`"name":{"n":"echo"}`), params, "name"},
		{"name twice", call(`"name":"echo","name":"echo"`), params, "name"},
		{"name twice, one escaped", call(`"name":"echo","n\u0061me":"echo"`), params, "name"},
		{"name twice before an unknown tool", call(`"name":"nope","name":"nope"`), params, "name"},
		{"name case", call(`"Name":"echo"`), params, "name"},
		// Row 16.
		{"unknown tool", call(`"name":"nope"`), notFound, ""},
		{"unknown tool, case", call(`"name":"ECHO"`), notFound, ""},
		{"unknown tool before duplicates", call(`"name":"nope","x":1,"x":2`), notFound, ""},
		{"unknown tool before bad arguments", call(`"name":"nope","arguments":[]`), notFound, ""},
		{"empty tool name", call(`"name":""`), notFound, ""},
		// Row 17.
		{"member twice in params", call(`"name":"echo","arguments":{"text":"a"},"arguments":{"text":"b"}`), params, "arguments"},
		{"other member twice in params", call(`"name":"echo","arguments":{"text":"a"},"x":1,"x":1`), params, "x"},
		{"member twice in params, escaped", call(`"name":"echo","arguments":{"text":"a"},"_meta":{},"\u005fmeta":{}`), params, "_meta"},
		{"arguments an array", call(`"name":"echo","arguments":["hi"]`), params, "arguments"},
		{"arguments a string", call(`"name":"echo","arguments":"hi"`), params, "arguments"},
		{"arguments null", call(`"name":"echo","arguments":null`), params, "arguments"},
		{"arguments a number", call(`"name":"echo","arguments":1`), params, "arguments"},
		{"arguments member twice", call(`"name":"echo","arguments":{"text":"a","text":"b"}`), params, "arguments.text"},
		{"arguments member twice, escaped", call(`"name":"echo","arguments":{"text":"a","t\u0065xt":"b"}`), params, "arguments.text"},
		{"arguments member twice beats the schema", call(`"name":"echo","arguments":{"x":1,"x":2}`), params, "arguments.x"},
		{"arguments absent, text required", call(`"name":"echo"`), params, "arguments.text"},
		{"text missing", call(`"name":"echo","arguments":{}`), params, "arguments.text"},
		{"text of another case", call(`"name":"echo","arguments":{"Text":"hi"}`), params, "arguments.text"},
		{"text a number", call(`"name":"echo","arguments":{"text":1}`), params, "arguments.text"},
		{"text null", call(`"name":"echo","arguments":{"text":null}`), params, "arguments.text"},
		{"additional member refused", call(`"name":"strict","arguments":{"n":1,"extra":true}`), params, "arguments.extra"},
		{"integer below minimum", call(`"name":"strict","arguments":{"n":0}`), params, "arguments.n"},
		{"integer with a fraction", call(`"name":"strict","arguments":{"n":1.5}`), params, "arguments.n"},
		{"integer as a string", call(`"name":"strict","arguments":{"n":"1"}`), params, "arguments.n"},
		// Success.
		{"echo", call(echoArgs), 0, ""},
		{"unknown members ignored", call(`"name":"echo","arguments":{"text":"hi","extra":[1,{"x":1,"x":2}]},"more":1`), 0, ""},
		{"escaped tool name", call(`"\u006eame":"\u0065cho","arguments":{"t\u0065xt":"hi"}`), 0, ""},
		{"non-ASCII tool name, escaped", call(`"name":"caf\u00e9"`), 0, ""},
		{"non-ASCII tool name, raw", call(`"name":"café"`), 0, ""},
		{"arguments absent, nothing required", call(`"name":"strict"`), 0, ""},
		{"integer written as 1.0", call(`"name":"strict","arguments":{"n":1.0}`), 0, ""},
		{"integer written as 1e2", call(`"name":"strict","arguments":{"n":1e2}`), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := exchange(t, ep, h25, tt.body)
			if a.Status != 200 || a.Code != tt.code {
				t.Fatalf("got %d / %d (%s), want 200 / %d", a.Status, a.Code, a.Msg, tt.code)
			}
			if got := fieldOf(t, a); got != tt.field {
				t.Errorf("field %q, want %q (%s)", got, tt.field, a.Msg)
			}
			if tt.code == notFound && !strings.HasPrefix(a.Msg, "unknown tool: ") {
				t.Errorf("message %q", a.Msg)
			}
		})
	}
}

// callResult is a tools/call result as a client reads it.
type callResult struct {
	ResultType        *string          `json:"resultType"`
	Content           []map[string]any `json:"content"`
	IsError           *bool            `json:"isError"`
	StructuredContent json.RawMessage  `json:"structuredContent"`
	Meta              map[string]any   `json:"_meta"`
}

func TestToolsCallResults(t *testing.T) {
	_, ep := testServer(t)
	for _, v := range Versions() {
		t.Run(v.String(), func(t *testing.T) {
			get := func(args string, name string) callResult {
				t.Helper()
				a := exchange(t, ep, headersForTool(v, name), call(`"name":"`+name+`"`+args+`,`+meta26))
				if a.Status != 200 || a.Code != 0 {
					t.Fatalf("%s: %+v", name, a)
				}
				var r callResult
				if err := json.Unmarshal(a.Result, &r); err != nil {
					t.Fatal(err)
				}
				if v.Stateless() {
					if r.ResultType == nil || *r.ResultType != "complete" {
						t.Errorf("resultType %v", r.ResultType)
					}
					info, _ := r.Meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
					if !reflect.DeepEqual(info, map[string]any{"name": "test", "title": "Test server", "version": "1.2.3"}) {
						t.Errorf("_meta %v", r.Meta)
					}
				} else if r.ResultType != nil || r.Meta != nil {
					t.Errorf("%v result has resultType or _meta: %s", v, a.Result)
				}
				return r
			}
			texts := []string{"hi", "", `caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n`, "日本語", strings.Repeat("long ", 500)}
			for _, text := range texts {
				r := get(`,"arguments":{"text":"`+text+`"}`, "echo")
				var want string
				if err := json.Unmarshal([]byte(`"`+text+`"`), &want); err != nil {
					t.Fatal(err)
				}
				if len(r.Content) != 1 || r.Content[0]["type"] != "text" || r.Content[0]["text"] != want || r.IsError != nil {
					t.Errorf("echo %q: %+v", text, r)
				}
			}

			r := get(``, "fail")
			if r.IsError == nil || !*r.IsError || len(r.Content) != 1 || r.Content[0]["text"] != "the tool broke" {
				t.Errorf("fail: %+v", r)
			}

			r = get(``, "rich")
			if r.IsError == nil || !*r.IsError || len(r.Content) != 2 || r.Content[0]["text"] != "a\n\"b\"" ||
				r.Content[1]["type"] != "image" || string(r.StructuredContent) != `{"n":1}` {
				t.Errorf("rich: %+v", r)
			}
		})
	}
}

func headersForTool(v Version, name string) hdr {
	return hdr{HeaderProtocolVersion, v.String(), HeaderMethod, "tools/call", HeaderName, name}
}

func TestToolErrors(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := &fastserver.Error{Status: 403, Code: -32001, Message: "forbidden"}
	add := func(name string, h ToolFunc) {
		if err := s.AddTool(Tool{Name: name, Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	add("refuse", func(c *Call) error { c.AddText("dropped"); return &fastserver.Error{Code: -32042, Message: "refused"} })
	add("wrapped", func(c *Call) error { return fmt.Errorf("layer: %w", wrapped) })
	add("plain", func(c *Call) error { return errors.New("boom <&>") })
	add("badjson", func(c *Call) error { return c.AddTextJSON([]byte(`not a string`)) })
	add("badjson2", func(c *Call) error { return c.AddTextJSON([]byte("\"a\x01b\"")) })
	add("badcontent", func(c *Call) error { return c.AddContentJSON([]byte(`[1]`)) })
	add("badstruct", func(c *Call) error { return c.SetStructuredContent([]byte(`{`)) })
	add("owntext", func(c *Call) error { return c.AddTextJSON([]byte(` "own \u00e9" `)) })
	ep := s.Endpoint()

	a := exchange(t, ep, h25, call(`"name":"refuse"`))
	if a.Status != 200 || a.Code != -32042 || a.Msg != "refused" {
		t.Errorf("refuse: %+v", a)
	}
	a = exchange(t, ep, h25, call(`"name":"wrapped"`))
	if a.Status != 403 || a.Code != -32001 {
		t.Errorf("wrapped: %+v", a)
	}
	for name, text := range map[string]string{
		"plain":      "boom <&>",
		"badjson":    errNotJSONString.Error(),
		"badjson2":   errNotJSONString.Error(),
		"badcontent": errNotJSONObject.Error(),
		"badstruct":  errNotJSON.Error(),
	} {
		a = exchange(t, ep, h25, call(`"name":"`+name+`"`))
		var r callResult
		if err := json.Unmarshal(a.Result, &r); err != nil {
			t.Fatalf("%s: %+v", name, a)
		}
		if r.IsError == nil || !*r.IsError || len(r.Content) != 1 || r.Content[0]["text"] != text {
			t.Errorf("%s: %s", name, a.Result)
		}
	}
	a = exchange(t, ep, h25, call(`"name":"owntext"`))
	if !strings.Contains(string(a.Result), `"text":"own \u00e9"`) {
		t.Errorf("owntext: %s", a.Result)
	}
}

func TestCallArgs(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	s.AddTool(Tool{Name: "args", Handler: ToolFunc(func(c *Call) error {
		str, err := c.ArgString("s")
		got = append(got, fmt.Sprintf("s=%q,%v", str, err == nil))
		str2, _ := c.ArgString("s2")
		got = append(got, fmt.Sprintf("s=%q s2=%q", str, str2))
		for _, k := range []string{"i", "big", "neg", "min", "frac", "exp", "s", "huge"} {
			i, err := c.ArgInt(k)
			f, errf := c.ArgFloat(k)
			got = append(got, fmt.Sprintf("%s=%d,%v/%g,%v", k, i, err == nil, f, errf == nil))
		}
		n, err := c.ArgNumber("huge")
		got = append(got, fmt.Sprintf("huge=%s,%v", n, err == nil))
		b, err := c.ArgBool("t")
		_, errb := c.ArgBool("i")
		got = append(got, fmt.Sprintf("t=%v,%v i=%v", b, err == nil, errb == nil))
		got = append(got, fmt.Sprintf("missing=%q v=%v args=%s", c.Arg("missing"), c.Version(), c.Arguments()))
		if c.Request() == nil || c.Context() == nil {
			t.Error("no request or context")
		}
		return nil
	})})
	ep := s.Endpoint()
	a := exchange(t, ep, h25, call(`"name":"args","arguments":{"s":"caf\u00e9","s2":"x\ny","i":42,"big":9223372036854775807,"neg":-9223372036854775808,"min":9223372036854775808,"frac":1.5,"exp":1e3,"huge":99999999999999999999,"t":true}`))
	if a.Code != 0 {
		t.Fatal(a)
	}
	want := []string{
		`s="café",true`,
		`s="café" s2="x\ny"`,
		`i=42,true/42,true`,
		`big=9223372036854775807,true/0,false`,
		`neg=-9223372036854775808,true/-9.223372036854776e+18,true`,
		`min=0,false/0,false`,
		`frac=0,false/1.5,true`,
		`exp=1000,true/1000,true`,
		`s=0,false/0,false`,
		`huge=0,false/0,false`,
		`huge=99999999999999999999,true`,
		`t=true,true i=false`,
		`missing="" v=2025-11-25 args={"s":"caf\u00e9","s2":"x\ny","i":42,"big":9223372036854775807,"neg":-9223372036854775808,"min":9223372036854775808,"frac":1.5,"exp":1e3,"huge":99999999999999999999,"t":true}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The trap of issue #21: an integer schema, a number beyond int64, and a
// handler that returns the accessor's error: the client gets -32602
// naming the argument, never a wrong sum.
func TestArgIntOverflowRefused(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{
		Name:        "add",
		InputSchema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`,
		Handler: ToolFunc(func(c *Call) error {
			a, err := c.ArgInt("a")
			if err != nil {
				return err
			}
			b, err := c.ArgInt("b")
			if err != nil {
				return err
			}
			c.AddText(strconv.FormatInt(a+b, 10))
			return nil
		}),
	})
	ep := s.Endpoint()
	a := exchange(t, ep, h25, call(`"name":"add","arguments":{"a":99999999999999999999,"b":1}`))
	if a.Code != -32602 || string(a.Data) != `{"field":"arguments.a"}` {
		t.Errorf("a beyond int64: %+v, want -32602 naming arguments.a", a)
	}
	if a := exchange(t, ep, h25, call(`"name":"add","arguments":{"a":2,"b":1e1}`)); a.Code != 0 || !strings.Contains(string(a.Result), `"12"`) {
		t.Errorf("2 + 1e1: %+v", a)
	}
}

// listResult is a list result as a client reads it.
type listResult struct {
	ResultType *string          `json:"resultType"`
	Tools      []map[string]any `json:"tools"`
	Resources  []map[string]any `json:"resources"`
	Prompts    []map[string]any `json:"prompts"`
	NextCursor *string          `json:"nextCursor"`
	TTLMs      *float64         `json:"ttlMs"`
	CacheScope *string          `json:"cacheScope"`
	Meta       map[string]any   `json:"_meta"`
}

func TestToolsList(t *testing.T) {
	_, ep := testServer(t)
	for _, v := range Versions() {
		a := exchange(t, ep, headersFor(v, "tools/list"), req("tools/list", meta26))
		var r listResult
		if err := json.Unmarshal(a.Result, &r); err != nil {
			t.Fatalf("%v: %+v", v, a)
		}
		checkCommon(t, v, r, true)
		var names []string
		for _, tool := range r.Tools {
			names = append(names, tool["name"].(string))
			if _, ok := tool["inputSchema"].(map[string]any); !ok {
				t.Errorf("%v: %v has no inputSchema", v, tool)
			}
			_, hasTitle := tool["title"]
			if hasTitle != (v >= Version20250618 && tool["name"] == "echo") {
				t.Errorf("%v: title of %v", v, tool)
			}
		}
		if want := []string{"echo", "fail", "refuse", "rich", "strict", "café"}; !reflect.DeepEqual(names, want) {
			t.Errorf("%v: order %v", v, names)
		}
		if s := r.Tools[0]["inputSchema"]; !reflect.DeepEqual(s, map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []any{"text"}}) {
			t.Errorf("%v: schema %v", v, s)
		}
		if s := r.Tools[1]["inputSchema"]; !reflect.DeepEqual(s, map[string]any{"type": "object"}) {
			t.Errorf("%v: default schema %v", v, s)
		}
	}
}

// checkCommon checks the members every list result carries by version.
func checkCommon(t *testing.T, v Version, r listResult, cacheable bool) {
	t.Helper()
	if r.NextCursor != nil {
		t.Errorf("%v: nextCursor", v)
	}
	if !v.Stateless() {
		if r.ResultType != nil || r.Meta != nil || r.TTLMs != nil || r.CacheScope != nil {
			t.Errorf("%v: 2026-07-28 members in an earlier result: %+v", v, r)
		}
		return
	}
	if r.ResultType == nil || *r.ResultType != "complete" {
		t.Errorf("%v: resultType %v", v, r.ResultType)
	}
	if _, ok := r.Meta["io.modelcontextprotocol/serverInfo"]; !ok {
		t.Errorf("%v: _meta %v", v, r.Meta)
	}
	if cacheable && (r.TTLMs == nil || *r.TTLMs != 300000 || r.CacheScope == nil || *r.CacheScope != "public") {
		t.Errorf("%v: cache hint %v %v", v, r.TTLMs, r.CacheScope)
	}
}

func TestListCursor(t *testing.T) {
	_, ep := testServer(t)
	for _, m := range []string{"tools/list", "resources/list", "prompts/list"} {
		for _, cursor := range []string{`"next"`, `""`, `null`, `1`} {
			a := exchange(t, ep, h25, req(m, `"cursor":`+cursor))
			if a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "cursor" {
				t.Errorf("%s cursor %s: %+v", m, cursor, a)
			}
		}
		if a := exchange(t, ep, h25, req(m, `"other":1`)); a.Code != 0 {
			t.Errorf("%s: %+v", m, a)
		}
		if a := exchange(t, ep, h25, `{"jsonrpc":"2.0","id":1,"method":"`+m+`"}`); a.Code != 0 {
			t.Errorf("%s without params: %+v", m, a)
		}
	}
}

func TestAddToolErrors(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	h := ToolFunc(func(*Call) error { return nil })
	bad := []Tool{
		{Name: "", Handler: h},
		{Name: "nil"},
		{Name: "bad\xff", Handler: h},
		{Name: "schema", Handler: h, InputSchema: `{"type":"object","properties":{"x":{"minLength":-1}}}`},
		{Name: "remote", Handler: h, InputSchema: `{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"}}}`},
		{Name: "file", Handler: h, InputSchema: `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`},
		{Name: "dup", Handler: h, InputSchema: `{"type":"object","properties":{"x":{"type":"string","type":"integer"}}}`},
		{Name: "regexp", Handler: h, InputSchema: `{"type":"object","properties":{"x":{"pattern":"(?<=a)b"}}}`},
		{Name: "output", Handler: h, OutputSchema: `{"type":"array"}`},
		{Name: "json", Handler: h, InputSchema: `{"type":"object"`},
		{Name: "root", Handler: h, InputSchema: `{"type":"string"}`},
		{Name: "desc", Handler: h, Description: "\xff"},
	}
	for _, tool := range bad {
		if err := s.AddTool(tool); err == nil {
			t.Errorf("AddTool(%q) succeeded", tool.Name)
		}
	}
	if err := s.AddTool(Tool{Name: "ok", Handler: h}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "ok", Handler: h}); err == nil {
		t.Error("duplicate accepted")
	}
	if !errors.Is(s.Err(), errSchema) {
		t.Errorf("Err %v does not wrap errSchema", s.Err())
	}
	if !errors.Is(s.Err(), ErrRemoteRef) {
		t.Errorf("Err %v does not wrap ErrRemoteRef", s.Err())
	}
	ep := s.Endpoint()
	if ep.Err == nil {
		t.Error("Endpoint.Err is nil")
	}
	if err := s.AddTool(Tool{Name: "late", Handler: h}); err == nil {
		t.Error("registration after Endpoint accepted")
	}
}

// TestLongNamesClipped: refusals repeat at most maxEcho bytes of what the
// client sent.
func TestLongNamesClipped(t *testing.T) {
	_, ep := testServer(t)
	long := strings.Repeat("é", 2000)
	a := exchange(t, ep, h25, call(`"name":"`+long+`"`))
	if a.Code != decode.CodeMethodNotFound || len(a.Msg) > maxEcho+64 || !strings.HasSuffix(a.Msg, "…") || !utf8.ValidString(a.Msg) {
		t.Errorf("unknown tool message of %d bytes: %.80q", len(a.Msg), a.Msg)
	}
	a = exchange(t, ep, h25, call(`"name":"strict","arguments":{"`+long+`":1}`))
	if f := fieldOf(t, a); a.Code != decode.CodeInvalidParams || len(f) > maxEcho+8 || !strings.HasPrefix(f, "arguments.é") {
		t.Errorf("field of %d bytes: %+v", len(f), a)
	}
	a = exchange(t, ep, h25, call(`"name":"echo","`+long+`":1,"`+long+`":2`))
	if f := fieldOf(t, a); a.Code != decode.CodeInvalidParams || len(f) > maxEcho+8 {
		t.Errorf("duplicate field of %d bytes", len(f))
	}
}
