package fastserver

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// budget bounds the body bytes held across all requests (row 6). What
// compressed bodies hold may take at most half of it, so that stalled
// compressed uploads can never lock out bodies without a coding: the
// state of their decompressors, charged up front whatever a body has
// sent, at most a quarter, and that state and their decoded bytes
// together at most half (a kilobyte of gzip decodes to a megabyte: some
// 130 stalled uploads sending 1 KiB each held the whole default budget,
// found by review on 2026-12-06). Apart from it, the idle buffers lent to
// bodies beyond what they are charged (bodyBuffers.Idle) may add up to at
// most another quarter (lend).
type budget struct {
	limit      int64
	used       atomic.Int64
	stateLimit int64
	state      atomic.Int64
	codedLimit int64
	coded      atomic.Int64 // state and decoded bytes of compressed bodies
	lentLimit  int64
	lent       atomic.Int64
}

// lend reserves n bytes of idle buffer lent to a body, within lentLimit;
// it never waits, and takes nothing from the budget itself.
func (b *budget) lend(n int64) bool { return addWithin(&b.lent, n, b.lentLimit) }

// addWithin adds n to v unless the sum would pass limit, and reports
// whether it did.
func addWithin(v *atomic.Int64, n, limit int64) bool {
	for {
		u := v.Load()
		if u+n > limit {
			return false
		}
		if v.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// unlend gives back what lend reserved.
func (b *budget) unlend(n int64) { b.lent.Add(-n) }

// try reserves n bytes of the budget if it has room, without waiting.
func (b *budget) try(n int64) bool { return addWithin(&b.used, n, b.limit) }

// tryState reserves n bytes for decompressor state: within the state
// quarter, the compressed bodies' half and the whole budget.
func (b *budget) tryState(n int64) bool {
	if !addWithin(&b.state, n, b.stateLimit) {
		return false
	}
	if !b.tryCoded(n) {
		b.state.Add(-n)
		return false
	}
	return true
}

// tryCoded reserves n bytes for a compressed body: within the compressed
// bodies' half and within the whole budget.
func (b *budget) tryCoded(n int64) bool {
	if !addWithin(&b.coded, n, b.codedLimit) {
		return false
	}
	if !b.try(n) {
		b.coded.Add(-n)
		return false
	}
	return true
}

// acquire reserves n bytes, waiting up to wait for room.
func (b *budget) acquire(n int64, wait time.Duration) bool {
	return b.wait(n, wait, b.try)
}

// acquireState reserves n bytes of decompressor state, waiting up to wait.
func (b *budget) acquireState(n int64, wait time.Duration) bool {
	return b.wait(n, wait, b.tryState)
}

// acquireCoded reserves n bytes of a compressed body's decoded bytes,
// waiting up to wait.
func (b *budget) acquireCoded(n int64, wait time.Duration) bool {
	return b.wait(n, wait, b.tryCoded)
}

func (b *budget) wait(n int64, wait time.Duration, try func(int64) bool) bool {
	if try(n) {
		return true
	}
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; time.Now().Before(deadline); {
		time.Sleep(pause)
		if try(n) {
			return true
		}
		if pause < 20*time.Millisecond {
			pause *= 2
		}
	}
	return false
}

func (b *budget) release(n int64) { b.used.Add(-n) }

// releaseState gives back n bytes of decompressor state.
func (b *budget) releaseState(n int64) {
	b.state.Add(-n)
	b.releaseCoded(n)
}

// releaseCoded gives back n bytes reserved by tryCoded.
func (b *budget) releaseCoded(n int64) {
	b.coded.Add(-n)
	b.used.Add(-n)
}

// origins decides row 1.
type origins struct {
	any  bool
	list map[string]bool // lower-case scheme://host[:port]
}

func newOrigins(allowed []string) origins {
	o := origins{list: make(map[string]bool)}
	for _, a := range allowed {
		if a == "*" {
			o.any = true
			continue
		}
		if c, err := CanonicalOrigin(a); err == nil { // Config.validate refused the others
			o.list[c] = true
		}
	}
	return o
}

// CanonicalOrigin returns v, an allowed origin (Config.AllowedOrigins),
// as browsers serialize an Origin header, which the server compares
// exactly (case aside): without the scheme's default
// port, which browsers leave out, so "https://a.example:443" would never
// match. Parts an Origin never has (user, query, fragment, a path) and a
// port that is not one are refused rather than kept as an entry that
// never matches.
func CanonicalOrigin(v string) (string, error) {
	if v == "*" {
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%q is not an origin: want scheme://host[:port] or *", v)
	}
	host, port := u.Hostname(), u.Port()
	if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("%q is not an origin: empty port", v)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%q is not an origin: port %q", v, port)
		}
		port = strconv.Itoa(n) // "08080" arrives as 8080
		if scheme := strings.ToLower(u.Scheme); scheme == "https" && n == 443 || scheme == "http" && n == 80 {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(host), nil
}

// allowed reports whether the Origin header value is allowed: a loopback
// origin (localhost, 127.0.0.0/8, [::1], any scheme and port) or one of
// the configured ones.
func (o origins) allowed(origin []byte) bool {
	if o.any {
		return true
	}
	var low [256]byte
	if len(origin) > len(low) {
		return false
	}
	for i, c := range origin {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	lo := low[:len(origin)]
	if o.list[string(lo)] {
		return true
	}
	i := bytes.Index(lo, []byte("://"))
	if i <= 0 {
		return false
	}
	host := lo[i+3:]
	if bytes.ContainsAny(host, "/?#@") {
		return false
	}
	if len(host) > 0 && host[0] == '[' {
		end := bytes.IndexByte(host, ']')
		if end < 0 || (end+1 < len(host) && host[end+1] != ':') {
			return false
		}
		return string(host[:end+1]) == "[::1]"
	}
	if c := bytes.LastIndexByte(host, ':'); c >= 0 {
		host = host[:c]
	}
	if string(host) == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(string(host))
	return err == nil && a.Is4() && a.As4()[0] == 127
}

// rateLimiter is a token bucket per client, in a bounded table that
// evicts the least recently seen client.
type rateLimiter struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	max     int
	trusted []netip.Prefix
	// forwarded says the trusted proxies name the client in Forwarded
	// (RFC 7239) rather than X-Forwarded-For.
	forwarded bool
	limit     RateLimiter // Config.RateLimiter; nil: the table below
	index     map[netip.Addr]int32
	slots     []rlSlot
	head      int32 // most recently seen
	tail      int32 // least recently seen
}

type rlSlot struct {
	key        netip.Addr
	tokens     float64
	last       int64 // unix nanoseconds of the last refill
	prev, next int32
}

func newRateLimiter(rate float64, burst, max int, trusted []netip.Prefix, forwarded bool) *rateLimiter {
	// Peers and forwarded addresses are unmapped before they are
	// compared, and an IPv4-mapped prefix (::ffff:10.0.0.0/104, as a
	// dual-stack listener logs its peers) contains no unmapped address:
	// such a proxy would never be trusted, and every client behind it
	// would share its key.
	if slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Addr().Is4In6() }) {
		trusted = slices.Clone(trusted)
		for i, p := range trusted {
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				trusted[i] = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
		}
	}
	return &rateLimiter{
		rate: rate, burst: float64(burst), max: max, trusted: trusted, forwarded: forwarded,
		index: make(map[netip.Addr]int32), head: -1, tail: -1,
	}
}

