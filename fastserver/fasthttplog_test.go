package fastserver

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// TestFasthttpLogRedacted: requests fasthttp cannot parse make it log a
// message that quotes the request's bytes. None of those bytes — here a
// bearer token, a cookie and a body — reach the log, the message still
// says what failed, and a client sending such requests as fast as it can
// gets at most fasthttpLogBurst messages logged a second, the next one
// logged counting those dropped.
func TestFasthttpLogRedacted(t *testing.T) {
	fasthttpOnly(t, "net/http parses requests itself")
	var logs syncBuffer
	cfg := Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ms := &Methods{}
	ms.HandleFunc("ping", func(r *Request, dst []byte) ([]byte, error) { return append(dst, "{}"...), nil })
	_, addr := serve(t, cfg, ms.Endpoint(pathRPC, decode.IDsMCP))

	const secret, cookie, body = "tok-5fd1c0ffee", "sess=9b2a77", `{"jsonrpc":"2.0","id":"q-31337","method":"ping"}`
	bad := func(i int) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s%d\r\nCookie: %s\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n%s",
			pathRPC, secret, i, cookie, len(body), len(body)+1, body)
	}
	const n = 150
	start := time.Now()
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, ioTimeout)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(ioTimeout))
		io.WriteString(c, bad(i))
		answer, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") {
			t.Fatalf("request %d: want 400, got %q", i, answer)
		}
	}
	elapsed := time.Since(start)
	// The last messages may still be on their way to the log.
	lines := fasthttpLines(&logs, 1)
	if len(lines) == 0 {
		t.Fatal("fasthttp's refusals were not logged")
	}
	all := logs.String()
	for _, leak := range []string{secret, cookie, "q-31337", "Bearer"} {
		if strings.Contains(all, leak) {
			t.Errorf("the log holds the request's bytes (%q):\n%.600s", leak, all)
		}
	}
	if !strings.Contains(lines[0], "content-length") || !strings.Contains(lines[0], "contents not logged") {
		t.Errorf("the message no longer says what failed: %s", lines[0])
	}
	for _, l := range lines {
		if len(l) > fasthttpLogMax+300 {
			t.Errorf("a line of %d bytes: %.200s…", len(l), l)
		}
	}
	// At most a burst in every second the requests spanned, plus one
	// second started but not whole.
	if max := fasthttpLogBurst * (int(elapsed/time.Second) + 2); len(lines) > max {
		t.Errorf("%d messages logged for %d refusals in %v: want at most %d", len(lines), n, elapsed, max)
	}
	if len(lines) < n && elapsed < time.Second {
		t.Logf("%d of %d messages logged in %v", len(lines), n, elapsed)
	}
}

// TestFasthttpLogRedactedRefusals: the refusals in which fasthttp quotes
// the request itself or a header's value (a bad request-target, method or
// version, a line without spaces, a header value with a NUL) leave no
// byte of the request in the log, and keep the connection's addresses.
// (Until 2026-12-05 only the ", contents: " form was cut: found by review,
// the bearer token was in the log.)
func TestFasthttpLogRedactedRefusals(t *testing.T) {
	fasthttpOnly(t, "net/http parses requests itself")
	var logs syncBuffer
	cfg := Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	_, addr := serve(t, cfg)
	const secret = "tok-77e1d"
	rest := func(i int) string {
		return fmt.Sprintf("Host: x\r\nAuthorization: Bearer %s%d\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", secret, i)
	}
	requests := []string{
		"POST mcp HTTP/1.1\r\n" + rest(0),
		"POST " + pathRPC + " http/1.1\r\n" + rest(1),
		"POST  " + pathRPC + " HTTP/1.1\r\n" + rest(2),
		"P@ST " + pathRPC + " HTTP/1.1\r\n" + rest(3),
		"POST " + pathRPC + " HTTP/1.1\r\nX-Note: a\x00" + secret + "5\r\n" + rest(5),
		"POST" + pathRPC + "HTTP/1.1\r\n" + rest(6),
		"POST " + pathRPC + "?k=" + secret + "7 HTTP/9\r\n" + rest(7),
	}
	for i, raw := range requests {
		c, err := net.DialTimeout("tcp", addr, ioTimeout)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(ioTimeout))
		io.WriteString(c, raw)
		answer, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasPrefix(string(answer), "HTTP/1.1 4") && !strings.HasPrefix(string(answer), "HTTP/1.1 5") {
			t.Errorf("request %d: %.60q: want a refusal, got %.80q", i, raw, answer)
		}
	}
	lines := fasthttpLines(&logs, len(requests))
	if len(lines) < 4 {
		t.Fatalf("%d of %d refusals logged:\n%s", len(lines), len(requests), logs.String())
	}
	for _, l := range lines {
		for _, leak := range []string{secret, "Bearer", "Authorization"} {
			if strings.Contains(l, leak) {
				t.Errorf("the log holds the request's bytes (%q): %s", leak, l)
			}
		}
		if !strings.Contains(l, "127.0.0.1:") {
			t.Errorf("the message lost the connection's address: %s", l)
		}
	}
}

// fasthttpLines returns the lines fasthttp's messages made in logs, once
// there are at least n of them or after 2 s (the last messages may still
// be on their way to the log).
func fasthttpLines(logs *syncBuffer, n int) []string {
	for deadline := time.Now().Add(2 * time.Second); ; {
		var lines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "source=fasthttp") {
				lines = append(lines, l)
			}
		}
		if len(lines) >= n || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedactFasthttp cuts the quoted request bytes and long messages.
func TestRedactFasthttp(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`error when reading request headers: duplicate: buffer size=12, contents: "GET / HTTP/1.1\r\n"`, `error when reading request headers: duplicate: buffer size=12, contents not logged`},
		{`error when serving connection "127.0.0.1:8080"<->"[::1]:51234": invalid request uri "mcp" in "POST mcp HTTP/1.1\r\nAuthorization: x \"y\"\r\n": bad`,
			`error when serving connection "127.0.0.1:8080"<->"[::1]:51234": invalid request uri "…" in "…": bad`},
		{`invalid header value "a\x00b"`, `invalid header value "…"`},
		{`unterminated "abc\"`, `unterminated "…"`},
		{`"a:b c"`, `"…"`},
		{"plain message", "plain message"},
		{strings.Repeat("é", fasthttpLogMax), strings.Repeat("é", fasthttpLogMax/2) + "…"},
		{strings.Repeat("a", fasthttpLogMax+1), strings.Repeat("a", fasthttpLogMax) + "…"},
	} {
		if got := redactFasthttp(tc.in); got != tc.want {
			t.Errorf("redactFasthttp(%.40q) = %.60q, want %.60q", tc.in, got, tc.want)
		}
	}
}
