package loadgen

import (
	"strings"
	"testing"
)

func TestParseResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		eof    bool
		done   bool
		err    error
		status int
		body   string
		close  bool
		ctype  string
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", false, true, nil, 200, "{}", false, "application/json"},
		{"no reason", "HTTP/1.1 202\r\nContent-Length: 0\r\n\r\n", false, true, nil, 202, "", false, ""},
		{"partial head", "HTTP/1.1 200 OK\r\nContent-Le", false, false, nil, 0, "", false, ""},
		{"partial body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", false, false, nil, 0, "", false, ""},
		{"partial body then eof", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", true, false, errEOF, 0, "", false, ""},
		{"eof before anything", "", true, false, errEOF, 0, "", false, ""},
		{"case-insensitive names", "HTTP/1.1 200 OK\r\ncontent-length: 1\r\nCONNECTION: Close\r\n\r\nx", false, true, nil, 200, "x", true, ""},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nX-T: 1\r\n\r\n", false, true, nil, 200, "abcde", false, ""},
		{"chunked partial", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", false, false, nil, 0, "", false, ""},
		{"chunked bad", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, false, errBadChunk, 0, "", false, ""},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx", false, true, nil, 404, "x", false, ""},
		{"until close, open", "HTTP/1.1 200 OK\r\n\r\nabc", false, false, nil, 0, "", false, ""},
		{"until close, closed", "HTTP/1.1 200 OK\r\n\r\nabc", true, true, nil, 200, "abc", true, ""},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false, true, nil, 200, "", true, ""},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", false, true, nil, 200, "", false, ""},
		{"bad status", "HTTP/2 200 OK\r\n\r\n", false, false, errBadStatusLine, 0, "", false, ""},
		{"bad status digits", "HTTP/1.1 2x0 OK\r\n\r\n", false, false, errBadStatusLine, 0, "", false, ""},
		{"bad header", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", false, false, errBadHeader, 0, "", false, ""},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", false, false, errBadLength, 0, "", false, ""},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, false, errBadLength, 0, "", false, ""},
		{"gzip TE", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, false, errUnsupportedTE, 0, "", false, ""},
		{"204 no body", "HTTP/1.1 204 No Content\r\n\r\n", false, true, nil, 204, "", false, ""},
		// Chunked wins over Content-Length (RFC 9112 §6.3); the
		// connection is not kept after such an answer (§6.1).
		{"chunked and a length", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", false, true, nil, 200, "abc", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			b := []byte(tc.in)
			done, err := r.parse(b, tc.eof)
			if done != tc.done || err != tc.err {
				t.Fatalf("done %v err %v, want %v %v", done, err, tc.done, tc.err)
			}
			if !done {
				return
			}
			if r.status != tc.status || string(r.body) != tc.body || r.close != tc.close || string(r.ctype) != tc.ctype {
				t.Errorf("status %d body %q close %v ctype %q", r.status, r.body, r.close, r.ctype)
			}
			if r.end != len(b) {
				t.Errorf("end %d of %d", r.end, len(b))
			}
		})
	}
}

func TestParseResponseHeadTooLarge(t *testing.T) {
	var r response
	b := []byte("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHead))
	if _, err := r.parse(b, false); err != errHeadTooLarge {
		t.Fatalf("err %v", err)
	}
}

func TestParseResponseExtraBytes(t *testing.T) {
	var r response
	b := []byte("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n{\"x\":1}")
	done, err := r.parse(b, false)
	if !done || err != nil || r.end == len(b) {
		t.Fatalf("done %v err %v end %d", done, err, r.end)
	}
}

// TestReadBuffer: an exchange's read buffer grows by doubling up to room
// for the largest answer and its head, never past it, and a buffer grown
// past maxKeptRead for one answer is not kept for the next request.
func TestReadBuffer(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 130 MiB; skipped with -short")
	}
	x := newExchange()
	// Full at 64 MiB: the next read may take the buffer to 64 MiB + 64
	// KiB, the most an answer (64 MiB) and its head (64 KiB) can need.
	x.rbuf = make([]byte, 64<<20)
	sp, err := x.readSpace()
	if err != nil {
		t.Fatal(err)
	}
	if c := cap(x.rbuf); c != maxAnswer+maxHead || len(sp) != maxHead {
		t.Fatalf("buffer of %d bytes, %d free; want %d, %d", c, len(sp), maxAnswer+maxHead, maxHead)
	}
	x.rbuf = x.rbuf[:cap(x.rbuf)]
	if _, err := x.readSpace(); err != errTooLarge {
		t.Fatalf("full at the bound: %v, want errTooLarge", err)
	}
	p := testPlan(t, Config{})
	w := &worker{r: &runner{p: p}, gen: newGenerator(p, 0, 1, 1)}
	w.prepare(x, -1)
	if c := cap(x.rbuf); c > maxKeptRead || len(x.rbuf) != 0 {
		t.Errorf("after a 64 MiB answer the next request reads into %d bytes (len %d), want at most %d", c, len(x.rbuf), maxKeptRead)
	}
	small := x.rbuf
	w.prepare(x, -1)
	if &x.rbuf[:1][0] != &small[:1][0] {
		t.Errorf("a buffer within maxKeptRead is not reused")
	}
}
