package fastserver

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// TestServeEventsClientGone: an event stream whose client closes its
// connection (a FIN, or a reset) between writes ends within goneEvery and
// gives back its stream slots and its client's, so that the client's next
// stream is admitted at once — not at the next keep-alive write, 15 s on,
// as before 2026-12-07; a stream whose client stays is not ended.
func TestServeEventsClientGone(t *testing.T) {
	var ms Methods
	ms.HandleFunc("x", func(r *Request, dst []byte) ([]byte, error) { return append(dst, "1"...), nil })
	ep := ms.Endpoint(pathRPC, decode.IDsJSONRPC)
	events := make(chan []byte) // never sends: every stream stays idle
	var done atomic.Int64
	ep.Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
		if !ctx.IsGet() {
			return false
		}
		s.ServeEvents(ctx, events, func() { done.Add(1) })
		return true
	}
	s, addr := serve(t, Config{MaxClientStreams: 1}, ep)
	get := "GET " + pathRPC + " HTTP/1.1\r\nHost: x\r\n\r\n"
	open := func(ip string) *conn {
		c := dialFrom(t, addr, from(ip))
		c.send(get)
		c.c.SetReadDeadline(time.Now().Add(ioTimeout))
		hr, err := http.ReadResponse(c.br, nil)
		if err != nil || hr.StatusCode != 200 {
			t.Fatalf("GET from %s: %v %v", ip, hr, err)
		}
		if line, err := bufio.NewReader(hr.Body).ReadString('\n'); err != nil || line != ": stream open\n" {
			t.Fatalf("GET from %s: first line %q %v", ip, line, err)
		}
		return c
	}
	stay := open("127.0.0.2")
	fin := open("127.0.0.3")
	rst := open("127.0.0.4")
	waitStreams(t, s, 3, 3)

	start := time.Now()
	fin.c.Close()
	rst.c.SetLinger(0) // Close sends a reset
	rst.c.Close()
	waitStreams(t, s, 1, 1)
	if took := time.Since(start); took > goneEvery+time.Second {
		t.Errorf("the gone clients' slots came back after %v, want within %v", took, goneEvery)
	}
	if done.Load() != 2 {
		t.Errorf("done called %d times, want 2 (the gone clients' streams)", done.Load())
	}
	// Their next streams are admitted (MaxClientStreams: 1).
	open("127.0.0.3")
	open("127.0.0.4")
	waitStreams(t, s, 3, 3)
	// The stream whose client stayed has been looked at and is still on.
	time.Sleep(goneEvery / 4)
	if s.streams.Load() != 3 {
		t.Errorf("%d streams held, want 3", s.streams.Load())
	}
	stay.c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var ne net.Error
	if _, err := stay.br.ReadByte(); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("the staying client's stream: %v, want it open and idle", err)
	}
}
