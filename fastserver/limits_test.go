package fastserver

// Limits and operation (spec/contract.md §3): rows 2, 5 and 6, the rate
// limiter's keying and table, the handler deadline, header size, the
// connection cap, configuration and Shutdown.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// Row 2: the rate limit.
func TestRateLimit(t *testing.T) {
	_, addr := serve(t, Config{RateLimit: 0.5, RateBurst: 3})
	c := dial(t, addr)
	// Refused at row 1: not charged. GET, OPTIONS: not charged.
	for range 3 {
		cc := dial(t, addr)
		want{403, -32600, "null", "", ""}.check(t, cc.do(post(pathRPC, valid, "Origin: http://evil.example")))
	}
	for _, raw := range []string{request("GET", "/healthz", ""), request("OPTIONS", pathRPC, ""), request("GET", pathRPC, "")} {
		if r := c.do(raw); r.Status >= 400 && r.Status != 405 {
			t.Fatalf("%q: %s", raw, r.StatusLine)
		}
	}
	// The burst: a request, a notification and a refusal at row 8 each
	// cost a token.
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid)))
	want{status: 202}.check(t, c.do(post(pathRPC, notif)))
	want{400, -32600, "null", "", ""}.check(t, c.do(post(pathRPC, `42`)))
	// Then 429, Retry-After in whole seconds, and the connection closed.
	r := c.do(post(pathRPC, valid))
	want{429, -32603, "null", "", ""}.check(t, r)
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 2 {
		t.Errorf("Retry-After %q, want whole seconds, 2 at rate 0.5/s", r.Header.Get("Retry-After"))
	}
	if !r.Close {
		t.Errorf("429 without Connection: close")
	}
	c.expectClosed()
	// A notification is refused alike (row 2 comes before the body).
	want{429, -32603, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, notif)))
	// Another endpoint, same client: the same bucket.
	want{429, -32603, "null", "", ""}.check(t, roundTrip(t, addr, post(pathJR, valid)))

	// Row 2 comes after row 1 and before row 3.
	want{403, -32600, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, valid, "Origin: http://evil.example")))
	want{429, -32603, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, valid, "Content-Type: text/plain")))
	// A big Content-Length: answered without the body (fasthttp waits
	// for one byte of it before calling the handler).
	c = dial(t, addr)
	c.send(post(pathRPC, "{", "Content-Length: 500000"))
	want{429, -32603, "null", "", ""}.check(t, c.read())
	c.expectClosed()
}

func TestRateLimitRetryAfter(t *testing.T) {
	_, addr := serve(t, Config{RateLimit: 0.1})
	c := dial(t, addr)
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid)))
	r := roundTrip(t, addr, post(pathRPC, valid))
	want{429, -32603, "null", "", ""}.check(t, r)
	if ra := r.Header.Get("Retry-After"); ra != "10" {
		t.Errorf("Retry-After %q, want 10 at 0.1/s", ra)
	}
}

// Row 2 with Expect: 100-continue: §3 says rows 1 to 6 answer 417 instead
// of 100 Continue, so the client never sends the body. A request is
// charged one token, whether the expectation or the handler checks it.
func TestRateLimitExpectContinue(t *testing.T) {
	_, addr := serve(t, Config{RateLimit: 0.1, RateBurst: 2})
	expect := func(hdr ...string) *conn {
		c := dial(t, addr)
		raw := post(pathRPC, valid, append(hdr, "Expect: 100-continue")...)
		c.send(raw[:len(raw)-len(valid)])
		return c
	}
	// Refused at row 1: no token spent.
	if r := expect("Origin: http://evil.example").read(); r.Status != 417 {
		t.Fatalf("evil origin with Expect: %s, want 417", r.StatusLine)
	}
	// Token 1, through the expectation.
	c := expect()
	if r := c.read(); r.Status != 100 {
		t.Fatalf("first request: %s, want 100 Continue", r.StatusLine)
	}
	c.send(valid)
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.read())
	// Token 2, without it.
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid)))
	// None left: 417 with the expectation, 429 without.
	r := expect().read()
	if r.Status != 417 {
		t.Errorf("rate-limited request with Expect: 100-continue: %s, want 417", r.StatusLine)
	}
	want{429, -32603, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
}

