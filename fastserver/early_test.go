package fastserver

// Early answers (spec/contract.md §2 "Streaming verdicts", §3): bodies
// validated as they arrive, the first failure in byte order deciding;
// compressed bodies; the answer written whole, then half-close, a bounded
// drain and a clean close; Expect: 100-continue.

import (
	"bytes"
	"compress/zlib"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

const twoMiB = 2 << 20

// chunkedBody frames head followed by n bytes of fill as a chunked body
// in 64 KiB chunks.
func chunkedBody(head string, fill byte, n int) []byte {
	var b bytes.Buffer
	b.WriteString(strconv.FormatInt(int64(len(head)), 16) + "\r\n" + head + "\r\n")
	piece := bytes.Repeat([]byte{fill}, 64<<10)
	for n > 0 {
		k := min(n, len(piece))
		b.WriteString(strconv.FormatInt(int64(k), 16) + "\r\n")
		b.Write(piece[:k])
		b.WriteString("\r\n")
		n -= k
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// Row 7: the first failure in byte order decides, on chunked bodies far
// over the ceiling; the answer arrives whole and the connection is then
// closed cleanly.
func TestStreamingVerdicts(t *testing.T) {
	_, addr := serve(t, Config{})
	arrays1001 := strings.Repeat("[", 1001)
	cases := []struct {
		name string
		head string
		fill byte
		n    int
		want want
	}{
		{"syntax error first", `{"a":[1,}`, 'x', twoMiB, want{400, -32700, "null", "", ""}},
		{"syntax error then a batch byte", ` {"a":]`, '[', twoMiB, want{400, -32700, "null", "", ""}},
		{"batch of 2 MiB", `[`, 'x', twoMiB, want{400, -32600, "null", "", ""}},
		{"batch of 2 MiB of arrays", `[`, '[', twoMiB, want{400, -32600, "null", "", ""}},
		{"2 MiB of spaces", ` `, ' ', twoMiB, want{413, -32600, "null", "", ""}},
		{"valid prefix over the ceiling", `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`, 'a', twoMiB, want{413, -32600, "null", "", ""}},
		{"1001 arrays in an object, then garbage", `{"a":` + arrays1001, '}', twoMiB, want{400, -32600, "null", "", ""}},
		{"depth at the ceiling's edge", strings.Repeat(" ", DefaultMaxBodyBytes-1010) + `{"a":` + arrays1001, 'x', twoMiB, want{400, -32600, "null", "", ""}},
		{"syntax error at the last byte under the ceiling", `{"s":"` + strings.Repeat("a", DefaultMaxBodyBytes-7) + "\x01", 'a', twoMiB, want{400, -32700, "null", "", ""}},
		{"ceiling before a later syntax error", `{"s":"` + strings.Repeat("a", DefaultMaxBodyBytes-6), '\x01', twoMiB, want{413, -32600, "null", "", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			c.send(post(pathRPC, "", "Transfer-Encoding: chunked"))
			done := c.sendAsync(chunkedBody(tc.head, tc.fill, tc.n), true)
			r := c.read()
			tc.want.check(t, r)
			if !r.Close {
				t.Errorf("early answer without Connection: close")
			}
			c.expectClosed()
			<-done
		})
	}
}

// The ceiling is exact: a body of MaxBodyBytes bytes is served, one more
// byte is refused, chunked or not.
func TestCeilingEdge(t *testing.T) {
	const max = 4096
	_, addr := serve(t, Config{MaxBodyBytes: max})
	body := func(n int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`
		tail := `"}}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	exact, over := body(max), body(max+1)
	for _, tc := range []struct {
		name string
		raw  string
		want int
	}{
		{"exact, Content-Length", post(pathRPC, exact), 200},
		{"exact, chunked", post(pathRPC, chunk(exact[:100], exact[100:]), "Transfer-Encoding: chunked"), 200},
		{"over, Content-Length", post(pathRPC, over), 413},
		{"over, chunked", post(pathRPC, chunk(over[:100], over[100:]), "Transfer-Encoding: chunked"), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := roundTrip(t, addr, tc.raw)
			if r.Status != tc.want {
				t.Errorf("%s, want %d", r.StatusLine, tc.want)
			}
		})
	}
}

// After an early answer the server drains for a bounded time: a client
// that stalls mid-body still gets the whole answer and then a clean close
// once DrainTimeout has passed.
func TestEarlyAnswerDrainTime(t *testing.T) {
	_, addr := serve(t, Config{DrainTimeout: 300 * time.Millisecond})
	c := dial(t, addr)
	start := time.Now()
	c.send(post(pathRPC, `{"jsonrpc":"2.0"`, "Origin: http://evil.example", "Content-Length: 1000"))
	want{403, -32600, "null", "", ""}.check(t, c.read())
	c.expectClosed()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("closed after %v; the drain should end after about 300ms", d)
	}
}

// … and for a bounded size: a client that never stops sending is cut off
// after about DrainBytes, having read the whole answer first.
func TestEarlyAnswerDrainBytes(t *testing.T) {
	_, addr := serve(t, Config{DrainBytes: 1 << 20, DrainTimeout: 4 * time.Second})
	c := dial(t, addr)
	c.send(post(pathRPC, "", "Transfer-Encoding: chunked", "Content-Type: text/plain"))
	sent := make(chan int64, 1)
	go func() {
		piece := chunkedBody("", 'x', 60<<10)
		piece = piece[:len(piece)-len("0\r\n\r\n")]
		var n int64
		c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
		for n < 64<<20 {
			k, err := c.c.Write(piece)
			n += int64(k)
			if err != nil {
				break
			}
		}
		sent <- n
	}()
	want{415, -32600, "null", "", ""}.check(t, c.read())
	// What follows the answer is a close (a reset is fine here: the
	// client was still sending past the drain bound).
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	if n, err := c.br.Read(make([]byte, 1)); n > 0 || err == nil || isTimeout(err) {
		t.Errorf("after the answer: %d bytes, %v; want the connection closed", n, err)
	}
	select {
	case n := <-sent:
		if n > 32<<20 {
			t.Errorf("the server drained %d bytes; DrainBytes is 1 MiB", n)
		}
	case <-time.After(ioTimeout):
		t.Errorf("the client could write on forever: the drain is not bounded")
	}
}

// --- compressed bodies ---

func gzipped(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zlibbed(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zstded(t testing.TB, b []byte) []byte {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(b, nil)
}

// Row 4 accepted codings, round trip: the handler sees the decoded params.
func TestCompressedBodies(t *testing.T) {
	_, addr := serve(t, Config{})
	params := `{"text":"` + strings.Repeat("héllo wörld ", 200) + `","n":12345678901234567890}`
	msg := []byte(`{"jsonrpc":"2.0","id":"z","method":"echo","params":` + params + `}`)
	cases := []struct {
		coding string
		body   []byte
	}{
		{"gzip", gzipped(t, msg)},
		{"x-gzip", gzipped(t, msg)},
		{"GZIP", gzipped(t, msg)},
		{"deflate", zlibbed(t, msg)},
		{"zstd", zstded(t, msg)},
		{"gzip, zstd", zstded(t, gzipped(t, msg))},
		{"zstd, gzip", gzipped(t, zstded(t, msg))},
		{"identity, gzip, identity", gzipped(t, msg)},
		{"gzip,,deflate", zlibbed(t, gzipped(t, msg))},
	}
	for _, tc := range cases {
		t.Run(tc.coding, func(t *testing.T) {
			for _, chunked := range []bool{false, true} {
				c := dial(t, addr)
				raw := post(pathRPC, string(tc.body), "Content-Encoding: "+tc.coding)
				if chunked {
					b := string(tc.body)
					raw = post(pathRPC, chunk(b[:len(b)/3], b[len(b)/3:]), "Content-Encoding: "+tc.coding, "Transfer-Encoding: chunked")
				}
				r := c.do(raw)
				want{200, 0, `"z"`, params, ""}.check(t, r)
				c.expectOpen()
			}
		})
	}
}

// Content-Encoding given on several lines is one list (RFC 9110 §5.3):
// the codings are undone in the order of all the lines.
func TestContentEncodingLines(t *testing.T) {
	_, addr := serve(t, Config{})
	msg := []byte(valid)
	r := roundTrip(t, addr, post(pathRPC, string(zstded(t, gzipped(t, msg))), "Content-Encoding: gzip", "Content-Encoding: zstd"))
	want{200, 0, "7", `{"a":1}`, ""}.check(t, r)
}

// A chunked body whose framing is broken is answered (not left hanging)
// and the connection closed.
func TestBrokenChunkedFraming(t *testing.T) {
	_, addr := serve(t, Config{DrainTimeout: 200 * time.Millisecond})
	for _, body := range []string{
		"5\r\n{\"jso\r\nzz\r\n",                   // a chunk size that is not hex
		"5\r\n{\"jsonrpc\"\r\n",                   // a chunk longer than its size
		"ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n", // an overflowing size
	} {
		c := dial(t, addr)
		c.send(post(pathRPC, body, "Transfer-Encoding: chunked"))
		c.c.CloseWrite()
		r, err := c.tryRead()
		if err != nil {
			t.Errorf("%q: no answer: %v", body, err)
			continue
		}
		if r.Status != 400 {
			t.Errorf("%q: %s, want 400", body, r.StatusLine)
		}
	}
}

// A client that goes away mid-body: its reservation is released and the
// request is counted as answered.
func TestClientGoneMidBody(t *testing.T) {
	s, addr := serve(t, Config{})
	for range 5 {
		u := startSlowUpload(t, addr, 50000)
		waitFor(t, "the upload to reserve", func() bool { return s.budget.used.Load() > 0 })
		u.c.c.Close()
		waitFor(t, "the reservation to be released", func() bool { return s.budget.used.Load() == 0 })
	}
	waitFor(t, "every entered request to be answered", func() bool { st := s.Stats(); return st.Entered == st.Answered })
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
}

// Row 6 bounds the body bytes held. A compressed body is held decoded (up
// to the ceiling), whatever its Content-Length: it is charged for its
// decompressor and twice its decoded bytes as they are produced. One that
// has sent only its first bytes holds only the decompressor's share;
// decompressors may hold a quarter of the budget, after which a
// compressed request waits and gets 503 while one without a coding is
// still served.
func TestBudgetCompressedBodies(t *testing.T) {
	const max = 64 << 10
	s, addr := serve(t, Config{MaxBodyBytes: max, InflightBodyBytes: 4 * max, BudgetWait: 200 * time.Millisecond, DrainTimeout: 100 * time.Millisecond})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"` + strings.Repeat("a", max-100) + `"}}`)
	gz := gzipped(t, msg)

	// Only the first bytes sent: the decompressors' share, no more.
	early := dial(t, addr)
	raw := post(pathRPC, string(gz), "Content-Encoding: gzip")
	head := len(raw) - len(gz)
	early.send(raw[:head+10])
	waitFor(t, "the upload to be in its handler", func() bool { return s.Stats().Entered == 1 })
	time.Sleep(50 * time.Millisecond)
	if used := s.budget.used.Load(); used > codingState+decodedFactor*firstStep {
		t.Errorf("a compressed upload that sent 10 bytes holds %d bytes of the budget, want at most %d", used, codingState+decodedFactor*firstStep)
	}
	early.c.Close()
	waitFor(t, "the reservation to be released", func() bool { return s.budget.used.Load() == 0 })

	// All but the gzip trailer: the handler holds the decoded body.
	held := dial(t, addr)
	held.send(raw[:len(raw)-20])
	waitFor(t, "the decoded body to be charged", func() bool { return s.budget.used.Load() >= codingState+decodedFactor*int64(len(msg)) })
	if used := s.budget.used.Load(); used > codingState+decodedFactor*(max+1) {
		t.Errorf("the upload holds %d bytes, more than its decompressors and twice the ceiling (%d)", used, codingState+decodedFactor*(max+1))
	}
	// The decompressors' quarter of the budget is taken: a second
	// compressed request waits and gets 503; a body without a coding still
	// finds room.
	r := roundTrip(t, addr, post(pathRPC, string(gzipped(t, []byte(valid))), "Content-Encoding: gzip"))
	if r.Status != 503 {
		t.Errorf("a compressed upload that decodes to %d bytes holds %d bytes of a %d-byte budget; a second compressed request got %s, want 503",
			len(msg), s.budget.used.Load(), 4*max, r.StatusLine)
	}
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
	held.send(string(gz[len(gz)-20:]))
	want{200, 0, "1", "", ""}.check(t, held.read())
	waitFor(t, "the budget to be released", func() bool { return s.budget.used.Load() == 0 })
}

// Compressed bodies that fail: on the decoded bytes, where the failure is
// met.
func TestCompressedRefusals(t *testing.T) {
	_, addr := serve(t, Config{})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"` + strings.Repeat("abcdefgh", 4000) + `"}}`)
	bombJSON := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`), bytes.Repeat([]byte("a"), 3<<20)...)
	gz := gzipped(t, msg)

	corrupt := bytes.Clone(gz)
	for i := len(corrupt) / 3; i < len(corrupt)/3+16; i++ {
		corrupt[i] ^= 0x5a
	}
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-8] ^= 0xff
	badHeader := bytes.Clone(gz)
	badHeader[0] = 0
	trailing := append(bytes.Clone(gz), "garbage"...)
	truncated := gz[:len(gz)-10]
	zcorrupt := zstded(t, msg)
	zcorrupt = zcorrupt[:len(zcorrupt)-20]

	cases := []struct {
		name   string
		coding string
		body   []byte
		want   want
	}{
		{"gzip bomb", "gzip", gzipped(t, bombJSON), want{413, -32600, "null", "", ""}},
		{"zstd bomb", "zstd", zstded(t, bombJSON), want{413, -32600, "null", "", ""}},
		{"deflate bomb", "deflate", zlibbed(t, bombJSON), want{413, -32600, "null", "", ""}},
		{"gzip of spaces", "gzip", gzipped(t, bytes.Repeat([]byte(" "), 3<<20)), want{413, -32600, "null", "", ""}},
		{"corrupt gzip", "gzip", corrupt, want{400, -32700, "null", "", ""}},
		{"gzip checksum", "gzip", badCRC, want{400, -32700, "null", "", ""}},
		{"gzip header", "gzip", badHeader, want{400, -32700, "null", "", ""}},
		{"gzip trailing bytes", "gzip", trailing, want{400, -32700, "null", "", ""}},
		{"gzip truncated", "gzip", truncated, want{400, -32700, "null", "", ""}},
		{"zstd truncated", "zstd", zcorrupt, want{400, -32700, "null", "", ""}},
		{"not gzip at all", "gzip", msg, want{400, -32700, "null", "", ""}},
		{"gzip of a batch", "gzip", gzipped(t, []byte(`[`+string(msg)+`]`)), want{400, -32600, "null", "", ""}},
		{"gzip of bad JSON", "gzip", gzipped(t, []byte(`{"a":[1,}`)), want{400, -32700, "null", "", ""}},
		{"gzip of a syntax error before corruption", "gzip", append(gzipped(t, []byte(`{"a":[1,}`+strings.Repeat("x", 100000)))[:200], 1, 2, 3), want{400, -32700, "null", "", ""}},
		{"gzip of an envelope error", "gzip", gzipped(t, []byte(`{"id":5,"method":"echo"}`)), want{400, -32600, "5", "", ""}},
		{"empty gzip body", "gzip", nil, want{400, -32700, "null", "", ""}},
		{"gzip of nothing", "gzip", gzipped(t, nil), want{400, -32700, "null", "", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			c.send(post(pathRPC, "", "Content-Encoding: "+tc.coding, "Content-Length: "+strconv.Itoa(len(tc.body))))
			done := c.sendAsync(tc.body, true)
			r := c.read()
			tc.want.check(t, r)
			<-done
		})
	}
}

// The wire ceiling applies to compressed bytes too: a compressed body
// whose wire bytes pass the ceiling is 413 even when it would decode
// small (no such compressor exists, so: random bytes that gzip cannot
// shrink, declared chunked so row 5 does not answer first).
func TestCompressedWireCeiling(t *testing.T) {
	_, addr := serve(t, Config{MaxBodyBytes: 64 << 10})
	noise := make([]byte, 200<<10)
	x := uint32(1)
	for i := range noise {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		noise[i] = 'a' + byte(x%26)
	}
	body := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`), noise...)
	gz := gzipped(t, body)
	c := dial(t, addr)
	c.send(post(pathRPC, "", "Content-Encoding: gzip", "Transfer-Encoding: chunked"))
	done := c.sendAsync([]byte(chunk(string(gz[:1000]), string(gz[1000:]))), true)
	want{413, -32600, "null", "", ""}.check(t, c.read())
	c.expectClosed()
	<-done
}

// §3: Expect: 100-continue. Rows 1 to 5 refuse from the headers with 417
// and the body is never sent; otherwise 100 Continue, then the answer.
func TestExpectContinue(t *testing.T) {
	_, addr := serve(t, Config{})
	expect := "Expect: 100-continue"
	headersOnly := func(raw string) string {
		i := strings.Index(raw, "\r\n\r\n")
		return raw[:i+4]
	}
	t.Run("allowed", func(t *testing.T) {
		c := dial(t, addr)
		c.send(headersOnly(post(pathRPC, valid, expect)))
		r := c.read()
		if r.Status != 100 {
			t.Fatalf("%s, want 100 Continue", r.StatusLine)
		}
		c.send(valid)
		want{200, 0, "7", `{"a":1}`, ""}.check(t, c.read())
		c.expectOpen()
	})
	t.Run("allowed, chunked", func(t *testing.T) {
		c := dial(t, addr)
		c.send(headersOnly(post(pathRPC, "", expect, "Transfer-Encoding: chunked")))
		if r := c.read(); r.Status != 100 {
			t.Fatalf("%s, want 100 Continue", r.StatusLine)
		}
		c.send(chunk(valid[:5], valid[5:]))
		want{200, 0, "7", `{"a":1}`, ""}.check(t, c.read())
	})
	t.Run("allowed, refused later by the body", func(t *testing.T) {
		c := dial(t, addr)
		c.send(headersOnly(post(pathRPC, "[1]", expect)))
		if r := c.read(); r.Status != 100 {
			t.Fatalf("%s, want 100 Continue", r.StatusLine)
		}
		c.send("[1]")
		want{400, -32600, "null", "", ""}.check(t, c.read())
	})
	refused := []struct {
		name string
		raw  string
	}{
		{"1/origin", post(pathRPC, valid, expect, "Origin: http://evil.example")},
		{"1/origin, query", post(pathRPC+"?x=1", valid, expect, "Origin: http://evil.example")},
		{"1/origin, escaped path", post("/%72pc", valid, expect, "Origin: http://evil.example")},
		{"3/content type", post(pathRPC, valid, expect, "Content-Type: text/plain")},
		{"4/content encoding", post(pathRPC, valid, expect, "Content-Encoding: br")},
		{"4/three codings", post(pathRPC, valid, expect, "Content-Encoding: gzip, gzip, gzip")},
		{"5/content length", post(pathRPC, valid, expect, "Content-Length: 5000000")},
		{"5/content length on /jr", post(pathJR, valid, expect, "Content-Length: 5000000")},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.send(headersOnly(tc.raw))
			r := c.read()
			if r.Status != 417 {
				t.Errorf("%s, want 417 Expectation Failed (body %s)", r.StatusLine, r.Body)
				if r.Status == 100 {
					// Finish the exchange so the test reports the answer.
					c.send(valid)
					if r2, err := c.tryRead(); err == nil {
						t.Logf("after sending the body: %s %s", r2.StatusLine, r2.Body)
					}
				}
				return
			}
			c.expectClosed()
		})
	}
	// Routing refuses these by method and path alone: the answer comes in
	// place of 100 Continue, and the body is never asked for.
	routed := []struct {
		name, raw string
		status    int
		allow     string
	}{
		{"404/unknown path", post("/nothing-here", valid, expect), 404, ""},
		{"404/unknown path, chunked", strings.Replace(post("/nothing-here", "", expect, "Transfer-Encoding: chunked"), "Content-Length: 0\r\n", "", 1), 404, ""},
		{"405/PUT on an endpoint", strings.Replace(post(pathRPC, valid, expect), "POST ", "PUT ", 1), 405, "POST, OPTIONS"},
		{"405/POST on a GET route", post("/healthz", valid, expect), 405, "GET, HEAD"},
	}
	for _, tc := range routed {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.send(headersOnly(tc.raw))
			r := c.read()
			if r.Status != tc.status {
				t.Fatalf("%s, want %d in place of 100 Continue", r.StatusLine, tc.status)
			}
			if got := r.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			c.expectClosed()
		})
	}
	t.Run("an endpoint's Other and its methods", func(t *testing.T) {
		// Other answers GET and DELETE (as MCP's sessions do): PUT gets
		// 405 in place of 100 Continue, GET 100 Continue and Other's
		// answer. With OtherMethods nil every method goes to Other.
		for _, methods := range [][]string{{"GET", "DELETE"}, nil} {
			eps := testEndpoints(nil)
			eps[0].OtherMethods = methods
			eps[0].Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
				if !ctx.IsGet() && !ctx.IsDelete() {
					return false
				}
				ctx.SetStatusCode(fasthttp.StatusNoContent)
				return true
			}
			_, addr := serve(t, Config{}, eps...)
			for _, tc := range []struct {
				method string
				first  int
			}{{"PUT", 405}, {"PATCH", 405}, {"GET", 100}, {"DELETE", 100}} {
				if methods == nil && tc.first == 405 {
					tc.first = 100 // offered to Other, which refuses it after the body
				}
				c := dial(t, addr)
				c.send(headersOnly(strings.Replace(post(pathRPC, "xy", expect), "POST ", tc.method+" ", 1)))
				r := c.read()
				if netHTTP && tc.first == 100 && (r.Status == 204 || r.Status == 405) {
					continue // net/http sends 100 Continue only when the body is read
				}
				if r.Status != tc.first {
					t.Fatalf("OtherMethods %v, %s with Expect: %s, want %d", methods, tc.method, r.StatusLine, tc.first)
				}
				if r.Status == 405 {
					if got := r.Header.Get("Allow"); got != "POST, OPTIONS" {
						t.Errorf("%s: Allow %q", tc.method, got)
					}
					continue
				}
				c.send("xy")
				want := 204
				if tc.method != "GET" && tc.method != "DELETE" {
					want = 405
				}
				if r := c.read(); r.Status != want {
					t.Errorf("OtherMethods %v, %s: %s after the body, want %d", methods, tc.method, r.StatusLine, want)
				}
			}
		}
	})
	t.Run("GET route with a body", func(t *testing.T) {
		// A handler of its own decides: 100 Continue as before.
		fasthttpOnly(t, "net/http answers a handler that does not read the body without 100 Continue")
		c := dial(t, addr)
		c.send(headersOnly(strings.Replace(post("/healthz", "xy", expect), "POST ", "GET ", 1)))
		if r := c.read(); r.Status != 100 {
			t.Fatalf("%s, want 100 Continue", r.StatusLine)
		}
		c.send("xy")
		if r := c.read(); r.Status != 200 {
			t.Fatalf("%s, want 200", r.StatusLine)
		}
	})
}

