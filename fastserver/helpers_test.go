package fastserver

// Shared fixtures of the end-to-end tests: a test endpoint with raw
// handlers for every row of the contract, a server on real loopback TCP,
// and a raw HTTP/1.1 client that sees the wire byte for byte.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rpcedge/rpcedge/decode"
)

// netHTTP says the tests serve through net/http (ServeNetHTTP) rather
// than fasthttp: RPCEDGE_TRANSPORT=nethttp go test ./fastserver/ runs the
// same table against the other transport (.ci/run does).
var netHTTP = os.Getenv("RPCEDGE_TRANSPORT") == "nethttp"

// fasthttpOnly skips a test of what only the fasthttp transport does
// (its framing parser, its hijacked early answers, its plain-text errors).
func fasthttpOnly(t testing.TB, why string) {
	t.Helper()
	if netHTTP {
		t.Skip("fasthttp transport only: " + why)
	}
}

// ioTimeout bounds every read and write of a test client: no test waits
// on the network longer than this.
const ioTimeout = 5 * time.Second

// quietLogger discards logs (a panicking handler logs its stack).
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// Test endpoints:
//
//	/rpc  MCP-like: ids string or integer; Check refuses X-Version: bad
//	      (row 11, -32022) and an X-Method that disagrees with the body
//	      (row 12, -32020, like MCP's Mcp-Method); method "refused" is
//	      refused outright (row 16); method "own" checks its own params.
//	/jr   plain JSON-RPC ids (string, number, null), Methods.Endpoint.
const (
	pathRPC = "/rpc"
	pathJR  = "/jr"
)

// Codes of the test endpoint's own refusals.
const (
	codeVersion  = -32022
	codeHeader   = -32020
	codeRefused  = -32004
	codeFail     = -32050
	codeConflict = -32051
)

// sleepyFor is how long the "sleep" handler sleeps, ignoring its context.
const sleepyFor = 400 * time.Millisecond

// testCounters counts handler calls, for tests that need to know a
// handler ran (or did not).
type testCounters struct {
	echo  atomic.Int64 // echo and nap calls
	ctxOK atomic.Int64 // sleepctx saw its context done
}

