package fastserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// moreStreamMethods serves the Stream methods made for protocols whose
// stream is a series of responses (SendResult, Start), and the controls of
// long streams (Cut, Stopping, SetDeadline):
//
//	results {"n":N}: N responses {"i":k}, then the result {"last":N}.
//	one     starts the stream and returns {"only":true}: one event.
//	cutme   sends one response, waits until the client has read it
//	        (signalled on read), then cuts the stream.
//	linger  moves its deadline 1 s past the handler timeout, sends one
//	        response, then waits for the server to stop and returns
//	        {"stopped":true}, or for its context.
func moreStreamMethods(read <-chan struct{}, done *atomic.Int64) *Methods {
	var ms Methods
	stream := func(f func(st *Stream, dst []byte) ([]byte, error)) func(r *Request, dst []byte) ([]byte, error) {
		return func(r *Request, dst []byte) ([]byte, error) {
			return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
				defer done.Add(1)
				return f(st, dst)
			}))
		}
	}
	ms.HandleFunc("results", stream(func(st *Stream, dst []byte) ([]byte, error) {
		v, _ := decode.Lookup(st.Request().Msg.Params, "n")
		var n int
		fmt.Sscan(string(v), &n)
		for i := range n {
			if err := st.SendResult(fmt.Appendf(nil, `{"i":%d}`, i)); err != nil {
				return dst, err
			}
		}
		return fmt.Appendf(dst, `{"last":%d}`, n), nil
	}))
	ms.HandleFunc("one", stream(func(st *Stream, dst []byte) ([]byte, error) {
		if err := st.Start(); err != nil {
			return dst, err
		}
		return append(dst, `{"only":true}`...), nil
	}))
	ms.HandleFunc("cutme", stream(func(st *Stream, dst []byte) ([]byte, error) {
		if err := st.SendResult([]byte(`{"first":1}`)); err != nil {
			return dst, err
		}
		<-read
		st.Cut()
		if err := st.SendResult([]byte(`{"after":1}`)); err != ErrStreamClosed {
			return dst, fmt.Errorf("send after Cut: %v", err)
		}
		<-st.Context().Done()
		return append(dst, `{"never":"written"}`...), nil
	}))
	ms.HandleFunc("linger", stream(func(st *Stream, dst []byte) ([]byte, error) {
		st.SetDeadline(time.Now().Add(time.Second + 200*time.Millisecond))
		if err := st.SendResult([]byte(`{"open":true}`)); err != nil {
			return dst, err
		}
		select {
		case <-st.Stopping():
			return append(dst, `{"stopped":true}`...), nil
		case <-st.Context().Done():
			return dst, st.Context().Err()
		}
	}))
	return &ms
}

func TestStreamSendResultAndStart(t *testing.T) {
	var done atomic.Int64
	_, addr := serve(t, Config{}, moreStreamMethods(nil, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	for _, n := range []int{0, 2, 7} {
		id := fmt.Sprintf(`"r%d"`, n*3+1)
		r := c.do(post("/rpc", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"results","params":{"n":%d}}`, id, n), acceptSSE))
		if n == 0 {
			// Nothing sent: a plain answer.
			if r.Header.Get("Content-Type") != "application/json" || string(r.Body) != `{"jsonrpc":"2.0","id":`+id+`,"result":{"last":0}}` {
				t.Errorf("n=0: %q %s", r.Header.Get("Content-Type"), r.Body)
			}
			continue
		}
		evs := sseEvents(t, r.Body)
		if r.Header.Get("Content-Type") != "text/event-stream" || len(evs) != n+1 {
			t.Fatalf("n=%d: %q %q", n, r.Header.Get("Content-Type"), evs)
		}
		for i := range n {
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"i":%d}}`, id, i); evs[i] != want {
				t.Errorf("event %d = %s, want %s", i, evs[i], want)
			}
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"last":%d}}`, id, n); evs[n] != want {
			t.Errorf("final event %s, want %s", evs[n], want)
		}
	}
	// Start without an event: a stream of exactly the result.
	r := c.do(post("/rpc", `{"jsonrpc":"2.0","id":42,"method":"one"}`, acceptSSE))
	evs := sseEvents(t, r.Body)
	if r.Header.Get("Content-Type") != "text/event-stream" || len(evs) != 1 || evs[0] != `{"jsonrpc":"2.0","id":42,"result":{"only":true}}` {
		t.Errorf("one: %q %q", r.Header.Get("Content-Type"), r.Body)
	}
	// Refused streams: Start fails with the reason, answered as JSON.
	r = c.do(post("/rpc", `{"jsonrpc":"2.0","id":43,"method":"one"}`, "Accept: application/json"))
	if r.Status != 500 || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("one without text/event-stream: %d %s", r.Status, r.Body)
	}
}

// Cut drops the stream at once: the final response is not written, the
// connection is closed, the handler is stopped and the request counted.
func TestStreamCut(t *testing.T) {
	read := make(chan struct{})
	var done atomic.Int64
	s, addr := serve(t, Config{}, moreStreamMethods(read, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":"c","method":"cutme"}`, acceptSSE))
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(hr.Body)
	line, _ := br.ReadString('\n')
	if strings.TrimSpace(line) != `data: {"jsonrpc":"2.0","id":"c","result":{"first":1}}` {
		t.Fatalf("first event %q", line)
	}
	close(read)
	rest, err := io.ReadAll(br)
	if err == nil || strings.Contains(string(rest), "never") {
		t.Errorf("after Cut: %q, %v: want the connection cut without the final event", rest, err)
	}
	waitFor(t, "the cut stream released", func() bool {
		st := s.Stats()
		return done.Load() == 1 && st.Entered == st.Answered && s.streams.Load() == 0
	})
}

// SetDeadline lets a stream outlast the handler timeout; Stopping lets it
// end with a last event of its own at Shutdown, before the grace period.
func TestStreamDeadlineAndStopping(t *testing.T) {
	var done atomic.Int64
	s, addr := serveNoCleanup(t, Config{HandlerTimeout: 300 * time.Millisecond, ShutdownGrace: 5 * time.Second}, moreStreamMethods(nil, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":9,"method":"linger"}`, acceptSSE))
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // past the handler timeout: still open
	if done.Load() != 0 {
		t.Fatal("the stream ended at the handler timeout despite SetDeadline")
	}
	start := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	body, _ := io.ReadAll(hr.Body)
	evs := sseEvents(t, body)
	if len(evs) != 2 || evs[1] != `{"jsonrpc":"2.0","id":9,"result":{"stopped":true}}` {
		t.Errorf("events %q", evs)
	}
	if err := <-stopped; err != nil || time.Since(start) > 3*time.Second {
		t.Errorf("Shutdown: %v after %v", err, time.Since(start))
	}

	// Without Shutdown, the moved deadline ends it.
	_, addr2 := serve(t, Config{HandlerTimeout: 300 * time.Millisecond}, moreStreamMethods(nil, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	r := roundTrip(t, addr2, post("/rpc", `{"jsonrpc":"2.0","id":10,"method":"linger"}`, acceptSSE))
	evs = sseEvents(t, r.Body)
	if len(evs) != 2 || !strings.Contains(evs[1], "deadline exceeded") {
		t.Errorf("at the moved deadline: %q", evs)
	}

}
