package fastserver

// The wire contract end to end (spec/contract.md §1 and §2): routes, every
// row of §2 in order with the id and notification rules, CORS, answer
// compression and metrics, over real loopback TCP with a raw client.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// §1: routes.
func TestRoutes(t *testing.T) {
	s, addr := serve(t, Config{})
	if r := roundTrip(t, addr, request("GET", "/healthz", "")); r.Status != 200 {
		t.Fatalf("healthz: %s", r.StatusLine)
	}
	if err := s.HandleGET("/late", func(*fasthttp.RequestCtx) {}); err == nil {
		t.Errorf("HandleGET after Serve: want an error")
	}

	cases := []struct {
		name, method, path string
		status             int
		allow              string // the Allow header, when checked
		body               string // the body, when checked
	}{
		{"GET endpoint", "GET", pathRPC, 405, "POST, OPTIONS", ""},
		{"HEAD endpoint", "HEAD", pathRPC, 405, "POST, OPTIONS", ""},
		{"PUT endpoint", "PUT", pathRPC, 405, "POST, OPTIONS", ""},
		{"DELETE endpoint", "DELETE", pathRPC, 405, "POST, OPTIONS", ""},
		{"PATCH endpoint", "PATCH", pathJR, 405, "POST, OPTIONS", ""},
		{"OPTIONS endpoint without Origin", "OPTIONS", pathRPC, 204, "", ""},
		{"unknown path GET", "GET", "/nope", 404, "", ""},
		{"unknown path POST", "POST", "/nope", 404, "", ""},
		{"endpoint with a query", "POST", pathRPC + "?x=1", 200, "", ""},
		{"endpoint with a trailing slash", "POST", pathRPC + "/", 404, "", ""},
		{"endpoint in another case", "POST", "/RPC", 404, "", ""},
		{"healthz", "GET", "/healthz", 200, "", "ok"},
		{"healthz HEAD", "HEAD", "/healthz", 200, "", ""},
		{"healthz POST", "POST", "/healthz", 405, "GET, HEAD", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			body := ""
			if tc.method == "POST" {
				body = `{"jsonrpc":"2.0","id":1,"method":"echo"}`
			}
			c.send(request(tc.method, tc.path, body))
			r, err := c.tryReadFor(tc.method)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status {
				t.Errorf("%s %s: %s, want %d", tc.method, tc.path, r.StatusLine, tc.status)
			}
			if tc.allow != "" && r.Header.Get("Allow") != tc.allow {
				t.Errorf("Allow %q, want %q", r.Header.Get("Allow"), tc.allow)
			}
			if tc.body != "" && string(r.Body) != tc.body {
				t.Errorf("body %q, want %q", r.Body, tc.body)
			}
			if tc.status == 204 {
				if h := r.Header.Get("Access-Control-Allow-Origin"); h != "" {
					t.Errorf("204 without Origin carries Access-Control-Allow-Origin %q", h)
				}
			}
		})
	}
}