// clientKey returns the rate-limit key of a request: the peer address;
// or, when the peer is a trusted proxy, the rightmost address of the
// forwarding header (all of its lines combined, RFC 9110 §5.3) that is not
// itself a trusted proxy. A client cannot choose its key by sending a line
// of its own: the proxy appends the address it saw to the right of
// whatever the client sent, and the walk stops at the first address that
// is not a proxy. An element that is not an address ends the walk at the
// last proxy read, so a client sending garbage shares its proxy's key.
// IPv6 keys are grouped by /64.
func (r *rateLimiter) clientKey(ctx *fasthttp.RequestCtx, f *fields) netip.Addr {
	var peer netip.Addr
	if ta, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		peer, _ = netip.AddrFromSlice(ta.IP)
	}
	peer = peer.Unmap()
	if len(r.trusted) > 0 && r.isTrusted(peer) {
		if r.forwarded {
			peer = r.walk(peer, f.get(fForwarded), forwardedFor)
		} else {
			peer = r.walk(peer, f.get(fXForwardedFor), plainAddr)
		}
	}
	if peer.Is6() {
		if p, err := peer.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return peer
}

// walk reads a comma-separated forwarding list from the right, starting
// from the trusted peer, and returns the first address that is not a
// trusted proxy (or the last proxy, when the list runs out or an element
// is not an address). parse extracts an element's address.
func (r *rateLimiter) walk(peer netip.Addr, list []byte, parse func([]byte) (netip.Addr, bool)) netip.Addr {
	for len(list) > 0 {
		elem := list
		if c := bytes.LastIndexByte(list, ','); c >= 0 {
			elem, list = list[c+1:], list[:c]
		} else {
			list = nil
		}
		a, ok := parse(bytes.TrimSpace(elem))
		if !ok {
			break
		}
		peer = a.Unmap()
		if !r.isTrusted(peer) {
			break
		}
	}
	return peer
}

