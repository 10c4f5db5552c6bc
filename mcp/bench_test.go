package mcp

import (
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// benchServe measures Check, Route and ServeRPC for one request, as the
// server runs them after decoding.
func benchServe(b *testing.B, headers hdr, body string) {
	_, ep := testServer(b)
	b.SetBytes(int64(len(body)))
	benchEndpoint(b, ep, headers, body, nil)
}

// benchEndpoint is benchServe on ep, after (when not nil) given each
// answer.
func benchEndpoint(b *testing.B, ep *fastserver.Endpoint, headers hdr, body string, after func(out []byte)) {
	m := decodeOwn(b, []byte(body))
	var h fasthttp.RequestHeader
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	var r fastserver.Request
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(&h, &m, nil)
		if e := ep.Check(&r); e != nil {
			b.Fatal(e)
		}
		out, err := ep.Route(&r).Handler.ServeRPC(&r, dst[:0])
		if err != nil {
			b.Fatal(err)
		}
		if after != nil {
			after(out)
		}
		dst = out
	}
}

func BenchmarkToolsCallEcho(b *testing.B) {
	b.Run("2026-07-28", func(b *testing.B) {
		benchServe(b, v26("tools/call", HeaderName, "echo"), call(`"name":"echo","arguments":{"text":"hello, world"},`+meta26))
	})
	b.Run("2025-11-25", func(b *testing.B) {
		benchServe(b, hdr{HeaderProtocolVersion, "2025-11-25"}, call(`"name":"echo","arguments":{"text":"hello, world"}`))
	})
	b.Run("small.json, no headers", func(b *testing.B) {
		benchServe(b, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!!"}}}`)
	})
	b.Run("2026-07-28/base64-name", func(b *testing.B) {
		benchServe(b, v26("tools/call", HeaderName, "=?base64?ZWNobw==?="), call(`"name":"echo","arguments":{"text":"hello, world"},`+meta26))
	})
}

func BenchmarkToolsList(b *testing.B) {
	benchServe(b, v26("tools/list"), req("tools/list", meta26))
}

func BenchmarkSchemaValidate(b *testing.B) {
	s, err := compileSchema([]byte(`{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":64},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]}}},"required":["name"],"additionalProperties":false}},"required":["user"]}`))
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"user":{"name":"Ada Lovelace","age":36,"tags":["a","b","c","a"]}}`)
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if e := s.validate(args); e != nil {
			b.Fatal(e.msg)
		}
	}
}