func TestHandleGET(t *testing.T) {
	s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	card := func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"name":"test"}`)
	}
	if err := s.HandleGET("/.well-known/agent-card.json", card); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"/.well-known/agent-card.json", "/healthz", "/metrics", pathRPC, "", "nope"} {
		if err := s.HandleGET(bad, card); err == nil {
			t.Errorf("HandleGET(%q): want an error", bad)
		}
	}
	if err := s.HandleGET("/x", nil); err == nil {
		t.Errorf("HandleGET with a nil handler: want an error")
	}
	addr := serveBuilt(t, s)

	r := roundTrip(t, addr, request("GET", "/.well-known/agent-card.json", ""))
	if r.Status != 200 || string(r.Body) != `{"name":"test"}` || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET card: %s %q %q", r.StatusLine, r.Header.Get("Content-Type"), r.Body)
	}
	r = roundTrip(t, addr, post("/.well-known/agent-card.json", "{}"))
	if r.Status != 405 || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST card: %s Allow %q, want 405 GET, HEAD", r.StatusLine, r.Header.Get("Allow"))
	}
}

// Request bodies used across the rows.
const (
	valid = `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1}}`
	notif = `{"jsonrpc":"2.0","method":"echo","params":{"a":1}}`
)

// after says what the connection must do after the answer.
type after int

const (
	anyConn    after = iota
	connClosed       // early answer: the server closes, cleanly
	connOpen         // the connection serves the next request
)

type rowCase struct {
	name  string
	path  string   // default pathRPC
	body  string   // the body (Content-Length is added)
	hdr   []string // extra headers
	raw   string   // a raw request instead of path, body and hdr
	want  want
	after after
}

func nested(open, close string, n int) (string, string) {
	return strings.Repeat(open, n), strings.Repeat(close, n)
}

// rowCases are the rows of §2 in order. Each refusal comes with a request
// that would pass every later row, so only that row can decide.
func rowCases() []rowCase {
	deepOK1, deepOK2 := nested("[", "]", 998)   // levels: object, params, 998 arrays = 1000
	deepBad1, deepBad2 := nested("[", "]", 999) // 1001
	arrays1000, _ := nested("[", "]", 1000)     // inside an object: 1001
	bigCL := post(pathRPC, "{", "Content-Length: "+strconv.Itoa(DefaultMaxBodyBytes+1))
	null := "null"
	return []rowCase{
		// Row 1: Origin present and not allowed.
		{name: "1/evil origin", body: valid, hdr: []string{"Origin: http://evil.example"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/evil origin, notification", body: notif, hdr: []string{"Origin: http://evil.example"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/origin null", body: valid, hdr: []string{"Origin: null"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/localhost lookalike", body: valid, hdr: []string{"Origin: http://localhost.evil.example"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/127 lookalike", body: valid, hdr: []string{"Origin: http://127.0.0.1.evil.example"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/userinfo trick", body: valid, hdr: []string{"Origin: http://localhost@evil.example"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/before row 3", body: valid, hdr: []string{"Origin: http://evil.example", "Content-Type: text/plain"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/evil origin, Connection: close", body: valid, hdr: []string{"Origin: http://evil.example", "Connection: close"}, want: want{403, -32600, null, "", ""}, after: connClosed},
		{name: "1/loopback origin", body: valid, hdr: []string{"Origin: http://localhost:3000"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "1/127.0.0.5", body: valid, hdr: []string{"Origin: http://127.0.0.5"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "1/[::1]", body: valid, hdr: []string{"Origin: http://[::1]:8080"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "1/LOCALHOST https", body: valid, hdr: []string{"Origin: HTTPS://LOCALHOST"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},

		// Row 2 (rate limit) needs its own server: TestRateLimit.

		// Row 3: Content-Type.
		{name: "3/text/plain", body: valid, hdr: []string{"Content-Type: text/plain"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "3/text/plain notification", body: notif, hdr: []string{"Content-Type: text/plain"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "3/json-seq", body: valid, hdr: []string{"Content-Type: application/json-seq"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "3/form", body: valid, hdr: []string{"Content-Type: application/x-www-form-urlencoded"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "3/before row 4", body: valid, hdr: []string{"Content-Type: text/plain", "Content-Encoding: br"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "3/text/plain, Connection: close", body: valid, hdr: []string{"Content-Type: text/plain", "Connection: close"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "3/charset allowed", body: valid, hdr: []string{"Content-Type: application/json; charset=utf-8"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "3/case-insensitive", body: valid, hdr: []string{"Content-Type: Application/JSON"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "3/absent", body: valid, hdr: []string{"Content-Type:"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},

		// Row 4: Content-Encoding.
		{name: "4/br", body: valid, hdr: []string{"Content-Encoding: br"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/compress", body: valid, hdr: []string{"Content-Encoding: compress"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/three stacked", body: valid, hdr: []string{"Content-Encoding: gzip, gzip, gzip"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/three stacked notification", body: notif, hdr: []string{"Content-Encoding: zstd, gzip, deflate"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/before row 5", raw: post(pathRPC, "{", "Content-Encoding: br", "Content-Length: 99999999"), want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/three stacked on three lines", body: valid, hdr: []string{"Content-Encoding: gzip", "Content-Encoding: gzip", "Content-Encoding: gzip"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/unsupported on a second line", body: valid, hdr: []string{"Content-Encoding: identity", "Content-Encoding: br"}, want: want{415, -32600, null, "", ""}, after: connClosed},
		{name: "4/identity", body: valid, hdr: []string{"Content-Encoding: identity"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		// identity does not count, however often it is listed.
		{name: "4/identity 40 times", body: valid, hdr: []string{"Content-Encoding: " + strings.Repeat("identity, ", 39) + "identity"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "4/identity 40 times and gzip", body: string(gzipped(nil, []byte(valid))), hdr: []string{"Content-Encoding: " + strings.Repeat("identity,", 40) + "gzip"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "4/identity 40 times, three codings", body: valid, hdr: []string{"Content-Encoding: gzip, " + strings.Repeat("identity, ", 40) + "gzip, gzip"}, want: want{415, -32600, null, "", ""}, after: connClosed},

		// Row 5: Content-Length over the ceiling; the body is not awaited.
		{name: "5/Content-Length over the ceiling", raw: bigCL, want: want{413, -32600, null, "", ""}, after: connClosed},

		// Row 6 (in-flight budget): TestBudget.

		// Row 7a: a batch.
		{name: "7a/batch", body: `[` + valid + `]`, want: want{400, -32600, null, "", ""}},
		{name: "7a/empty batch", body: `[]`, want: want{400, -32600, null, "", ""}},
		{name: "7a/batch after whitespace", body: " \r\n\t[1,", want: want{400, -32600, null, "", ""}},
		{name: "7a/batch of garbage", body: `[}}}}`, want: want{400, -32600, null, "", ""}},

		// Row 7b: syntax.
		{name: "7b/truncated", body: `{"jsonrpc":"2.0","id":7,"method":"echo"`, want: want{400, -32700, null, "", ""}},
		{name: "7b/empty body", body: ``, want: want{400, -32700, null, "", ""}, after: connOpen},
		{name: "7b/only whitespace", body: " \n", want: want{400, -32700, null, "", ""}},
		{name: "7b/BOM", body: "\xef\xbb\xbf" + valid, want: want{400, -32700, null, "", ""}},
		{name: "7b/trailing bytes", body: valid + ` x`, want: want{400, -32700, null, "", ""}},
		{name: "7b/two objects", body: valid + valid, want: want{400, -32700, null, "", ""}},
		{name: "7b/invalid UTF-8", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":"` + "\xff" + `"}}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/overlong UTF-8", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":"` + "\xc0\xaf" + `"}}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/unpaired surrogate", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":"\ud800"}}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/low surrogate first", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":"\udc00\ud800"}}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/control character", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":"` + "\x01" + `"}}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/bad escape", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":"\x"}}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/leading zero", body: `{"jsonrpc":"2.0","id":07,"method":"echo"}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/single quotes", body: `{'jsonrpc':'2.0'}`, want: want{400, -32700, null, "", ""}},
		{name: "7b/vertical tab around", body: "\v" + valid, want: want{400, -32700, null, "", ""}},
		{name: "7b/syntax before depth", body: `{"a":[1,}` + strings.Repeat("[", 2000), want: want{400, -32700, null, "", ""}},

		// Row 7c: depth.
		{name: "7c/1001 levels", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":` + deepBad1 + deepBad2 + `}}`, want: want{400, -32600, null, "", ""}},
		{name: "7c/depth before syntax", body: `{"a":` + arrays1000 + `}}}}`, want: want{400, -32600, null, "", ""}},
		{name: "7c/1000 levels pass", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":` + deepOK1 + deepOK2 + `}}`, want: want{200, 0, "7", `{"a":` + deepOK1 + deepOK2 + `}`, ""}, after: connOpen},

		// Row 8: not an object.
		{name: "8/string", body: `"hello"`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "8/number", body: `42`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "8/null", body: ` null `, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "8/true", body: `true`, want: want{400, -32600, null, "", ""}, after: connOpen},

		// Row 9: a top-level name twice.
		{name: "9/id twice", body: `{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "9/method twice", body: `{"jsonrpc":"2.0","id":1,"method":"echo","method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "9/escaped twin", body: `{"jsonrpc":"2.0","\u0069d":1,"id":2,"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "9/unknown twice", body: `{"jsonrpc":"2.0","id":1,"method":"echo","x":1,"x":2}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "9/before row 10", body: `{"id":1,"id":1}`, want: want{400, -32600, null, "", ""}, after: connOpen},

		// Row 10: the envelope. The id is echoed when present and accepted.
		{name: "10/jsonrpc missing", body: `{"id":7,"method":"echo"}`, want: want{400, -32600, "7", "", ""}, after: connOpen},
		{name: "10/jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":"a","method":"echo"}`, want: want{400, -32600, `"a"`, "", ""}, after: connOpen},
		{name: "10/jsonrpc number", body: `{"jsonrpc":2.0,"id":7,"method":"echo"}`, want: want{400, -32600, "7", "", ""}, after: connOpen},
		{name: "10/method missing", body: `{"jsonrpc":"2.0","id":7}`, want: want{400, -32600, "7", "", ""}, after: connOpen},
		{name: "10/method not a string", body: `{"jsonrpc":"2.0","id":7,"method":42}`, want: want{400, -32600, "7", "", ""}, after: connOpen},
		{name: "10/method null", body: `{"jsonrpc":"2.0","id":7,"method":null}`, want: want{400, -32600, "7", "", ""}, after: connOpen},
		{name: "10/response shape", body: `{"jsonrpc":"2.0","id":3,"result":1}`, want: want{400, -32600, "3", "", ""}, after: connOpen},
		{name: "10/error shape", body: `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, want: want{400, -32600, "3", "", ""}, after: connOpen},
		{name: "10/id true", body: `{"jsonrpc":"2.0","id":true,"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "10/id object", body: `{"jsonrpc":"2.0","id":{},"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "10/id array", body: `{"jsonrpc":"2.0","id":[1],"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "10/notification", body: `{"jsonrpc":"1.0","method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		// The endpoint's id policy: /rpc takes strings and integers only.
		{name: "10/id fraction on an integer-only endpoint", body: `{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "10/id exponent on an integer-only endpoint", body: `{"jsonrpc":"2.0","id":1e3,"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "10/id null on an integer-only endpoint", body: `{"jsonrpc":"2.0","id":null,"method":"echo"}`, want: want{400, -32600, null, "", ""}, after: connOpen},
		{name: "10/id fraction echoed where accepted", path: pathJR, body: `{"id":1.5,"method":"echo"}`, want: want{400, -32600, "1.5", "", ""}},
		{name: "10/before row 11", body: `{"jsonrpc":"1.0","id":7,"method":"echo"}`, hdr: []string{"X-Version: bad"}, want: want{400, -32600, "7", "", ""}, after: connOpen},

		// Row 11: the protocol version header (the endpoint's Check).
		{name: "11/version not served", body: valid, hdr: []string{"X-Version: bad"}, want: want{400, codeVersion, "7", "", `{"supported":["1","2"],"requested":"bad"}`}, after: connOpen},
		{name: "11/notification", body: notif, hdr: []string{"X-Version: 9"}, want: want{400, codeVersion, null, "", `{"supported":["1","2"],"requested":"9"}`}, after: connOpen},
		{name: "11/before row 14", body: `{"jsonrpc":"2.0","id":7,"method":"nosuch"}`, hdr: []string{"X-Version: bad"}, want: want{400, codeVersion, "7", "", ""}, after: connOpen},

		// Row 12: a header that disagrees with the body.
		{name: "12/X-Method disagrees", body: valid, hdr: []string{"X-Method: ECHO"}, want: want{400, codeHeader, "7", "", ""}, after: connOpen},
		{name: "12/notification", body: notif, hdr: []string{"X-Method: other"}, want: want{400, codeHeader, null, "", ""}, after: connOpen},
		{name: "12/agrees", body: valid, hdr: []string{"X-Method: echo"}, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},

		// Row 13: a notification that got this far: 202, no body.
		{name: "13/notification", body: notif, want: want{status: 202}, after: connOpen},
		{name: "13/unknown method", body: `{"jsonrpc":"2.0","method":"nosuch"}`, want: want{status: 202}, after: connOpen},
		{name: "13/params not an object", body: `{"jsonrpc":"2.0","method":"echo","params":[1]}`, want: want{status: 202}, after: connOpen},
		{name: "13/refused method", body: `{"jsonrpc":"2.0","method":"refused"}`, want: want{status: 202}, after: connOpen},
		{name: "13/panicking method", body: `{"jsonrpc":"2.0","method":"panic"}`, want: want{status: 202}, after: connOpen},
		{name: "13/on /jr", path: pathJR, body: notif, want: want{status: 202}, after: connOpen},

		// Row 14: unknown method.
		{name: "14/unknown", body: `{"jsonrpc":"2.0","id":7,"method":"nosuch"}`, want: want{404, -32601, "7", "", ""}, after: connOpen},
		{name: "14/before row 15", body: `{"jsonrpc":"2.0","id":7,"method":"nosuch","params":[1]}`, want: want{404, -32601, "7", "", ""}, after: connOpen},
		{name: "14/case-sensitive", body: `{"jsonrpc":"2.0","id":7,"method":"Echo"}`, want: want{404, -32601, "7", "", ""}, after: connOpen},
		{name: "14/empty", body: `{"jsonrpc":"2.0","id":7,"method":""}`, want: want{404, -32601, "7", "", ""}, after: connOpen},
		{name: "14/on /jr", path: pathJR, body: `{"jsonrpc":"2.0","id":null,"method":"nosuch"}`, want: want{404, -32601, null, "", ""}},

		// Row 15: params present and not an object.
		{name: "15/array", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":[1]}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "15/string", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":"x"}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "15/number", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":1}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "15/bool", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":false}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "15/null", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":null}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "15/before row 17", body: `{"jsonrpc":"2.0","id":7,"method":"panic","params":[]}`, want: want{200, -32602, "7", "", ""}, after: connOpen},

		// Row 16: refused outright, before params are looked at.
		{name: "16/refused", body: `{"jsonrpc":"2.0","id":7,"method":"refused"}`, want: want{200, codeRefused, "7", "", `{"method":"refused"}`}, after: connOpen},
		{name: "16/before row 15", body: `{"jsonrpc":"2.0","id":7,"method":"refused","params":[1]}`, want: want{200, codeRefused, "7", "", ""}, after: connOpen},

		// Row 17: a member name twice in params.
		{name: "17/duplicate in params", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1,"a":2}}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "17/escaped duplicate", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1,"\u0061":2}}`, want: want{200, -32602, "7", "", ""}, after: connOpen},
		{name: "17/deeper duplicates unchecked", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":{"b":1,"b":2}}}`, want: want{200, 0, "7", `{"a":{"b":1,"b":2}}`, ""}, after: connOpen},
		{name: "17/OwnParams: array reaches the handler", body: `{"jsonrpc":"2.0","id":7,"method":"own","params":[1]}`, want: want{200, 0, "7", `"other"`, ""}, after: connOpen},
		{name: "17/OwnParams: duplicate reaches the handler", body: `{"jsonrpc":"2.0","id":7,"method":"own","params":{"a":1,"a":2}}`, want: want{200, 0, "7", `"object"`, ""}, after: connOpen},

		// Row 18: the handler fails (the deadline: TestHandlerDeadline).
		{name: "18/panic", body: `{"jsonrpc":"2.0","id":7,"method":"panic"}`, want: want{500, -32603, "7", "", ""}, after: connOpen},
		{name: "18/plain error", body: `{"jsonrpc":"2.0","id":"p","method":"plain"}`, want: want{500, -32603, `"p"`, "", ""}, after: connOpen},
		{name: "18/nothing appended", body: `{"jsonrpc":"2.0","id":7,"method":"nothing"}`, want: want{500, -32603, "7", "", ""}, after: connOpen},
		{name: "18/*Error", body: `{"jsonrpc":"2.0","id":7,"method":"fail"}`, want: want{200, codeFail, "7", "", `{"why":"test"}`}, after: connOpen},
		{name: "18/*Error with a status", body: `{"jsonrpc":"2.0","id":7,"method":"failstatus"}`, want: want{409, codeConflict, "7", "", ""}, after: connOpen},
		{name: "18/wrapped *Error", body: `{"jsonrpc":"2.0","id":7,"method":"wrapped"}`, want: want{200, codeFail, "7", "", ""}, after: connOpen},

		// Row 19: success; ids verbatim.
		{name: "19/echo", body: valid, want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "19/big integer id", body: `{"jsonrpc":"2.0","id":12345678901234567890123,"method":"echo"}`, want: want{200, 0, "12345678901234567890123", "null", ""}, after: connOpen},
		{name: "19/escaped string id", body: `{"jsonrpc":"2.0","id":"caf\u00e9","method":"echo"}`, want: want{200, 0, `"caf\u00e9"`, "null", ""}, after: connOpen},
		{name: "19/string id with escapes", body: `{"jsonrpc":"2.0","id":"a\"b\\c\/d","method":"echo"}`, want: want{200, 0, `"a\"b\\c\/d"`, "null", ""}, after: connOpen},
		{name: "19/empty string id", body: `{"jsonrpc":"2.0","id":"","method":"echo"}`, want: want{200, 0, `""`, "null", ""}, after: connOpen},
		{name: "19/negative id", body: `{"jsonrpc":"2.0","id":-0,"method":"echo"}`, want: want{200, 0, "-0", "null", ""}, after: connOpen},
		{name: "19/exponent id on /jr", path: pathJR, body: `{"jsonrpc":"2.0","id":1e400,"method":"echo"}`, want: want{200, 0, "1e400", "null", ""}},
		{name: "19/fraction id on /jr", path: pathJR, body: `{"jsonrpc":"2.0","id":-1.50,"method":"echo"}`, want: want{200, 0, "-1.50", "null", ""}},
		{name: "19/null id on /jr", path: pathJR, body: `{"jsonrpc":"2.0","id":null,"method":"echo"}`, want: want{200, 0, "null", "null", ""}},
		{name: "19/params empty", body: `{"jsonrpc":"2.0","id":7,"method":"echo","params":{}}`, want: want{200, 0, "7", `{}`, ""}, after: connOpen},
		{name: "19/member order", body: `{"params":{"b":2},"method":"echo","id":9,"jsonrpc":"2.0"}`, want: want{200, 0, "9", `{"b":2}`, ""}, after: connOpen},
		{name: "19/unknown members ignored", body: `{"jsonrpc":"2.0","id":7,"method":"echo","extra":[1,{"x":null}],"meta":{}}`, want: want{200, 0, "7", "null", ""}, after: connOpen},
		{name: "19/escaped names and values", body: `{"\u006a\u0073onrpc":"2\u002e0","\u0069d":7,"\u006dethod":"ech\u006f"}`, want: want{200, 0, "7", "null", ""}, after: connOpen},
		{name: "19/escaped slash in method", body: `{"jsonrpc":"2.0","id":7,"method":"m\u0065thod"}`, want: want{200, 0, "7", `"method"`, ""}, after: connOpen},
		{name: "19/whitespace around", body: " \t\r\n" + valid + "\r\n\t ", want: want{200, 0, "7", `{"a":1}`, ""}, after: connOpen},
		{name: "19/method with result is a request", body: `{"jsonrpc":"2.0","id":7,"method":"echo","result":5}`, want: want{200, 0, "7", "null", ""}, after: connOpen},
		{name: "19/Check sets Version", body: `{"jsonrpc":"2.0","id":7,"method":"version"}`, hdr: []string{"X-Version: 2"}, want: want{200, 0, "7", "2", ""}, after: connOpen},
		{name: "19/Version defaults", body: `{"jsonrpc":"2.0","id":7,"method":"version"}`, want: want{200, 0, "7", "1", ""}, after: connOpen},
	}
}

// Rows 1 to 19 (except the ones that need a server of their own), in order.
func TestContractRows(t *testing.T) {
	_, addr := serve(t, Config{DrainTimeout: 300e6})
	for _, tc := range rowCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw := tc.raw
			if raw == "" {
				path := tc.path
				if path == "" {
					path = pathRPC
				}
				raw = post(path, tc.body, tc.hdr...)
			}
			c := dial(t, addr)
			c.send(raw)
			r := c.read()
			tc.want.check(t, r)
			if r.Status != tc.want.status {
				return // already failed; do not wait on the connection
			}
			switch tc.after {
			case connClosed:
				if !r.Close {
					t.Errorf("early answer without Connection: close")
				}
				c.expectClosed()
			case connOpen:
				c.expectOpen()
			}
		})
	}
}

