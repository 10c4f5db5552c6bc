package demo

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

type outcome struct {
	status, code int
	field        string
	result       map[string]any
	raw          string
}

// do serves one request the way the server does: Check, Route, the
// server's params checks, ServeRPC.
func do(t *testing.T, ep *fastserver.Endpoint, headers map[string]string, body string) outcome {
	t.Helper()
	var d decode.Decoder
	if err := d.SetOptions(decode.Options{IDs: ep.IDs}); err != nil {
		t.Fatal(err)
	}
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var h fasthttp.RequestHeader
	for k, v := range headers {
		h.Set(k, v)
	}
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	return serve(t, ep, &r)
}

func serve(t *testing.T, ep *fastserver.Endpoint, r *fastserver.Request) outcome {
	t.Helper()
	refuse := func(e *fastserver.Error) outcome {
		o := outcome{status: e.Status, code: e.Code}
		if o.status == 0 {
			o.status = 200
		}
		var data struct{ Field string }
		json.Unmarshal(e.Data, &data)
		o.field = data.Field
		return o
	}
	if e := ep.Check(r); e != nil {
		return refuse(e)
	}
	if r.Msg.Kind == decode.KindNotification {
		return outcome{status: 202}
	}
	rt := ep.Route(r)
	if rt.Handler == nil {
		return outcome{status: 404, code: decode.CodeMethodNotFound}
	}
	if !rt.OwnParams && (r.Msg.ParamsType == decode.ParamsOther || r.Msg.ParamsType == decode.ParamsObject && decode.DuplicateName(r.Msg.Params)) {
		return outcome{status: 200, code: decode.CodeInvalidParams}
	}
	out, err := rt.Handler.ServeRPC(r, nil)
	if err != nil {
		var e *fastserver.Error
		if errors.As(err, &e) {
			return refuse(e)
		}
		return outcome{status: 500, code: decode.CodeInternalError}
	}
	o := outcome{status: 200, raw: string(out)}
	if err := json.Unmarshal(out, &o.result); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return o
}

func endpoint(t *testing.T) *fastserver.Endpoint {
	t.Helper()
	s, err := MCP()
	if err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	if ep.Err != nil {
		t.Fatal(ep.Err)
	}
	return ep
}

func headers26(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func toolCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + `}}`
}