// TestEarlyAnswerDate: an answer written on the hijacked connection (an
// early refusal, its body still on the way) carries Date like every
// answer fasthttp writes (RFC 9110 §6.6.1), and so does the bare 404 or
// 405 of the net/http bridge.
func TestEarlyAnswerDate(t *testing.T) {
	_, addr := serve(t, Config{DrainTimeout: 100 * time.Millisecond})
	for _, raw := range []string{
		post(pathRPC, valid, "Origin: http://evil.example"),
		post(pathRPC, valid, "Content-Type: text/plain"),
	} {
		c := dial(t, addr)
		c.send(raw[:len(raw)-len(valid)+1]) // the body is not all there
		r := c.read()
		if r.Status != 403 && r.Status != 415 {
			t.Fatalf("%s, want an early refusal", r.StatusLine)
		}
		d, err := http.ParseTime(r.Header.Get("Date"))
		if err != nil || time.Since(d) > time.Minute || time.Until(d) > time.Minute {
			t.Errorf("%s: Date %q (%v), want the time now", r.StatusLine, r.Header.Get("Date"), err)
		}
	}
}

// TestAnswersNameTheServer: every answer names the server and carries
// Date, whichever transport wrote it (found by review on 2026-12-05:
// net/http's answers through the pipeline had no Server field).
func TestAnswersNameTheServer(t *testing.T) {
	_, addr := serve(t, Config{})
	for _, raw := range []string{
		post(pathRPC, valid), // 200
		post(pathRPC, `{"jsonrpc":"2.0","id":7,"method":"nope"}`), // 404 / -32601
		post(pathRPC, `{"a":`),                                                      // 400 / -32700
		post(pathRPC, valid, "Content-Type: text/plain"),                            // 415
		strings.Replace(post(pathRPC, "", "Content-Length: 0"), "POST ", "PUT ", 1), // 405
		request("GET", "/healthz", ""),                                              // a GET route
	} {
		c := dial(t, addr)
		c.send(raw)
		r := c.read()
		if got := r.Header.Get("Server"); got != "rpcedge" {
			t.Errorf("%s: Server %q, want rpcedge", r.StatusLine, got)
		}
		if _, err := http.ParseTime(r.Header.Get("Date")); err != nil {
			t.Errorf("%s: Date %q: %v", r.StatusLine, r.Header.Get("Date"), err)
		}
	}
}

// TestOptionsAsterisk: OPTIONS * is answered by the server's routing on
// both transports (net/http's built-in handler answered it 200, bypassing
// the pipeline and its metrics; found by review on 2026-12-05).
func TestOptionsAsterisk(t *testing.T) {
	_, addr := serve(t, Config{})
	c := dial(t, addr)
	c.send("OPTIONS * HTTP/1.1\r\nHost: test.example\r\n\r\n")
	if r := c.read(); r.Status != 404 {
		t.Errorf("OPTIONS *: %s, want 404", r.StatusLine)
	}
}