// A pipeline of answered rows on one connection: every answer arrives, in
// order, with its own id.
func TestContractPipelined(t *testing.T) {
	_, addr := serve(t, Config{})
	var raw strings.Builder
	var wants []want
	for _, tc := range rowCases() {
		if tc.after != connOpen || tc.path != "" || tc.name == "3/absent" || strings.Contains(tc.name, "integer-only") {
			continue // failing rows have their own tests; one bug, one failure
		}
		raw.WriteString(post(pathRPC, tc.body, tc.hdr...))
		wants = append(wants, tc.want)
	}
	c := dial(t, addr)
	done := c.sendAsync([]byte(raw.String()), false)
	for i, w := range wants {
		r, err := c.tryRead()
		if err != nil {
			t.Fatalf("answer %d of %d: %v", i+1, len(wants), err)
		}
		w.check(t, r)
	}
	<-done
}

// §2 "Every JSON answer …": exact bytes of a few answers.
func TestAnswerBytes(t *testing.T) {
	_, addr := serve(t, Config{})
	cases := []struct{ body, answer string }{
		{valid, `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`},
		{`{"jsonrpc":"2.0","id":"caf\u00e9","method":"echo"}`, `{"jsonrpc":"2.0","id":"caf\u00e9","result":null}`},
		{`{"jsonrpc":"2.0","id":7,"method":"fail"}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32050,"message":"it failed","data":{"why":"test"}}}`},
	}
	for _, tc := range cases {
		r := roundTrip(t, addr, post(pathRPC, tc.body))
		if string(r.Body) != tc.answer {
			t.Errorf("%s:\n got %s\nwant %s", tc.body, r.Body, tc.answer)
		}
		if r.Header.Get("Content-Length") != strconv.Itoa(len(tc.answer)) {
			t.Errorf("Content-Length %q, want %d", r.Header.Get("Content-Length"), len(tc.answer))
		}
	}
}