func TestEcho(t *testing.T) {
	ep := endpoint(t)
	o := do(t, ep, headers26("tools/call", "echo"), toolCall("1", "echo", `{"text":"hello, caf\u00e9"}`))
	want := `{"resultType":"complete","content":[{"type":"text","text":"hello, caf\u00e9"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rpcedge","title":"rpcedge demo","version":"0.1.0"}}}`
	if o.status != 200 || o.raw != want {
		t.Errorf("got %d %s", o.status, o.raw)
	}
	// Under 2025-11-25 (what the TypeScript SDK speaks), no Mcp-* headers.
	o = do(t, ep, map[string]string{"MCP-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	if o.raw != `{"content":[{"type":"text","text":"hi"}]}` {
		t.Errorf("2025-11-25: %s", o.raw)
	}
	for args, field := range map[string]string{
		`{}`:                      "arguments.text",
		`{"text":1}`:              "arguments.text",
		`{"text":null}`:           "arguments.text",
		`{"Text":"hi"}`:           "arguments.text",
		`{"text":"a","text":"b"}`: "arguments.text",
		`"hi"`:                    "arguments",
	} {
		o := do(t, ep, headers26("tools/call", "echo"), toolCall("2", "echo", args))
		if o.status != 200 || o.code != decode.CodeInvalidParams || o.field != field {
			t.Errorf("echo %s: %+v", args, o)
		}
	}
	// Unknown members are ignored: the demo schemas allow them.
	if o := do(t, ep, headers26("tools/call", "echo"), toolCall("3", "echo", `{"text":"x","extra":[1]}`)); o.code != 0 {
		t.Errorf("extra member: %+v", o)
	}
}

func TestAddTool(t *testing.T) {
	ep := endpoint(t)
	for args, want := range map[string]string{
		`{"a":2,"b":3}`:     "5",
		`{"a":0.1,"b":0.2}`: "0.30000000000000004",
		`{"a":-2,"b":0.5}`:  "-1.5",
		`{"b":1,"a":1e2}`:   "101",
	} {
		o := do(t, ep, headers26("tools/call", "add"), toolCall("1", "add", args))
		content, _ := o.result["content"].([]any)
		if o.code != 0 || len(content) != 1 || content[0].(map[string]any)["text"] != want || o.result["isError"] != nil {
			t.Errorf("add %s: %s", args, o.raw)
		}
	}
	for args, field := range map[string]string{
		`{"a":1}`:          "arguments.b",
		`{"a":"1","b":2}`:  "arguments.a",
		`{"a":1,"b":null}`: "arguments.b",
	} {
		o := do(t, ep, headers26("tools/call", "add"), toolCall("2", "add", args))
		if o.code != decode.CodeInvalidParams || o.field != field {
			t.Errorf("add %s: %+v", args, o)
		}
	}
	o := do(t, ep, headers26("tools/call", "add"), toolCall("3", "add", `{"a":1e308,"b":1e308}`))
	if o.result["isError"] != true {
		t.Errorf("overflow: %s", o.raw)
	}
}

func TestAdd(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"2", "3", "5"},
		{"0.1", "0.2", "0.30000000000000004"},
		{"9007199254740993", "0", "9007199254740993"},
		{"9223372036854775807", "0", "9223372036854775807"},
		{"9223372036854775807", "1", "9223372036854775808"},
		{"-9223372036854775808", "-1", "-9223372036854775809"},
		{"12345678901234567890123", "1", "12345678901234567890124"},
		{"-12345678901234567890123", "12345678901234567890123", "0"},
		{"-100", "1", "-99"},
		{"100", "-1", "99"},
		{"1", "-100", "-99"},
		{"-5", "-7", "-12"},
		{"7", "-0", "7"},
		{"-0", "-0", "0"},
		{"999999999999999999999", "1", "1000000000000000000000"},
		{"1.5", "2.5", "4"},
		{"-0", "0", "0"},
		{"-0.0", "-0.0", "0"},
		{"1e300", "1e300", "2e+300"},
		{"1e-7", "0", "1e-7"},
		{"0.000001", "0", "0.000001"},
		{"1e21", "0", "1e+21"},
		{"123456789012345680000", "0", "123456789012345680000"},
		{"2.5E-3", "1", "1.0025"},
		{"1e-320", "0", "1e-320"},
	} {
		got, ok := Add([]byte(tt.a), []byte(tt.b))
		if !ok || got != tt.want {
			t.Errorf("Add(%s, %s) = %q, %v; want %q", tt.a, tt.b, got, ok, tt.want)
		}
	}
	for _, p := range [][2]string{{"1e400", "0"}, {"1e308", "1e308"}, {"-1e308", "-1e308"}} {
		if got, ok := Add([]byte(p[0]), []byte(p[1])); ok {
			t.Errorf("Add(%s, %s) = %q, true", p[0], p[1], got)
		}
	}
}

