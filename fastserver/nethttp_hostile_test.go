package fastserver

// The net/http transport against a hostile or careless client, over
// HTTP/1.1 and HTTP/2 (TLS, ALPN h2).

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveNet serves eps (the test endpoints when none) with ServeNetHTTP on
// a loopback port until the test ends, over TLS when h2 (ALPN h2), and
// returns the server, a client for it (HTTP/2 when h2) and the base URL.
func serveNet(t *testing.T, cfg Config, h2 bool, eps ...*Endpoint) (*Server, *http.Client, string) {
	t.Helper()
	scheme := "http://"
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: ioTimeout}).DialContext}
	if h2 {
		certFile, keyFile := writeCert(t, t.TempDir(), 1)
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		tr.ForceAttemptHTTP2 = true
		scheme = "https://"
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	if len(eps) == 0 {
		eps = testEndpoints(nil)
	}
	s, err := New(cfg, eps...)
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	done := make(chan error, 1)
	go func() { done <- s.ServeNetHTTP(ln) }()
	serveDone.Store(s, done)
	t.Cleanup(func() { stopServer(t, s) })
	t.Cleanup(tr.CloseIdleConnections)
	return s, &http.Client{Transport: tr, Timeout: 2 * ioTimeout}, scheme + ln.Addr().String()
}

func protoName(h2 bool) string {
	if h2 {
		return "HTTP/2"
	}
	return "HTTP/1.1"
}

// netPost posts body and returns the answer's proto, status and body.
func netPost(t *testing.T, c *http.Client, url, body string, hdr ...string) (string, int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("POST %.60s: %v", body, err)
		return "", 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("POST %.60s: reading the answer: %v", body, err)
	}
	return resp.Proto, resp.StatusCode, b
}

// net/http's WriteTimeout runs from the end of the request's header
// section (over HTTP/2 from the stream's start), across the body and the
// handler. The write timeout is the answer's own, as over fasthttp: a
// handler that takes longer than it, within its own deadline, is
// answered, and so is one that passes its deadline (row 18) when the
// deadline is longer than the write timeout (by default both are 10 s,
// so the 500 came after the write deadline and was lost: a closed
// connection over HTTP/1.1, a reset stream over HTTP/2).
func TestNetHTTPAnswerAfterWriteTimeout(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(protoName(h2), func(t *testing.T) {
			_, c, base := serveNet(t, Config{WriteTimeout: 300 * time.Millisecond, HandlerTimeout: 700 * time.Millisecond}, h2)
			proto, st, body := netPost(t, c, base+pathRPC, `{"jsonrpc":"2.0","id":1,"method":"sleepms","params":{"ms":500}}`)
			if st != 200 || string(body) != `{"jsonrpc":"2.0","id":1,"result":"slept"}` {
				t.Errorf("%s a handler slower than the write timeout: %d %s", proto, st, body)
			}
			proto, st, body = netPost(t, c, base+pathRPC, `{"jsonrpc":"2.0","id":2,"method":"sleepctx"}`)
			if st != 500 || !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,`)) {
				t.Errorf("%s the handler deadline passed: %d %s", proto, st, body)
			}
		})
	}
}

// Over HTTP/2 a passing write deadline resets the stream even with no
// write under way: a streamed answer quiet for longer than the write
// timeout between two events (a handler working on after a progress
// notification) must still get its final response.
func TestNetHTTPQuietStream(t *testing.T) {
	var ms Methods
	ms.HandleFunc("quiet", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`)); err != nil {
				return dst, err
			}
			time.Sleep(700 * time.Millisecond)
			return append(dst, `"done"`...), nil
		}))
	})
	for _, h2 := range []bool{false, true} {
		t.Run(protoName(h2), func(t *testing.T) {
			_, c, base := serveNet(t, Config{WriteTimeout: 300 * time.Millisecond}, h2, ms.Endpoint(pathJR, 0))
			proto, st, body := netPost(t, c, base+pathJR, `{"jsonrpc":"2.0","id":1,"method":"quiet"}`, "Accept", "application/json, text/event-stream")
			want := "data: {\"jsonrpc\":\"2.0\",\"method\":\"tick\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"done\"}\n\n"
			if st != 200 || string(body) != want {
				t.Errorf("%s: %d %q, want %q", proto, st, body, want)
			}
		})
	}
}

