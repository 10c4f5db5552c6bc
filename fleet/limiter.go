package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Defaults of LimiterOptions.
const (
	DefaultLease   = 250 * time.Millisecond
	DefaultClients = 100000
)

// LimiterOptions configures a Limiter.
type LimiterOptions struct {
	// Rate is the sustained requests per second one client key may make
	// across the whole fleet. Required, positive.
	Rate float64
	// Burst is the GCRA's burst, fleet-wide. Default: Rate rounded up, at
	// least 1.
	Burst int
	// Lease is how long an instance plans its leases for: it asks Redis
	// for about Lease's worth of a client's demand at a time (so a hot
	// client costs about one Redis call per Lease per instance), and gives
	// back the tokens of a client idle for a Lease. Default 250 ms.
	Lease time.Duration
	// MaxLease is the most unspent tokens an instance holds for one key:
	// the L of the accuracy bound. Default: Rate × Lease rounded up,
	// between 1 and Burst.
	MaxLease int
	// Clients bounds the keys tracked locally (and by the fallback).
	// Default 100,000.
	Clients int
	// Name tells apart limiters of one rate and burst in Redis: a
	// client's budget is kept under a key of the Fleet's Prefix, "rl:",
	// the Name, Rate and Burst, and its address, so that limiters of
	// other rates or bursts never share it, and limiters of the same
	// Name, rate and burst (one per instance, for the same endpoint)
	// always do. Give two endpoints with the same rate and burst their
	// own limits by their own Names. At most 64 bytes, without ':'.
	// Default "".
	Name string
}

// Limiter is a fastserver.RateLimiter whose limit holds across the
// fleet: a GCRA per client key in Redis (one Lua script, atomic, on
// Redis's clock), served from local leases. An instance takes a batch of
// tokens for a key in one call and spends them locally, refilling in the
// background before they run out, and gives back what a client it no
// longer sees did not use; a key Redis refused is refused locally until
// the GCRA's retry time (Envoy's rate-limit service keeps such an
// over-limit cache too). A hot client thus costs Redis a few calls per
// second per instance, not one per request.
//
// # Accuracy
//
// The GCRA admits at most B + R·W tokens for one key in any window W
// (rate R, burst B). A token is spent at most once, and each of the N
// instances holds at most L = MaxLease unspent tokens for the key at any
// moment, so the fleet admits at most
//
//	B + R·W + N·L
//
// requests of one client in any window W, whichever instances serve it.
// The price is on the other side: up to N·L tokens may sit unspent
// elsewhere while one instance refuses (returned after a Lease of
// idleness).
//
// # Redis down
//
// While the Fleet is down (a call failed or timed out), Take answers from
// a per-instance share of the limit, a GCRA per key at Rate/N with burst
// Burst/N (N: the fleet's size from the last heartbeat), so N instances
// keep the fleet within the limit without Redis: it fails open to
// per-instance shares,
// as Envoy's global limit (failure_mode_deny false) and Kong's
// cluster-policy limits (fault_tolerant) fail open, but bounded rather
// than unlimited (Doorman's "safe capacity"). The share of a key is as
// spent, in proportion, as the key's budget in Redis was at the last
// answer for it, and what the share admits is charged to Redis when it
// answers again, so that an outage, or a flapping Redis, grants no
// burst beyond the fleet's (found by review on 2026-12-06: the shares
// started full whatever the client had spent, and Redis refilled while
// they served, a fresh burst per flap). When Redis answers again the
// leases resume by themselves. A key whose refill fails while the
// Fleet stays up (a call slower than the timeout, Redis refusing the
// script: out of memory, a read-only replica) is served by that share
// too, and Redis is asked for it again no sooner than half a Lease later.
//
// A Limiter is safe for concurrent use. Take does not allocate for a key
// it holds tokens for.
type Limiter struct {
	f        *Fleet
	rate     float64
	burst    int
	period   int64 // µs per token
	tau      int64 // µs of burst
	lease    time.Duration
	maxLease int
	clients  int

	rkeyPre string // prefix + "rl:" + namespace + ":"

	mu      sync.Mutex
	keys    map[netip.Addr]*leaseEntry
	returns []pendingReturn // tokens of evicted keys, to give back (or charge)

	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	calls, granted, returned, charged, limited, fallback, waits *metrics.Counter
}