func TestAboutResource(t *testing.T) {
	ep := endpoint(t)
	o := do(t, ep, headers26("resources/read", "rpcedge://about"),
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"rpcedge://about",`+meta+`}}`)
	want := []any{map[string]any{"uri": "rpcedge://about", "mimeType": "text/plain", "text": AboutText}}
	if o.code != 0 || !reflect.DeepEqual(o.result["contents"], want) || o.result["ttlMs"] == nil || o.result["cacheScope"] != "public" {
		t.Errorf("read: %s", o.raw)
	}
	o = do(t, ep, headers26("resources/list", ""), `{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{`+meta+`}}`)
	list, _ := o.result["resources"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["uri"] != "rpcedge://about" {
		t.Errorf("list: %s", o.raw)
	}
	o = do(t, ep, headers26("resources/read", "rpcedge://nope"), `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"rpcedge://nope",`+meta+`}}`)
	if o.status != 200 || o.code != decode.CodeMethodNotFound {
		t.Errorf("unknown: %+v", o)
	}
}

func TestGreetPrompt(t *testing.T) {
	ep := endpoint(t)
	o := do(t, ep, headers26("prompts/get", "greet"),
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"Ada"},`+meta+`}}`)
	msgs, _ := o.result["messages"].([]any)
	if o.code != 0 || len(msgs) != 1 {
		t.Fatalf("get: %s", o.raw)
	}
	msg := msgs[0].(map[string]any)
	content := msg["content"].(map[string]any)
	if msg["role"] != "user" || content["type"] != "text" || !strings.Contains(content["text"].(string), "Ada") {
		t.Errorf("message: %v", msg)
	}
	o = do(t, ep, headers26("prompts/get", "greet"), `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"greet",`+meta+`}}`)
	if o.code != decode.CodeInvalidParams || o.field != "arguments.name" {
		t.Errorf("missing name: %+v", o)
	}
	o = do(t, ep, map[string]string{"MCP-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`)
	prompts, _ := o.result["prompts"].([]any)
	if len(prompts) != 1 || prompts[0].(map[string]any)["name"] != "greet" {
		t.Errorf("list: %s", o.raw)
	}
}

func TestToolsList(t *testing.T) {
	ep := endpoint(t)
	o := do(t, ep, headers26("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)
	tools, _ := o.result["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["name"] != "echo" || tools[1].(map[string]any)["name"] != "add" {
		t.Errorf("%s", o.raw)
	}
}

func TestMCPOptions(t *testing.T) {
	if _, err := MCP(mcp.WithCache(mcp.CacheHint{TTL: -1})); err == nil {
		t.Error("invalid option accepted")
	}
	s, err := MCP(mcp.WithInstructions("be brief"))
	if err != nil {
		t.Fatal(err)
	}
	o := do(t, s.Endpoint(), nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if o.result["instructions"] != "be brief" || o.result["protocolVersion"] != "2025-11-25" {
		t.Errorf("%s", o.raw)
	}
}

// TestEchoAllocs pins the demo echo, through Check, Route and ServeRPC,
// at zero allocations once warm (skipped under the race detector, whose
// sync.Pool drops items on purpose).
func TestEchoAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector makes sync.Pool allocate")
	}
	ep := endpoint(t)
	bodies := []string{
		toolCall("1", "echo", `{"text":"hi"}`),
		toolCall(`"abc"`, "echo", `{"text":"caf\u00e9 \ud83d\ude00 \"quoted\""}`),
		toolCall("12345678901234567890123", "echo", `{"text":"`+strings.Repeat("long text ", 200)+`"}`),
	}
	reqs := make([]fastserver.Request, len(bodies))
	hdrs := make([]fasthttp.RequestHeader, len(bodies))
	msgs := make([]decode.Message, len(bodies))
	for i, b := range bodies {
		d, _ := decode.NewDecoder(decode.Options{IDs: decode.IDsMCP})
		if err := d.Decode([]byte(b), &msgs[i]); err != nil {
			t.Fatal(err)
		}
		for k, v := range headers26("tools/call", "echo") {
			hdrs[i].Set(k, v)
		}
		reqs[i].Reset(&hdrs[i], &msgs[i], nil)
	}
	dst := make([]byte, 0, 16<<10)
	i := 0
	n := testing.AllocsPerRun(1000, func() {
		r := &reqs[i%len(reqs)]
		i++
		if e := ep.Check(r); e != nil {
			panic(e)
		}
		out, err := ep.Route(r).Handler.ServeRPC(r, dst[:0])
		if err != nil {
			panic(err)
		}
		dst = out
	})
	if n != 0 {
		t.Errorf("%v allocations per echo, want 0", n)
	}
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