// Keying: one bucket per client address; X-Forwarded-For only from a
// trusted proxy.
func TestRateLimitKeys(t *testing.T) {
	from := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip)} }
	t.Run("per peer", func(t *testing.T) {
		_, addr := serve(t, Config{RateLimit: 0.1, RateBurst: 1})
		for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
			want{200, 0, "7", `{"a":1}`, ""}.check(t, dialFrom(t, addr, from(ip)).do(post(pathRPC, valid)))
		}
		for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
			want{429, -32603, "null", "", ""}.check(t, dialFrom(t, addr, from(ip)).do(post(pathRPC, valid)))
		}
		// An untrusted peer's X-Forwarded-For is ignored.
		r := dialFrom(t, addr, from("127.0.0.4")).do(post(pathRPC, valid, "X-Forwarded-For: 198.51.100.1"))
		want{429, -32603, "null", "", ""}.check(t, r)
	})
	t.Run("trusted proxy", func(t *testing.T) {
		_, addr := serve(t, Config{RateLimit: 0.1, RateBurst: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		do := func(xff string) *resp {
			return roundTrip(t, addr, post(pathRPC, valid, "X-Forwarded-For: "+xff))
		}
		want{200, 0, "7", `{"a":1}`, ""}.check(t, do("198.51.100.1"))
		want{200, 0, "7", `{"a":1}`, ""}.check(t, do("198.51.100.2"))
		want{429, -32603, "null", "", ""}.check(t, do("198.51.100.1"))
		// The rightmost address that is not a trusted proxy is the client.
		want{429, -32603, "null", "", ""}.check(t, do("203.0.113.9, 198.51.100.2, 127.0.0.7"))
		want{200, 0, "7", `{"a":1}`, ""}.check(t, do("198.51.100.2, 203.0.113.9"))
		// Without the header, the proxy itself.
		want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
		want{429, -32603, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
	})
}

func keyCtx(peer string, xff string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(pathRPC)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(peer), Port: 1234}, nil)
	return &ctx
}

func TestClientKey(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	r := newRateLimiter(1, 1, 10, trusted, false)
	cases := []struct{ peer, xff, key string }{
		{"192.0.2.1", "", "192.0.2.1"},
		{"192.0.2.1", "198.51.100.7", "192.0.2.1"},
		{"::ffff:192.0.2.1", "", "192.0.2.1"},
		{"2001:db8:1:2:3:4:5:6", "", "2001:db8:1:2::"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "", "2001:db8:1:2::"},
		{"10.1.2.3", "", "10.1.2.3"},
		{"10.1.2.3", "198.51.100.7", "198.51.100.7"},
		{"10.1.2.3", " 198.51.100.7 ", "198.51.100.7"},
		{"10.1.2.3", "198.51.100.7, 10.9.9.9", "198.51.100.7"},
		{"10.1.2.3", "1.1.1.1, 198.51.100.7, 10.9.9.9", "198.51.100.7"},
		{"10.1.2.3", "2001:db8:5:6::1", "2001:db8:5:6::"},
		{"10.1.2.3", "::ffff:198.51.100.7", "198.51.100.7"},
		{"2001:db8:ffff:1::1", "198.51.100.8", "198.51.100.8"},
	}
	for _, tc := range cases {
		if got := r.keyOf(keyCtx(tc.peer, tc.xff)); got != netip.MustParseAddr(tc.key) {
			t.Errorf("clientKey(peer %s, XFF %q) = %s, want %s", tc.peer, tc.xff, got, tc.key)
		}
	}
	// Garbage in X-Forwarded-For never lets the client pick an arbitrary
	// key: the key is the proxy or an address from the header.
	for _, xff := range []string{"garbage", "198.51.100.7, garbage", "unknown, 10.0.0.1", ",,,"} {
		got := r.keyOf(keyCtx("10.1.2.3", xff))
		if !got.IsValid() {
			t.Errorf("clientKey(XFF %q) is not an address", xff)
		}
	}
}

