package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// echo is the test agent: a completed task whose artifact repeats the
// message's text parts; "ask" as the only text asks for input instead,
// "direct" answers with a message, "fail" fails, "bad" refuses with
// -32602.
var echo = AgentFunc(func(_ context.Context, c *Call) (*Reply, error) {
	texts := c.Message.Parts.OfKind(PartText)
	if texts.Len() == 1 {
		var only string
		for _, p := range texts.All() {
			only = p.Text
		}
		switch only {
		case "ask":
			return &Reply{State: TaskStateInputRequired, Status: &Message{Parts: PartsOf(TextPart("more?"))}}, nil
		case "direct":
			return &Reply{Message: &Message{Parts: PartsOf(TextPart("hello"))}}, nil
		case "fail":
			return nil, errors.New("agent failed")
		case "bad":
			return nil, fastserver.InvalidParams("message.parts", "bad input")
		}
	}
	if texts.Len() == 0 {
		return &Reply{}, nil // completed, nothing to echo: an artifact needs a part
	}
	return &Reply{Artifacts: []Artifact{{Name: "echo", Parts: texts}}}, nil
})

func testCard() AgentCard {
	return AgentCard{
		Name:        "test agent",
		Description: "echoes",
		Version:     "1.2.3",
		Skills:      []AgentSkill{{ID: "echo", Name: "Echo", Description: "repeats text", Tags: []string{"demo"}}},
	}
}

func newTestServer(t testing.TB, mut func(*Config)) *Server {
	t.Helper()
	// SendMessage answers at once here, as if every client asked
	// returnImmediately: most agents of these tests leave their task
	// working on purpose. The wait has tests of its own (SendWait set).
	cfg := Config{Card: testCard(), Agent: echo, SendWait: -1}
	if mut != nil {
		mut(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// answer is what the fastserver server would answer for a request.
type answer struct {
	status int // HTTP status
	code   int // JSON-RPC error code, 0 for a result
	msg    string
	data   string // error.data
	result string // the result value
	route  fastserver.Route
}

// field returns error.data.field.
func (a answer) field() string {
	var d struct{ Field string }
	json.Unmarshal([]byte(a.data), &d)
	return d.Field
}

// call serves body with the given A2A-Version header ("" for none) the
// way fastserver's server does: Check, 202 for notifications, Route,
// Refuse, 404 for no handler, rows 15/17 unless OwnParams, the handler.
func call(t testing.TB, s *Server, version, body string) answer {
	t.Helper()
	var hdr fasthttp.RequestHeader
	hdr.SetHost("agent.test:8080")
	if version != "" {
		hdr.Set(VersionHeader, version)
	}
	return callHeader(t, s, &hdr, body)
}

func callHeader(t testing.TB, s *Server, hdr *fasthttp.RequestHeader, body string) answer {
	t.Helper()
	var d decode.Decoder
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		t.Fatalf("test body does not decode: %v", err)
	}
	var r fastserver.Request
	r.Reset(hdr, &m, context.Background())
	ep := s.Endpoint()
	if e := ep.Check(&r); e != nil {
		return errAnswer(e)
	}
	if m.Kind == decode.KindNotification {
		return answer{status: 202}
	}
	rt := ep.Route(&r)
	if rt.Refuse != nil {
		a := errAnswer(rt.Refuse)
		a.route = rt
		return a
	}
	if rt.Handler == nil {
		return answer{status: 404, code: decode.CodeMethodNotFound, route: rt}
	}
	if !rt.OwnParams {
		t.Fatalf("route %q does not own its params", rt.Label)
	}
	const prefix = `{"jsonrpc":"2.0","id":1,"result":`
	out, err := rt.Handler.ServeRPC(&r, []byte(prefix))
	if !strings.HasPrefix(string(out), prefix) {
		t.Fatalf("handler did not only append: %q", out)
	}
	if err != nil {
		var e *fastserver.Error
		if errors.As(err, &e) {
			a := errAnswer(e)
			a.route = rt
			return a
		}
		return answer{status: 500, code: decode.CodeInternalError, msg: err.Error(), route: rt}
	}
	res := out[len(prefix):]
	if !decode.Valid(res) {
		t.Fatalf("result is not valid JSON: %s", res)
	}
	return answer{status: 200, result: string(res), route: rt}
}

func errAnswer(e *fastserver.Error) answer {
	st := e.Status
	if st == 0 {
		st = 200
	}
	if e.Data != nil && !decode.Valid(e.Data) {
		panic("error data is not valid JSON: " + string(e.Data))
	}
	return answer{status: st, code: e.Code, msg: e.Message, data: string(e.Data)}
}

// req builds a request body.
func req(method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

// parse decodes a JSON value into a generic map.
func parse(t testing.TB, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}

// get walks a path of map keys and array indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// hasKey reports whether any object within v has the member name.
func hasKey(v any, name string) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == name || hasKey(e, name) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasKey(e, name) {
				return true
			}
		}
	}
	return false
}

const msg10 = `{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"},{"text":"there"}]}}`
const msg03 = `{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"},{"kind":"text","text":"there"}]}}`

// memStore is the in-memory store behind a Server made without
// Config.Tasks.
func memStore(s *Server) *store { return s.tasks.(*MemoryStore).s }
