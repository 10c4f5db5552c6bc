package fastserver

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// goneMethods: "block" tells started, then waits for its context to end
// (at most 30 s) and sends the context's error on causes; "nap" answers
// its params after napFor, whatever its context; "echo" answers its
// params at once.
func goneMethods(napFor time.Duration) (*Methods, <-chan struct{}, <-chan error) {
	var ms Methods
	started := make(chan struct{}, 8)
	causes := make(chan error, 8)
	ms.HandleFunc("block", func(r *Request, dst []byte) ([]byte, error) {
		started <- struct{}{}
		select {
		case <-r.Context().Done():
			causes <- r.Context().Err()
		case <-time.After(30 * time.Second):
			causes <- nil
		}
		return append(dst, "null"...), nil
	})
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, r.Msg.Params...), nil
	})
	ms.HandleFunc("nap", func(r *Request, dst []byte) ([]byte, error) {
		started <- struct{}{}
		time.Sleep(napFor)
		causes <- r.Context().Err()
		return append(dst, r.Msg.Params...), nil
	})
	return &ms, started, causes
}

// goneEndpoint serves ms with a Check that asks for ErrClientGone
// (Request.GoneCancels), as mcp's does under 2026-07-28.
func goneEndpoint(ms *Methods) *Endpoint {
	ep := ms.Endpoint(pathRPC, decode.IDsJSONRPC)
	ep.Check = func(r *Request) *Error {
		r.GoneCancels = true
		return nil
	}
	return ep
}

// Without GoneCancels, a handler whose client leaves runs on (MCP
// 2025-xx: a disconnect is not a cancellation; an A2A agent's work).
func TestHandlerClientGoneNotAsked(t *testing.T) {
	t.Parallel()
	ms, started, causes := goneMethods(0)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	c.send(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block"}`, rand.IntN(1<<20))))
	select {
	case <-started:
	case <-time.After(ioTimeout):
		t.Fatal("the handler did not start")
	}
	c.c.Close()
	select {
	case cause := <-causes:
		t.Fatalf("the handler's context ended with %v though Check did not ask", cause)
	case <-time.After(2*goneEvery + time.Second):
	}
	if n := s.metrics.clientGone.Get(); n != 0 {
		t.Fatalf("rpcedge_handlers_client_gone_total %d", n)
	}
}

// A client that closes its connection (a FIN, or a reset) while the
// handler of its request runs — a plain JSON answer, no stream — has the
// handler's context ended with ErrClientGone once the handler has run
// goneEvery, and within goneEvery of leaving after that, when Check asked
// for it (Request.GoneCancels); it is counted
// in rpcedge_handlers_client_gone_total, and the request is accounted as
// answered. Until 2026-12-07 such a handler ran on to its deadline (MCP
// 2026-07-28: a client disconnect is the request's cancellation).
func TestHandlerClientGone(t *testing.T) {
	t.Parallel()
	ms, started, causes := goneMethods(0)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	gone0 := s.metrics.clientGone.Get()
	for i, reset := range []bool{false, true} {
		c := dial(t, addr)
		c.send(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block","params":{"n":%d}}`, rand.IntN(1<<20), i)))
		select {
		case <-started:
		case <-time.After(ioTimeout):
			t.Fatal("the handler did not start")
		}
		if i == 1 {
			// The second leaves after its handler has run past the
			// first look: told within goneEvery of leaving.
			time.Sleep(goneEvery + goneEvery/2)
		}
		left := time.Now()
		if reset {
			c.c.SetLinger(0)
		}
		c.c.Close()
		select {
		case cause := <-causes:
			if !errors.Is(cause, ErrClientGone) {
				t.Fatalf("reset %v: the handler's context ended with %v, want ErrClientGone", reset, cause)
			}
			if took := time.Since(left); took > 2*goneEvery+time.Second {
				t.Errorf("reset %v: the handler learned %v after its client left", reset, took)
			}
			t.Logf("reset %v: told %v after the client left", reset, time.Since(left).Round(time.Millisecond))
		case <-time.After(2*goneEvery + 3*time.Second):
			t.Fatalf("reset %v: the handler still runs %v after its client left", reset, 2*goneEvery+3*time.Second)
		}
	}
	for deadline := time.Now().Add(ioTimeout); ; time.Sleep(5 * time.Millisecond) {
		st := s.Stats()
		if st.Entered == st.Answered && s.metrics.clientGone.Get()-gone0 == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, rpcedge_handlers_client_gone_total +%d, want all answered and +2", st, s.metrics.clientGone.Get()-gone0)
		}
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	exposition, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(exposition), "\nrpcedge_handlers_client_gone_total 2\n") {
		t.Errorf("metrics:\n%s", exposition)
	}
}

// A client that stays while a handler runs past several looks — a
// request pipelined behind it included — is not taken for gone: both
// answers come, the handler's context never ended.
func TestHandlerClientStays(t *testing.T) {
	t.Parallel()
	nap := goneEvery*2 + goneEvery/2
	ms, started, causes := goneMethods(nap)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	gone0 := s.metrics.clientGone.Get()
	c := dial(t, addr)
	a, b := rand.IntN(1<<20), rand.IntN(1<<20)
	c.send(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"nap","params":{"a":%d}}`, a)))
	<-started
	c.send(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"b":%d}}`, b)))
	if netHTTP {
		// net/http reads a pipelined request only after the answer
		// before it: nothing to see behind the first.
		t.Log("net/http: the pipelined request waits in the socket")
	}
	c.c.SetReadDeadline(time.Now().Add(nap + ioTimeout))
	for i, want := range []string{fmt.Sprintf(`{"a":%d}`, a), fmt.Sprintf(`{"b":%d}`, b)} {
		hr, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		raw, err := io.ReadAll(hr.Body)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		body := string(raw)
		if hr.StatusCode != 200 || !strings.Contains(body, `"result":`+want) {
			t.Fatalf("answer %d: %d %s", i+1, hr.StatusCode, body)
		}
	}
	if cause := <-causes; cause != nil {
		t.Fatalf("the napping handler's context ended: %v", cause)
	}
	if n := s.metrics.clientGone.Get() - gone0; n != 0 {
		t.Fatalf("rpcedge_handlers_client_gone_total +%d for a client that stayed", n)
	}
}

// A streamed answer's handler whose client leaves is told ErrStreamClosed
// by the peer watch, as before: the watchdog leaves streams alone.
func TestHandlerClientGoneStreamUnchanged(t *testing.T) {
	t.Parallel()
	ms, causes := waitMethods()
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	startWait(t, c)
	time.Sleep(goneEvery + goneEvery/2) // past the watchdog's first look
	c.c.Close()
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrStreamClosed) {
			t.Fatalf("the stream's handler: %v, want ErrStreamClosed", cause)
		}
	case <-time.After(2*goneEvery + 3*time.Second):
		t.Fatal("the stream's handler was not told")
	}
	if n := s.metrics.clientGone.Get(); n != 0 {
		t.Errorf("rpcedge_handlers_client_gone_total %d for a stream", n)
	}
}
