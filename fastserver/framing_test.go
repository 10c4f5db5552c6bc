package fastserver

// Requests with absent or unusual body framing (RFC 9112 §6), written as a
// careless client or an attacker writes them: each gets a definite answer,
// the connection goes on or closes as HTTP says, and the server keeps
// serving. The first row is the one-packet crash of issue #11: a POST with
// neither Content-Length nor Transfer-Encoding.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// framingCase is a raw request and what must come back.
type framingCase struct {
	name   string
	raw    string
	status int
	code   int  // JSON-RPC code of a JSON answer; 0 for a plain-text one
	open   bool // the connection serves on after the answer
}

// framingCases builds the table for one endpoint path (with any query).
func framingCases(path string) []framingCase {
	const host = "Host: test.example\r\n"
	valid := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`
	return []framingCase{
		{"no length, HTTP/1.1", "POST " + path + " HTTP/1.1\r\n" + host + "\r\n", 400, -32700, true},
		{"no length, HTTP/1.1, JSON type", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n\r\n", 400, -32700, true},
		{"no length, HTTP/1.0", "POST " + path + " HTTP/1.0\r\n" + host + "\r\n", 400, -32700, false},
		{"no length, HTTP/1.0 keep-alive", "POST " + path + " HTTP/1.0\r\n" + host + "Connection: keep-alive\r\n\r\n", 400, -32700, true},
		{"no length, Connection: close", "POST " + path + " HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n", 400, -32700, false},
		{"no length, Expect: 100-continue", "POST " + path + " HTTP/1.1\r\n" + host + "Expect: 100-continue\r\n\r\n", 400, -32700, true},
		{"no length, Expect: 100-continue, HTTP/1.0", "POST " + path + " HTTP/1.0\r\n" + host + "Expect: 100-continue\r\n\r\n", 400, -32700, false},
		{"no length, Expect: something else", "POST " + path + " HTTP/1.1\r\n" + host + "Expect: 200-ok\r\n\r\n", 400, -32700, true},
		{"no length, Content-Encoding: gzip", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Encoding: gzip\r\n\r\n", 400, -32700, true},
		{"no length, Content-Encoding: zstd, deflate", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Encoding: zstd, deflate\r\n\r\n", 400, -32700, true},
		{"no length, Content-Encoding: br", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Encoding: br\r\n\r\n", 415, -32600, true},
		{"no length, Content-Type: text/plain", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Type: text/plain\r\n\r\n", 415, -32600, true},
		{"no length, foreign Origin", "POST " + path + " HTTP/1.1\r\n" + host + "Origin: https://evil.example\r\n\r\n", 403, -32600, true},
		{"Content-Length: 0", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n", 400, -32700, true},
		{"Content-Length: 0, gzip", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: 0\r\nContent-Encoding: gzip\r\n\r\n", 400, -32700, true},
		{"chunked, empty", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, -32700, true},
		{"chunked, extensions", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(valid)), 16) + ";ext=1;q=\"x\"\r\n" + valid + "\r\n0;end\r\n\r\n", 200, 0, true},
		{"Transfer-Encoding: identity, no length", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: identity\r\n\r\n", 501, 0, false},
		{"Transfer-Encoding: identity and a length", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: identity\r\nContent-Length: " +
			strconv.Itoa(len(valid)) + "\r\n\r\n" + valid, 501, 0, false},
		{"Transfer-Encoding: gzip", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip\r\n\r\n", 501, 0, false},
		{"Transfer-Encoding: gzip, chunked", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, 0, false},
		{"chunked and a length", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, 0, false},
		{"a length and chunked", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400, 0, false},
		{"chunked, HTTP/1.0", "POST " + path + " HTTP/1.0\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, 0, false},
		{"two lengths", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400, 0, false},
		{"signed length", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: +2\r\n\r\n{}", 400, 0, false},
		{"negative length", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: -1\r\n\r\n", 400, 0, false},
		{"length with inner space", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Length: 1 2\r\n\r\n", 400, 0, false},
		{"obsolete line folding", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Type: application/json\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\n{}", 400, 0, false},
		{"white space before a colon", "POST " + path + " HTTP/1.1\r\n" + host + "Content-Type: application/json\r\nContent-Length : 2\r\n\r\n{}", 400, 0, false},
		{"a tab before a colon", "POST " + path + " HTTP/1.1\r\n" + host + "X-Trace\t: 1\r\nContent-Length: 2\r\n\r\n{}", 400, 0, false},
		{"a space inside a field name", "POST " + path + " HTTP/1.1\r\n" + host + "X Trace: 1\r\nContent-Length: 2\r\n\r\n{}", 400, 0, false},
		{"a separator in a field name", "POST " + path + " HTTP/1.1\r\n" + host + "X(Trace): 1\r\nContent-Length: 2\r\n\r\n{}", 400, 0, false},
		{"a table name with white space before its colon", "POST " + path + " HTTP/1.1\r\n" + host + "Transfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{}", 400, 0, false},
		{"absolute-form target", "POST http://test.example" + path + " HTTP/1.1\r\n" + host + "Content-Length: " + strconv.Itoa(len(valid)) + "\r\n\r\n" + valid, 200, 0, true},
	}
}

// readFinal reads answers until one that is not 1xx.
func (c *conn) readFinal() *resp {
	c.t.Helper()
	for {
		r := c.read()
		if r.Status >= 200 {
			return r
		}
	}
}

// checkFraming sends tc on a new connection and checks the answer and
// what happens to the connection.
func checkFraming(t *testing.T, addr string, tc framingCase) {
	t.Helper()
	c := dial(t, addr)
	c.send(tc.raw)
	r := c.readFinal()
	if r.Status != tc.status {
		t.Fatalf("status %s, want %d; body %q", r.StatusLine, tc.status, r.Body)
	}
	switch {
	case tc.code != 0:
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		a := parseAnswer(t, r.Body)
		if a.Code != tc.code || (a.Code != 0 && string(a.ID) != "null") {
			t.Errorf("answer %s, want code %d with id null", r.Body, tc.code)
		}
	case tc.status == 200:
		a := parseAnswer(t, r.Body)
		if a.IsErr || string(a.ID) != "1" {
			t.Errorf("answer %s, want a result for id 1", r.Body)
		}
	default:
		if len(r.Body) == 0 {
			t.Errorf("a %d without a reason in the body", r.Status)
		}
	}
	if tc.open {
		if r.Close {
			t.Errorf("the answer closes the connection; it should serve on")
		}
		c.expectOpen()
	} else {
		c.expectClosed()
	}
}

// TestFramingVariants runs the table on both endpoints, with and without a
// query string, each request on its own connection, and checks that the
// server answers a plain call on a new connection after each.
func TestFramingVariants(t *testing.T) {
	fasthttpOnly(t, "net/http frames requests itself (417 for an unknown expectation, 501 for an unknown coding, its own closes); TestFramingPipelined and TestFramingTruncatedBody run on both")
	s, addr := serve(t, Config{DrainTimeout: 200 * time.Millisecond})
	for _, path := range []string{pathRPC, pathJR, pathRPC + "?x=1&y", pathJR + "?"} {
		for _, tc := range framingCases(path) {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				checkFraming(t, addr, tc)
				want{200, 0, `"after"`, "", ""}.check(t, roundTrip(t, addr, post(path, `{"jsonrpc":"2.0","id":"after","method":"echo"}`)))
			})
		}
	}
	waitSettled(t, s)
}

// A request without framing pipelined between two framed ones: each gets
// its own answer, in order, on the one connection.
func TestFramingPipelined(t *testing.T) {
	_, addr := serve(t, Config{})
	c := dial(t, addr)
	var b strings.Builder
	b.WriteString(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"n":1}}`))
	b.WriteString("POST " + pathRPC + " HTTP/1.1\r\nHost: test.example\r\n\r\n")
	b.WriteString("POST " + pathJR + " HTTP/1.1\r\nHost: test.example\r\nContent-Type: application/json\r\n\r\n")
	b.WriteString(post(pathRPC, `{"jsonrpc":"2.0","id":4,"method":"echo","params":{"n":4}}`))
	c.send(b.String())
	want{200, 0, "1", `{"n":1}`, ""}.check(t, c.read())
	want{400, -32700, "null", "", ""}.check(t, c.read())
	want{400, -32700, "null", "", ""}.check(t, c.read())
	want{200, 0, "4", `{"n":4}`, ""}.check(t, c.read())
}

