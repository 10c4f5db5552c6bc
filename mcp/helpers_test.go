package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// answer is what the server would send for one message, as far as this
// package decides it.
type answer struct {
	Status int             // HTTP status
	Code   int             // JSON-RPC error code; 0 for a result or 202
	Msg    string          // error message
	Data   json.RawMessage // error data
	Result json.RawMessage // the result value
	Label  string          // the route's label
}

// hdr is a header list: name, value, name, value…
type hdr []string

// exchange plays the server's part of the contract's rows 11 to 19 for
// body with the given headers: Check, 202 for notifications, Route, the
// params checks the server makes unless OwnParams, then the handler.
func exchange(t testing.TB, ep *fastserver.Endpoint, headers hdr, body string) answer {
	t.Helper()
	return exchangeAs(t, ep, nil, headers, body)
}

// exchangeAs is exchange for a request that WithAuth admitted with tok
// (nil: no token).
func exchangeAs(t testing.TB, ep *fastserver.Endpoint, tok *auth.Token, headers hdr, body string) answer {
	t.Helper()
	var d decode.Decoder
	if err := d.SetOptions(decode.Options{IDs: ep.IDs}); err != nil {
		t.Fatal(err)
	}
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetRequestURI("/mcp")
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	if tok != nil {
		r.Auth = tok
	}
	return serve(t, ep, &r)
}

func serve(t testing.TB, ep *fastserver.Endpoint, r *fastserver.Request) answer {
	t.Helper()
	refuse := func(e *fastserver.Error, label string) answer {
		st := e.Status
		if st == 0 {
			st = 200
		}
		if len(e.Data) > 0 && !json.Valid(e.Data) {
			t.Fatalf("invalid error data %q", e.Data)
		}
		return answer{Status: st, Code: e.Code, Msg: e.Message, Data: e.Data, Label: label}
	}
	if e := ep.Check(r); e != nil {
		return refuse(e, "")
	}
	if r.Msg.Kind == decode.KindNotification {
		return answer{Status: 202}
	}
	rt := ep.Route(r)
	if rt.Handler == nil {
		return answer{Status: 404, Code: decode.CodeMethodNotFound, Label: rt.Label}
	}
	if rt.Refuse != nil {
		return refuse(rt.Refuse, rt.Label)
	}
	if !rt.OwnParams {
		switch {
		case r.Msg.ParamsType == decode.ParamsOther:
			return answer{Status: 200, Code: decode.CodeInvalidParams, Label: rt.Label}
		case r.Msg.ParamsType == decode.ParamsObject && decode.DuplicateName(r.Msg.Params):
			return answer{Status: 200, Code: decode.CodeInvalidParams, Label: rt.Label}
		}
	}
	out, err := rt.Handler.ServeRPC(r, nil)
	if err != nil {
		var e *fastserver.Error
		if errors.As(err, &e) {
			return refuse(e, rt.Label)
		}
		return answer{Status: 500, Code: decode.CodeInternalError, Msg: err.Error(), Label: rt.Label}
	}
	if !json.Valid(out) {
		t.Fatalf("invalid result %q", out)
	}
	return answer{Status: 200, Result: out, Label: rt.Label}
}

// v26 are the headers of a well-formed 2026-07-28 request.
func v26(method string, more ...string) hdr {
	return append(hdr{HeaderProtocolVersion, "2026-07-28", HeaderMethod, method}, more...)
}

// meta26 is the _meta member of a 2026-07-28 request.
const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// obj decodes a JSON object for assertions.
func obj(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m
}

// field returns the "field" of -32602 data.
func fieldOf(t testing.TB, a answer) string {
	t.Helper()
	if len(a.Data) == 0 {
		return ""
	}
	var d struct{ Field string }
	if err := json.Unmarshal(a.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.Field
}

// testServer is a server with a few tools, a resource and a prompt.
func testServer(t testing.TB, opts ...Option) (*Server, *fastserver.Endpoint) {
	t.Helper()
	s, err := New(Info{Name: "test", Title: "Test server", Version: "1.2.3"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddTool(Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "echoes",
		InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Handler:     ToolFunc(func(c *Call) error { return c.AddTextJSON(c.Arg("text")) }),
	}))
	must(s.AddTool(Tool{
		Name: "fail",
		Handler: ToolFunc(func(c *Call) error {
			c.AddText("partial")
			return errors.New("the tool broke")
		}),
	}))
	must(s.AddTool(Tool{
		Name:    "refuse",
		Handler: ToolFunc(func(c *Call) error { return &fastserver.Error{Code: -32042, Message: "refused"} }),
	}))
	must(s.AddTool(Tool{
		Name: "rich",
		Handler: ToolFunc(func(c *Call) error {
			c.AddText("a\n\"b\"")
			if err := c.AddContentJSON([]byte(`{"type":"image","data":"AA==","mimeType":"image/png"}`)); err != nil {
				return err
			}
			c.SetError()
			return c.SetStructuredContent([]byte(`{"n":1}`))
		}),
	}))
	must(s.AddTool(Tool{
		Name:        "strict",
		InputSchema: `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"additionalProperties":false}`,
		Handler:     ToolFunc(func(c *Call) error { c.AddText("ok"); return nil }),
	}))
	must(s.AddTool(Tool{
		Name:    "caf\u00e9",
		Handler: ToolFunc(func(c *Call) error { c.AddText("accent"); return nil }),
	}))
	must(s.AddResource(Resource{URI: "test://about", Name: "about", Title: "About", MIMEType: "text/plain", Text: "hello"}))
	must(s.AddResource(Resource{
		URI: "test://dyn",
		Read: func(r *fastserver.Request) ([]ResourceContents, error) {
			return []ResourceContents{{Text: "dynamic"}, {URI: "test://dyn/bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}}, nil
		},
		Cache: &CacheHint{TTL: 0, Scope: CachePrivate},
	}))
	must(s.AddResource(Resource{
		URI:  "test://broken",
		Read: func(r *fastserver.Request) ([]ResourceContents, error) { return nil, errors.New("disk on fire") },
	}))
	must(s.AddPrompt(Prompt{
		Name:        "greet",
		Title:       "Greet",
		Description: "greets",
		Arguments:   []PromptArgument{{Name: "name", Required: true}, {Name: "tone"}},
		Get: func(r *fastserver.Request, args map[string]string) (*PromptResult, error) {
			text := "Hello " + args["name"]
			if tone, ok := args["tone"]; ok {
				text += " (" + tone + ")"
			}
			return &PromptResult{Description: "a greeting", Messages: []PromptMessage{{Text: text}}}, nil
		},
	}))
	return s, s.Endpoint()
}

// decodeOwn decodes body with a Decoder of its own, so the Message's
// slices borrow from body and stay valid.
func decodeOwn(t testing.TB, body []byte) decode.Message {
	t.Helper()
	d, err := decode.NewDecoder(decode.Options{IDs: decode.IDsMCP})
	if err != nil {
		t.Fatal(err)
	}
	var m decode.Message
	if err := d.Decode(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
