package fastserver

import (
	"bytes"
	"io"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"
)

// recordingLimiter is a RateLimiter that records the keys it is asked
// about and refuses every request past the first n with wait.
type recordingLimiter struct {
	mu   sync.Mutex
	keys []netip.Addr
	n    int
	wait time.Duration
}

func (l *recordingLimiter) Take(key netip.Addr) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	if len(l.keys) > l.n {
		return l.wait
	}
	return 0
}

func (l *recordingLimiter) seen() []netip.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]netip.Addr(nil), l.keys...)
}

// Config.RateLimiter decides row 2 with the key the server derived (the
// trusted proxy's X-Forwarded-For here), in place of RateLimit, which is
// then not used; its wait becomes Retry-After, rounded up.
func TestConfigRateLimiter(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		ra   string
	}{{1500 * time.Millisecond, "2"}, {time.Nanosecond, "1"}, {7 * time.Second, "7"}} {
		l := &recordingLimiter{n: 2, wait: tc.wait}
		_, addr := serve(t, Config{
			RateLimiter:    l,
			RateLimit:      1e-9, // ignored: the limiter decides
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		})
		c := dial(t, addr)
		want{200, 0, "7", `{"a":1}`, ""}.check(t, c.do(post(pathRPC, valid, "X-Forwarded-For: 198.51.100.9")))
		want{status: 202}.check(t, c.do(post(pathRPC, notif, "X-Forwarded-For: 2001:db8:1:2::77")))
		r := c.do(post(pathRPC, valid))
		want{429, -32603, "null", "", ""}.check(t, r)
		if got := r.Header.Get("Retry-After"); got != tc.ra {
			t.Errorf("wait %v: Retry-After %q, want %q", tc.wait, got, tc.ra)
		}
		keys := l.seen()
		wantKeys := []netip.Addr{netip.MustParseAddr("198.51.100.9"), netip.MustParseAddr("2001:db8:1:2::"), netip.MustParseAddr("127.0.0.1")}
		if len(keys) != len(wantKeys) {
			t.Fatalf("limiter asked %d times (%v), want %d", len(keys), keys, len(wantKeys))
		}
		for i := range keys {
			if keys[i] != wantKeys[i] {
				t.Errorf("key %d = %s, want %s", i, keys[i], wantKeys[i])
			}
		}
	}
}

func TestLocalLimiter(t *testing.T) {
	l := NewLocalLimiter(10, 2, 0) // clients 0 means 1
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	if first, second := l.Take(a), l.Take(a); first != 0 || second != 0 {
		t.Fatal("burst of 2")
	}
	w := l.Take(a)
	if w <= 0 || w > 100*time.Millisecond {
		t.Fatalf("third take waits %v, want (0, 100ms] at 10/s", w)
	}
	if l.Take(b) != 0 || l.Len() != 1 {
		t.Fatalf("a new key in a table of 1 evicts the other: len %d", l.Len())
	}
	if l.Take(a) != 0 {
		t.Fatal("an evicted key starts with a full bucket")
	}
	// A tiny rate: the wait stays a valid, huge duration.
	tiny := NewLocalLimiter(1e-30, 1, 1)
	tiny.Take(a)
	if w := tiny.Take(a); w <= 0 {
		t.Fatalf("tiny rate: wait %v", w)
	}
	for d, want := range map[time.Duration]int{0: 0, -1: 0, 1: 1, time.Second: 1, time.Second + 1: 2, 1 << 62: int((1<<62 + time.Second - 1) / time.Second)} {
		if got := retryAfterSeconds(d); got != want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

// An Error with RetryAfter gets a Retry-After header; others do not.
func TestErrorRetryAfter(t *testing.T) {
	var ms Methods
	ms.HandleFunc("down", func(r *Request, dst []byte) ([]byte, error) {
		return dst, &Error{Status: 503, Code: -32603, Message: "store unavailable", RetryAfter: 3}
	})
	ms.HandleFunc("up", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, "1"...), nil
	})
	_, addr := serve(t, Config{}, ms.Endpoint(pathJR, 0))
	c := dial(t, addr)
	r := c.do(post(pathJR, `{"jsonrpc":"2.0","id":4,"method":"down"}`))
	want{503, -32603, "4", "", ""}.check(t, r)
	if got := r.Header.Get("Retry-After"); got != "3" {
		t.Errorf("Retry-After %q, want 3", got)
	}
	// The next answers on the same connection do not inherit it: a
	// result, and a refusal decided before any handler runs.
	r = c.do(post(pathJR, `{"jsonrpc":"2.0","id":5,"method":"up"}`))
	want{200, 0, "5", "1", ""}.check(t, r)
	if got := r.Header.Get("Retry-After"); got != "" {
		t.Errorf("Retry-After %q on a result", got)
	}
	c.do(post(pathJR, `{"jsonrpc":"2.0","id":4,"method":"down"}`))
	r = c.do(post(pathJR, `{"jsonrpc":"2.0","id":6,"method":"nope"}`))
	want{404, -32601, "6", "", ""}.check(t, r)
	if got := r.Header.Get("Retry-After"); got != "" {
		t.Errorf("Retry-After %q on a 404", got)
	}
}

// Config.MoreMetrics writes after the server's own metrics.
func TestMoreMetrics(t *testing.T) {
	_, addr := serve(t, Config{MoreMetrics: func(w io.Writer) {
		io.WriteString(w, "extra_metric{instance=\"a\"} "+strconv.Itoa(42)+"\n")
	}})
	r := roundTrip(t, addr, request("GET", "/metrics", ""))
	if r.Status != 200 || !bytes.Contains(r.Body, []byte("rpcedge_requests_in_flight")) || !bytes.HasSuffix(r.Body, []byte("extra_metric{instance=\"a\"} 42\n")) {
		t.Errorf("metrics: %s\n%s", r.StatusLine, r.Body)
	}
}