// §1 and row 1: CORS.
func TestCORS(t *testing.T) {
	_, addr := serve(t, Config{AllowedOrigins: []string{"https://App.Example.com/"}})
	preflight := func(origin string, hdr ...string) *resp {
		h := []string{"Access-Control-Request-Method: POST"}
		if origin != "" {
			h = append(h, "Origin: "+origin)
		}
		return roundTrip(t, addr, request("OPTIONS", pathRPC, "", append(h, hdr...)...))
	}
	for _, origin := range []string{"http://localhost:3000", "http://127.0.0.5", "http://[::1]:8080", "https://app.example.com", "https://APP.example.com"} {
		r := preflight(origin, "Access-Control-Request-Headers: content-type, mcp-protocol-version")
		if r.Status != 204 {
			t.Errorf("preflight %s: %s, want 204", origin, r.StatusLine)
		}
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("preflight %s: Access-Control-Allow-Origin %q", origin, got)
		}
		if got := r.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(got, "POST") {
			t.Errorf("preflight %s: Access-Control-Allow-Methods %q", origin, got)
		}
		if got := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")); !strings.Contains(got, "content-type") || !strings.Contains(got, "mcp-protocol-version") {
			t.Errorf("preflight %s: Access-Control-Allow-Headers %q", origin, got)
		}
		if !strings.Contains(r.Header.Get("Vary"), "Origin") {
			t.Errorf("preflight %s: Vary %q, want Origin", origin, r.Header.Get("Vary"))
		}
		if len(r.Body) != 0 {
			t.Errorf("preflight %s: body %q", origin, r.Body)
		}
	}
	r := preflight("http://localhost:3000")
	if got := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")); !strings.Contains(got, "content-type") {
		t.Errorf("preflight without Access-Control-Request-Headers: Allow-Headers %q", got)
	}
	for _, origin := range []string{"http://evil.example", "https://app.example.com.evil", "null", "http://localhost.evil"} {
		r := preflight(origin)
		if r.Status != 403 || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %s: %s ACAO %q, want 403 without CORS headers", origin, r.StatusLine, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	r = preflight("")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("preflight without Origin: %s %v, want 204 without CORS headers", r.StatusLine, r.Header)
	}

	// POST from allowed origins: answered, with the origin allowed back.
	for _, origin := range []string{"https://app.example.com", "http://localhost"} {
		r := roundTrip(t, addr, post(pathRPC, valid, "Origin: "+origin))
		want{200, 0, "7", `{"a":1}`, ""}.check(t, r)
		if r.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("POST from %s: Access-Control-Allow-Origin %q", origin, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	// A refusal after row 1 still carries the CORS headers (a browser
	// could not read it otherwise), on early answers too.
	for _, raw := range []string{
		post(pathRPC, `[1]`, "Origin: http://localhost:3000"),
		post(pathRPC, valid, "Origin: http://localhost:3000", "Content-Type: text/plain"),
	} {
		r := roundTrip(t, addr, raw)
		if r.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
			t.Errorf("%s: Access-Control-Allow-Origin %q on a refusal", r.StatusLine, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}

	// Any origin with "*".
	_, addr2 := serve(t, Config{AllowedOrigins: []string{"*"}})
	r = roundTrip(t, addr2, post(pathRPC, valid, "Origin: http://evil.example"))
	want{200, 0, "7", `{"a":1}`, ""}.check(t, r)
}

func TestOriginsAllowed(t *testing.T) {
	o := newOrigins([]string{"https://app.example.com", "http://x.test:8080/"})
	cases := map[string]bool{
		"http://localhost":                   true,
		"http://localhost:3000":              true,
		"https://localhost:1":                true,
		"http://127.0.0.1":                   true,
		"http://127.255.255.254:9":           true,
		"http://[::1]":                       true,
		"http://[::1]:8080":                  true,
		"https://app.example.com":            true,
		"HTTPS://APP.EXAMPLE.COM":            true,
		"http://x.test:8080":                 true,
		"http://x.test":                      false,
		"https://app.example.com:443":        false,
		"http://app.example.com":             false,
		"http://128.0.0.1":                   false,
		"http://[::2]":                       false,
		"http://[::1]x":                      false,
		"http://[::ffff:127.0.0.1]":          false,
		"http://localhost.example":           false,
		"http://localhost@evil.example":      false,
		"http://evil.example#@localhost":     false,
		"http://evil.example/?localhost":     false,
		"null":                               false,
		"":                                   false,
		"localhost":                          false,
		"http://":                            false,
		"http://0x7f000001":                  false,
		"http://" + strings.Repeat("a", 300): false,
	}
	for origin, ok := range cases {
		if got := o.allowed([]byte(origin)); got != ok {
			t.Errorf("allowed(%q) = %v, want %v", origin, got, ok)
		}
	}
	if !newOrigins([]string{"*"}).allowed([]byte("http://anything")) {
		t.Errorf(`"*" should allow any origin`)
	}
}

// §2 "Answers are compressed … only when Accept-Encoding allows it and the
// answer is at least 1 KiB".
func TestAnswerCompression(t *testing.T) {
	_, addr := serve(t, Config{})
	frame := len(`{"jsonrpc":"2.0","id":1,"result":""}`)
	bigN := 4000
	cases := []struct {
		name   string
		n      int // result string length
		ae     string
		origin string
		coding string // expected Content-Encoding, "" for none
	}{
		{"gzip", bigN, "gzip", "", "gzip"},
		{"zstd", bigN, "zstd", "", "zstd"},
		{"gzip with q", bigN, "gzip;q=0.8, identity;q=0.1", "", "gzip"},
		{"uppercase", bigN, "GZIP", "", "gzip"},
		{"exactly 1 KiB", CompressMinBytes - frame, "gzip", "", "gzip"},
		{"1 byte under 1 KiB", CompressMinBytes - frame - 1, "gzip", "", ""},
		{"small", 10, "gzip, zstd", "", ""},
		{"not accepted", bigN, "", "", ""},
		{"identity only", bigN, "identity", "", ""},
		{"br only", bigN, "br", "", ""},
		{"gzip refused q=0", bigN, "gzip;q=0", "", ""},
		{"gzip refused q=0.0", bigN, "gzip;q=0.0", "", ""},
		{"gzip refused q=0.000", bigN, "gzip; q=0.000", "", ""},
		{"zstd refused, gzip accepted", bigN, "zstd;q=0, gzip", "", "gzip"},
		{"with an allowed Origin", bigN, "gzip", "http://localhost:1", "gzip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"big","params":{"n":` + strconv.Itoa(tc.n) + `}}`
			hdr := []string{}
			if tc.ae != "" {
				hdr = append(hdr, "Accept-Encoding: "+tc.ae)
			}
			if tc.origin != "" {
				hdr = append(hdr, "Origin: "+tc.origin)
			}
			c := dial(t, addr)
			r := c.do(post(pathRPC, body, hdr...))
			if r.Status != 200 {
				t.Fatalf("%s %s", r.StatusLine, r.Body)
			}
			got := r.Header.Get("Content-Encoding")
			if got != tc.coding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.coding)
			}
			plain := r.Body
			switch got {
			case "gzip":
				zr, err := gzip.NewReader(bytes.NewReader(r.Body))
				if err != nil {
					t.Fatal(err)
				}
				if plain, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			case "zstd":
				zr, err := zstd.NewReader(nil)
				if err != nil {
					t.Fatal(err)
				}
				defer zr.Close()
				if plain, err = zr.DecodeAll(r.Body, nil); err != nil {
					t.Fatal(err)
				}
			}
			if got != "" {
				if len(r.Body) >= len(plain) {
					t.Errorf("compressed %d bytes into %d", len(plain), len(r.Body))
				}
				vary := r.Header.Values("Vary")
				if !strings.Contains(strings.Join(vary, ","), "Accept-Encoding") {
					t.Errorf("Vary %q, want Accept-Encoding", vary)
				}
				if tc.origin != "" && !strings.Contains(strings.Join(vary, ","), "Origin") {
					t.Errorf("Vary %q lost Origin (the answer varies by Origin and by Accept-Encoding)", vary)
				}
			}
			want := `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", tc.n) + `"}`
			if string(plain) != want {
				t.Errorf("answer of %d bytes, want %d bytes", len(plain), len(want))
			}
			// Compressed answers leave the connection usable.
			c.expectOpen()
		})
	}
}