// The client table is bounded; the least recently seen client is evicted.
func TestRateLimiterEviction(t *testing.T) {
	r := newRateLimiter(1e-6, 1, 3, nil, false)
	take := func(ip string) int { return r.takeCtx(keyCtx(ip, "")) }
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		if w := take(ip); w != 0 {
			t.Fatalf("first request of %s limited (%d)", ip, w)
		}
	}
	if take("192.0.2.1") == 0 || take("192.0.2.2") == 0 || take("192.0.2.3") == 0 {
		t.Fatalf("the second request of each client should be limited")
	}
	// Seen order now 1, 2, 3 (3 most recent). Touch 1; a new client
	// evicts 2, the least recently seen.
	take("192.0.2.1")
	if w := take("192.0.2.4"); w != 0 {
		t.Fatalf("a new client is limited (%d)", w)
	}
	if n := r.len(); n != 3 {
		t.Errorf("table holds %d clients, want 3", n)
	}
	if take("192.0.2.1") == 0 || take("192.0.2.3") == 0 {
		t.Errorf("clients 1 and 3 should still be limited (not evicted)")
	}
	if w := take("192.0.2.2"); w != 0 {
		t.Errorf("client 2 was evicted and should start with a full bucket, got wait %d", w)
	}
	// Many clients: the table never grows past its bound, and its list
	// stays consistent.
	for i := range 1000 {
		take("198.51." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250))
		if n := r.len(); n > 3 {
			t.Fatalf("table holds %d clients, bound 3", n)
		}
	}
	seen := 0
	for i := r.head; i >= 0; i = r.slots[i].next {
		if seen++; seen > 3 {
			t.Fatalf("the recency list has a cycle or too many entries")
		}
		if r.index[r.slots[i].key] != i {
			t.Errorf("slot %d not indexed", i)
		}
	}
	if seen != 3 || r.slots[r.tail].next != -1 || r.slots[r.head].prev != -1 {
		t.Errorf("recency list: %d entries, head %d, tail %d", seen, r.head, r.tail)
	}

	one := newRateLimiter(1e-6, 1, 1, nil, false)
	for i := range 10 {
		if w := one.takeCtx(keyCtx("192.0.2."+strconv.Itoa(i), "")); w != 0 {
			t.Fatalf("with a table of 1, each new client starts full; got wait %d", w)
		}
	}
}

// The limiter from many goroutines (for -race): the table stays within its
// bound and its recency list consistent.
func TestRateLimiterConcurrent(t *testing.T) {
	r := newRateLimiter(1000, 5, 10, nil, false)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				r.takeCtx(keyCtx("192.0.2."+strconv.Itoa((g*31+i)%50), ""))
			}
		}()
	}
	wg.Wait()
	if n := r.len(); n != 10 {
		t.Errorf("table holds %d clients, want its bound 10", n)
	}
	seen := 0
	for i := r.head; i >= 0 && seen <= 10; i = r.slots[i].next {
		seen++
	}
	if seen != 10 {
		t.Errorf("recency list has %d entries, want 10", seen)
	}
}

func TestRateLimiterRefill(t *testing.T) {
	r := newRateLimiter(20, 2, 10, nil, false)
	ctx := keyCtx("192.0.2.1", "")
	first, second := r.takeCtx(ctx), r.takeCtx(ctx)
	if first != 0 || second != 0 {
		t.Fatal("burst of 2")
	}
	if w := r.takeCtx(ctx); w != 1 {
		t.Fatalf("third take: wait %d, want 1 (whole seconds, at least 1)", w)
	}
	time.Sleep(120 * time.Millisecond) // 20/s: more than 2 tokens back, capped at the burst
	first, second = r.takeCtx(ctx), r.takeCtx(ctx)
	if first != 0 || second != 0 {
		t.Fatal("the bucket should have refilled to its burst")
	}
	if r.takeCtx(ctx) == 0 {
		t.Fatal("the bucket must not refill past its burst")
	}
}

