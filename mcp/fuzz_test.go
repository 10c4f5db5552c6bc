package mcp

import (
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// FuzzEndpoint feeds arbitrary params and headers through Check, Route and
// the handlers: nothing may panic, every answer must be valid JSON (serve
// checks it) and every refusal must carry a code.
func FuzzEndpoint(f *testing.F) {
	seeds := []struct{ method, params, version, mcpName string }{
		{"tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, "2025-11-25", ""},
		{"tools/call", `{"name":"strict","arguments":{"n":1e400}}`, "", "strict"},
		{"tools/call", `{"name":"echo","arguments":{"text":"a","text":1}}`, "2026-07-28", "echo"},
		{"prompts/get", `{"name":"greet","arguments":{"name":"\u00e9"}}`, "2025-06-18", "greet"},
		{"resources/read", `{"uri":"test://dyn"}`, "2025-03-26", "=?base64?dGVzdDovL2R5bg==?="},
		{"initialize", `{"protocolVersion":"2026-07-28"}`, "", ""},
		{"tools/list", `{"cursor":"x"}`, "2026-07-28", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.params, s.version, s.mcpName)
	}
	_, ep := testServer(f)
	f.Fuzz(func(t *testing.T, method, params, version, mcpName string) {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":` + string(decode.AppendString(nil, method)) + `,"params":` + params + `}`)
		var d decode.Decoder
		if d.SetOptions(decode.Options{IDs: decode.IDsMCP}) != nil {
			t.Fatal("options")
		}
		var m decode.Message
		if d.Decode(body, &m) != nil {
			return
		}
		var h fasthttp.RequestHeader
		if version != "" {
			h.Set(HeaderProtocolVersion, version)
		}
		h.Set(HeaderMethod, method)
		if mcpName != "" {
			h.Set(HeaderName, mcpName)
		}
		var r fastserver.Request
		r.Reset(&h, &m, nil)
		a := serve(t, ep, &r)
		if a.Status != 200 && a.Status != 202 && a.Code == 0 && a.Status != 404 {
			t.Fatalf("%+v", a)
		}
	})
}
