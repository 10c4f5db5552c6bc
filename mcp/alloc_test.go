//go:build !race

package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// allocCase is one request the hot path serves without allocating.
type allocCase struct {
	name    string
	stream  bool // served by StreamEndpoint
	headers hdr
	body    func(i int) string // varied by i: ids and texts
}

// TestAllocs pins zero allocations, once warm, for Check, Route and
// ServeRPC of the tools/call echo path under 2026-07-28 (all headers and
// _meta, base64 Mcp-Name included) and for the other methods that serve
// rendered or raw bytes.
func TestAllocs(t *testing.T) {
	srv, httpEP := testServer(t)
	streamEP := srv.StreamEndpoint()
	// A Streaming tool called without a progress token or a log level has
	// nothing to stream: it keeps the plain path, allocation-free.
	quietSrv, err := New(Info{Name: "q", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	quietSrv.AddTool(Tool{Name: "echo", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		if err := c.Progress(1, 2, "nobody asked"); err != nil {
			return err
		}
		if err := c.LogText(LogError, "x", "nobody asked"); err != nil {
			return err
		}
		return c.AddTextJSON(c.Arg("text"))
	})})
	quietEP := quietSrv.Endpoint()
	texts := []string{"hi", "caf\\u00e9 \\ud83d\\ude00", strings.Repeat("x", 3000), `quote \" and \\ backslash`, "日本語"}
	ids := []string{`1`, `"abc"`, `12345678901234567890123`, `"caf\u00e9"`, `-7`}
	echo := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"},%s}}`,
			ids[i%len(ids)], texts[i%len(texts)], meta26)
	}
	cases := []allocCase{
		{"tools/call echo 2026-07-28", false, v26("tools/call", HeaderName, "echo"), echo},
		{"tools/call echo base64 Mcp-Name", false, v26("tools/call", HeaderName, "=?base64?ZWNobw==?="), echo},
		{"tools/call echo 2025-11-25", false, hdr{HeaderProtocolVersion, "2025-11-25", HeaderMethod, "tools/call", HeaderName, "echo"}, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}`, ids[i%len(ids)], texts[i%len(texts)])
		}},
		{"tools/call escaped name", false, v26("tools/call", HeaderName, "=?base64?Y2Fmw6k=?="), func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"caf\u00e9",%s}}`, ids[i%len(ids)], meta26)
		}},
		{"tools/call strict schema", false, v26("tools/call", HeaderName, "strict"), func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"strict","arguments":{"n":%d},%s}}`, ids[i%len(ids)], i+1, meta26)
		}},
		{"tools/list", false, v26("tools/list"), func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{%s}}`, ids[i%len(ids)], meta26)
		}},
		{"resources/read static", false, v26("resources/read", HeaderName, "test://about"), func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"resources/read","params":{"uri":"test://about",%s}}`, ids[i%len(ids)], meta26)
		}},
		{"server/discover", false, v26("server/discover"), func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"server/discover","params":{%s}}`, ids[i%len(ids)], meta26)
		}},
		{"initialize", false, nil, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, ids[i%len(ids)])
		}},
		{"stdio tools/call echo 2026-07-28", true, nil, echo},
		{"Streaming tool with nothing to stream 2026-07-28", false, v26("tools/call", HeaderName, "echo"), echo},
		{"notification", false, hdr{HeaderProtocolVersion, "2025-11-25", HeaderMethod, "notifications/initialized"}, func(i int) string {
			return `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		}},
	}
	for _, tc := range cases {
		ep := httpEP
		if tc.stream {
			ep = streamEP
		}
		if strings.HasPrefix(tc.name, "Streaming") {
			ep = quietEP
		}
		t.Run(tc.name, func(t *testing.T) {
			const n = 16
			var (
				msgs [n]decode.Message
				hdrs [n]fasthttp.RequestHeader
				reqs [n]fastserver.Request
			)
			bodies := make([][]byte, n)
			for i := range n {
				bodies[i] = []byte(tc.body(i))
				msgs[i] = decodeOwn(t, bodies[i])
				for j := 0; j+1 < len(tc.headers); j += 2 {
					hdrs[i].Add(tc.headers[j], tc.headers[j+1])
				}
				reqs[i].Reset(&hdrs[i], &msgs[i], nil)
				// Sanity: the request succeeds.
				a := serve(t, ep, &reqs[i])
				if a.Code != 0 {
					t.Fatalf("%s: %+v", bodies[i], a)
				}
			}
			dst := make([]byte, 0, 64<<10)
			i := 0
			allocs := testing.AllocsPerRun(2000, func() {
				r := &reqs[i%n]
				i++
				r.Reset(&hdrs[(i-1)%n], r.Msg, nil)
				if e := ep.Check(r); e != nil {
					panic(e)
				}
				if r.Msg.Kind != decode.KindRequest {
					return
				}
				rt := ep.Route(r)
				out, err := rt.Handler.ServeRPC(r, dst[:0])
				if err != nil {
					panic(err)
				}
				dst = out
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per call, want 0", allocs)
			}
		})
	}
}
