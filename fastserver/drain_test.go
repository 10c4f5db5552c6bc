package fastserver

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRefusalsDrain: answers fasthttp writes before closing the
// connection — its own refusals (an oversized header section, two
// lengths, two different Content-Type lines) and the answer to a method no
// endpoint takes, whose body is too large for fasthttp to skip — leave the
// request still arriving. The connection is half-closed and drained, as
// after an early answer (contract §2, "Streaming verdicts"), so the
// client reads the whole answer and then a clean close, never a reset
// that could overtake the answer.
func TestRefusalsDrain(t *testing.T) {
	fasthttpOnly(t, "net/http refuses these requests itself")
	_, addr := serve(t, Config{DrainTimeout: 2 * time.Second})
	// The request is written at once and fits one loopback segment, so
	// all of it is in the server's socket when fasthttp answers: closing
	// on it without a drain would reset. The two last declare more than
	// they send (fasthttp closes rather than skip a body past 256 KiB).
	const sent = 40 << 10
	body := strings.Repeat(" ", sent)
	declared := strconv.Itoa(sent)
	for _, tc := range []struct {
		name   string
		head   string
		status int
	}{
		{"header section over 8 KiB", "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 9<<10) +
			"\r\nContent-Type: application/json\r\nContent-Length: " + declared + "\r\n\r\n", 431},
		{"two lengths", "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + declared +
			"\r\nContent-Length: " + declared + "0\r\n\r\n", 400},
		{"a method no endpoint takes, with a large body", "PUT " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 405},
		{"a path that does not exist, with a large body", "POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 404},
		// Expect: 100-continue refused (417, or 404 / 405 in place of
		// 100 Continue), the body sent without waiting for 100.
		{"Expect, a foreign Origin", "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: " + declared + "\r\n\r\n", 417},
		{"Expect, a coding not served", "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Encoding: br\r\nContent-Length: " + declared + "\r\n\r\n", 417},
		{"Expect, a path that does not exist", "POST /nope HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: " + declared + "\r\n\r\n", 404},
		{"Expect, a method no endpoint takes", "PUT " + pathRPC + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: " + declared + "\r\n\r\n", 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.send(tc.head + body)
			c.c.CloseWrite()
			r := c.read()
			if r.Status != tc.status {
				t.Fatalf("answer %s, want %d", r.StatusLine, tc.status)
			}
			c.expectClosed()
		})
	}
	// A small body fasthttp skips itself: the connection serves on, and a
	// later close (the client's) drains nothing.
	c := dial(t, addr)
	c.send("PUT " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	if r := c.read(); r.Status != 405 || r.Close {
		t.Fatalf("answer %s (close %v), want 405 on a connection that serves on", r.StatusLine, r.Close)
	}
	c.expectOpen()
}