// Row 5: a Content-Length over the ceiling is refused from the headers,
// before the body is read (the client sends one byte and waits).
func TestContentLengthOverCeiling(t *testing.T) {
	s, addr := serve(t, Config{MaxBodyBytes: 1000, DrainTimeout: 200 * time.Millisecond})
	c := dial(t, addr)
	start := time.Now()
	c.send(post(pathRPC, "{", "Content-Length: 1001"))
	r := c.read()
	want{413, -32600, "null", "", ""}.check(t, r)
	if d := time.Since(start); d > time.Second {
		t.Errorf("413 after %v: the server waited for the body", d)
	}
	c.expectClosed()
	// Exactly at the ceiling is read.
	body := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"` + strings.Repeat("a", 1000-len(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":""}}`)) + `"}}`
	want{200, 0, "1", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, body)))
	if used := s.budget.used.Load(); used != 0 {
		t.Errorf("the in-flight budget holds %d bytes after every request ended", used)
	}
}

// slowUpload starts a POST that declares n body bytes, sends a few, and
// stalls; finish sends the rest and returns the answer.
type slowUpload struct {
	c    *conn
	rest string
}

func startSlowUpload(t *testing.T, addr string, n int) *slowUpload {
	body := `{"jsonrpc":"2.0","id":"slow","method":"echo","params":{"s":"` + strings.Repeat("a", n-len(`{"jsonrpc":"2.0","id":"slow","method":"echo","params":{"s":""}}`)) + `"}}`
	c := dial(t, addr)
	raw := post(pathRPC, body)
	cut := len(raw) - len(body) + 10
	c.send(raw[:cut])
	return &slowUpload{c: c, rest: raw[cut:]}
}

func (u *slowUpload) finish() *resp {
	u.c.send(u.rest)
	return u.c.read()
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Row 6: the in-flight body budget.
// Two stalled uploads that declare firstStep bytes each (a length
// reserved whole) hold a budget of twice that.
func TestBudget(t *testing.T) {
	s, addr := serve(t, Config{MaxBodyBytes: firstStep, InflightBodyBytes: 2 * firstStep, BudgetWait: 300 * time.Millisecond, DrainTimeout: 200 * time.Millisecond})
	a := startSlowUpload(t, addr, firstStep)
	b := startSlowUpload(t, addr, firstStep)
	waitFor(t, "two uploads to hold the budget", func() bool { return s.budget.used.Load() == 2*firstStep })

	for _, tc := range []struct{ name, raw string }{
		{"small body", post(pathRPC, valid)},
		{"chunked body", post(pathRPC, chunk(valid), "Transfer-Encoding: chunked")},
		{"notification", post(pathRPC, notif)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := roundTrip(t, addr, tc.raw)
			d := time.Since(start)
			want{503, -32603, "null", "", ""}.check(t, r)
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("Retry-After %q, want whole seconds", r.Header.Get("Retry-After"))
			}
			if !r.Close {
				t.Errorf("503 with the body unread, without Connection: close")
			}
			if d < 250*time.Millisecond || d > 2*time.Second {
				t.Errorf("503 after %v, want after BudgetWait (300ms)", d)
			}
		})
	}
	// A body of 0 bytes reserves nothing and is not refused.
	want{400, -32700, "null", "", ""}.check(t, roundTrip(t, addr, post(pathRPC, "")))

	// Room that frees within BudgetWait lets a waiting request through.
	c := dial(t, addr)
	c.send(post(pathRPC, valid))
	time.Sleep(100 * time.Millisecond)
	want{200, 0, `"slow"`, "", ""}.check(t, a.finish())
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.read())
	want{200, 0, `"slow"`, "", ""}.check(t, b.finish())
	waitFor(t, "the budget to empty", func() bool { return s.budget.used.Load() == 0 })
}

