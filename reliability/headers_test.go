package reliability

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestHeaderAttacks sends hostile header blocks and header values, each
// on a fresh connection, and checks the answer; the server keeps serving.
func TestHeaderAttacks(t *testing.T) {
	addr := startApp(t, testConfig()).addr
	call := echoCall(1, "hi")
	a2aSend := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}],"messageId":"m1"}}}`)
	notify := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	many := func(n int) []string {
		h := make([]string, n)
		for i := range h {
			h[i] = fmt.Sprintf("X-H%d: v", i)
		}
		return h
	}
	// versionData checks the data of a version refusal.
	versionData := func(requested string, supported ...string) func(t *testing.T, a rpcAnswer) {
		return func(t *testing.T, a rpcAnswer) {
			var d struct {
				Supported []string `json:"supported"`
				Requested *string  `json:"requested"`
			}
			if err := json.Unmarshal(a.Error.Data, &d); err != nil {
				t.Fatalf("error data %s: %v", a.Error.Data, err)
			}
			if d.Requested == nil || *d.Requested != requested {
				t.Errorf("data.requested %v, want %q", d.Requested, requested)
			}
			if len(d.Supported) == 0 {
				t.Errorf("data.supported is empty")
			}
			for _, s := range supported {
				if !strings.Contains(strings.Join(d.Supported, ","), s) {
					t.Errorf("data.supported %v lacks %s", d.Supported, s)
				}
			}
		}
	}
	type tc struct {
		name   string
		raw    []byte
		status int  // plain answers: the status only
		want   want // JSON-RPC answers
		check  func(t *testing.T, a rpcAnswer)
	}
	origin := func(o string) []byte { return post("/mcp", call, "Origin: "+o) }
	cases := []tc{
		{name: "header block over 8 KiB", raw: post("/mcp", call, "X-Pad: "+strings.Repeat("a", 9*kib)), status: 431},
		{name: "header block of 64 KiB", raw: post("/mcp", call, "X-Pad: "+strings.Repeat("a", 64*kib)), status: 431},
		{name: "header block just under 8 KiB", raw: post("/mcp", call, "X-Pad: "+strings.Repeat("a", 7*kib)), want: want{200, 0, "1"}},
		{name: "500 headers", raw: post("/mcp", call, many(500)...), want: want{200, 0, "1"}},
		{name: "2000 headers", raw: post("/mcp", call, many(2000)...), status: 431},
		{name: "NUL in a header value", raw: post("/mcp", call, "X-A: a\x00b"), status: 400},
		{name: "MCP-Protocol-Version 1999-01-01", raw: post("/mcp", call, "MCP-Protocol-Version: 1999-01-01"),
			want: want{400, -32022, "1"}, check: versionData("1999-01-01", "2026-07-28", "2025-11-25")},
		{name: "MCP-Protocol-Version 1999-01-01 on a notification", raw: post("/mcp", notify, "MCP-Protocol-Version: 1999-01-01"),
			want: want{400, -32022, "null"}, check: versionData("1999-01-01")},
		{name: "MCP-Protocol-Version of 6 KiB", raw: post("/mcp", call, "MCP-Protocol-Version: "+strings.Repeat("9", 6*kib)),
			want: want{400, -32022, "1"}, check: versionData(strings.Repeat("9", 6*kib))},
		{name: "MCP-Protocol-Version with quotes and backslashes", raw: post("/mcp", call, `MCP-Protocol-Version: "\"}]`),
			want: want{400, -32022, "1"}, check: versionData(`"\"}]`)},
		{name: "MCP-Protocol-Version not UTF-8", raw: post("/mcp", call, "MCP-Protocol-Version: \xff\xfe2025"),
			want: want{400, -32022, "1"}},
		{name: "Mcp-Method =?base64?!!!?=", raw: post("/mcp", call, "MCP-Protocol-Version: 2025-11-25", "Mcp-Method: =?base64?!!!?="),
			want: want{400, -32020, "1"}},
		{name: "Mcp-Name =?base64?!!!?=", raw: post("/mcp", call, "MCP-Protocol-Version: 2025-11-25", "Mcp-Name: =?base64?!!!?="),
			want: want{400, -32020, "1"}},
		{name: "Mcp-Name base64 of 6 KiB", raw: post("/mcp", call, "MCP-Protocol-Version: 2025-11-25", "Mcp-Name: =?base64?"+strings.Repeat("QUFB", 1536)+"?="),
			want: want{400, -32020, "1"}},
		{name: "Mcp-Method =?base64?dG9vbHMvY2FsbA==?= (tools/call)", raw: post("/mcp", call, "MCP-Protocol-Version: 2025-11-25", "Mcp-Method: =?base64?dG9vbHMvY2FsbA==?="),
			want: want{200, 0, "1"}},
		{name: "A2A-Version garbage", raw: post("/a2a", a2aSend, "A2A-Version: garbage!~{}"),
			want: want{400, -32009, "1"}, check: versionData("garbage!~{}", "1.0", "0.3")},
		{name: "A2A-Version not UTF-8", raw: post("/a2a", a2aSend, "A2A-Version: \xff\xfe1.0"),
			want: want{400, -32009, "1"}},
		{name: "A2A-Version 99.0", raw: post("/a2a", a2aSend, "A2A-Version: 99.0"),
			want: want{400, -32009, "1"}, check: versionData("99.0", "1.0", "0.3")},
		{name: "A2A-Version of 6 KiB", raw: post("/a2a", a2aSend, "A2A-Version: "+strings.Repeat("1", 6*kib)),
			want: want{400, -32009, "1"}},
		{name: "Origin evil", raw: origin("http://evil.example"), want: want{403, -32600, "null"}},
		{name: "Origin localhost.evil", raw: origin("http://localhost.evil.example"), want: want{403, -32600, "null"}},
		{name: "Origin 127.0.0.1.evil", raw: origin("http://127.0.0.1.evil.example"), want: want{403, -32600, "null"}},
		{name: "Origin userinfo", raw: origin("http://127.0.0.1@evil.example"), want: want{403, -32600, "null"}},
		{name: "Origin [::1].evil", raw: origin("http://[::1].evil.example"), want: want{403, -32600, "null"}},
		{name: "Origin null", raw: origin("null"), want: want{403, -32600, "null"}},
		{name: "Origin of 4 KiB", raw: origin("http://" + strings.Repeat("a", 4*kib) + ".localhost"), want: want{403, -32600, "null"}},
		{name: "Origin evil, body over the ceiling", raw: post("/mcp", []byte("{"), "Origin: http://evil.example", "Content-Length: 99999999"), want: want{403, -32600, "null"}},
		{name: "Origin loopback", raw: origin("http://127.0.0.2:9999"), want: want{200, 0, "1"}},
		{name: "preflight evil", raw: request("OPTIONS", "/mcp", nil, "Origin: http://evil.example", "Access-Control-Request-Method: POST"), status: 403},
		{name: "preflight evil a2a", raw: request("OPTIONS", "/a2a", nil, "Origin: https://localhost.evil.example", "Access-Control-Request-Method: POST"), status: 403},
		{name: "preflight loopback", raw: request("OPTIONS", "/mcp", nil, "Origin: http://localhost:3000", "Access-Control-Request-Method: POST"), status: 204},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cn := dial(t, addr)
			go func() { cn.c.Write(c.raw) }()
			r := cn.read()
			if c.status != 0 {
				if r.status != c.status {
					t.Fatalf("status %d, want %d; %.200q", r.status, c.status, r.body)
				}
				if c.name == "preflight evil" && r.header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("refused preflight carries Access-Control-Allow-Origin %q", r.header.Get("Access-Control-Allow-Origin"))
				}
				return
			}
			a := c.want.check(t, r)
			if c.check != nil {
				c.check(t, a)
			}
			if c.want.status == 403 && r.header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("refused origin gets Access-Control-Allow-Origin %q", r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
	want{200, 0, "7"}.check(t, roundTrip(t, addr, post("/mcp", echoCall(7, "still here"))))
}