// The same requests through a fasthttp.Server of the caller's own that
// reads bodies into memory (Handler): no body stream at all.
func TestFramingWithoutStreaming(t *testing.T) {
	s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	fs := &fasthttp.Server{Handler: s.Handler(), MaxRequestBodySize: 1 << 20}
	ln := listen(t)
	go fs.Serve(ln)
	t.Cleanup(func() { fs.Shutdown() })
	addr := ln.Addr().String()
	want{400, -32700, "null", "", ""}.check(t, roundTrip(t, addr, "POST "+pathRPC+" HTTP/1.1\r\nHost: x\r\n\r\n"))
	want{200, 0, "3", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, `{"jsonrpc":"2.0","id":3,"method":"echo","params":{"a":1}}`)))
	want{400, -32600, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, `[{"jsonrpc":"2.0","id":3,"method":"echo"}]`)))
}

// waitSettled waits until every accepted request has been answered and the
// body budget is back to zero.
func waitSettled(t testing.TB, s *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := s.Stats()
		used := s.budget.used.Load()
		if st.Entered == st.Answered && used == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests in flight %d, budget held %d bytes: not settled", st.Entered-st.Answered, used)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Expect: 100-continue with no body on a request rows 1 to 6 accept: the
// server says 100 Continue and then answers the empty body.
func TestFramingExpectNoBody(t *testing.T) {
	_, addr := serve(t, Config{})
	c := dial(t, addr)
	c.send("POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n")
	// fasthttp says 100 Continue first; net/http does not for a request
	// whose framing says it has no body (RFC 9110 allows both).
	want{400, -32700, "null", "", ""}.check(t, c.readFinal())
	// Refused by row 3 before the body: 417, never 100.
	c2 := dial(t, addr)
	c2.send("POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: text/html\r\n\r\n")
	if r := c2.read(); r.Status != 417 {
		t.Fatalf("answer %s, want 417", r.StatusLine)
	}
}

// A body that ends (the client half-closes) before its Content-Length is
// incomplete (RFC 9112 §8), even when the bytes that came are a valid
// message: 400 / -32700, never an answer to the shorter message.
func TestFramingTruncatedBody(t *testing.T) {
	_, addr := serve(t, Config{})
	valid := `{"jsonrpc":"2.0","id":5,"method":"echo","params":{}}`
	for _, extra := range []int{1, 100, 5000} {
		c := dial(t, addr)
		c.send("POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(valid)+extra) + "\r\n\r\n" + valid)
		c.c.CloseWrite()
		r := c.read()
		want{400, -32700, "null", "", ""}.check(t, r)
		c.expectClosed()
	}
}

// An HTTP version other than 1.x in the request line (fasthttp parses any
// HTTP/d.d and would serve it as HTTP/1.0) is answered 505, a call as any
// other request; 1.0 and 1.x are served.
func TestUnsupportedVersion(t *testing.T) {
	_, addr := serve(t, Config{})
	call := `{"jsonrpc":"2.0","id":"v","method":"echo"}`
	for _, tc := range []struct {
		proto  string
		status int
	}{
		{"HTTP/2.0", 505}, {"HTTP/0.9", 505}, {"HTTP/3.1", 505}, {"HTTP/9.9", 505},
		{"HTTP/1.0", 200}, {"HTTP/1.2", 200},
	} {
		for _, rq := range []struct{ name, raw string }{
			{"call", post(pathRPC, call)},
			{"GET route", request("GET", "/healthz", "")},
			{"no route", post("/nothing-here", call)},
		} {
			raw := strings.Replace(rq.raw, " HTTP/1.1\r\n", " "+tc.proto+"\r\n", 1)
			t.Run(tc.proto+"/"+rq.name, func(t *testing.T) {
				c := dial(t, addr)
				c.send(raw)
				r := c.read()
				status := tc.status
				if status == 200 && strings.Contains(raw, "/nothing-here") {
					status = 404
				}
				if r.Status != status {
					t.Fatalf("%s (body %q), want %d", r.StatusLine, r.Body, status)
				}
				if status == 200 && strings.HasPrefix(raw, "POST") {
					want{200, 0, `"v"`, "", ""}.check(t, r)
				}
				if tc.proto != "HTTP/1.2" || !netHTTP { // net/http keeps 1.2 alive as 1.1
					c.expectClosed() // none asked to keep the connection alive
				}
			})
		}
	}
}

// TestFramingRefusalNoCORS: a request refused for its framing (a folded
// line, a transfer coding not implemented, a length and chunked together)
// gets no CORS fields: the Origin line may itself be the folded one
// (`Origin: http://localhost` continued by ` evil`).
func TestFramingRefusalNoCORS(t *testing.T) {
	fasthttpOnly(t, "net/http refuses these framings itself")
	_, addr := serve(t, Config{DrainTimeout: 100 * time.Millisecond})
	for _, extra := range []string{
		"Origin: http://localhost\r\n evil\r\n",
		"Origin: http://localhost\r\nTransfer-Encoding: gzip\r\n",
		"Origin: http://localhost\r\nTransfer-Encoding: chunked\r\n",
	} {
		c := dial(t, addr)
		c.send("POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra + "Content-Length: " + strconv.Itoa(len(valid)) + "\r\n\r\n" + valid)
		r := c.read()
		if r.Status != 400 && r.Status != 501 {
			t.Fatalf("%q: %s, want a framing refusal", extra, r.StatusLine)
		}
		if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("%q: %s with Access-Control-Allow-Origin %q", extra, r.StatusLine, v)
		}
	}
}
