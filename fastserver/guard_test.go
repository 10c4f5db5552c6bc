package fastserver

// A panic anywhere in a request's path costs that request only: a test
// hook makes each stage panic in turn, and after each the server answers
// (500 / -32603, or a clean close when something was already written),
// serves a new connection, holds no request, no budget and no goroutine.

import (
	"bytes"
	"log/slog"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// panicAt makes the n-th entry (from 1) into stage st panic, once, until
// the test ends.
func panicAt(t *testing.T, st stage, n int) *atomic.Int32 {
	t.Helper()
	var seen, fired atomic.Int32
	hook := func(s stage) {
		if s != st {
			return
		}
		if int(seen.Add(1)) == n && fired.CompareAndSwap(0, 1) {
			panic("injected panic at " + st.String())
		}
	}
	testHookStage.Store(&hook)
	t.Cleanup(func() { testHookStage.Store(nil) })
	return &fired
}

// syncBuf is a log sink safe for concurrent use.
type syncBuf struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func newSyncBuf() *syncBuf { return &syncBuf{mu: make(chan struct{}, 1)} }

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.String()
}

func TestPanicAtEveryStage(t *testing.T) {
	valid := `{"jsonrpc":"2.0","id":"p-7","method":"echo","params":{"k":"v"}}`
	big := `{"jsonrpc":"2.0","id":9,"method":"big","params":{"n":4000}}`
	cases := []struct {
		st  stage
		n   int    // which entry into the stage panics
		raw string // the request
		// what comes back: a status and a JSON-RPC code (0: plain text),
		// the id of a JSON answer, or status 0 for a closed connection
		// without an answer.
		status int
		code   int
		id     string
	}{
		{stageRoute, 1, request("GET", "/healthz", ""), 500, 0, ""},
		{stageRoute, 1, request("OPTIONS", pathRPC, "", "Origin: http://localhost"), 500, 0, ""},
		{stageHeaders, 1, post(pathRPC, valid), 500, -32603, "null"},
		{stageHeaders, 1, "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\n\r\n", 500, -32603, "null"},
		{stageBody, 1, post(pathRPC, valid), 500, -32603, "null"},
		{stageBody, 1, post(pathRPC, chunk(valid[:10], valid[10:]), "Transfer-Encoding: chunked"), 500, -32603, "null"},
		{stageDecode, 1, post(pathRPC, valid), 500, -32603, "null"},
		{stageDecode, 1, post(pathRPC, string(gzipped(t, []byte(valid))), "Content-Encoding: gzip"), 500, -32603, "null"},
		{stageDispatch, 1, post(pathRPC, valid), 500, -32603, "null"},
		{stageHandler, 1, post(pathRPC, valid), 500, -32603, `"p-7"`},
		{stageAnswer, 1, post(pathRPC, valid), 500, -32603, "null"},
		{stageCompress, 1, post(pathRPC, big, "Accept-Encoding: gzip"), 500, -32603, "null"},
		{stageMetrics, 1, post(pathRPC, valid), 500, -32603, "null"},
		// An early answer (row 3 with the body pending): the panic before
		// the connection is taken answers 500 early itself; one in the
		// hijacked connection closes it.
		{stageEarly, 1, post(pathRPC, valid, "Content-Type: text/plain"), 500, -32603, "null"},
		{stageEarly, 2, post(pathRPC, valid, "Content-Type: text/plain"), 0, 0, ""},
		{stageExpect, 1, post(pathRPC, valid, "Expect: 100-continue"), 417, 0, ""},
		{stageError, 1, "GARBAGE\r\n\r\n", 500, 0, ""},
	}
	before := runtime.NumGoroutine()
	logs := newSyncBuf()
	s, addr := serveNoCleanup(t, Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), DrainTimeout: 100 * time.Millisecond})
	for _, tc := range cases {
		t.Run(tc.st.String()+"/"+strconv.Itoa(tc.n), func(t *testing.T) {
			if netHTTP && (tc.st == stageError || tc.st == stageEarly && tc.n == 2) {
				t.Skip("fasthttp transport only: its error handler and its hijacked early answers")
			}
			fired := panicAt(t, tc.st, tc.n)
			c := dial(t, addr)
			c.send(tc.raw)
			r, err := c.tryRead()
			if fired.Load() != 1 {
				t.Fatalf("the hook never fired at %s", tc.st)
			}
			switch {
			case tc.status == 0:
				if err == nil {
					t.Fatalf("answered %s %q, want the connection closed", r.StatusLine, r.Body)
				}
			case err != nil:
				t.Fatalf("no answer: %v", err)
			case r.Status != tc.status:
				t.Fatalf("answer %s %q, want %d", r.StatusLine, r.Body, tc.status)
			case tc.code != 0:
				a := parseAnswer(t, r.Body)
				if a.Code != tc.code || string(a.ID) != tc.id {
					t.Errorf("answer %s, want code %d, id %s", r.Body, tc.code, tc.id)
				}
			}
			if tc.status != 0 && tc.st != stageHandler {
				c.expectClosed()
			}
			testHookStage.Store(nil)
			// The server serves on, on a new connection.
			want{200, 0, `"next"`, `{"ok":true}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, `{"jsonrpc":"2.0","id":"next","method":"echo","params":{"ok":true}}`)))
			waitSettled(t, s)
			m := roundTrip(t, addr, request("GET", "/metrics", ""))
			series := regexp.MustCompile(`rpcedge_panics_total\{where="` + tc.st.String() + `"\} (\d+)`).FindSubmatch(m.Body)
			if series == nil {
				t.Fatalf("no rpcedge_panics_total series for %s", tc.st)
			}
			if n, _ := strconv.Atoi(string(series[1])); n < 1 {
				t.Errorf(`rpcedge_panics_total{where=%q} = %d, want ≥ 1`, tc.st, n)
			}
		})
	}
	out := logs.String()
	wantLogged := len(cases)
	if netHTTP {
		wantLogged -= 2
	}
	if n := strings.Count(out, "injected panic at"); n < wantLogged {
		t.Errorf("%d panics logged, want %d", n, wantLogged)
	}
	if !strings.Contains(out, "guard_test.go") {
		t.Errorf("the logs carry no stack")
	}
	stopServer(t, s)
	// No goroutine left: the server's, the hijacks' and the watchdog's
	// are gone (allow a moment for connections to wind down).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
