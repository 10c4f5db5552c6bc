package fastserver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln := listen(t)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// An armed connection holds its next write and sends it with the one
// after, in order; then it writes through again. Connections that are
// not plain TCP or Unix ones are never armed.
func TestHoldNext(t *testing.T) {
	srv, cli := tcpPair(t)
	c := &capConn{Conn: srv}
	first := bytes.Repeat([]byte("first "), writeBuffer/6+1)[:writeBuffer] // a full buffer
	second := []byte(strings.Repeat("second ", 3000))
	third := []byte("third")

	c.holdNext()
	if n, err := c.Write(first); n != len(first) || err != nil {
		t.Fatalf("held write: %d, %v", n, err)
	}
	cli.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var one [1]byte
	if n, err := cli.Read(one[:]); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the held write reached the peer: %d bytes, %v", n, err)
	}
	if n, err := c.Write(second); n != len(second) || err != nil {
		t.Fatalf("the write after: %d, %v", n, err)
	}
	if n, err := c.Write(third); n != len(third) || err != nil {
		t.Fatalf("the next write: %d, %v", n, err)
	}
	want := append(append(append([]byte(nil), first...), second...), third...)
	got := make([]byte, len(want))
	cli.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(cli, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the peer read %v, bytes in order: %v", err, bytes.Equal(got, want))
	}
	if c.hold != holdNone || c.held != nil {
		t.Errorf("after the writes: hold %d, held %v", c.hold, c.held != nil)
	}

	// A first write that is not a full buffer is not held, and disarms.
	for _, n := range []int{writeBuffer + 1, writeBuffer - 1, 300} {
		c.holdNext()
		other := bytes.Repeat([]byte("o"), n)
		if w, err := c.Write(other); w != n || err != nil || c.hold != holdNone {
			t.Fatalf("a first write of %d bytes: %d, %v, hold %d", n, w, err, c.hold)
		}
		got = make([]byte, n)
		if _, err := io.ReadFull(cli, got); err != nil || !bytes.Equal(got, other) {
			t.Fatalf("a first write of %d bytes did not go through: %v", n, err)
		}
	}

	// Armed again while a write is held (a pipelined answer's rest still
	// in fasthttp's buffer): what is held is kept, and goes out first.
	c.holdNext()
	c.Write(first)
	c.holdNext()
	if c.hold != holdFull {
		t.Fatalf("holdNext while holding: hold %d", c.hold)
	}
	if _, err := c.Write(third); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, len(first)+len(third))
	if _, err := io.ReadFull(cli, got); err != nil || !bytes.Equal(got, append(append([]byte(nil), first...), third...)) {
		t.Fatalf("holdNext while holding lost or reordered bytes: %v", err)
	}

	// Close gives back what it holds.
	c.holdNext()
	c.Write(first)
	c.Close()
	if c.held != nil || c.hold != holdNone {
		t.Error("Close kept the held write")
	}

	// Not a TCP or Unix connection: never armed.
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	pc := &capConn{Conn: p1}
	pc.holdNext()
	if pc.hold != holdNone {
		t.Error("a net.Pipe connection was armed")
	}
}