func TestPickEncoding(t *testing.T) {
	cases := map[string]int{
		"":                     encIdentity,
		"gzip":                 encGzip,
		"x-gzip":               encIdentity,
		"deflate":              encIdentity,
		"zstd":                 encZstd,
		"gzip, zstd":           encZstd,
		"zstd, gzip":           encZstd,
		" gzip ;q=1":           encGzip,
		"gzip;q=0":             encIdentity,
		"gzip;q=0.":            encIdentity,
		"gzip;q=0.0":           encIdentity,
		"gzip;q=0.000":         encIdentity,
		"gzip;q=0.001":         encGzip,
		"gzip;q=0.5":           encGzip,
		"zstd;q=0, gzip;q=0.1": encGzip,
		"gzip;Q=0":             encIdentity,
		"identity":             encIdentity,
		"br, compress":         encIdentity,
		"gzipx":                encIdentity,
		"gzip, zstd;q=0":       encGzip,
		"zstd ; q=0 , gzip":    encGzip,
	}
	for ae, enc := range cases {
		if got := pickEncoding([]byte(ae)); got != enc {
			t.Errorf("pickEncoding(%q) = %d, want %d", ae, got, enc)
		}
	}
}

// §3 "Metrics label requests by endpoint, status, code and method":
// registered names, every other name as "other".
func TestMetrics(t *testing.T) {
	_, addr := serve(t, Config{})
	for _, raw := range []string{
		post(pathRPC, valid),
		post(pathRPC, valid),
		post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"nosuch-method-1234"}`),
		post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"refused"}`),
		post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"panic"}`),
		post(pathRPC, `{"jsonrpc":"2.0","method":"notif-name-5678"}`),
		post(pathRPC, `[1]`),
		post(pathJR, `{"jsonrpc":"2.0","id":1,"method":"echo"}`),
	} {
		roundTrip(t, addr, raw)
	}
	r := roundTrip(t, addr, request("GET", "/metrics", ""))
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %s %q", r.StatusLine, r.Header.Get("Content-Type"))
	}
	text := string(r.Body)
	for _, line := range []string{
		`rpcedge_requests_total{endpoint="/rpc",method="echo",status="200",code="none"} 2`,
		`rpcedge_requests_total{endpoint="/rpc",method="other",status="404",code="-32601"} 1`,
		`rpcedge_requests_total{endpoint="/rpc",method="refused",status="200",code="-32004"} 1`,
		`rpcedge_requests_total{endpoint="/rpc",method="panic",status="500",code="-32603"} 1`,
		`rpcedge_requests_total{endpoint="/rpc",method="other",status="202",code="none"} 1`,
		`rpcedge_requests_total{endpoint="/rpc",method="other",status="400",code="-32600"} 1`,
		`rpcedge_requests_total{endpoint="/jr",method="echo",status="200",code="none"} 1`,
		`rpcedge_panics_total{where="handler"} 1`,
		`rpcedge_requests_in_flight 0`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("/metrics lacks %s", line)
		}
	}
	for _, metric := range []string{"rpcedge_request_duration_seconds_bucket", "rpcedge_request_body_bytes_bucket"} {
		if !strings.Contains(text, metric) {
			t.Errorf("/metrics lacks %s", metric)
		}
	}
	if strings.Contains(text, "nosuch") || strings.Contains(text, "notif-name") {
		t.Errorf("/metrics carries a method name the client made up:\n%s", text)
	}
	// Every family of the server's own has its description (found by
	// review on 2026-12-05: one had the placeholder HELP).
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "# HELP rpcedge_") && strings.Contains(line, " rpcedge metric rpcedge_") {
			t.Errorf("a family without its description: %s", line)
		}
	}
}

// Row 3 says "Content-Type present and not application/json": a POST
// without Content-Type is not refused, also on a connection (or a pooled
// request context) that carried one before.
func TestContentTypeAbsent(t *testing.T) {
	_, addr := serve(t, Config{})
	c := dial(t, addr)
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid)))
	r := c.do(post(pathRPC, valid, "Content-Type:"))
	want{200, 0, "7", `{"a":1}`, ""}.check(t, r)
}

// Request.Header and HasHeader report absent headers as absent, also
// fasthttp's special ones (Content-Type, User-Agent) on a reused header.
func TestRequestHeaderAbsent(t *testing.T) {
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader("POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nUser-Agent: x\r\nX-A: 1\r\n\r\n"))); err != nil {
		t.Fatal(err)
	}
	h.Reset()
	if err := h.Read(bufio.NewReader(strings.NewReader("POST /rpc HTTP/1.1\r\nHost: a\r\nX-Empty:\r\n\r\n"))); err != nil {
		t.Fatal(err)
	}
	var r Request
	r.Reset(&h, &decode.Message{}, nil)
	for _, name := range []string{"Content-Type", "User-Agent", "X-A", "Origin"} {
		if r.HasHeader(name) || r.Header(name) != nil {
			t.Errorf("HasHeader(%q) = %v, Header = %q; the request has no such header", name, r.HasHeader(name), r.Header(name))
		}
	}
	if !r.HasHeader("X-Empty") || string(r.Host()) != "a" {
		t.Errorf("present headers: HasHeader(X-Empty) %v, Host %q", r.HasHeader("X-Empty"), r.Host())
	}
	var zero Request
	if zero.Header("X") != nil || zero.HasHeader("X") || zero.Host() != nil || zero.Context() == nil {
		t.Errorf("the zero Request should have no headers and a background context")
	}
}

// Answer compression from many goroutines at once (the zstd encoder and
// the gzip writers are shared).
func TestAnswerCompressionConcurrent(t *testing.T) {
	_, addr := serve(t, Config{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := net.DialTimeout("tcp", addr, ioTimeout)
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			c := newConn(t, nc) // used without t.Fatal: this is not the test goroutine
			for i := range 20 {
				n := 1500 + g*100 + i
				ae := []string{"gzip", "zstd"}[(g+i)%2]
				nc.SetWriteDeadline(time.Now().Add(ioTimeout))
				if _, err := io.WriteString(nc, post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"big","params":{"n":`+strconv.Itoa(n)+`}}`, "Accept-Encoding: "+ae)); err != nil {
					t.Error(err)
					return
				}
				r, err := c.tryRead()
				if err != nil {
					t.Error(err)
					return
				}
				plain := r.Body
				switch r.Header.Get("Content-Encoding") {
				case "gzip":
					var zr *gzip.Reader
					if zr, err = gzip.NewReader(bytes.NewReader(r.Body)); err == nil {
						plain, err = io.ReadAll(zr)
					}
				case "zstd":
					var zr *zstd.Decoder
					if zr, err = zstd.NewReader(nil); err == nil {
						plain, err = zr.DecodeAll(r.Body, nil)
						zr.Close()
					}
				default:
					t.Errorf("not compressed")
					return
				}
				if err != nil || string(plain) != `{"jsonrpc":"2.0","id":1,"result":"`+strings.Repeat("x", n)+`"}` {
					t.Errorf("goroutine %d answer %d: %v, %d bytes", g, i, err, len(plain))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Config.AccessLog: one line per request, to the configured logger.
func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	_, addr := serve(t, Config{AccessLog: true, Logger: logger})
	roundTrip(t, addr, post(pathRPC, valid))
	roundTrip(t, addr, post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"made-up-name"}`))
	waitFor(t, "two access log lines", func() bool { return strings.Count(buf.String(), "msg=rpc") == 2 })
	logs := buf.String()
	// An unregistered method logs as method="" (metrics say "other").
	if !strings.Contains(logs, "method=echo") || !strings.Contains(logs, "status=200") || !strings.Contains(logs, "status=404") {
		t.Errorf("access log:\n%s", logs)
	}
	if strings.Contains(logs, "made-up-name") {
		t.Errorf("the access log carries the client's method name (labels are fixed): %s", logs)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
