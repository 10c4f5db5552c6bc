package fastserver

import (
	"net/netip"
	"time"
)

// RateLimiter decides row 2 of the contract (the rate limit per client)
// for a client key the server has already derived: the peer address, or
// the address X-Forwarded-For names when the peer is a trusted proxy, with
// IPv6 grouped by /64 (Config.TrustedProxies). Key derivation stays in
// the server; a RateLimiter only counts.
//
// The default is a LocalLimiter built from Config.RateLimit, RateBurst and
// RateClients. Set Config.RateLimiter to share limits between processes
// (package fleet has one on Redis).
//
// Take is called once for every POST to an endpoint that reaches row 2,
// from many goroutines at once, on the request's path: it must be safe for
// concurrent use and should not block for long (a limiter that needs the
// network should answer from local state and refill in the background).
type RateLimiter interface {
	// Take spends one token of key's budget. It returns 0 when the
	// request may go on, else how long until the client may try again;
	// the server answers 429 / -32603 with that wait rounded up to whole
	// seconds (at least 1) in Retry-After.
	Take(key netip.Addr) time.Duration
}

// LocalLimiter is the in-process RateLimiter: a token bucket per client
// key in a bounded table that evicts the least recently seen client. It
// is what the server uses when Config.RateLimiter is nil. A LocalLimiter
// is safe for concurrent use (one mutex, held for a map lookup and a few
// float operations; no allocation once a key is in the table). It must
// not be copied.
type LocalLimiter struct {
	r *rateLimiter
}

var _ RateLimiter = (*LocalLimiter)(nil)

// NewLocalLimiter returns a LocalLimiter allowing rate tokens per second
// per key with buckets of burst tokens, for at most clients keys. rate
// must be positive; burst and clients below 1 mean 1.
func NewLocalLimiter(rate float64, burst, clients int) *LocalLimiter {
	if burst < 1 {
		burst = 1
	}
	if clients < 1 {
		clients = 1
	}
	return &LocalLimiter{r: newRateLimiter(rate, burst, clients, nil, false)}
}

// Take spends one token of key's bucket: 0 when there was one, else the
// time until the bucket holds one again.
func (l *LocalLimiter) Take(key netip.Addr) time.Duration {
	return l.r.takeKey(key, monoNow())
}

// Len returns the number of keys in the table.
func (l *LocalLimiter) Len() int { return l.r.len() }

// retryAfterSeconds turns a limiter's wait into Retry-After seconds: 0
// for none, else rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}