// Answers larger than the write buffer, alone, pipelined and mixed with
// small ones, arrive whole and in order on one connection; HEAD, 204 and
// 304 answers with large bodies set (whose bodies fasthttp does not send)
// leave nothing held for the next answer.
func TestLargeAnswersOneWrite(t *testing.T) {
	s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("g", 3*writeBuffer)
	if err := s.HandleGET("/big", func(ctx *fasthttp.RequestCtx) {
		if code, err := strconv.Atoi(string(ctx.QueryArgs().Peek("code"))); err == nil {
			ctx.SetStatusCode(code)
		}
		ctx.SetBodyString(big)
	}); err != nil {
		t.Fatal(err)
	}
	addr := serveBuilt(t, s)
	c := dial(t, addr)

	call := func(id, n int) (string, string) {
		text := strings.Repeat(strconv.Itoa(id%10), n)
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"echo","params":{"t":"` + text + `"}}`
		return post(pathRPC, body), text
	}
	check := func(r *resp, id int, text string) {
		t.Helper()
		want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{"t":"` + text + `"}}`
		if r.Status != 200 || string(r.Body) != want {
			t.Fatalf("answer %d: %s, %d bytes, want %d", id, r.StatusLine, len(r.Body), len(want))
		}
	}
	// Around the buffer's size (the rest of the answer kept by fasthttp's
	// writer until its flush, or written at once), and well over it.
	sizes := []int{10, writeBuffer - 300, writeBuffer - 60, writeBuffer, writeBuffer + 1000, 2*writeBuffer + 5, 300 << 10}
	for i, n := range sizes {
		raw, text := call(i, n)
		check(c.do(raw), i, text)
	}
	// Pipelined: every answer is written before the next request is read
	// only when none is buffered; held bytes wait for that flush.
	var all strings.Builder
	var texts []string
	for i, n := range sizes {
		raw, text := call(100+i, n)
		all.WriteString(raw)
		texts = append(texts, text)
	}
	c.send(all.String())
	for i := range sizes {
		check(c.read(), 100+i, texts[i])
	}
	// Bodies fasthttp does not send: nothing left held for the next.
	for _, q := range []string{"HEAD /big", "GET /big?code=204", "GET /big?code=304"} {
		method, target, _ := strings.Cut(q, " ")
		c.send(request(method, target, ""))
		r, err := c.tryReadFor(method)
		if err != nil || len(r.Body) != 0 {
			t.Fatalf("%s: %v, %d bytes of body", q, err, len(r.Body))
		}
		raw, text := call(200, 40)
		check(c.do(raw), 200, text)
	}
	if r := c.do(request("GET", "/big", "")); r.Status != 200 || string(r.Body) != big {
		t.Fatalf("GET /big: %s, %d bytes", r.StatusLine, len(r.Body))
	}
	// Pipelined small requests whose answers are between one and two
	// buffers: the rest of each stays in fasthttp's buffer while the next
	// request is served (its first write held meanwhile), and the next
	// answer, as large, must not replace what is held.
	for _, n := range []int{writeBuffer + 10, 20000, 2*writeBuffer - 500, 3 * writeBuffer} {
		var all strings.Builder
		for i := range 4 {
			all.WriteString(post(pathRPC, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"big","params":{"n":`+strconv.Itoa(n+i)+`}}`))
			all.WriteString(request("GET", "/big", ""))
		}
		c.send(all.String())
		for i := range 4 {
			want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"result":"` + strings.Repeat("x", n+i) + `"}`
			if r := c.read(); r.Status != 200 || string(r.Body) != want {
				t.Fatalf("pipelined, %d bytes: answer %d: %s, %d bytes", n, i, r.StatusLine, len(r.Body))
			}
			if r := c.read(); r.Status != 200 || string(r.Body) != big {
				t.Fatalf("pipelined, %d bytes: GET %d: %s, %d bytes", n, i, r.StatusLine, len(r.Body))
			}
		}
	}
	c.expectOpen()
}

// A route behind fasthttp.TimeoutHandler whose handler set a large body
// before its time ran out: fasthttp writes its small timeout answer
// instead, which must go out at once (it would be held for a next write
// that never comes if the large body had armed the connection).
func TestTimeoutAnswerNotHeld(t *testing.T) {
	s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	inner := func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString(strings.Repeat("y", 3*writeBuffer))
		<-release
	}
	if err := s.HandleGET("/slow", fasthttp.TimeoutHandler(inner, 50*time.Millisecond, "timed out")); err != nil {
		t.Fatal(err)
	}
	defer close(release)
	addr := serveBuilt(t, s)
	c := dial(t, addr)
	c.send(request("GET", "/slow", ""))
	c.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	r, err := c.tryReadFor("")
	if err != nil || r.Status != fasthttp.StatusRequestTimeout || string(r.Body) != "timed out" {
		t.Fatalf("the timeout answer: %v %+v", err, r)
	}
}