// Row 6 with Expect: 100-continue: 417 (§3: rows 1 to 6).
func TestBudgetExpectContinue(t *testing.T) {
	s, addr := serve(t, Config{MaxBodyBytes: firstStep, InflightBodyBytes: 2 * firstStep, BudgetWait: 200 * time.Millisecond, DrainTimeout: 100 * time.Millisecond})
	a := startSlowUpload(t, addr, firstStep)
	b := startSlowUpload(t, addr, firstStep)
	defer b.finish()
	waitFor(t, "two uploads to hold the budget", func() bool { return s.budget.used.Load() == 2*firstStep })
	c := dial(t, addr)
	raw := post(pathRPC, valid, "Expect: 100-continue")
	c.send(raw[:len(raw)-len(valid)])
	if r := c.read(); r.Status != 417 {
		t.Errorf("budget spent, Expect: 100-continue: %s, want 417", r.StatusLine)
	}
	a.finish()
}

func TestBudgetUnit(t *testing.T) {
	b := budget{limit: 100}
	if !b.acquire(60, 0) || !b.acquire(40, 0) {
		t.Fatal("the limit itself should fit")
	}
	start := time.Now()
	if b.acquire(1, 50*time.Millisecond) {
		t.Fatal("over the limit")
	}
	if d := time.Since(start); d < 40*time.Millisecond || d > time.Second {
		t.Errorf("acquire gave up after %v, want about 50ms", d)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		b.release(40)
	}()
	if !b.acquire(30, time.Second) {
		t.Fatal("room freed while waiting")
	}
	b.release(30)
	b.release(60)
	if u := b.used.Load(); u != 0 {
		t.Errorf("used %d after releasing everything", u)
	}
}

// Row 18: the handler deadline.
func TestHandlerDeadline(t *testing.T) {
	var cnt testCounters
	_, addr := serve(t, Config{HandlerTimeout: 200 * time.Millisecond}, testEndpoints(&cnt)...)
	c := dial(t, addr)
	for i := range 3 { // the reused context must not stay expired
		start := time.Now()
		r := c.do(post(pathRPC, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"sleepctx"}`))
		d := time.Since(start)
		want{500, -32603, strconv.Itoa(i), "", ""}.check(t, r)
		if d < 180*time.Millisecond || d > 1500*time.Millisecond {
			t.Errorf("call %d: answered after %v, want about 200ms", i, d)
		}
		if n := cnt.ctxOK.Load(); n != int64(i+1) {
			t.Errorf("the handler saw its context done %d times, want %d", n, i+1)
		}
		// A fast call after an expired one sees a live context.
		r = c.do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"ctxinfo"}`))
		a := parseAnswer(t, r.Body)
		var left int
		var errNil, open bool
		if _, err := fmtSscan(string(a.Result), &left, &errNil, &open); err != nil || !errNil || !open || left < 100 || left > 200 {
			t.Errorf("call %d: context after an expired call: %s, want [~200,true,true]", i, a.Result)
		}
	}
	start := time.Now()
	r := c.do(post(pathRPC, `{"jsonrpc":"2.0","id":"s","method":"sleep"}`))
	want{500, -32603, `"s"`, "", ""}.check(t, r)
	if d := time.Since(start); d < sleepyFor {
		t.Errorf("answered after %v, before the handler returned", d)
	}
	c.expectOpen()
	m := c.do(request("GET", "/metrics", ""))
	if !strings.Contains(string(m.Body), "rpcedge_handler_timeouts_total 4\n") {
		t.Errorf("/metrics should count 4 handler timeouts")
	}
}

