package fleet

// Fifth hostile review (2026-12-07), of the limiter (limiter.go), the
// events broker (events.go) and the resources relay (resources.go), as a
// hostile client and a flaky network would attack them. The task store's
// reviews (review_hostile_test.go, review2_hostile_test.go,
// review3_bytes_test.go) and the relay's (review4_resources_test.go) are
// not repeated. Each test names the attack and the doc text that decides
// it; a failing test shows a bug.

import (
	"context"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// fleetAt connects a Fleet to url (a database of its own, say) under
// prefix, closed when the test ends.
func fleetAt(t *testing.T, url, instance, prefix string) *Fleet {
	t.Helper()
	f, err := New(Options{URL: url, Instance: instance, Prefix: prefix, Logger: quiet(),
		ProbeInterval: 50 * time.Millisecond, Heartbeat: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	waitUp(t, f)
	return f
}

// r5DB returns r's URL naming database db.
func r5DB(r *services.Redis, db int) string {
	return "redis://" + r.Addr() + "/" + strconv.Itoa(db)
}

// r5Linked waits (bounded) until a change published through from reaches
// the subscriber ch of task id: both brokers listen. Pub/sub is at most
// once, so the probe is published again until it arrives.
func r5Linked(t *testing.T, from *Broker, id string, ch chan *a2a.TaskChange) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for seq := uint64(1000); ; seq++ {
		if time.Now().After(deadline) {
			t.Fatal("the brokers did not link within 10 s")
		}
		from.Publish(context.Background(), testChange(id, seq))
		select {
		case <-ch:
			time.Sleep(50 * time.Millisecond)
			for len(ch) > 0 {
				<-ch
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestReview5OtherDatabaseHearsEvents: two fleets on one Redis server,
// each in a database of its own (redis://host/0 and redis://host/1) with
// the default Prefix, as doc.go's Security section offers: "Give the
// fleet its own Redis database or Options.Prefix". Keys are per database,
// but Redis pub/sub is not ("Pub/Sub has no relation to the key space",
// redis.io): both fleets' Brokers use the channel "rpcedge:{a2a}:events"
// and their relays "rpcedge:{mcp}:resources", so every task change and
// every MCP resource update of one fleet reaches the other's instances.
// A resource URI is not random: a client of fleet B listening to
// "file:///config" is told of fleet A's updates of its own
// "file:///config" (and sees when A changes it); A's task changes fill
// B's delivery queue (eventQueue, eventQueueBytes), so a busy fleet makes
// the other drop its own changes. Cause: events.go:93 and
// resources.go:80 name the channel by the Prefix only. Fix: name the
// database in the channels (prefix + "db<N>:" + ..., from the URL's
// SelectDB), or say that pub/sub needs a Prefix of its own.
func TestReview5OtherDatabaseHearsEvents(t *testing.T) {
	r := services.StartRedis(t)
	fa0 := fleetAt(t, r5DB(r, 0), "a", "")
	fa1 := fleetAt(t, r5DB(r, 0), "a2", "")
	fb := fleetAt(t, r5DB(r, 1), "b", "")

	ba, ba1, bb := fa0.Broker(), fa1.Broker(), fb.Broker()
	defer ba.Close()
	defer ba1.Close()
	defer bb.Close()
	onA1 := make(chan *a2a.TaskChange, 64)
	onB := make(chan *a2a.TaskChange, 64)
	defer ba1.Subscribe("t-shared", func(c *a2a.TaskChange) { onA1 <- c })()
	defer bb.Subscribe("t-shared", func(c *a2a.TaskChange) { onB <- c })()
	r5Linked(t, ba, "t-shared", onA1) // A's own instances hear each other
	for len(onB) > 0 {
		<-onB
	}
	ba.Publish(context.Background(), testChange("t-shared", 1))
	select {
	case <-onA1:
	case <-time.After(5 * time.Second):
		t.Fatal("fleet A's own other instance did not hear the change")
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(onB); n != 0 {
		t.Errorf("fleet B (database 1) heard %d task changes of fleet A (database 0)", n)
	}

	ua, ua1, ub := fa0.ResourceUpdates(), fa1.ResourceUpdates(), fb.ResourceUpdates()
	defer ua.Close()
	defer ua1.Close()
	defer ub.Close()
	sinkA1, sinkB := r4Receiver(ua1), r4Receiver(ub)
	r4Linked(t, ua, sinkA1)
	sinkB.reset()
	ua.Publish("file:///config")
	if !sinkA1.waitCount("file:///config", 1, 5*time.Second) {
		t.Fatal("fleet A's own other instance did not hear the update")
	}
	time.Sleep(300 * time.Millisecond)
	if got := sinkB.snapshot(); len(got) != 0 {
		t.Errorf("fleet B (database 1) heard fleet A's (database 0) resource updates: %q", got)
	}
}

// TestReview5PrefixesApart: the same on one database with two Prefixes
// (the other half of "its own Redis database or Options.Prefix"), and a
// Prefix that is the other's plus more: neither fleet hears the other.
// Passes; kept as the guard of the channel names (cheap).
func TestReview5PrefixesApart(t *testing.T) {
	r := services.StartRedis(t)
	fa := fleetAt(t, r.URL(), "a", "p:")
	fa1 := fleetAt(t, r.URL(), "a2", "p:")
	fb := fleetAt(t, r.URL(), "b", "p:{a2a}:")
	ba, ba1, bb := fa.Broker(), fa1.Broker(), fb.Broker()
	defer ba.Close()
	defer ba1.Close()
	defer bb.Close()
	onA1 := make(chan *a2a.TaskChange, 64)
	onB := make(chan *a2a.TaskChange, 64)
	defer ba1.Subscribe("t", func(c *a2a.TaskChange) { onA1 <- c })()
	defer bb.Subscribe("t", func(c *a2a.TaskChange) { onB <- c })()
	r5Linked(t, ba, "t", onA1)
	ba.Publish(context.Background(), testChange("t", 1))
	select {
	case <-onA1:
	case <-time.After(5 * time.Second):
		t.Fatal("fleet A's own other instance did not hear the change")
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(onB); n != 0 {
		t.Errorf("fleet B (another prefix) heard %d changes of fleet A", n)
	}
}

// TestReview5SmallBurstStarved: a client well under its rate is refused.
// Rate 100/s with Burst 1 (a strict limit, as -rate 100 -burst 1 sets):
// T = 10 ms a token. The client sends one request every 50 ms or more
// (20/s, a fifth of its rate), each after the previous one answered: an
// exact GCRA (go-redis/redis_rate's semantics, which doc.go says the
// limiter has) admits every one. The Limiter spends its one leased token,
// refills in the background at once (tokens ≤ low), finds Redis's budget
// spent by that very token, and refuses the key locally for
// max(retry, Lease/2) = 125 ms (refill, limiter.go:392: "e.denied =
// now + max(retry*1000, int64(l.lease)/2)"), although a token is due 10 ms
// later: the client gets about one request in three. The Limiter's doc
// says "a key Redis refused is refused locally until the GCRA's retry
// time", and LimiterOptions.Rate "is the sustained requests per second
// one client key may make". Whenever Burst < Rate × Lease / 2 a client
// above its rate is cut to about Burst per Lease/2 (measured: Rate 100,
// Burst 10, 120/s offered: 90/s admitted).
// Fix: a background refill that finds no token should not deny the key
// (only a Take that finds no token should), and the denial should last
// the GCRA's retry time; back off the *calls* (e.retry) rather than the
// client.
func TestReview5SmallBurstStarved(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "sb:")
	l := newLimiter(t, f, LimiterOptions{Rate: 100, Burst: 1})
	key := netip.MustParseAddr("192.0.2.7")
	admitted, sent := 0, 0
	var refusedAt []string
	start := time.Now()
	for sent < 40 && time.Since(start) < 6*time.Second {
		if w := l.Take(key); w == 0 {
			admitted++
		} else {
			refusedAt = append(refusedAt, time.Since(start).Round(time.Millisecond).String()+"(wait "+w.String()+")")
		}
		sent++
		time.Sleep(50 * time.Millisecond)
	}
	if admitted < sent-4 {
		t.Errorf("a client at a fifth of its rate (Rate 100, Burst 1, a request every ≥ 50 ms): %d of %d admitted; refused at %s",
			admitted, sent, strings.Join(refusedAt[:min(len(refusedAt), 8)], ", "))
	}
}

// TestReview5HighRateRounded: LimiterOptions.Rate "is the sustained
// requests per second one client key may make across the whole fleet",
// and Limiter accepts any Rate up to 1,000,000. The GCRA works in whole
// microseconds a token (period = round(1e6/Rate)), so Rate 700,000 runs
// at 1,000,000 a second (period 1 µs), 43% over; Rate 300,000 at
// 333,333. The bound B + R·W + N·L does not hold for W past about 0.6 s
// (one instance). Measured through the lease script itself (no Take
// loop): after the burst, what Redis grants over 0.4 s (under the
// burst's 0.7 s, which would cap it) is compared with R·W. Cause:
// limiter.go:176 (period := int64(math.Round(1e6 / o.Rate))). Fixed:
// a Rate held more than 1% off is refused (CheckRate).
func TestReview5HighRateRounded(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "hr:")
	// Refused: it would be held 43% over (CheckRate).
	if l, err := f.Limiter(LimiterOptions{Rate: 700_000}); err == nil || !strings.Contains(err.Error(), "Rate") {
		if l != nil {
			l.Close()
		}
		t.Fatalf("Rate 700,000, held as 1,000,000: accepted (%v)", err)
	}
	// Accepted rates are held: 500,000 (2 µs a token) and 20,000.
	for _, rate := range []float64{500_000, 20_000} {
		l := newLimiter(t, f, LimiterOptions{Rate: rate})
		rkey := l.redisKey(netip.MustParseAddr("192.0.2.8"))
		g0, _, _, err := l.call(rkey, 1<<30, 0) // the burst
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		time.Sleep(400 * time.Millisecond) // under tau (1 s): the burst does not cap the grant
		g1, _, _, err := l.call(rkey, 1<<30, 0)
		w := time.Since(t0)
		if err != nil {
			t.Fatal(err)
		}
		if limit := rate*w.Seconds() + 1; float64(g1) > limit*1.05 {
			t.Errorf("Rate %.0f: after the burst (%d tokens) Redis granted %d tokens in %v, R·W = %.0f (%.0f%% over)",
				rate, g0, g1, w.Round(time.Millisecond), limit, 100*(float64(g1)/limit-1))
		}
	}
}

// r5Goroutines counts the goroutines running the code of a Limiter, a
// Broker or a ResourceUpdates (and follow, theirs).
func r5Goroutines() (int, string) {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	var ours []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"fleet.(*Limiter)", "fleet.(*Broker)", "fleet.(*ResourceUpdates)", "fleet.(*Fleet).ResourceUpdates", "fleet.(*Fleet).follow"} {
			if strings.Contains(g, fn) {
				n++
				ours = append(ours, g)
				break
			}
		}
	}
	return n, strings.Join(ours, "\n\n")
}

// TestReview5CloseUnderTraffic: Close of the limiter, the broker and the
// relay while 16 goroutines Take (many distinct keys, past Clients),
// publish changes and updates, and another instance publishes to this
// one: every goroutine they started ends ("Close gives back every unspent
// token and stops the background work", "Close stops listening", "Close
// stops publishing and listening"), and a Take, Publish or Subscribe
// after Close neither panics nor blocks. Passes; kept (cheap).
func TestReview5CloseUnderTraffic(t *testing.T) {
	r := services.StartRedis(t)
	fo := newFleet(t, r, "other", "cl:")
	bo, uo := fo.Broker(), fo.ResourceUpdates()
	defer bo.Close()
	defer uo.Close()
	f := newFleet(t, r, "a", "cl:")
	time.Sleep(100 * time.Millisecond)
	before, _ := r5Goroutines() // the other instance's

	l, err := f.Limiter(LimiterOptions{Rate: 50, Clients: 64})
	if err != nil {
		t.Fatal(err)
	}
	b, u := f.Broker(), f.ResourceUpdates()
	u.Receive(func(string) {})
	unsub := b.Subscribe("t", func(*a2a.TaskChange) {})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100_000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				l.Take(netip.AddrFrom4([4]byte{10, byte(g), byte(i >> 8), byte(i)}))
				if i%50 == 0 {
					b.Publish(context.Background(), testChange("t", uint64(i+1)))
					bo.Publish(context.Background(), testChange("t", uint64(i+1)))
					u.Publish("test://" + strconv.Itoa(i))
					uo.Publish("test://o" + strconv.Itoa(i))
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	done := make(chan struct{})
	go func() { l.Close(); b.Close(); u.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5 s under traffic")
	}
	close(stop)
	wg.Wait()
	unsub()
	// After Close: nothing panics or blocks.
	after := make(chan struct{})
	go func() {
		l.Take(netip.MustParseAddr("192.0.2.1"))
		b.Publish(context.Background(), testChange("t", 1))
		b.Subscribe("t", func(*a2a.TaskChange) {})()
		u.Publish("test://late")
		close(after)
	}()
	select {
	case <-after:
	case <-time.After(5 * time.Second):
		t.Fatal("a call after Close blocked")
	}
	var now int
	var stacks string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if now, stacks = r5Goroutines(); now <= before {
			return
		}
	}
	t.Errorf("goroutines of limiters, brokers and relays: %d before, %d 5 s after Close\n%s", before, now, stacks)
}

// TestReview5ManyClientsBounded: a client rotating through 3,000
// addresses (IPv6 /64s: the server's key) against Clients 50, first with
// Redis up, then with Redis killed: the local table stays near Clients
// ("Clients bounds the keys tracked locally (and by the fallback)"), the
// queue of tokens to give back and charges to make stays within about
// twice Clients while Redis is down ("the queue bounded by Clients, as the table is"; up, it is drained every Lease/2), and
// every budget key in Redis expires by itself (PTTL set, at most a
// burst's time). Passes; kept (cheap).
func TestReview5ManyClientsBounded(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "mc:")
	l := newLimiter(t, f, LimiterOptions{Rate: 10, Clients: 50})
	key := func(i int) netip.Addr {
		return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, byte(i >> 8), byte(i)})
	}
	size := func() (keys, returns int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.keys), len(l.returns)
	}
	for i := range 1000 {
		l.Take(key(i))
		if k, _ := size(); k > 50+16 {
			t.Fatalf("Redis up, %d clients: %d keys tracked (Clients 50)", i+1, k)
		}
	}
	// Up, the queue is drained every Lease/2 (what accrues in between
	// is bounded by the rate of new clients).
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, q := size(); q == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("Redis up: %d returns still queued 3 s after the last new client", q)
		}
	}
	keys := redisDo(t, f, "KEYS", "mc:rl:*")
	names, err := keys.AsStrSlice()
	if err != nil || len(names) == 0 {
		t.Fatalf("no budget keys in Redis: %v", err)
	}
	for _, k := range names {
		if ms, err := redisDo(t, f, "PTTL", k).AsInt64(); err != nil || ms == -1 || ms > 1100 {
			t.Errorf("budget key %s: PTTL %d (want an expiry, at most 1100 ms: burst 10 at 10/s), %v", k, ms, err)
			break
		}
	}
	r.Kill()
	for i := 1000; i < 4000; i++ {
		l.Take(key(i))
		if k, q := size(); k > 50+16 || q > 2*50+16 {
			t.Fatalf("Redis down, %d clients: %d keys tracked, %d returns queued (Clients 50)", i+1, k, q)
		}
	}
	if f.Up() {
		t.Error("the Fleet is still up with Redis killed")
	}
}