// testMethods registers the raw handlers the tests call.
func testMethods(cnt *testCounters) *Methods {
	var ms Methods
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		if cnt != nil {
			cnt.echo.Add(1)
		}
		if r.Msg.Params == nil {
			return append(dst, "null"...), nil
		}
		return append(dst, r.Msg.Params...), nil
	})
	ms.HandleFunc("nap", func(r *Request, dst []byte) ([]byte, error) {
		if cnt != nil {
			cnt.echo.Add(1)
		}
		time.Sleep(2 * time.Millisecond)
		return append(dst, r.Msg.Params...), nil
	})
	ms.HandleFunc("ctxinfo", func(r *Request, dst []byte) ([]byte, error) {
		// [milliseconds left before the deadline, whether Err is nil,
		// whether Done is still open]
		ctx := r.Context()
		dl, ok := ctx.Deadline()
		left := int64(-1)
		if ok {
			left = time.Until(dl).Milliseconds()
		}
		open := true
		select {
		case <-ctx.Done():
			open = false
		default:
		}
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, left, 10)
		dst = append(dst, ',')
		dst = strconv.AppendBool(dst, ctx.Err() == nil)
		dst = append(dst, ',')
		dst = strconv.AppendBool(dst, open)
		return append(dst, ']'), nil
	})
	ms.HandleFunc("version", func(r *Request, dst []byte) ([]byte, error) {
		return strconv.AppendInt(dst, int64(r.Version), 10), nil
	})
	ms.HandleFunc("method", func(r *Request, dst []byte) ([]byte, error) {
		return decode.AppendString(dst, r.Msg.Method), nil
	})
	ms.HandleFunc("big", func(r *Request, dst []byte) ([]byte, error) {
		// {"n": N}: a string result of N 'x' bytes (a compressible answer).
		v, _ := decode.Lookup(r.Msg.Params, "n")
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return dst, InvalidParams("n", "want an integer")
		}
		dst = append(dst, '"')
		dst = append(dst, strings.Repeat("x", n)...)
		return append(dst, '"'), nil
	})
	ms.HandleFunc("sleepctx", func(r *Request, dst []byte) ([]byte, error) {
		select {
		case <-r.Context().Done():
			if cnt != nil {
				cnt.ctxOK.Add(1)
			}
			return dst, r.Context().Err()
		case <-time.After(10 * time.Second):
			return append(dst, `"context never done"`...), nil
		}
	})
	ms.HandleFunc("sleep", func(r *Request, dst []byte) ([]byte, error) {
		time.Sleep(sleepyFor)
		return append(dst, `"slept"`...), nil
	})
	ms.HandleFunc("sleepms", func(r *Request, dst []byte) ([]byte, error) {
		// {"ms": N}: sleeps N milliseconds, ignoring the context.
		v, _ := decode.Lookup(r.Msg.Params, "ms")
		ms, _ := strconv.Atoi(string(v))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return append(dst, `"slept"`...), nil
	})
	ms.HandleFunc("panic", func(r *Request, dst []byte) ([]byte, error) {
		panic("test panic")
	})
	ms.HandleFunc("fail", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, "garbage"...), &Error{Code: codeFail, Message: "it failed", Data: []byte(`{"why":"test"}`)}
	})
	ms.HandleFunc("failstatus", func(r *Request, dst []byte) ([]byte, error) {
		return dst, &Error{Status: 409, Code: codeConflict, Message: "conflict"}
	})
	ms.HandleFunc("wrapped", func(r *Request, dst []byte) ([]byte, error) {
		return dst, fmt.Errorf("layer: %w", NewError(codeFail, "wrapped failure"))
	})
	ms.HandleFunc("plain", func(r *Request, dst []byte) ([]byte, error) {
		return dst, errors.New("disk on fire")
	})
	ms.HandleFunc("nothing", func(r *Request, dst []byte) ([]byte, error) {
		return dst, nil
	})
	return &ms
}

// testEndpoint is the /rpc endpoint: ms behind a Check and a Route of its own.
func testEndpoint(ms *Methods) *Endpoint {
	refused := &Error{Code: codeRefused, Message: "refused outright", Data: []byte(`{"method":"refused"}`)}
	own := HandlerFunc(func(r *Request, dst []byte) ([]byte, error) {
		// Owns rows 15 and 17: takes any params, answers their type.
		return decode.AppendString(dst, r.Msg.ParamsType.String()), nil
	})
	return &Endpoint{
		Path: pathRPC,
		IDs:  decode.IDsMCP,
		Check: func(r *Request) *Error {
			r.Version = 1
			if v := r.Header("X-Version"); v != nil {
				if string(v) != "1" && string(v) != "2" {
					data := append([]byte(`{"supported":["1","2"],"requested":`), decode.AppendString(nil, v)...)
					return &Error{Status: 400, Code: codeVersion, Message: "version not served", Data: append(data, '}')}
				}
				r.Version = int(v[0] - '0')
			}
			if m := r.Header("X-Method"); m != nil && string(m) != string(r.Msg.Method) {
				return &Error{Status: 400, Code: codeHeader, Message: "X-Method disagrees with the body"}
			}
			return nil
		},
		Route: func(r *Request) Route {
			switch string(r.Msg.Method) {
			case "refused":
				return Route{Refuse: refused, Label: "refused"}
			case "own":
				return Route{Handler: own, Label: "own", OwnParams: true}
			}
			return ms.Route(r.Msg.Method)
		},
		Labels: append(ms.Names(), "refused", "own"),
		Err:    ms.Err(),
	}
}

