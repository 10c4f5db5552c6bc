package reliability

// Shared fixtures: servers on loopback, a raw HTTP/1.1 client that sees
// the wire, memory and goroutine probes.

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
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/app"
)

// ioTimeout bounds every read and write of a test client that is not
// itself the subject of a timeout.
const ioTimeout = 5 * time.Second

const (
	kib = 1 << 10
	mib = 1 << 20
)

// netHTTP says the tests serve through net/http rather than fasthttp
// (RPCEDGE_TRANSPORT=nethttp; .ci/run runs the suite both ways): the
// in-process servers with ServeNetHTTP, the binary with -transport nethttp.
var netHTTP = os.Getenv("RPCEDGE_TRANSPORT") == "nethttp"

// quietLogger discards the server's logs.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// testConfig is the server configuration of these tests: the contract's
// limits, with timeouts short enough for tests.
func testConfig() fastserver.Config {
	return fastserver.Config{
		Addr:          "127.0.0.1:0",
		ReadTimeout:   2 * time.Second,
		WriteTimeout:  2 * time.Second,
		IdleTimeout:   5 * time.Second,
		ShutdownGrace: 2 * time.Second,
		DrainTimeout:  200 * time.Millisecond,
		Logger:        quietLogger,
	}
}

// server is a server under test on a loopback port.
type server struct {
	addr string
	s    *fastserver.Server
	stop func() // shuts the server down and waits; idempotent
}

// startApp serves the demo server (what cmd/rpcedge serves) on a
// loopback port and stops it when the test ends.
func startApp(t testing.TB, cfg fastserver.Config) *server {
	t.Helper()
	a, err := app.New(app.Options{Server: cfg})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	return serveOn(t, a.Server())
}

// startServer serves endpoints with fastserver on a loopback port.
func startServer(t testing.TB, cfg fastserver.Config, eps ...*fastserver.Endpoint) *server {
	t.Helper()
	s, err := fastserver.New(cfg, eps...)
	if err != nil {
		t.Fatalf("fastserver.New: %v", err)
	}
	return serveOn(t, s)
}

func serveOn(t testing.TB, s *fastserver.Server) *server {
	t.Helper()
	g0 := runtime.NumGoroutine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	done := make(chan error, 1)
	if netHTTP {
		go func() { done <- s.ServeNetHTTP(ln) }()
	} else {
		go func() { done <- s.Serve(ln) }()
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.Shutdown(ctx)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("server did not stop within 5 s")
			}
			// Let the connections' goroutines end, so that the next test
			// measures its own memory and goroutines only.
			waitGoroutines(g0+goroutineSlack, 5*time.Second)
		})
	}
	t.Cleanup(stop)
	return &server{addr: ln.Addr().String(), s: s, stop: stop}
}

// needFiles raises the soft limit on open files to the hard limit and
// skips the test when it is still below need.
func needFiles(t testing.TB, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("RLIMIT_NOFILE unreadable: %v", err)
	}
	if lim.Cur < need && lim.Max > lim.Cur {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	if lim.Cur < need {
		t.Skipf("needs %d open files; RLIMIT_NOFILE is %d (hard %d): raise it (ulimit -n) to run this test", need, lim.Cur, lim.Max)
	}
}

// --- raw HTTP/1.1 -----------------------------------------------------

