package fleet

import (
	"errors"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/services"
)

// TestProbeAfterQuickRedown: a Fleet marked down again right after its
// probe found Redis (a flapping Redis or network) probes again, however
// the two interleave: it never stays down with Redis up and no probe
// running. (Found by review on 2026-12-05: a markDown between the probe's
// last look at its state and its exit started no probe, and nothing
// tried Redis again.) The interleaving is a race: each round gives it a
// chance, and the test fails only if a Fleet stays down.
func TestProbeAfterQuickRedown(t *testing.T) {
	r := services.StartRedis(t)
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "probe:", ProbeInterval: time.Millisecond, Heartbeat: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 4}))})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitUp(t, f)
	end := time.Now().Add(10 * time.Second)
	rounds := 0
	for ; rounds < 1500 && time.Now().Before(end); rounds++ {
		f.markDown(errors.New("a call failed and so did its PING"))
		for deadline := time.Now().Add(2 * time.Second); !f.Up() && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		if !f.Up() {
			t.Fatalf("round %d: Redis is up, yet the Fleet stayed down 2 s (probing %v)", rounds, f.probing.Load())
		}
	}
	t.Logf("%d rounds", rounds)
}