// leaseEntry is one client key's local state, guarded by Limiter.mu.
type leaseEntry struct {
	rkey     string // the Redis key
	tokens   int    // unspent tokens held
	denied   int64  // unix ns: Redis refused until then
	seen     int64  // unix ns of the last Take
	since    int64  // unix ns of the last grant (demand window start)
	attempts int    // Takes since the last grant
	failed   bool   // the last refill failed: no answer, or an error reply
	retry    int64  // unix ns: after a failed refill, none before then
	low      int    // refill in the background at or below this many
	busy     bool   // a refill is in flight
	done     chan struct{}
	ftat     int64 // unix ns: the TAT of the key's per-instance share
	debt     int   // tokens the share admitted, not yet charged to Redis
}

// pendingReturn is a call to make for a key no longer in use: tokens to
// give back, or when negative, to charge.
type pendingReturn struct {
	rkey   string
	tokens int
}

var _ fastserver.RateLimiter = (*Limiter)(nil)

// Limiter returns a fleet-wide rate limiter (set it as
// fastserver.Config.RateLimiter). Close it when done.
func (f *Fleet) Limiter(o LimiterOptions) (*Limiter, error) {
	if err := CheckRate(o.Rate); err != nil {
		return nil, err
	}
	if o.Burst < 0 || o.MaxLease < 0 || o.Clients < 0 || o.Lease < 0 {
		return nil, errors.New("fleet: LimiterOptions: negative Burst, MaxLease, Clients or Lease")
	}
	if o.Burst == 0 {
		o.Burst = max(1, int(math.Ceil(o.Rate)))
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.MaxLease == 0 {
		o.MaxLease = int(math.Ceil(o.Rate * o.Lease.Seconds()))
	}
	o.MaxLease = min(max(o.MaxLease, 1), o.Burst)
	if o.Clients == 0 {
		o.Clients = DefaultClients
	}
	if len(o.Name) > 64 || strings.Contains(o.Name, ":") {
		return nil, errors.New("fleet: LimiterOptions.Name longer than 64 bytes or with a ':'")
	}
	period := int64(math.Round(1e6 / o.Rate))
	l := &Limiter{
		f: f, rate: o.Rate, burst: o.Burst, period: period, tau: period * int64(o.Burst),
		lease: o.Lease, maxLease: o.MaxLease, clients: o.Clients,
		keys:   make(map[netip.Addr]*leaseEntry),
		closed: make(chan struct{}),
	}
	// The key names the GCRA's parameters (found by review on
	// 2026-12-06: every limiter of a Fleet kept a client under
	// "rl:<address>", read with its own rate and burst, so a client's
	// requests to one endpoint spent another's limit).
	l.rkeyPre = f.keyPre + "rl:" + o.Name + "." + strconv.FormatInt(period, 10) + "." + strconv.Itoa(o.Burst) + ":"
	inst := `{instance=` + strconv.Quote(f.opts.Instance)
	l.calls = f.set.GetOrCreateCounter(`rpcedge_fleet_lease_calls_total` + inst + `}`)
	l.granted = f.set.GetOrCreateCounter(`rpcedge_fleet_lease_tokens_total` + inst + `,way="granted"}`)
	l.returned = f.set.GetOrCreateCounter(`rpcedge_fleet_lease_tokens_total` + inst + `,way="returned"}`)
	l.charged = f.set.GetOrCreateCounter(`rpcedge_fleet_lease_tokens_total` + inst + `,way="charged"}`)
	l.limited = f.set.GetOrCreateCounter(`rpcedge_fleet_limited_total` + inst + `}`)
	l.fallback = f.set.GetOrCreateCounter(`rpcedge_fleet_fallback_decisions_total` + inst + `}`)
	l.waits = f.set.GetOrCreateCounter(`rpcedge_fleet_lease_waits_total` + inst + `}`)
	l.wg.Add(1)
	go l.sweep()
	return l, nil
}

// Bound returns the accuracy bound for a fleet of n instances over a
// window w: the most requests of one client key the fleet admits in any
// window of that length, B + R·w + n·L.
func (l *Limiter) Bound(n int, w time.Duration) float64 {
	return float64(l.burst) + l.rate*w.Seconds() + float64(n*l.maxLease)
}

// MaxLease returns L, the most unspent tokens an instance holds per key.
func (l *Limiter) MaxLease() int { return l.maxLease }

// Take spends one token of key: 0 when the request may go on, else the
// time until the client may try again.
func (l *Limiter) Take(key netip.Addr) time.Duration {
	now := time.Now().UnixNano()
	l.mu.Lock()
	e := l.keys[key]
	if e == nil {
		e = l.insert(key)
	}
	if !l.f.up.Load() {
		e.seen = now
		wait := l.shareTake(e, now)
		l.mu.Unlock()
		l.fallback.Inc()
		return wait
	}
	e.seen = now
	e.attempts++
	for try := 0; ; try++ {
		if e.tokens > 0 {
			e.tokens--
			if e.tokens <= e.low && !e.busy && (!e.failed || now >= e.retry) {
				l.startRefill(e)
				go l.refill(e, true)
			}
			l.mu.Unlock()
			return 0
		}
		if now < e.denied {
			wait := time.Duration(e.denied - now)
			l.mu.Unlock()
			l.limited.Inc()
			return wait
		}
		if try > 0 && (e.failed || !l.f.up.Load()) || e.failed && now < e.retry {
			// The refill brought no answer: Redis is down, or refuses
			// the script (out of memory, a read-only replica), and is
			// asked again no sooner than half a lease after (found by
			// review on 2026-12-06: with every refill failing, each
			// request made a failing call).
			wait := l.shareTake(e, now)
			l.mu.Unlock()
			l.fallback.Inc()
			return wait
		}
		if try >= maxTakeTries {
			// Redis answered every refill, and other requests of the
			// same client spent what it granted: the client is at its
			// limit, and every token it was given was counted by Redis.
			l.mu.Unlock()
			l.limited.Inc()
			return time.Duration(l.period) * time.Microsecond
		}
		if e.busy {
			l.waits.Inc()
			ch := e.done
			l.mu.Unlock()
			<-ch // bounded by the call timeout
		} else {
			l.startRefill(e)
			l.mu.Unlock()
			l.refill(e, false)
		}
		l.mu.Lock()
		now = time.Now().UnixNano()
		if cur := l.keys[key]; cur != e {
			// e was evicted while this Take waited (its tokens are
			// queued to be given back): go on with the key's entry as
			// it is now, or a new one (found by review on 2026-12-06:
			// the Take spent a token of the evicted entry, which was
			// given back to Redis too).
			if cur == nil {
				cur = l.insert(key)
			}
			cur.seen = now
			cur.attempts++
			e = cur
		}
	}
}

// maxTakeTries bounds the refills one Take waits for while other Takes of
// the same key spend what each brings.
const maxTakeTries = 8

func (l *Limiter) insert(key netip.Addr) *leaseEntry {
	if len(l.keys) >= l.clients {
		for k, old := range l.keys { // evict one idle key
			if old.busy {
				continue
			}
			// Unspent tokens are given back, what the share admitted is
			// charged (the queue bounded by Clients, as the table is:
			// past it, while Redis is down, charges are dropped).
			if net := old.tokens - old.debt; net != 0 && (net > 0 || len(l.returns) < l.clients) {
				l.returns = append(l.returns, pendingReturn{old.rkey, net})
			}
			old.tokens, old.debt = 0, 0 // given back: nobody spends them here
			delete(l.keys, k)
			break
		}
	}
	e := &leaseEntry{rkey: l.redisKey(key)}
	l.keys[key] = e
	return e
}

// redisKey is the key of key's GCRA in Redis.
func (l *Limiter) redisKey(key netip.Addr) string { return l.rkeyPre + key.String() }

// shareTake spends a token of e's per-instance share: a GCRA at Rate/N
// with burst Burst/N, N the fleet's size; l.mu is held. What it admits is
// charged to Redis by the next call for the key.
func (l *Limiter) shareTake(e *leaseEntry, now int64) time.Duration {
	period, tau := l.share()
	tat := max(e.ftat, now)
	next := tat + period
	if next-tau > now {
		return time.Duration(next - tau - now)
	}
	e.ftat = next
	e.debt++
	return 0
}

// share returns the per-instance share's ns per token and ns of burst.
func (l *Limiter) share() (period, tau int64) {
	n := int64(l.f.Size())
	period = l.period * 1000 * n
	return period, period * int64(max(1, l.burst/int(n)))
}

// follow sets e's share as spent, in proportion, as Redis's answer says
// the key's budget is (used µs of tau); l.mu is held.
func (l *Limiter) follow(e *leaseEntry, used int64, now int64) {
	_, tau := l.share()
	e.ftat = now + int64(float64(used)/float64(l.tau)*float64(tau))
}

// CheckRate reports whether a Limiter can hold rate (LimiterOptions.Rate,
// requests per second a client): its GCRA counts whole microseconds a
// token, so a rate is held as 1e6 / round(1e6 / rate), which must be
// within 1% of it (every rate up to 20,000 a second is; past it, those
// whose microseconds a token come out near a whole number: found by
// review on 2026-12-07, 700,000 ran at 1,000,000). At most 1,000,000.
func CheckRate(rate float64) error {
	if !(rate > 0) || rate > 1e6 {
		return fmt.Errorf("fleet: LimiterOptions.Rate %v: want more than 0 and at most 1,000,000 per second", rate)
	}
	held := 1e6 / math.Round(1e6/rate)
	if math.Abs(held-rate) > rate/100 {
		return fmt.Errorf("fleet: LimiterOptions.Rate %v: held as %.0f per second (whole microseconds a token), more than 1%% off", rate, held)
	}
	return nil
}

// startRefill marks e busy; l.mu is held.
func (l *Limiter) startRefill(e *leaseEntry) {
	e.busy = true
	e.done = make(chan struct{})
}

// refill asks Redis for about a Lease's worth of e's demand, capped so
// that e never holds more than MaxLease tokens: ahead of need (a Take
// spent a token and left e low) or for a Take that found none. l.mu is
// not held.
func (l *Limiter) refill(e *leaseEntry, ahead bool) {
	now := time.Now().UnixNano()
	l.mu.Lock()
	want := l.maxLease / 4
	hot := false // asking faster than its rate
	if e.since > 0 {
		elapsed := float64(now-e.since) / 1e9
		demand := float64(e.attempts) / max(elapsed, 0.001)
		want = int(math.Ceil(demand * l.lease.Seconds()))
		hot = demand > l.rate
	}
	want = min(max(want, 1), l.maxLease-e.tokens)
	rkey, debt := e.rkey, e.debt
	l.mu.Unlock()

	grant, retry, used, err := l.call(rkey, want, -debt)

	l.mu.Lock()
	e.failed = err != nil
	if err != nil {
		e.retry = time.Now().UnixNano() + int64(l.lease)/2
	} else {
		now = time.Now().UnixNano()
		e.debt -= debt
		l.follow(e, used, now)
		if grant > 0 {
			e.tokens += grant
			e.denied = 0
			e.low = grant / 2
		} else if ahead && !hot {
			// Refused a refill asked ahead, as a client within its rate
			// spent a token it had: refuse locally only until a token is
			// due (found by review on 2026-12-07: refused half a lease,
			// 125 ms, a client with Burst 1 got 14 of 40 requests at a
			// fifth of its rate). Such a client costs Redis a call per
			// token at most, which its rate bounds.
			e.denied = now + retry*1000
		} else {
			// Refused with no token left: refuse locally until a token is
			// due, and ask again no sooner than half a lease (a throttled
			// client costs Redis a few calls per second, not one per
			// token).
			e.denied = now + max(retry*1000, int64(l.lease)/2)
		}
		e.since, e.attempts = now, 0
	}
	e.busy = false
	close(e.done)
	l.mu.Unlock()
}

// call runs the lease script: take want tokens after returning ret
// (charging -ret when negative).
func (l *Limiter) call(rkey string, want, ret int) (grant int, retryUS, usedUS int64, err error) {
	ctx, cancel := l.f.ctx(context.Background())
	defer cancel()
	l.calls.Inc()
	vals, err := scriptLease.Exec(ctx, l.f.client, []string{rkey}, []string{
		strconv.FormatInt(l.period, 10), strconv.FormatInt(l.tau, 10), strconv.Itoa(want), strconv.Itoa(ret),
	}).AsIntSlice()
	if l.f.check(err) != nil {
		return 0, 0, 0, err
	}
	if len(vals) != 3 {
		return 0, 0, 0, errors.New("fleet: lease script answered " + strconv.Itoa(len(vals)) + " values")
	}
	if vals[0] < 0 || vals[0] > int64(want) || vals[1] < 0 || vals[1] > l.tau+l.period || vals[2] < 0 || vals[2] > l.tau {
		return 0, 0, 0, errors.New("fleet: lease script answered {" + strconv.FormatInt(vals[0], 10) + ", " + strconv.FormatInt(vals[1], 10) +
			", " + strconv.FormatInt(vals[2], 10) + "}")
	}
	l.granted.Add(int(vals[0]))
	l.count(ret)
	return int(vals[0]), vals[1], vals[2], nil
}

// count counts ret tokens given back (or -ret charged).
func (l *Limiter) count(ret int) {
	if ret > 0 {
		l.returned.Add(ret)
	} else if ret < 0 {
		l.charged.Add(-ret)
	}
}

// sweep gives back the tokens of keys idle for a Lease, and forgets keys
// idle for ten.
func (l *Limiter) sweep() {
	defer l.wg.Done()
	t := time.NewTicker(l.lease / 2)
	defer t.Stop()
	for {
		select {
		case <-l.closed:
			// A refill in flight brings tokens too: wait for those
			// (each bounded by the call timeout and a PING), then give
			// everything back (found by review on 2026-12-06: the grant
			// of a refill in flight at Close stayed in the closed
			// limiter, spent in Redis for nothing).
			rs, busy := l.collect(true)
			for _, done := range busy {
				<-done
			}
			if len(busy) > 0 {
				more, _ := l.collect(true)
				rs = append(rs, more...)
			}
			l.giveBack(rs)
			return
		case <-t.C:
		}
		if l.f.up.Load() {
			rs, _ := l.collect(false)
			l.giveBack(rs)
		}
	}
}

// collect takes the tokens of idle keys (all keys when all is set) out of
// the table, for giveBack, with what the share admitted for any key (to
// charge); with all, it also returns the done channels of the refills in
// flight, whose keys it skipped.
func (l *Limiter) collect(all bool) (out []pendingReturn, busy []chan struct{}) {
	now := time.Now().UnixNano()
	idle, forget := int64(l.lease), 10*int64(l.lease)
	l.mu.Lock()
	defer l.mu.Unlock()
	out = l.returns
	l.returns = nil
	for k, e := range l.keys {
		if e.busy {
			if all {
				busy = append(busy, e.done)
			}
			continue
		}
		net := -e.debt
		if e.tokens > 0 && (all || now-e.seen > idle) {
			net += e.tokens
			e.tokens = 0
		}
		if net != 0 {
			out = append(out, pendingReturn{e.rkey, net})
			e.debt = 0
		}
		if e.tokens == 0 && now-e.seen > forget && now > e.denied && now > e.ftat {
			delete(l.keys, k)
		}
	}
	return out, busy
}

// giveBack returns tokens to Redis (and charges it), pipelined.
func (l *Limiter) giveBack(rs []pendingReturn) {
	for len(rs) > 0 {
		batch := rs[:min(len(rs), 256)]
		rs = rs[len(batch):]
		execs := make([]rueidis.LuaExec, len(batch))
		for i, r := range batch {
			execs[i] = rueidis.LuaExec{Keys: []string{r.rkey}, Args: []string{
				strconv.FormatInt(l.period, 10), strconv.FormatInt(l.tau, 10), "0", strconv.Itoa(r.tokens)}}
		}
		ctx, cancel := l.f.ctx(context.Background())
		res := scriptLease.ExecMulti(ctx, l.f.client, execs...)
		cancel()
		for i, r := range res {
			l.calls.Inc()
			if l.f.check(r.Error()) != nil {
				return // down: those tokens stay spent in Redis (and those charges uncharged)
			}
			l.count(batch[i].tokens)
		}
	}
}

// Close gives back every unspent token and stops the background work.
func (l *Limiter) Close() {
	l.once.Do(func() {
		close(l.closed)
		l.wg.Wait()
	})
}