// plainAddr parses an X-Forwarded-For element: an IP address, possibly
// with a port ("192.0.2.1:4711", "[2001:db8::1]:4711") or in brackets
// without one ("[2001:db8::1]", as some proxies write IPv6). An element
// not read as an address ends the walk at the proxy, and every client
// behind it would then share the proxy's bucket.
func plainAddr(b []byte) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(string(b)); err == nil {
		return a, true
	}
	if n := len(b); n > 2 && b[0] == '[' && b[n-1] == ']' {
		a, err := netip.ParseAddr(string(b[1 : n-1]))
		return a, err == nil && a.Is6()
	}
	if ap, err := netip.ParseAddrPort(string(b)); err == nil {
		return ap.Addr(), true
	}
	return netip.Addr{}, false
}

// forwardedFor parses an RFC 7239 Forwarded element
// (for=192.0.2.60;proto=http;by=203.0.113.43) and returns its for=
// address; "unknown" and obfuscated identifiers are not addresses.
func forwardedFor(b []byte) (netip.Addr, bool) {
	for len(b) > 0 {
		pair := b
		if i := bytes.IndexByte(b, ';'); i >= 0 {
			pair, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		pair = bytes.TrimSpace(pair)
		eq := bytes.IndexByte(pair, '=')
		if eq < 0 || !equalFoldASCII(bytes.TrimSpace(pair[:eq]), "for") {
			continue
		}
		v := bytes.TrimSpace(pair[eq+1:])
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if len(v) > 0 && v[0] == '[' {
			end := bytes.IndexByte(v, ']')
			if end < 0 {
				return netip.Addr{}, false
			}
			a, err := netip.ParseAddr(string(v[1:end]))
			return a, err == nil && a.Is6()
		}
		if a, err := netip.ParseAddr(string(v)); err == nil && a.Is6() {
			// IPv6 without the brackets RFC 7239 asks for: unambiguous,
			// and read as no address it would key the client as its proxy.
			return a, true
		}
		if c := bytes.IndexByte(v, ':'); c >= 0 {
			v = v[:c] // an IPv4 address with a port
		}
		a, err := netip.ParseAddr(string(v))
		return a, err == nil && a.Is4()
	}
	return netip.Addr{}, false
}

func (r *rateLimiter) isTrusted(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// take spends one token of the request's client. It returns 0 when the
// request may go on, else the whole seconds until a token is available
// (at least 1). Config.RateLimiter, when set, decides instead of the
// table.
func (r *rateLimiter) take(ctx *fasthttp.RequestCtx, f *fields) int {
	key := r.clientKey(ctx, f)
	var wait time.Duration
	if r.limit != nil {
		wait = r.limit.Take(key)
	} else {
		wait = r.takeKey(key, monoNow())
	}
	return retryAfterSeconds(wait)
}

// takeKey spends one token of key at now (nanoseconds on a clock that
// should be monotonic: monoNow): 0 when the request may go on, else the
// time until a token is available. A now before the bucket's last refill
// refills nothing: a clock stepped back by an hour must not leave every
// known client an hour in debt.
func (r *rateLimiter) takeKey(key netip.Addr, now int64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.index[key]
	if !ok {
		i = r.insert(key, now)
	} else {
		r.touch(i)
	}
	s := &r.slots[i]
	s.tokens = math.Min(r.burst, s.tokens+float64(max(now-s.last, 0))/1e9*r.rate)
	s.last = now
	if s.tokens >= 1 {
		s.tokens--
		return 0
	}
	return time.Duration(math.Min((1-s.tokens)/r.rate*1e9, maxWait))
}

// maxWait caps a wait so that it converts to a time.Duration.
const maxWait = float64(1 << 62)

func (r *rateLimiter) insert(key netip.Addr, now int64) int32 {
	var i int32
	if len(r.slots) < r.max {
		r.slots = append(r.slots, rlSlot{})
		i = int32(len(r.slots) - 1)
	} else {
		i = r.tail // evict the least recently seen
		r.unlink(i)
		delete(r.index, r.slots[i].key)
	}
	r.slots[i] = rlSlot{key: key, tokens: r.burst, last: now, prev: -1, next: -1}
	r.index[key] = i
	r.pushFront(i)
	return i
}

func (r *rateLimiter) touch(i int32) {
	if r.head == i {
		return
	}
	r.unlink(i)
	r.pushFront(i)
}

func (r *rateLimiter) unlink(i int32) {
	s := &r.slots[i]
	if s.prev >= 0 {
		r.slots[s.prev].next = s.next
	} else {
		r.head = s.next
	}
	if s.next >= 0 {
		r.slots[s.next].prev = s.prev
	} else {
		r.tail = s.prev
	}
	s.prev, s.next = -1, -1
}

func (r *rateLimiter) pushFront(i int32) {
	s := &r.slots[i]
	s.prev, s.next = -1, r.head
	if r.head >= 0 {
		r.slots[r.head].prev = i
	}
	r.head = i
	if r.tail < 0 {
		r.tail = i
	}
}

// len returns the number of clients in the table.
func (r *rateLimiter) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.index)
}
