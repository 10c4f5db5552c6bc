//go:build linux && !race

package loadgen

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// slowConn delays every write: a server whose answers take d.
type slowConn struct {
	net.Conn
	d time.Duration
}

func (c slowConn) Write(p []byte) (int, error) {
	time.Sleep(c.d)
	return c.Conn.Write(p)
}

// slowEcho is rawEcho answering each request after d.
func slowEcho(t testing.TB, d time.Duration) string {
	t.Helper()
	return listenRaw(t, func(c net.Conn) { rawEchoConn(slowConn{c, d}) })
}

// TestSpin: with Config.Spin the epoll engine catches a fast server's
// answers while polling, stops polling by itself against a server slower
// than the spin, and never polls with Spin zero, in an open loop or in a
// SharedProcess run.
func TestSpin(t *testing.T) {
	if engineByName("epoll") == nil {
		t.Skip("no epoll engine in this build")
	}
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS ≥ 2: the engine's one loop holds its P while the server runs")
	}
	run := func(t *testing.T, cfg Config) *Report {
		t.Helper()
		cfg.Engine = "epoll"
		if cfg.Connections == 0 {
			cfg.Connections = 1
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rep, err := Run(ctx, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Wrong != 0 || rep.OK == 0 {
			t.Fatalf("ok %d, wrong %d: %+v", rep.OK, rep.Wrong, rep.Examples)
		}
		t.Logf("%d answers, spin %v: %+v", rep.Answers, cfg.Spin, rep.Waits)
		return rep
	}
	fast := rawEcho(t)

	t.Run("fast", func(t *testing.T) {
		// A spin far above a loopback round trip even on a loaded machine.
		rep := run(t, Config{URL: fast, Requests: 2000, Spin: 5 * time.Millisecond})
		w := rep.Waits
		if w.Caught < rep.Answers/2 {
			t.Errorf("%d of %d answers caught while polling, want most", w.Caught, rep.Answers)
		}
		if w.Spins < w.Caught || w.Spins+w.Blocked < rep.Answers {
			t.Errorf("waits %+v do not add up for %d answers", w, rep.Answers)
		}
		if rep.Config.SpinUS != 5000 {
			t.Errorf("report's spin_us %v, want 5000", rep.Config.SpinUS)
		}
		var text strings.Builder
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("  waits: %d polled for up to 5000µs (%d caught an answer), %d blocked\n", w.Spins, w.Caught, w.Blocked)
		if !strings.Contains(text.String(), line) {
			t.Errorf("text report lacks %q:\n%s", line, text.String())
		}
	})
	t.Run("slow", func(t *testing.T) {
		// Answers after 4 ms, spin 1 ms: the first waits poll in vain,
		// then the moving average of the waits passes the spin.
		rep := run(t, Config{URL: slowEcho(t, 4*time.Millisecond), Requests: 150, Spin: time.Millisecond})
		w := rep.Waits
		if w.Spins > 12 {
			t.Errorf("%d waits polled against a server slower than the spin, want a few at the start", w.Spins)
		}
		if w.Blocked < rep.Answers {
			t.Errorf("%d blocking waits for %d answers", w.Blocked, rep.Answers)
		}
	})
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"zero", Config{URL: fast, Requests: 300}},
		{"open loop", Config{URL: fast, Duration: 300 * time.Millisecond, Rate: 1000, Spin: time.Millisecond}},
		{"shared process", Config{URL: fast, Requests: 300, Spin: time.Millisecond, SharedProcess: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, tc.cfg)
			if rep.Waits != (Waits{}) {
				t.Errorf("waits %+v, want none counted", rep.Waits)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil || strings.Contains(text.String(), "waits:") {
				t.Errorf("text report (%v) names waits that did not poll:\n%s", err, text.String())
			}
		})
	}
}
