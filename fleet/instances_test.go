package fleet

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/services"
)

// An instance started while Redis is down cannot count the fleet: it
// assumes Options.Instances, so that a fleet of four started without
// Redis allows the limit once, not four times (found by review on
// 2026-12-06: each such instance took N = 1 and allowed all of it).
// Once Redis answers, the heartbeats' count replaces the assumption.
func TestInstancesBeforeRedis(t *testing.T) {
	r := services.StartRedis(t)
	r.Kill()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct{ instances, size, admitted int }{
		{0, 1, 40}, {1, 1, 40}, {4, 4, 10}, {40, 40, 1},
	} {
		f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "ib:", Instances: tc.instances, Logger: quiet,
			ProbeInterval: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if f.Up() || f.Size() != tc.size {
			t.Errorf("Instances %d, Redis down: up %v, size %d; want down, %d", tc.instances, f.Up(), f.Size(), tc.size)
		}
		l, err := f.Limiter(LimiterOptions{Rate: 1, Burst: 40}) // 1/s: the loop below sees the burst alone
		if err != nil {
			t.Fatal(err)
		}
		key := netip.MustParseAddr("192.0.2.9")
		ok := 0
		for range 60 {
			if l.Take(key) == 0 {
				ok++
			}
		}
		// The share's burst, 40/N; one more when a second passed.
		if ok < tc.admitted || ok > tc.admitted+1 {
			t.Errorf("Instances %d, Redis down: %d of 60 admitted, want the share's burst %d", tc.instances, ok, tc.admitted)
		}
		l.Close()
		f.Close()
	}
	if _, err := New(Options{URL: r.URL(), Instances: -1}); err == nil {
		t.Error("Instances -1 accepted")
	}

	// Redis answers: its count (this instance alone) replaces the
	// assumption.
	r.Restart()
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "ib2:", Instances: 4, Logger: quiet,
		ProbeInterval: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitUp(t, f)
	deadline := time.Now().Add(3 * time.Second)
	for f.Size() != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if f.Size() != 1 {
		t.Errorf("up, alone: size %d, want the heartbeats' 1", f.Size())
	}
}