// A client that never reads a large answer holds its handler no longer
// than the write timeout of the http.Server that HTTPHandler is mounted
// on.
func TestNetHTTPUnreadAnswer(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(protoName(h2), func(t *testing.T) {
			s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			active := 0
			h := s.HTTPHandler()
			hs := &http.Server{WriteTimeout: 300 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				active++
				mu.Unlock()
				defer func() {
					mu.Lock()
					active--
					mu.Unlock()
				}()
				h.ServeHTTP(w, r)
			})}
			ln := listen(t)
			tr := &http.Transport{}
			url := "http://" + ln.Addr().String() + pathRPC
			if h2 {
				certFile, keyFile := writeCert(t, t.TempDir(), 1)
				go hs.ServeTLS(ln, certFile, keyFile)
				tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
				tr.ForceAttemptHTTP2 = true
				url = "https://" + ln.Addr().String() + pathRPC
			} else {
				go hs.Serve(ln)
			}
			t.Cleanup(func() {
				tr.CloseIdleConnections()
				hs.Close()
			})
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"big","params":{"n":20000000}}`))
			req.Header.Set("Accept-Encoding", "identity")
			resp, err := (&http.Client{Transport: tr, Timeout: 2 * ioTimeout}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ProtoMajor != 1+btoi(h2) {
				t.Errorf("served over %s", resp.Proto)
			}
			waitFor(t, "the unread answer to be given up", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return active == 0
			})
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Over HTTP/2 many streams share one connection: the in-flight body
// budget (row 6) holds across them while their bodies arrive slowly, a
// stream that finds no room is answered 503 while its body still
// streams, and a stream the client resets mid-body (RST_STREAM) gives its
// share back. A body without a length is cut at ceiling + 1 decoded
// bytes, 413.
func TestNetHTTPH2StreamsBudget(t *testing.T) {
	const ceiling = 64 << 10
	s, c, base := serveNet(t, Config{MaxBodyBytes: ceiling, InflightBodyBytes: 2 * ceiling, BudgetWait: 300 * time.Millisecond}, true)
	pre := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`
	suf := `"}}`
	for _, extra := range []int{0, 1} {
		body := pre + strings.Repeat("x", ceiling-len(pre)-len(suf)+extra) + suf
		req, _ := http.NewRequest("POST", base+pathRPC, io.MultiReader(strings.NewReader(body))) // no length
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := 200
		if extra > 0 {
			want = 413
		}
		if resp.ProtoMajor != 2 || resp.StatusCode != want {
			t.Errorf("a body of ceiling%+d bytes without a length: %s %d %.80s", extra, resp.Proto, resp.StatusCode, b)
		}
	}

	const streams, sent = 6, 48 << 10 // each holds more than a third of the budget
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var pws []*io.PipeWriter
	for range streams {
		pr, pw := io.Pipe()
		pws = append(pws, pw)
		go func() {
			pw.Write([]byte(pre))
			for range sent >> 10 {
				if _, err := pw.Write(bytes.Repeat([]byte("y"), 1<<10)); err != nil {
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
			// then stalls, the stream open
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "POST", base+pathRPC, pr)
			resp, err := c.Do(req)
			st := 0 // reset by the client
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				st = resp.StatusCode
			}
			mu.Lock()
			statuses[st]++
			mu.Unlock()
		}()
	}
	waitFor(t, "the streams that found no room to be answered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return statuses[503] >= streams-2
	})
	if used := s.budget.used.Load(); used > 2*ceiling {
		t.Errorf("the budget holds %d bytes, more than its %d", used, 2*ceiling)
	}
	cancel() // RST_STREAM on the streams still sending
	for _, pw := range pws {
		pw.CloseWithError(io.ErrClosedPipe)
	}
	wg.Wait()
	waitFor(t, "the reset streams' budget to come back", func() bool { return s.budget.used.Load() == 0 })
	waitFor(t, "every accepted request to end", func() bool { st := s.Stats(); return st.Entered == st.Answered })
	if statuses[503] < streams-2 || statuses[0]+statuses[503] != streams {
		t.Errorf("statuses %v: want %d or more 503 and the rest reset", statuses, streams-2)
	}
	if _, st, body := netPost(t, c, base+pathRPC, `{"jsonrpc":"2.0","id":9,"method":"echo"}`); st != 200 {
		t.Errorf("after the resets: %d %s", st, body)
	}
}