// §3: read and idle timeouts close the connection.
func TestTimeouts(t *testing.T) {
	_, addr := serve(t, Config{ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, DrainTimeout: 100 * time.Millisecond})
	closedSoon := func(c *conn, what string) {
		t.Helper()
		start := time.Now()
		c.c.SetReadDeadline(time.Now().Add(ioTimeout))
		// An answer (400 or 408) may come first; then the close.
		_, err := io.Copy(io.Discard, c.br)
		if isTimeout(err) {
			t.Errorf("%s: the connection was not closed", what)
		} else if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: closed after %v, want after about 300ms", what, d)
		}
	}
	c := dial(t, addr)
	c.send("POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Le")
	closedSoon(c, "headers stalled")

	c = dial(t, addr)
	c.send(post(pathRPC, `{"jsonrpc":"2.0"`, "Content-Length: 100"))
	closedSoon(c, "body stalled")

	c = dial(t, addr)
	want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid)))
	closedSoon(c, "idle")
}

// fmtSscan reads "[int,bool,bool]".
func fmtSscan(s string, left *int, a, b *bool) (int, error) {
	parts := strings.Split(strings.Trim(s, "[]"), ",")
	if len(parts) != 3 {
		return 0, errors.New("want 3 values")
	}
	var err error
	if *left, err = strconv.Atoi(parts[0]); err != nil {
		return 0, err
	}
	if *a, err = strconv.ParseBool(parts[1]); err != nil {
		return 1, err
	}
	*b, err = strconv.ParseBool(parts[2])
	return 3, err
}

// Request.Context: "cancelled when the server shuts down past its grace
// period": a handler waiting on it returns, and its request is answered.
func TestShutdownCancelsHandlerContext(t *testing.T) {
	var cnt testCounters
	s, addr := serveNoCleanup(t, Config{HandlerTimeout: 2 * time.Second, ShutdownGrace: 300 * time.Millisecond}, testEndpoints(&cnt)...)
	c := dial(t, addr)
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"sleepctx"}`))
	waitFor(t, "the handler to be entered", func() bool { return s.Stats().Entered == 1 })
	start := time.Now()
	shut := make(chan time.Duration, 1)
	go func() {
		s.Shutdown(context.Background())
		shut <- time.Since(start)
	}()
	r, err := c.tryRead()
	d := time.Since(start)
	if err != nil {
		t.Fatalf("the accepted request got no answer: %v", err)
	}
	want{500, -32603, "1", "", ""}.check(t, r)
	if d > time.Second {
		t.Errorf("the handler's context was done %v after Shutdown; the grace period is 300ms", d)
	}
	select {
	case d := <-shut:
		if d > time.Second {
			t.Errorf("Shutdown returned after %v; the grace period is 300ms", d)
		}
	case <-time.After(ioTimeout):
		t.Fatal("Shutdown did not return")
	}
	if st := s.Stats(); st.Entered != st.Answered {
		t.Errorf("after Shutdown: %d entered, %d answered", st.Entered, st.Answered)
	}
	stopServer(t, s)
}

// Shutdown waits at most until ctx's deadline when it comes before the
// grace period, then cancels the running handlers and waits at most one
// more second (Shutdown's doc).
func TestShutdownContextDeadline(t *testing.T) {
	s, addr := serveNoCleanup(t, Config{ShutdownGrace: 5 * time.Second})
	c := dial(t, addr)
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"sleepms","params":{"ms":3500}}`))
	waitFor(t, "the handler to be entered", func() bool { return s.Stats().Entered == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	s.Shutdown(ctx)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("Shutdown with a 100ms context returned after %v, want about 1.1s (the deadline, then one second)", d)
	}
	// The handler ignores its context: its answer comes when it returns.
	want{500, -32603, "1", "", ""}.check(t, c.read())
	stopServer(t, s)
}

// §3: header size.
func TestHeaderSize(t *testing.T) {
	_, addr := serve(t, Config{})
	big := func(n int) string { return "X-Big: " + strings.Repeat("b", n) }
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid, big(6<<10))))
	for _, path := range []string{pathRPC, "/healthz"} {
		c := dial(t, addr)
		r := c.do(post(path, valid, big(9<<10)))
		if r.Status != 431 {
			t.Errorf("%s with a 9 KiB header: %s, want 431", path, r.StatusLine)
		}
		c.expectClosed()
	}
	// Many small headers count as well.
	var many []string
	for i := range 400 {
		many = append(many, "X-H"+strconv.Itoa(i)+": 0123456789012345")
	}
	if r := roundTrip(t, addr, post(pathRPC, valid, many...)); r.Status != 431 {
		t.Errorf("400 headers of 25 bytes: %s, want 431", r.StatusLine)
	}

	_, addr2 := serve(t, Config{MaxHeaderBytes: 32 << 10})
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr2, post(pathRPC, valid, big(20<<10))))
}