// testEndpoints returns /rpc and /jr over one set of methods.
func testEndpoints(cnt *testCounters) []*Endpoint {
	ms := testMethods(cnt)
	return []*Endpoint{testEndpoint(ms), ms.Endpoint(pathJR, decode.IDsJSONRPC)}
}

// serve starts a Server for eps (the test endpoints when none) on a
// loopback port and returns it with its address. The server is shut
// down when the test ends.
func serve(t testing.TB, cfg Config, eps ...*Endpoint) (*Server, string) {
	t.Helper()
	s, addr := serveNoCleanup(t, cfg, eps...)
	t.Cleanup(func() { stopServer(t, s) })
	return s, addr
}

// serveDone holds the channel each served Server's Serve returns on.
var serveDone sync.Map // *Server → chan error

// serveNoCleanup is serve for tests that shut the server down themselves
// (then call stopServer).
func serveNoCleanup(t testing.TB, cfg Config, eps ...*Endpoint) (*Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	if len(eps) == 0 {
		eps = testEndpoints(nil)
	}
	s, err := New(cfg, eps...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if netHTTP {
		go func() { done <- s.ServeNetHTTP(ln) }()
	} else {
		go func() { done <- s.Serve(ln) }()
	}
	serveDone.Store(s, done)
	return s, ln.Addr().String()
}

// memConn is a net.Conn over two buffers: ServeConn reads pipelined
// requests from r until it is empty and writes the answers to w.
type memConn struct {
	r bytes.Buffer
	w bytes.Buffer
}

var memAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

func (c *memConn) Read(p []byte) (int, error)         { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error)        { return c.w.Write(p) }
func (c *memConn) Close() error                       { return nil }
func (c *memConn) LocalAddr() net.Addr                { return memAddr }
func (c *memConn) RemoteAddr() net.Addr               { return memAddr }
func (c *memConn) SetDeadline(t time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { return nil }

// serveBuilt serves s, built and configured by the caller, on a loopback
// port until the test ends, and returns the address.
func serveBuilt(t testing.TB, s *Server) string {
	t.Helper()
	ln := listen(t)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	serveDone.Store(s, done)
	t.Cleanup(func() { stopServer(t, s) })
	return ln.Addr().String()
}

// stopServer shuts s down and checks that Serve returned nil.
func stopServer(t testing.TB, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	v, _ := serveDone.LoadAndDelete(s)
	done, _ := v.(chan error)
	if done == nil {
		return
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after Shutdown, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Serve did not return after Shutdown")
	}
}

// --- requests ---

// post returns a raw HTTP/1.1 POST of body to path. Defaults: Host,
// Content-Type: application/json and Content-Length. A header given in
// hdr ("Name: value") replaces the default of that name; "Name:" alone
// (nothing after the colon) removes it. "Transfer-Encoding: chunked"
// drops Content-Length, and the body is then sent as it is given
// (already framed, see chunk).
func post(path, body string, hdr ...string) string {
	return request("POST", path, body, hdr...)
}

func request(method, path, body string, hdr ...string) string {
	defaults := [][2]string{
		{"Host", "test.example"},
		{"Content-Type", "application/json"},
		{"Content-Length", strconv.Itoa(len(body))},
	}
	if method != "POST" {
		defaults = defaults[:1]
	}
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\n")
	given := map[string]bool{}
	chunked := false
	for _, h := range hdr {
		name, val, _ := strings.Cut(h, ":")
		given[strings.ToLower(name)] = true
		if strings.EqualFold(name, "Transfer-Encoding") {
			chunked = true
		}
		if strings.TrimSpace(val) == "" {
			continue
		}
		b.WriteString(h + "\r\n")
	}
	for _, d := range defaults {
		if given[strings.ToLower(d[0])] || (chunked && d[0] == "Content-Length") {
			continue
		}
		b.WriteString(d[0] + ": " + d[1] + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	return b.String()
}

// chunk frames pieces as a chunked body, with the terminating chunk.
func chunk(pieces ...string) string {
	var b strings.Builder
	for _, p := range pieces {
		if p == "" {
			continue
		}
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(p), p)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// --- a raw client ---

// conn is a raw HTTP/1.1 client connection.
type conn struct {
	t  testing.TB
	c  *net.TCPConn
	in *countingReader // what came from the server, counted
	br *bufio.Reader
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func newConn(t testing.TB, c net.Conn) *conn {
	in := &countingReader{r: c}
	return &conn{t: t, c: c.(*net.TCPConn), in: in, br: bufio.NewReaderSize(in, 64<<10)}
}

func dial(t testing.TB, addr string) *conn {
	t.Helper()
	return dialFrom(t, addr, nil)
}

// dialFrom dials from a given local address (any 127.x.y.z on Linux).
func dialFrom(t testing.TB, addr string, local net.Addr) *conn {
	t.Helper()
	d := net.Dialer{Timeout: ioTimeout, LocalAddr: local}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return newConn(t, c)
}

func (c *conn) send(raw string) {
	c.t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := io.WriteString(c.c, raw); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// sendAsync writes raw in the background (the server may stop reading
// it), ignoring errors; the returned channel is closed when done.
func (c *conn) sendAsync(raw []byte, closeWrite bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
		for len(raw) > 0 {
			n := min(len(raw), 32<<10)
			if _, err := c.c.Write(raw[:n]); err != nil {
				return
			}
			raw = raw[n:]
		}
		if closeWrite {
			c.c.CloseWrite()
		}
	}()
	return done
}

// resp is an HTTP answer as the wire carried it.
type resp struct {
	StatusLine string
	Status     int
	Header     http.Header
	Body       []byte
	// Close reports Connection: close (net/http takes that header out of
	// Header).
	Close bool
}

// read reads one response; it fails the test on a read error (a reset
// included: the answer must arrive whole).
func (c *conn) read() *resp {
	c.t.Helper()
	r, err := c.tryRead()
	if err != nil {
		c.t.Fatalf("reading the answer: %v", err)
	}
	return r
}

func (c *conn) tryRead() (*resp, error) { return c.tryReadFor("") }

// tryReadFor reads the answer to a request of the given method ("HEAD"
// answers have no body whatever their Content-Length).
func (c *conn) tryReadFor(method string) (*resp, error) {
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	var req *http.Request
	if method != "" {
		req = &http.Request{Method: method}
	}
	hr, err := http.ReadResponse(c.br, req)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return &resp{
		StatusLine: hr.Proto + " " + hr.Status,
		Status:     hr.StatusCode,
		Header:     hr.Header,
		Body:       body,
		Close:      hr.Close,
	}, nil
}

func (c *conn) do(raw string) *resp {
	c.t.Helper()
	c.send(raw)
	return c.read()
}

// expectClosed checks that the server closed the connection cleanly (a
// FIN, not a reset) after the answer, with nothing more sent.
func (c *conn) expectClosed() {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	n, err := c.br.Read(make([]byte, 512))
	switch {
	case n > 0:
		c.t.Errorf("after the answer the server sent %d more bytes", n)
	case errors.Is(err, io.EOF):
	case errors.Is(err, syscall.ECONNRESET):
		c.t.Errorf("the connection was reset after the answer, want a clean close")
	default:
		c.t.Errorf("the connection was not closed after the answer: %v", err)
	}
}

// expectGone checks that the server closed the connection after the
// answer, cleanly or with a reset: for the plain 503 past the connection
// cap, written and closed by the listener without reading (draining
// there would hold the accept loop).
func (c *conn) expectGone() {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	n, err := c.br.Read(make([]byte, 512))
	if n > 0 || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		c.t.Errorf("the connection was not closed after the answer: %d bytes, %v", n, err)
	}
}

// expectOpen checks that the connection still serves: an echo on it is
// answered 200.
func (c *conn) expectOpen() {
	c.t.Helper()
	r := c.do(post(pathRPC, `{"jsonrpc":"2.0","id":"again","method":"echo"}`))
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"id":"again"`)) {
		c.t.Errorf("the connection should serve on: %s %s", r.StatusLine, r.Body)
	}
}

// roundTrip sends raw on a new connection and reads the answer.
func roundTrip(t testing.TB, addr, raw string) *resp {
	t.Helper()
	return dial(t, addr).do(raw)
}

// --- answers ---

// rpcAnswer is a decoded JSON-RPC answer.
type rpcAnswer struct {
	ID     json.RawMessage
	Result json.RawMessage
	Code   int
	Msg    string
	Data   json.RawMessage
	IsErr  bool
}

// parseAnswer checks that body is one JSON-RPC answer object as the
// contract writes it ({"jsonrpc":"2.0","id":…,"result"|"error":…} and
// nothing else) and decodes it.
func parseAnswer(t testing.TB, body []byte) rpcAnswer {
	t.Helper()
	if !decode.Valid(body) {
		t.Fatalf("answer is not valid JSON: %q", body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("answer is not an object: %q", body)
	}
	var a rpcAnswer
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Errorf(`answer without "jsonrpc":"2.0": %s`, body)
	}
	id, ok := m["id"]
	if !ok {
		t.Errorf("answer without id: %s", body)
	}
	a.ID = id
	res, hasRes := m["result"]
	e, hasErr := m["error"]
	if hasRes == hasErr || len(m) != 3 {
		t.Errorf("answer must have exactly jsonrpc, id and one of result/error: %s", body)
	}
	a.Result = res
	if hasErr {
		a.IsErr = true
		var eo struct {
			Code    *int            `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(e, &eo); err != nil || eo.Code == nil || eo.Message == nil {
			t.Errorf("error object without code and message: %s", body)
		} else {
			a.Code, a.Msg, a.Data = *eo.Code, *eo.Message, eo.Data
		}
	}
	return a
}

// want is the expected answer of a POST.
type want struct {
	status int
	code   int    // 0: a result
	id     string // the id bytes; "" means no body (202)
	result string // the result bytes, when checked
	data   string // error.data bytes, when checked
}

// check compares r with w: status, Content-Type, the JSON-RPC code and
// the id bytes verbatim.
func (w want) check(t testing.TB, r *resp) {
	t.Helper()
	if r.Status != w.status {
		t.Errorf("status %q, want %d; body %s", r.StatusLine, w.status, r.Body)
	}
	if w.status == 202 {
		if cl := r.Header.Get("Content-Length"); len(r.Body) != 0 || (cl != "0" && cl != "") {
			t.Errorf("202 with a body %q", r.Body)
		}
		if _, ok := r.Header["Content-Type"]; ok {
			t.Errorf("202 with Content-Type %q, want none", r.Header.Get("Content-Type"))
		}
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	a := parseAnswer(t, r.Body)
	if string(a.ID) != w.id {
		t.Errorf("id %s, want %s (body %s)", a.ID, w.id, r.Body)
	}
	if w.code == 0 {
		if a.IsErr {
			t.Errorf("error %d %q, want a result", a.Code, a.Msg)
		}
		if w.result != "" && string(a.Result) != w.result {
			t.Errorf("result %s, want %s", a.Result, w.result)
		}
		return
	}
	if !a.IsErr || a.Code != w.code {
		t.Errorf("code %d (error %v), want %d; body %s", a.Code, a.IsErr, w.code, r.Body)
	}
	if w.data != "" && string(a.Data) != w.data {
		t.Errorf("data %s, want %s", a.Data, w.data)
	}
}

// listen returns a loopback listener, closed when the test ends.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// readHeader parses the request header of raw (a request line and header
// section), as the server would have received it.
func readHeader(tb testing.TB, raw string) *fasthttp.RequestHeader {
	tb.Helper()
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	return &h
}