// request returns a raw HTTP/1.1 request. hdr are "Name: value" lines;
// a Content-Length is added unless hdr sets one or Transfer-Encoding.
func request(method, path string, body []byte, hdr ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n", method, path)
	framed := false
	for _, h := range hdr {
		low := strings.ToLower(h)
		if strings.HasPrefix(low, "content-length:") || strings.HasPrefix(low, "transfer-encoding:") {
			framed = true
		}
		b.WriteString(h)
		b.WriteString("\r\n")
	}
	if !framed && (method == "POST" || len(body) > 0) {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// post returns a raw POST of a JSON body.
func post(path string, body []byte, hdr ...string) []byte {
	return request("POST", path, body, append([]string{"Content-Type: application/json"}, hdr...)...)
}

// chunked frames pieces as a chunked body, with the last chunk.
func chunked(pieces ...[]byte) []byte {
	var b bytes.Buffer
	for _, p := range pieces {
		if len(p) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%x\r\n", len(p))
		b.Write(p)
		b.WriteString("\r\n")
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// conn is a raw client connection.
type conn struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, br: bufio.NewReader(c)}
}

// send writes raw bytes.
func (c *conn) send(raw []byte) {
	c.t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := c.c.Write(raw); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// resp is an HTTP answer.
type resp struct {
	status int
	header http.Header
	body   []byte
	close  bool // Connection: close
}

// read reads one answer within ioTimeout.
func (c *conn) read() *resp {
	c.t.Helper()
	r, err := c.tryRead(ioTimeout)
	if err != nil {
		c.t.Fatalf("reading the answer: %v", err)
	}
	return r
}

func (c *conn) tryRead(d time.Duration) (*resp, error) {
	c.c.SetReadDeadline(time.Now().Add(d))
	return readResp(c.br)
}

func readResp(br *bufio.Reader) (*resp, error) {
	hr, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, fmt.Errorf("answer body: %w", err)
	}
	return &resp{status: hr.StatusCode, header: hr.Header, body: body, close: hr.Close}, nil
}

// do sends raw and reads the answer.
func (c *conn) do(raw []byte) *resp {
	c.t.Helper()
	c.send(raw)
	return c.read()
}

// expectClosed checks that the server closes the connection (EOF or a
// reset) within d, reading and discarding whatever comes first.
func (c *conn) expectClosed(d time.Duration) {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c.br)
	if isTimeout(err) {
		c.t.Fatalf("connection still open after %v", d)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// roundTrip sends raw on a new connection and reads the answer.
func roundTrip(t testing.TB, addr string, raw []byte) *resp {
	t.Helper()
	c := dial(t, addr)
	defer c.c.Close()
	return c.do(raw)
}

// rpcAnswer is a JSON-RPC answer.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// want is the expected answer: HTTP status, JSON-RPC code (0: a result)
// and id (as JSON; "" skips the check).
type want struct {
	status int
	code   int
	id     string
}

func (w want) check(t testing.TB, r *resp) rpcAnswer {
	t.Helper()
	if r.status != w.status {
		t.Fatalf("status %d, want %d; body %.300q", r.status, w.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %.300q", ct, r.body)
	}
	var a rpcAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("answer is not JSON: %v; %.300q", err, r.body)
	}
	if a.JSONRPC != "2.0" {
		t.Fatalf("jsonrpc %q in %.300q", a.JSONRPC, r.body)
	}
	switch {
	case w.code == 0 && (a.Error != nil || a.Result == nil):
		t.Fatalf("want a result, got %.300q", r.body)
	case w.code != 0 && a.Error == nil:
		t.Fatalf("want error %d, got %.300q", w.code, r.body)
	case w.code != 0 && a.Error.Code != w.code:
		t.Fatalf("error code %d, want %d; %.300q", a.Error.Code, w.code, r.body)
	}
	if w.id != "" && string(a.ID) != w.id {
		t.Fatalf("id %s, want %s", a.ID, w.id)
	}
	return a
}

// --- request bodies ---------------------------------------------------

// echoCall is an MCP tools/call of the demo tool echo (its text must be
// JSON-string content, already escaped).
func echoCall(id int, text string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) +
		`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`)
}

// echoText returns the text of an echo result.
func echoText(t testing.TB, a rpcAnswer) string {
	t.Helper()
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
	}
	if err := json.Unmarshal(a.Result, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("echo result %.200s: %v", a.Result, err)
	}
	return res.Content[0].Text
}

// --- memory and goroutines --------------------------------------------