// §3: the connection cap: a plain 503, then the connection is closed.
func TestMaxConns(t *testing.T) {
	_, addr := serve(t, Config{MaxConns: 2})
	held := []*conn{dial(t, addr), dial(t, addr)}
	for _, c := range held {
		want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid)))
	}
	c := dial(t, addr)
	c.send(post(pathRPC, valid))
	r, err := c.tryRead()
	if err != nil {
		t.Fatalf("the connection over the cap got no answer: %v", err)
	}
	if r.Status != 503 {
		t.Errorf("over the cap: %s, want 503", r.StatusLine)
	}
	if bytes.HasPrefix(r.Body, []byte("{")) {
		t.Errorf("over the cap: a JSON body %s, want a plain answer", r.Body)
	}
	c.expectGone()
	held[0].c.Close()
	waitFor(t, "a connection slot to free", func() bool {
		cc := dial(t, addr)
		if _, err := io.WriteString(cc.c, post(pathRPC, valid)); err != nil {
			return false
		}
		a, err := cc.tryRead()
		return err == nil && a.Status == 200
	})
}

func TestConfigErrors(t *testing.T) {
	ep := testEndpoints(nil)
	cases := []struct {
		name string
		cfg  Config
		want string // a piece of the error
	}{
		{"negative body", Config{MaxBodyBytes: -1}, "MaxBodyBytes"},
		{"negative depth", Config{MaxDepth: -1}, "MaxDepth"},
		{"negative timeout", Config{HandlerTimeout: -time.Second}, "HandlerTimeout"},
		{"negative rate", Config{RateLimit: -1}, "RateLimit"},
		{"NaN rate", Config{RateLimit: nan()}, "RateLimit"},
		{"negative burst", Config{RateBurst: -1}, "RateBurst"},
		{"negative conns", Config{MaxConns: -5}, "MaxConns"},
		{"negative header", Config{MaxHeaderBytes: -5}, "MaxHeaderBytes"},
		{"negative drain", Config{DrainBytes: -5}, "DrainBytes"},
		{"budget under ceiling", Config{MaxBodyBytes: 2 << 20, InflightBodyBytes: 1 << 20}, "InflightBodyBytes"},
		{"bad origin", Config{AllowedOrigins: []string{"example.com"}}, "AllowedOrigins"},
		{"origin with path", Config{AllowedOrigins: []string{"https://example.com/app"}}, "AllowedOrigins"},
		{"invalid proxy", Config{TrustedProxies: []netip.Prefix{{}}}, "TrustedProxies"},
	}
	for _, tc := range cases {
		if _, err := New(tc.cfg, ep...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
	s, err := New(Config{RateLimit: 2.5}, ep...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Config()
	if cfg.RateBurst != 3 || cfg.MaxBodyBytes != DefaultMaxBodyBytes || cfg.HandlerTimeout != DefaultHandlerTimeout ||
		cfg.MaxConns != DefaultMaxConns || cfg.MaxHeaderBytes != DefaultMaxHeaderBytes || cfg.Addr != DefaultAddr ||
		cfg.InflightBodyBytes != DefaultInflightBodyBytes || cfg.BudgetWait != DefaultBudgetWait || cfg.RateClients != DefaultRateClients {
		t.Errorf("defaults not filled in: %+v", cfg)
	}
}

func nan() float64 { z := 0.0; return z / z }

// §3 Shutdown: stop accepting, finish every accepted request, return
// within the grace period. Many clients are mid-traffic when it starts.
func TestShutdownUnderLoad(t *testing.T) {
	clients, perClient := 64, 400
	if testing.Short() {
		clients, perClient = 32, 100
	}
	var cnt testCounters
	s, addr := serveNoCleanup(t, Config{ShutdownGrace: 3 * time.Second}, testEndpoints(&cnt)...)

	var answered, refused, dropped, broken atomic.Int64
	var wg sync.WaitGroup
	stopAt := time.Now().Add(10 * time.Second)
	var firstErr atomic.Value
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *conn
			for n := 0; n < perClient && time.Now().Before(stopAt); n++ {
				if c == nil {
					nc, err := net.DialTimeout("tcp", addr, time.Second)
					if err != nil {
						return // the listener is closed: done
					}
					c = newConn(t, nc)
				}
				id := strconv.Itoa(i*perClient + n)
				method := "echo"
				if n%3 == 0 {
					method = "nap"
				}
				body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{"n":` + id + `}}`
				raw := post(pathRPC, body)
				early := n%7 == 6 // refused at row 1: an early answer on a hijacked connection
				if early {
					raw = post(pathRPC, body, "Origin: http://evil.example")
				}
				c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
				if _, err := io.WriteString(c.c, raw); err != nil {
					dropped.Add(1)
					c.c.Close()
					c = nil
					continue
				}
				before := c.in.n
				r, err := c.tryRead()
				switch {
				case err == nil && early && r.Status == 403 && string(r.Body) == `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"origin not allowed"}}`:
					refused.Add(1)
				case err == nil && !early && r.Status == 200 && string(r.Body) == `{"jsonrpc":"2.0","id":`+id+`,"result":{"n":`+id+`}}`:
					answered.Add(1)
				case err == nil:
					broken.Add(1)
					firstErr.CompareAndSwap(nil, "wrong answer: "+r.StatusLine+" "+string(r.Body))
				case c.in.n == before && c.br.Buffered() == 0:
					// Closed before any byte of an answer: never accepted.
					dropped.Add(1)
				default:
					broken.Add(1)
					firstErr.CompareAndSwap(nil, "partial answer: "+err.Error())
				}
				if err != nil || r.Close {
					c.c.Close()
					c = nil
				}
			}
			if c != nil {
				c.c.Close()
			}
		}()
	}
	waitFor(t, "traffic", func() bool { return answered.Load() > int64(clients*perClient)/8 })
	start := time.Now()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Shutdown took %v, grace 3s", d)
	}
	st := s.Stats()
	if st.Entered != st.Answered {
		t.Errorf("after Shutdown: %d requests entered, %d answered", st.Entered, st.Answered)
	}
	wg.Wait()
	stopServer(t, s)
	if broken.Load() > 0 {
		t.Errorf("%d broken answers; first: %v", broken.Load(), firstErr.Load())
	}
	if got, entered := answered.Load(), cnt.echo.Load(); got != entered {
		t.Errorf("handlers entered %d times, clients got %d complete answers", entered, got)
	}
	if st.Entered != uint64(answered.Load()+refused.Load()) {
		t.Errorf("Stats().Entered %d, clients got %d answers and %d early refusals", st.Entered, answered.Load(), refused.Load())
	}
	t.Logf("%d answered, %d refused early, %d dropped unaccepted", answered.Load(), refused.Load(), dropped.Load())
	// Nothing is served after Shutdown.
	if nc, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		nc.Close()
		t.Errorf("the listener still accepts after Shutdown")
	}
}

// keyOf is clientKey with the header snapshot the server would take.
func (r *rateLimiter) keyOf(ctx *fasthttp.RequestCtx) netip.Addr {
	var f fields
	f.snapshot(&ctx.Request.Header)
	return r.clientKey(ctx, &f)
}

// takeCtx is take with the header snapshot the server would take.
func (r *rateLimiter) takeCtx(ctx *fasthttp.RequestCtx) int {
	var f fields
	f.snapshot(&ctx.Request.Header)
	return r.take(ctx, &f)
}
