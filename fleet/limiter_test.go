package fleet

import (
	"bytes"
	"context"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/services"
)

func newLimiter(t *testing.T, f *Fleet, o LimiterOptions) *Limiter {
	t.Helper()
	l, err := f.Limiter(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// hammer calls Take for key on each limiter from g goroutines each, round
// robin over the limiters, for d; it returns how many were admitted.
func hammer(ls []*Limiter, key netip.Addr, g int, d time.Duration) (admitted, refused int64) {
	var ok, no atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for i := range g * len(ls) {
		l := ls[i%len(ls)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(end) && n < 5_000_000; n++ {
				if l.Take(key) == 0 {
					ok.Add(1)
				} else {
					no.Add(1)
					time.Sleep(200 * time.Microsecond) // a refused client backs off a little
				}
			}
		}()
	}
	wg.Wait()
	return ok.Load(), no.Load()
}

// Three instances, one client over them all: within the stated bound
// B + R·W + N·L, and not far below R·W (leases do not starve the client).
// Redis sees a few calls per second per instance, not one per request.
func TestLimiterFleetWide(t *testing.T) {
	r := services.StartRedis(t)
	const rate, burst = 200.0, 50
	const w = 3 * time.Second
	var ls []*Limiter
	for _, name := range []string{"a", "b", "c"} {
		f := newFleet(t, r, name, "fw:")
		ls = append(ls, newLimiter(t, f, LimiterOptions{Rate: rate, Burst: burst}))
	}
	key := netip.MustParseAddr("198.51.100.1")
	admitted, refused := hammer(ls, key, 2, w)
	bound := ls[0].Bound(3, w)
	t.Logf("admitted %d, refused %d over %v at %v/s burst %d: bound %.0f (R·W %.0f), L %d", admitted, refused, w, rate, burst, bound, rate*w.Seconds(), ls[0].MaxLease())
	if float64(admitted) > bound {
		t.Errorf("admitted %d > bound %.0f", admitted, bound)
	}
	if float64(admitted) < 0.85*rate*w.Seconds() {
		t.Errorf("admitted %d < 85%% of R·W %.0f: leases starve the client", admitted, rate*w.Seconds())
	}
	if refused == 0 {
		t.Errorf("nothing refused: the test did not exceed the limit")
	}
	var calls uint64
	for _, l := range ls {
		calls += l.calls.Get()
	}
	perInstance := float64(calls) / 3 / w.Seconds()
	t.Logf("lease calls: %d in all, %.1f per instance per second (requests: %d)", calls, perInstance, admitted+refused)
	if perInstance > 30 {
		t.Errorf("%.1f Redis calls per second per instance for one hot client: want a few", perInstance)
	}
	if calls*20 > uint64(admitted+refused) {
		t.Errorf("%d calls for %d requests: leases are not saving round trips", calls, admitted+refused)
	}
}

// One instance, exact enough: a burst then R per second.
func TestLimiterSingle(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "s:")
	l := newLimiter(t, f, LimiterOptions{Rate: 100, Burst: 20, MaxLease: 5})
	key := netip.MustParseAddr("2001:db8::")
	n := 0
	for l.Take(key) == 0 && n < 1000 {
		n++
	}
	if n < 20 || n > 20+5 {
		t.Errorf("burst: %d admitted at once, want 20 (+ at most L=5)", n)
	}
	wait := l.Take(key)
	if wait <= 0 || wait > time.Second {
		t.Errorf("refused with wait %v", wait)
	}
	// A second key is independent.
	if l.Take(netip.MustParseAddr("192.0.2.9")) != 0 {
		t.Error("another key refused")
	}
	if !strings.Contains(metricsText(f), `rpcedge_fleet_redis_up{instance="a"} 1`) {
		t.Errorf("metrics:\n%s", metricsText(f))
	}
}

// Tokens an idle instance holds go back to Redis: another instance then
// gets the whole burst.
func TestLimiterReturnsIdleTokens(t *testing.T) {
	r := services.StartRedis(t)
	a := newLimiter(t, newFleet(t, r, "a", "rt:"), LimiterOptions{Rate: 1, Burst: 40, MaxLease: 40, Lease: 100 * time.Millisecond})
	b := newLimiter(t, newFleet(t, r, "b", "rt:"), LimiterOptions{Rate: 1, Burst: 40, MaxLease: 40, Lease: 100 * time.Millisecond})
	key := netip.MustParseAddr("192.0.2.1")
	if a.Take(key) != 0 {
		t.Fatal("first take refused")
	}
	time.Sleep(50 * time.Millisecond) // the background refill of a
	a.mu.Lock()
	held := a.keys[key].tokens
	a.mu.Unlock()
	if held == 0 {
		t.Fatalf("a holds no lease")
	}
	time.Sleep(400 * time.Millisecond) // idle for more than a lease: given back
	got := 0
	for b.Take(key) == 0 && got < 100 {
		got++
	}
	if got < 39 {
		t.Errorf("b got %d of the burst of 40 after a went idle (a held %d): tokens not returned", got, held)
	}
	if a.returned.Get() == 0 {
		t.Error("returned tokens not counted")
	}
}

// Redis killed: per-instance fallback at R/N (N from the heartbeats),
// state logged once, gauge 0; Redis back: leases again, by themselves.
// Redis frozen: a Take costs at most the call timeout.
func TestLimiterRedisDown(t *testing.T) {
	r := services.StartRedis(t)
	var logs bytes.Buffer
	var logMu sync.Mutex
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "dn:", Logger: newLogger(&logs, &logMu),
		ProbeInterval: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Timeout: 80 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := newFleet(t, r, "b", "dn:") // a second instance: N = 2
	_ = g
	deadline := time.Now().Add(3 * time.Second)
	for f.Size() != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if f.Size() != 2 {
		t.Fatalf("fleet size %d, want 2", f.Size())
	}
	l := newLimiter(t, f, LimiterOptions{Rate: 10, Burst: 10})
	key := netip.MustParseAddr("192.0.2.7")
	if l.Take(key) != 0 {
		t.Fatal("refused while up")
	}
	r.Kill()
	// The per-instance share: burst 10/2 = 5, rate 5/s.
	ok := 0
	for range 50 {
		if l.Take(key) == 0 {
			ok++
		}
	}
	if f.Up() {
		t.Fatal("still up with Redis killed")
	}
	if ok < 4 || ok > 6 {
		t.Errorf("down: %d admitted of 50 at once, want the share's burst 5 (±1 for the request that found Redis gone)", ok)
	}
	if !strings.Contains(metricsText(f), `rpcedge_fleet_redis_up{instance="a"} 0`) {
		t.Errorf("gauge not 0")
	}
	for range 20 { // more failures: no more logs
		l.Take(netip.MustParseAddr("192.0.2.8"))
	}
	r.Restart()
	deadline = time.Now().Add(5 * time.Second)
	for !f.Up() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !f.Up() {
		t.Fatal("did not recover within 5 s of Redis returning")
	}
	if l.Take(netip.MustParseAddr("192.0.2.99")) != 0 {
		t.Error("refused after recovery")
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	// One line a change: up at the start, down, up again. A busy machine
	// may miss the 80 ms timeout once more while Redis is up, and log
	// one more down and up; a failure while down must log nothing.
	if d, u := strings.Count(text, "redis is down"), strings.Count(text, "redis is up"); d < 1 || d > 2 || u != d+1 {
		t.Errorf("logs: %d down, %d up lines, want 1 and 2 (start, recovery), or one change more each:\n%s", d, u, text)
	}

	// Frozen: calls time out; a Take costs at most about the timeout.
	if err := r.Proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer r.Proc.Signal(syscall.SIGCONT)
	start := time.Now()
	l.Take(netip.MustParseAddr("192.0.2.100"))
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("a Take against a frozen Redis took %v", el)
	}
	if f.Up() {
		t.Error("up while Redis is frozen")
	}
	r.Proc.Signal(syscall.SIGCONT)
	deadline = time.Now().Add(5 * time.Second)
	for !f.Up() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !f.Up() {
		t.Error("did not recover after SIGCONT")
	}
}

func TestLimiterOptions(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "o:")
	for _, o := range []LimiterOptions{{}, {Rate: -1}, {Rate: 1, Burst: -1}, {Rate: 2e6}, {Rate: 1, Name: "a:b"}, {Rate: 1, Name: strings.Repeat("n", 65)}} {
		if _, err := f.Limiter(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	l := newLimiter(t, f, LimiterOptions{Rate: 1000})
	if l.burst != 1000 || l.maxLease != 250 || l.lease != DefaultLease {
		t.Errorf("defaults: burst %d, L %d, lease %v", l.burst, l.maxLease, l.lease)
	}
	if b := l.Bound(3, 10*time.Second); b != 1000+10000+750 {
		t.Errorf("Bound = %v", b)
	}
	if _, err := New(Options{}); err == nil {
		t.Error("empty URL accepted")
	}
	if _, err := New(Options{URL: "http://x"}); err == nil {
		t.Error("a non-Redis URL accepted")
	}
	if got := redactURL("redis://u:secret@h:1/0"); got != "redis://***@h:1/0" {
		t.Errorf("redact: %s", got)
	}
}

// A Take served from a lease does not allocate.
func TestLimiterTakeAllocs(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "al:")
	l := newLimiter(t, f, LimiterOptions{Rate: 1e5, Burst: 1e6, MaxLease: 1e6, Lease: time.Hour})
	key := netip.MustParseAddr("192.0.2.1")
	for range 10 {
		l.Take(key)
	}
	time.Sleep(50 * time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() { l.Take(key) }); n != 0 {
		t.Errorf("Take allocates %v times per call", n)
	}
}

func metricsText(f *Fleet) string {
	var b bytes.Buffer
	f.WritePrometheus(&b)
	return b.String()
}

// BenchmarkTake: a Take served from a lease against the in-process
// LocalLimiter, one hot key, from parallel goroutines.
func BenchmarkTake(b *testing.B) {
	key := netip.MustParseAddr("192.0.2.1")
	b.Run("local", func(b *testing.B) {
		l := fastserver.NewLocalLimiter(1e9, 1e9, 1000)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Take(key)
			}
		})
	})
	b.Run("lease", func(b *testing.B) {
		r := services.StartRedis(b)
		f, err := New(Options{URL: r.URL(), Instance: "bench", Logger: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		l, err := f.Limiter(LimiterOptions{Rate: 1e6, Burst: 1e9})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Take(key)
			}
		})
		b.ReportMetric(float64(l.calls.Get())/float64(b.N)*1e6, "calls/Mop")
	})
}

