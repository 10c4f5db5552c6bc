package fleet

// Failure modes a production fleet meets, from the review of 2026-12-06:
// each test failed before its fix.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// freeze stops redis-server (SIGSTOP) and waits until the kernel says it
// is stopped, so that nothing sent from now on is answered before thaw.
func freeze(t *testing.T, p *services.Proc) {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		// "pid (comm) S ...": the state follows the last ')'.
		if s := string(stat); strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not stop within 3 s of SIGSTOP")
		}
		time.Sleep(time.Millisecond)
	}
}

// outstanding returns how many tokens of the limiter's key the GCRA in
// Redis counts as taken and not given back (the limiter's rate is so low
// that none is earned back while a test runs).
func outstanding(t *testing.T, l *Limiter, key netip.Addr) float64 {
	t.Helper()
	c := l.f.client
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	tm, err := c.Do(ctx, c.B().Time().Build()).AsIntSlice()
	if err != nil || len(tm) != 2 {
		t.Fatalf("TIME: %v %v", tm, err)
	}
	now := tm[0]*1e6 + tm[1]
	tat, err := c.Do(ctx, c.B().Get().Key(l.redisKey(key)).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return math.Max(0, math.Round(float64(tat-now)/float64(l.period)))
}

// TestLimiterEvictedWhileWaiting: a Take of key A waits for A's refill;
// the refill lands, and before the waiting Take has the lock again a
// Take of a new key B, the table full (Clients 1), evicts A and queues
// its tokens to be given back. The waiting Take must not spend a token
// of the evicted entry: that token would be spent here and given back to
// Redis too (spent twice), and the rest would stay in an entry nobody
// gives back. What Redis counts as taken must be what was admitted.
func TestLimiterEvictedWhileWaiting(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ev1:")
	// 1000 s a token: Redis earns none back during the test.
	l, err := f.Limiter(LimiterOptions{Rate: 0.001, Burst: 20, MaxLease: 20, Lease: time.Hour, Clients: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	admitted := 0
	if l.Take(a) != 0 {
		t.Fatal("the first Take refused")
	}
	admitted++
	// A refill of A in flight that will bring the tokens A holds now.
	l.mu.Lock()
	e := l.keys[a]
	if e == nil || e.busy || e.tokens == 0 {
		l.mu.Unlock()
		t.Fatalf("after the first Take: %+v", e)
	}
	held := e.tokens
	e.tokens = 0
	l.startRefill(e)
	l.mu.Unlock()
	waits := l.waits.Get()
	got := make(chan time.Duration, 1)
	go func() { got <- l.Take(a) }()
	for deadline := time.Now().Add(3 * time.Second); l.waits.Get() == waits; {
		if time.Now().After(deadline) {
			t.Fatal("the second Take of A did not wait for the refill")
		}
		time.Sleep(time.Millisecond)
	}
	// The refill lands (refill's own last steps), and a Take of B takes
	// the lock first: a new key, the table full, A evicted.
	l.mu.Lock()
	e.tokens += held
	e.low = held / 2
	e.busy = false
	close(e.done)
	l.insert(b)
	l.mu.Unlock()
	select {
	case w := <-got:
		if w == 0 {
			admitted++
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting Take did not return")
	}
	l.Close() // gives back every unspent token
	if n := outstanding(t, l, a); n != float64(admitted) {
		t.Errorf("Redis counts %v tokens of A taken, %d were admitted (a token spent twice, or tokens stranded in an evicted entry)", n, admitted)
	}
}

// TestLimiterCloseWaitsForRefill: Close gives back every unspent token,
// also those of a key whose refill is in flight when Close is called
// (here: held up by a frozen Redis, shorter than the call timeout). The
// refill's grant must not land in a closed limiter, kept from the
// client for nothing until Redis earns it back.
func TestLimiterCloseWaitsForRefill(t *testing.T) {
	r := services.StartRedis(t)
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "cw:", Logger: quiet(),
		ProbeInterval: 50 * time.Millisecond, Heartbeat: time.Hour, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitUp(t, f)
	l, err := f.Limiter(LimiterOptions{Rate: 0.001, Burst: 20, MaxLease: 20, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	key := netip.MustParseAddr("192.0.2.3")
	admitted := 0
	// Spend down to the refill mark, Redis answering.
	for {
		l.mu.Lock()
		e := l.keys[key]
		low := e != nil && e.tokens > 0 && e.tokens-1 <= e.low
		l.mu.Unlock()
		if low {
			break
		}
		if l.Take(key) != 0 {
			t.Fatal("refused within the burst")
		}
		if admitted++; admitted > 10 {
			t.Fatal("no refill mark reached")
		}
	}
	// The next Take starts a background refill, which Redis holds.
	freeze(t, r.Proc)
	defer r.Proc.Signal(syscall.SIGCONT)
	if l.Take(key) != 0 {
		t.Fatal("refused with tokens held")
	}
	admitted++
	l.mu.Lock()
	busy := l.keys[key].busy
	l.mu.Unlock()
	if !busy {
		t.Fatal("no refill in flight")
	}
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(300 * time.Millisecond):
	}
	r.Proc.Signal(syscall.SIGCONT)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5 s of Redis answering")
	}
	// The refill has landed (in a closed limiter, before the fix).
	for deadline := time.Now().Add(3 * time.Second); ; {
		l.mu.Lock()
		e := l.keys[key]
		busy := e != nil && e.busy
		l.mu.Unlock()
		if !busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refill never finished")
		}
		time.Sleep(time.Millisecond)
	}
	if n := outstanding(t, l, key); n != float64(admitted) {
		t.Errorf("after Close, Redis counts %v tokens taken, %d were admitted: Close kept the tokens of a refill in flight", n, admitted)
	}
}

// startRedisIn starts redis-server on port with its files in dir (so that
// a SAVE is loaded again at the next start), with extra arguments; it
// returns once the server answers, LOADING included.
func startRedisIn(t *testing.T, port int, dir string, extra ...string) *services.Proc {
	t.Helper()
	bin := services.Need(t, "redis-server")
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning", "--dir", dir}, extra...)
	for try := 0; ; try++ {
		p := services.StartProc(t, "redis-server", exec.Command(bin, args...))
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && !p.Exited(); {
			if _, err := rawDo(port, "PING"); err == nil || isLoadingReply(err) {
				return p
			}
			time.Sleep(10 * time.Millisecond)
		}
		p.Kill()
		if try == 20 { // the port may linger a moment after a kill
			t.Fatalf("redis-server did not start on port %d", port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func rawDo(port int, args ...string) (string, error) {
	return (&services.Redis{Port: port}).Do(args...)
}

func isLoadingReply(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "-LOADING") }

// TestRedisLoadingIsDown: a Redis restarted with its data (RDB or AOF, as
// the README advises for production) answers every command "-LOADING"
// until the data set is loaded. That is Redis not serving: the Fleet must
// stay down (rpcedge_fleet_redis_up 0, the limiter on its local share)
// and task calls must answer ErrStoreUnavailable (503 with Retry-After),
// not turn the Fleet "up" and fail every task call with an internal
// error; once loaded, the Fleet comes up by itself.
func TestRedisLoadingIsDown(t *testing.T) {
	dir := t.TempDir()
	port := services.FreePort(t)
	p := startRedisIn(t, port, dir)
	if _, err := rawDo(port, "EVAL", "for i = 1, 4000 do redis.call('SET', 'pad:' .. i, string.rep('x', 100)) end return 1", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDo(port, "SAVE"); err != nil {
		t.Fatal(err)
	}
	f, err := New(Options{URL: "redis://127.0.0.1:" + strconv.Itoa(port) + "/0", Instance: "a", Prefix: "ld:", Logger: quiet(),
		ProbeInterval: 20 * time.Millisecond, Heartbeat: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitUp(t, f)
	s := newStore(t, f, TaskOptions{})
	p.Kill()
	// 4,000 keys at 400 µs each: at least 1.6 s of LOADING, answering
	// between keys.
	startRedisIn(t, port, dir, "--key-load-delay", "400", "--loading-process-events-interval-bytes", "1024")
	ctx := context.Background()
	checked := 0
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		if _, err := rawDo(port, "PING"); !isLoadingReply(err) {
			break // loaded
		}
		time.Sleep(100 * time.Millisecond)    // the probes meet LOADING
		_, gerr := s.Get(ctx, "no-such-task") // which meets it too
		up := f.Up()
		if _, err := rawDo(port, "PING"); !isLoadingReply(err) {
			break // loaded meanwhile: what was seen may be the recovery
		}
		checked++
		if up {
			t.Errorf("the Fleet is up while Redis answers LOADING")
		}
		if !errors.Is(gerr, a2a.ErrStoreUnavailable) {
			t.Errorf("a task call while Redis answers LOADING: %v, want ErrStoreUnavailable", gerr)
		}
		if t.Failed() {
			break
		}
	}
	if checked == 0 {
		t.Fatal("Redis loaded before anything could be checked")
	}
	waitUp(t, f)
	if _, err := s.Get(ctx, "no-such-task"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("after loading: %v", err)
	}
}

// TestTaskIndexesPruned: the index of an owner (and of a context) that
// keeps creating tasks forgets those that expired: it holds about the
// live tasks, not every task the owner ever made. (An owner's index was
// pruned only by a ListTasks of that owner: a service account creating
// tasks all day grew it without bound, and ListTasks with a status filter
// walks all of it in one script.)
func TestTaskIndexesPruned(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ix:")
	s := newStore(t, f, TaskOptions{TTL: time.Second})
	ctx := context.Background()
	const n = 100
	old := time.Now().UTC().Add(-time.Hour) // status times long past the TTL
	for i := range n {
		tk := &a2a.Task{ID: fmt.Sprintf("old%03d", i), ContextID: "c1", Owner: "alice",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: old.Add(time.Duration(i) * time.Millisecond)}}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	c := f.client
	for deadline := time.Now().Add(4 * time.Second); ; { // expired after 1 s
		k := make([]string, n)
		for i := range n {
			k[i] = fmt.Sprintf("ix:{a2a}:t:old%03d", i)
		}
		m, err := c.Do(ctx, c.B().Exists().Key(k...).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if m == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the tasks did not expire", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	now := time.Now().UTC()
	for i := range n {
		tk := &a2a.Task{ID: fmt.Sprintf("new%03d", i), ContextID: "c1", Owner: "alice",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: now.Add(time.Duration(i) * time.Millisecond)}}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"ix:{a2a}:o:alice", "ix:{a2a}:c:c1", "ix:{a2a}:all", "ix:{a2a}:age"} {
		m, err := c.Do(ctx, c.B().Zcard().Key(k).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if m > n+n/2 {
			t.Errorf("%s holds %d entries after %d tasks expired and %d were created: the expired ones are not forgotten", k, m, n, n)
		}
	}
}

// TestCanceledCallerIsNotRedisDown: a task call whose caller's context
// ends (a client that went away, a stream closed during its keep-alive
// lookup) is not a Redis failure: rpcedge_fleet_redis_errors_total counts
// calls that failed for want of Redis, and such a call costs no PING.
func TestCanceledCallerIsNotRedisDown(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "cc:")
	s := newStore(t, f, TaskOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs, changes := f.errs.Get(), f.changes.Get()
	for range 5 {
		if _, err := s.Exists(ctx, "t"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Exists with a canceled context: %v", err)
		}
		if _, err := s.Get(ctx, "t"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get with a canceled context: %v", err)
		}
	}
	if got := f.errs.Get() - errs; got != 0 || f.changes.Get() != changes || !f.Up() {
		t.Errorf("10 calls whose caller went away counted %d Redis errors (state changes %d, up %v)", got, f.changes.Get()-changes, f.Up())
	}
}

// TestDownAtStartIsLogged: an instance started while Redis cannot be
// reached (down, or a wrong address) says so once, as it does when
// Redis goes away later: it serves with per-instance limits and 503 task
// calls, and an operator must be able to tell. Then, Redis found, "up"
// once.
func TestDownAtStartIsLogged(t *testing.T) {
	r := services.StartRedis(t)
	r.Kill()
	var logs bytes.Buffer
	var mu sync.Mutex
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: "ds:", Logger: newLogger(&logs, &mu),
		ProbeInterval: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Up() {
		t.Fatal("up with Redis killed")
	}
	r.Restart()
	waitUp(t, f)
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	// Down first, then up; a busy machine may add a down and up more.
	d, u := strings.Count(text, "redis is down"), strings.Count(text, "redis is up")
	if d < 1 || d > 2 || u != d || strings.Index(text, "redis is down") > strings.Index(text, "redis is up") {
		t.Errorf("started with Redis down, then Redis came: %d down lines, %d up lines, want 1 and 1, down first:\n%s", d, u, text)
	}
}

// TestLimiterForeignTAT: a client's GCRA state in Redis that this
// limiter could not have written (another, buggy instance; a hand-made
// SET) is taken as the most it could mean, not obeyed or failed on: a
// value that is no number is no state, and a TAT past now + tau (the
// most a GCRA of this rate and burst leaves) is capped there. Decisions
// stay Redis's, at a few calls for many Takes, and the client is
// admitted again within about a burst's time, not refused for ages or
// served by the per-instance fallback with a Redis call per request.
func TestLimiterForeignTAT(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ft:")
	l := newLimiter(t, f, LimiterOptions{Rate: 100, Burst: 10}) // tau 100 ms
	for i, v := range []string{"garbage", "nan", "inf", "1e300", "9000000000000000000", "5000000000000000000"} {
		key := netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)})
		if _, err := r.Do("SET", l.redisKey(key), v); err != nil {
			t.Fatal(err)
		}
		calls, fb := l.calls.Get(), l.fallback.Get()
		admitted := 0
		for range 5 {
			w := l.Take(key)
			if w == 0 {
				admitted++
			} else if w > time.Second {
				t.Errorf("TAT %q: told to wait %v", v, w)
			}
		}
		if n := l.calls.Get() - calls; n > 3 || l.fallback.Get() != fb {
			t.Errorf("TAT %q: 5 Takes cost %d lease calls and %d fallback decisions, Redis up", v, n, l.fallback.Get()-fb)
		}
		if admitted == 0 {
			// Refused: admitted again once a burst's time has passed.
			ok := false
			for deadline := time.Now().Add(1500 * time.Millisecond); !ok && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				ok = l.Take(key) == 0
			}
			if !ok {
				t.Errorf("TAT %q: the client is still refused 1.5 s later (rate 100/s, burst 10)", v)
			}
		}
		l.mu.Lock()
		e := l.keys[key]
		l.mu.Unlock()
		if e != nil && (e.tokens < 0 || e.tokens > l.maxLease) {
			t.Errorf("TAT %q: the key holds %d tokens (L %d)", v, e.tokens, l.maxLease)
		}
	}
}

// TestLimiterFailingRedisNotHammered: Redis up but refusing the lease
// script (here out of memory: maxmemory reached, noeviction, which
// refuses every write; a READONLY replica after a failover does the
// same) is not "down" for the Fleet, and the limiter serves the key from
// its per-instance share. It must not try Redis again on every request:
// a hot client costs Redis a few calls a second per instance, also when
// those calls fail (here 1 call per Take: Redis, already in trouble, got
// one failing script per request of every client). When Redis accepts
// the script again, leases resume by themselves.
func TestLimiterFailingRedisNotHammered(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "oom:")
	l := newLimiter(t, f, LimiterOptions{Rate: 1000, Burst: 1000})
	key := netip.MustParseAddr("192.0.2.1")
	if _, err := r.Do("CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	calls, fb := l.calls.Get(), l.fallback.Get()
	const takes = 300
	start := time.Now()
	for range takes {
		l.Take(key)
	}
	took := time.Since(start)
	n := l.calls.Get() - calls
	if !f.Up() || l.fallback.Get()-fb == 0 {
		t.Fatalf("Redis out of memory: up %v, fallback decisions %d", f.Up(), l.fallback.Get()-fb)
	}
	// At most one call per half lease (125 ms), with a margin.
	if limit := 2 + 2*uint64(took/(DefaultLease/2)); n > limit {
		t.Errorf("%d Takes in %v, Redis refusing the lease script: %d lease calls, want at most %d", takes, took, n, limit)
	}
	if _, err := r.Do("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; {
		fb := l.fallback.Get()
		l.Take(key)
		if l.fallback.Get() == fb {
			break // served by a lease again
		}
		if time.Now().After(deadline) {
			t.Fatal("leases did not resume within 3 s of Redis accepting the script again")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