// gc collects twice (sync.Pools are emptied over two cycles) and returns
// the heap in use.
func gc() uint64 {
	collect()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// collect runs two collections: objects freed by the first one's
// finalizers and sweeping are gone after the second.
func collect() {
	runtime.GC()
	runtime.GC()
}

// liveHeap collects twice and returns the bytes of live heap objects
// the last collection marked.
func liveHeap() uint64 {
	collect()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapPeaks are the two measures of the heap a heapSampler follows: what
// Stop returns are their peaks above the baseline.
type heapPeaks struct {
	// inUse is the heap in use (MemStats.HeapInuse: the spans holding
	// objects, live or garbage not yet swept, and their free slots). It
	// depends on when the collector runs: garbage stays in it until the
	// next cycle, and GOGC=100 lets the heap grow to twice the live data
	// first.
	inUse uint64
	// live is the live heap as of the last completed collection (the
	// bytes it marked): what the code under test retained, whenever the
	// collector runs, but for what a cycle marks live because it was
	// allocated while the cycle ran. It moves only when a cycle
	// completes: a sampler that saw none (a short attack on a small
	// heap) reports 0.
	live uint64
}

// heapMetrics are read with runtime/metrics, which unlike
// runtime.ReadMemStats does not stop the world: sampling every
// millisecond with ReadMemStats perturbed the pacing it measured.
var heapMetrics = []string{
	"/memory/classes/heap/objects:bytes", // live and unswept objects
	"/memory/classes/heap/unused:bytes",  // free slots in spans in use
	"/gc/heap/live:bytes",                // marked by the last cycle
}

// readHeap returns the heap in use (objects + unused, which is
// MemStats.HeapInuse) and the live heap the last collection marked.
func readHeap(s []metrics.Sample) (inUse, live uint64) {
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64(), s[2].Value.Uint64()
}

func newHeapSamples() []metrics.Sample {
	s := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	return s
}

// heapSampler records the peaks of the heap in use and of the live heap
// above a baseline taken after two collections, sampling every
// millisecond in a goroutine.
type heapSampler struct {
	base heapPeaks // the absolute values at the start
	peak heapPeaks // the absolute peaks, written by the goroutine
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	collect()
	s := newHeapSamples()
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.base.inUse, h.base.live = readHeap(s)
	h.peak = h.base
	go func() {
		defer close(h.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			inUse, live := readHeap(s)
			h.peak.inUse = max(h.peak.inUse, inUse)
			h.peak.live = max(h.peak.live, live)
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

// Stop ends sampling and returns the peaks above the baseline.
func (h *heapSampler) Stop() heapPeaks {
	close(h.stop)
	<-h.done
	inUse, live := readHeap(newHeapSamples())
	above := func(peak, base uint64) uint64 {
		if peak < base {
			return 0
		}
		return peak - base
	}
	return heapPeaks{
		inUse: above(max(h.peak.inUse, inUse), h.base.inUse),
		live:  above(max(h.peak.live, live), h.base.live),
	}
}

// goroutineSlack is the tolerance on goroutine counts: the test
// runtime's and the server's own goroutines (accept loop, worker-pool
// cleaner, timers) come and go.
const goroutineSlack = 10

func numGoroutines() int { return runtime.NumGoroutine() }

// waitGoroutines waits up to d for the goroutine count to fall to at
// most limit, and returns the last count and how long it took.
func waitGoroutines(limit int, d time.Duration) (int, time.Duration) {
	start := time.Now()
	for {
		n := runtime.NumGoroutine()
		if n <= limit || time.Since(start) > d {
			return n, time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// vmRSS returns the process's resident set size from /proc/self/status,
// after returning freed memory to the system.
func vmRSS(t testing.TB) uint64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			n, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				t.Fatalf("VmRSS line %q", line)
			}
			return n * 1024
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// percentile returns the p-th percentile (0..100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p/100+0.5) - 1
	i = min(max(i, 0), len(s)-1)
	return s[i]
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (a log sink).
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

// fmtBytes formats a byte count in KiB or MiB.
func fmtBytes(n uint64) string {
	if n >= mib {
		return fmt.Sprintf("%.2f MiB", float64(n)/mib)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/kib)
}

// netDial dials addr without a testing.TB (for client goroutines).
func netDial(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, ioTimeout) }

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// parseRPC decodes a JSON-RPC answer, without a testing.TB.
func parseRPC(r *resp) (rpcAnswer, error) {
	var a rpcAnswer
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		return a, fmt.Errorf("answer %d with Content-Type %q: %.200q", r.status, ct, r.body)
	}
	if err := json.Unmarshal(r.body, &a); err != nil {
		return a, fmt.Errorf("answer %d is not JSON: %v: %.200q", r.status, err, r.body)
	}
	if a.JSONRPC != "2.0" {
		return a, fmt.Errorf("answer %d without jsonrpc 2.0: %.200q", r.status, r.body)
	}
	return a, nil
}
