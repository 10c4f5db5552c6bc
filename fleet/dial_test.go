package fleet

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRedis accepts connections on loopback, records what each sends
// first, and answers its first line with answer (nothing when empty: a
// stopped Redis whose kernel still completes the handshake).
type fakeRedis struct {
	ln     net.Listener
	answer string
	mu     sync.Mutex
	first  []string
	conns  []net.Conn
}

func startFakeRedis(t *testing.T, answer string) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{ln: ln, answer: answer}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			go func() {
				buf := make([]byte, 64)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _ := io.ReadAtLeast(c, buf, 6)
				f.mu.Lock()
				f.first = append(f.first, string(buf[:n]))
				f.mu.Unlock()
				if f.answer != "" {
					c.Write([]byte(f.answer))
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
	})
	return f
}

func (f *fakeRedis) firsts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.first...)
}

// TestProbeDial: a connection is handed over only once the server
// answered the inline PING with one RESP line, success or error; a
// silent server fails the dial at the context's end; anything else fails
// it at once.
func TestProbeDial(t *testing.T) {
	dial := probeDial(nil)
	d := &net.Dialer{Timeout: 5 * time.Second}
	for _, tc := range []struct {
		answer string
		ok     bool
	}{
		{"+PONG\r\n", true},
		{"-NOAUTH Authentication required.\r\n", true},
		{"-NOPERM User u has no permissions to run the 'ping' command\r\n", true},
		{"HTTP/1.1 400 Bad Request\r\n", false},
		{"+PONG\r\n+PONG\r\n", false},
		{"$4\r\nPONG\r\n", false},
		{"+" + strings.Repeat("x", 300) + "\r\n", false},
	} {
		srv := startFakeRedis(t, tc.answer)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := dial(ctx, srv.ln.Addr().String(), d, nil)
		cancel()
		if tc.ok != (err == nil) {
			t.Errorf("answer %.40q: %v, want ok %v", tc.answer, err, tc.ok)
		}
		if c != nil {
			// The deadline is cleared: rueidis sets its own.
			c.SetReadDeadline(time.Time{})
			if _, err := c.Write([]byte("x")); err != nil {
				t.Errorf("answer %.40q: the connection handed over is not usable: %v", tc.answer, err)
			}
			c.Close()
		}
		if got := srv.firsts(); len(got) != 1 || got[0] != "PING\r\n" {
			t.Errorf("answer %.40q: the server got %q first, want an inline PING", tc.answer, got)
		}
	}
	// Silent: the dial fails at the context's end, not at the dialer's
	// timeout.
	srv := startFakeRedis(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	start := time.Now()
	c, err := dial(ctx, srv.ln.Addr().String(), d, nil)
	if took := time.Since(start); c != nil || !errors.Is(err, errSilent) || !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Errorf("silent server: %v after %v, want errSilent at the 80 ms deadline", err, took)
	}
	// Canceled without a deadline: the dialer's timeout does not hold it.
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel2)
	start = time.Now()
	if _, err := dial(ctx2, srv.ln.Addr().String(), d, nil); !errors.Is(err, errSilent) || time.Since(start) > 2*time.Second {
		t.Errorf("canceled: %v after %v", err, time.Since(start))
	}
}

// TestFleetProbesNewConnections: the fleet's client dials through the
// probe: a Redis that accepts and never answers leaves the fleet down
// after its start-up heartbeat, having been sent an inline PING, not a
// HELLO it would wait on.
func TestFleetProbesNewConnections(t *testing.T) {
	srv := startFakeRedis(t, "")
	start := time.Now()
	f, err := New(Options{URL: "redis://" + srv.ln.Addr().String() + "/0", Instance: "p", Logger: quiet(),
		Timeout: 80 * time.Millisecond, ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Up() {
		t.Fatal("up against a silent server")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("New took %v against a silent server", took)
	}
	got := srv.firsts()
	if len(got) == 0 {
		t.Fatal("no connection reached the server")
	}
	for _, s := range got {
		if s != "PING\r\n" {
			t.Errorf("a connection began with %q, want an inline PING", s)
		}
	}
}