// The fleet's size follows the heartbeats: a closed instance leaves it.
func TestFleetSize(t *testing.T) {
	r := services.StartRedis(t)
	a := newFleet(t, r, "a", "sz:")
	b := newFleet(t, r, "b", "sz:")
	deadline := time.Now().Add(3 * time.Second)
	for a.Size() != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if a.Size() != 2 || a.Instance() != "a" {
		t.Fatalf("size %d, want 2", a.Size())
	}
	b.Close()
	for a.Size() != 1 && time.Now().Before(deadline.Add(2*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	if a.Size() != 1 {
		t.Errorf("size %d after b left, want 1", a.Size())
	}
}

// TestLimiterHotKeyStaysFleetWide: one client hit by 16 concurrent
// requests on each of three instances, with Redis up all along: every
// decision is Redis's (none falls back to the per-instance share), and
// the fleet admits at most B + R·W + N·L. (Found by review on 2026-12-05:
// a Take whose refill's tokens went to other Takes of the key decided
// "Redis is down" and admitted through the fallback, 1,120 against a
// bound of 800.)
func TestLimiterHotKeyStaysFleetWide(t *testing.T) {
	r := services.StartRedis(t)
	const rate, burst = 200.0, 50
	const w = 2 * time.Second
	var ls []*Limiter
	var fs []*Fleet
	for _, name := range []string{"a", "b", "c"} {
		f := newFleet(t, r, name, "hot:")
		fs = append(fs, f)
		ls = append(ls, newLimiter(t, f, LimiterOptions{Rate: rate, Burst: burst}))
	}
	for deadline := time.Now().Add(3 * time.Second); fs[0].Size() != 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	key := netip.MustParseAddr("198.51.100.7")
	var ok atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(w)
	for i := range 3 * 16 {
		l := ls[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(end) && n < 1_000_000; n++ {
				if l.Take(key) == 0 {
					ok.Add(1)
				} else {
					time.Sleep(time.Millisecond) // a refused client backs off a little
				}
			}
		}()
	}
	wg.Wait()
	var fb uint64
	for _, l := range ls {
		fb += l.fallback.Get()
	}
	up := fs[0].Up() && fs[1].Up() && fs[2].Up()
	if bound := ls[0].Bound(3, w); float64(ok.Load()) > bound {
		t.Errorf("admitted %d over %v, bound %.0f", ok.Load(), w, bound)
	}
	if fb > 0 && up {
		t.Errorf("%d decisions made by the per-instance fallback while Redis was up", fb)
	}
	t.Logf("admitted %d over %v; fallback decisions %d", ok.Load(), w, fb)
}

// TestFrozenRedisRedial: Redis freezes just after the instance's
// connection was cut, so the next call dials again, and the new
// connection's handshake gets no answer. rueidis then closes that
// connection with a PING it waits a second for, past the call's context;
// a Take and a task call must still cost about the call timeout, not
// that second.
func TestFrozenRedisRedial(t *testing.T) {
	r := services.StartRedis(t)
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "fz:", Logger: quiet(),
		ProbeInterval: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Timeout: 80 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitUp(t, f)
	l := newLimiter(t, f, LimiterOptions{Rate: 10, Burst: 10})
	store, err := f.TaskStore(TaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if l.Take(netip.MustParseAddr("192.0.2.1")) != 0 {
			t.Fatal("refused while up")
		}
		if _, err := r.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the instance sees its connection closed
		if err := r.Proc.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		l.Take(netip.AddrFrom4([4]byte{192, 0, 2, byte(10 + round)}))
		took := time.Since(start)
		start = time.Now()
		_, serr := store.Exists(context.Background(), "t-"+strconv.Itoa(round))
		tookStore := time.Since(start)
		r.Proc.Signal(syscall.SIGCONT)
		if took > 500*time.Millisecond || tookStore > 500*time.Millisecond {
			t.Errorf("round %d: with Redis frozen, a Take took %v, a task lookup %v (%v); want about the 80 ms timeout", round, took, tookStore, serr)
		}
		waitUp(t, f)
	}
}

// TestLimiterOutageCharged: the other side of
// TestReviewHostileLimiterFlapDoubleBurst. While Redis does not answer
// (frozen here, so that it keeps its data), the per-instance share
// admits what is left of the client's budget; when Redis answers again,
// what the share admitted is charged to it, so the client finds no
// fresh burst there. Over the whole window the fleet stays within
// B + R·W + N·L. (Before the fix, the share started full and Redis's
// budget was as the outage found it: some 14 more admitted.)
func TestLimiterOutageCharged(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "oc:")
	l := newLimiter(t, f, LimiterOptions{Rate: 1, Burst: 20}) // L = 1
	key := netip.MustParseAddr("198.51.100.20")
	start := time.Now()
	admitted := 0
	for range 5 {
		if l.Take(key) == 0 {
			admitted++
		}
	}
	freeze(t, r.Proc)
	defer r.Proc.Signal(syscall.SIGCONT)
	for deadline := time.Now().Add(3 * time.Second); f.Up() && time.Now().Before(deadline); {
		l.Take(netip.MustParseAddr("198.51.100.21")) // a call that finds Redis frozen
	}
	if f.Up() {
		t.Fatal("Redis frozen, the fleet still up after 3 s")
	}
	down := 0
	for range 40 {
		if l.Take(key) == 0 {
			down++
		}
	}
	r.Proc.Signal(syscall.SIGCONT)
	waitUp(t, f)
	time.Sleep(3 * DefaultLease) // the sweep charges the share's admissions
	after := 0
	for range 40 {
		if l.Take(key) == 0 {
			after++
		}
	}
	admitted += down + after
	w := time.Since(start)
	bound := l.Bound(1, w)
	t.Logf("5 through Redis, %d by the share while down, %d after; %d in %v, bound %.1f; charged %d", down, after, admitted, w, bound, l.charged.Get())
	if down == 0 {
		t.Error("the share admitted nothing while Redis was down")
	}
	if float64(admitted) > bound {
		t.Errorf("%d admitted in %v, past the bound B + R·W + N·L = %.1f", admitted, w, bound)
	}
	if l.charged.Get() == 0 {
		t.Error("nothing charged to Redis")
	}
}
