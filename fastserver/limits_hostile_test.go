package fastserver

// fastserver's limits as a hostile client meets them (contract §2
// "Header fields, trailers and repeated lines", §3): the rate-limit key
// behind trusted proxies, the limiter's clock, and a listener that runs
// out of file descriptors.

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The key an attacker can reach with forwarding headers of its own, or
// that a proxy's spelling of an address leads to.
func TestClientKeyHostile(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	r := newRateLimiter(1, 1, 10, trusted, false)
	cases := []struct{ xff, key string }{
		// IPv6 as proxies write it: bare, in brackets, with a port.
		{"2001:db8:5:6::1", "2001:db8:5:6::"},
		{"[2001:db8:5:6::1]", "2001:db8:5:6::"},
		{"[2001:db8:5:6::1]:4711", "2001:db8:5:6::"},
		{"198.51.100.7, [2001:db8:5:6::1]", "2001:db8:5:6::"},
		// A bracketed IPv4 is no spelling of an address.
		{"[198.51.100.7]", "10.1.2.3"},
		{"198.51.100.7:80", "198.51.100.7"},
		// One key for an IPv4 client however it is spelled.
		{"::ffff:198.51.100.7", "198.51.100.7"},
		{"0:0:0:0:0:ffff:198.51.100.7", "198.51.100.7"},
		{"[::ffff:198.51.100.7]:80", "198.51.100.7"},
		// A zone names no other client: grouped by /64 like its address.
		{"fe80::1%eth0", "fe80::"},
		// A client's own elements, left of what the proxy appended,
		// choose nothing.
		{"203.0.113.1, 203.0.113.2 , 198.51.100.7", "198.51.100.7"},
		{"garbage, , [x], 198.51.100.7", "198.51.100.7"},
		{"198.51.100.7, 10.0.0.2", "198.51.100.7"},
		{"198.51.100.7,\t10.0.0.2", "198.51.100.7"},
		// A trusted proxy spelled as an IPv4-mapped address is still one.
		{"198.51.100.7, ::ffff:10.0.0.5", "198.51.100.7"},
		// Nothing but proxies: the last one read.
		{"2001:db8:ffff::1, 10.1.1.1", "2001:db8:ffff::"},
		// Not addresses: the walk stops at the proxy that passed them on.
		{"198.051.100.7", "10.1.2.3"},
		{"\"198.51.100.7\"", "10.1.2.3"},
		{"1.2.3.4.5", "10.1.2.3"},
		{"[]", "10.1.2.3"},
	}
	for _, tc := range cases {
		if got := r.keyOf(keyCtx("10.1.2.3", tc.xff)); got != netip.MustParseAddr(tc.key) {
			t.Errorf("clientKey(XFF %q) = %s, want %s", tc.xff, got, tc.key)
		}
	}

	rf := newRateLimiter(1, 1, 10, trusted, true)
	for _, tc := range []struct{ fwd, key string }{
		{`for="[2001:db8:5:6::1]:4711"`, "2001:db8:5:6::"},
		{`for="[2001:db8:5:6::1]"`, "2001:db8:5:6::"},
		{`for=[2001:db8:5:6::1]`, "2001:db8:5:6::"},
		// Without brackets and quotes, as RFC 7239 would have it, yet
		// an address all the same.
		{`for=2001:db8:5:6::1`, "2001:db8:5:6::"},
		{`for="2001:db8:5:6::1"`, "2001:db8:5:6::"},
		{`for="[::ffff:198.51.100.7]"`, "198.51.100.7"},
		{`for="198.51.100.7:80"`, "198.51.100.7"},
		{`FOR=198.51.100.7;proto=https`, "198.51.100.7"},
		{`for=203.0.113.1, for=198.51.100.7;by=10.0.0.1, for=10.0.0.3`, "198.51.100.7"},
		// Obfuscated and unknown clients: the proxy that passed them on.
		{`for=_hidden`, "10.1.2.3"},
		{`for=unknown`, "10.1.2.3"},
		{`for="_x", for=10.0.0.3`, "10.0.0.3"},
		{`proto=http`, "10.1.2.3"},
		{`for=2001:db8:5:6::1%eth0`, "2001:db8:5:6::"},
	} {
		ctx := keyCtx("10.1.2.3", "")
		ctx.Request.Header.Set("Forwarded", tc.fwd)
		if got := rf.keyOf(ctx); got != netip.MustParseAddr(tc.key) {
			t.Errorf("clientKey(Forwarded %q) = %s, want %s", tc.fwd, got, tc.key)
		}
	}
}

// Behind a proxy that writes IPv6 clients in brackets, each client has a
// bucket of its own: read as no address, every one of them would share
// the proxy's, and one client over its rate would lock all of them out.
func TestRateLimitBracketedForwardedFor(t *testing.T) {
	_, addr := serve(t, Config{RateLimit: 0.1, RateBurst: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	do := func(xff string) *resp {
		return roundTrip(t, addr, post(pathRPC, valid, "X-Forwarded-For: "+xff))
	}
	want{200, 0, "7", `{"a":1}`, ""}.check(t, do("[2001:db8:1:2::1]"))
	want{429, -32603, "null", "", ""}.check(t, do("[2001:db8:1:2::99]")) // the same /64
	want{200, 0, "7", `{"a":1}`, ""}.check(t, do("[2001:db8:9:9::1]"))
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid))) // the proxy itself
}

// A clock stepped back leaves the buckets as they were: no client is put
// in debt for the length of the step.
func TestRateLimiterClockBack(t *testing.T) {
	r := newRateLimiter(1, 1, 10, nil, false)
	key := netip.MustParseAddr("192.0.2.1")
	now := int64(10 * time.Hour)
	if w := r.takeKey(key, now); w != 0 {
		t.Fatalf("first take: wait %v", w)
	}
	back := now - int64(time.Hour)
	if w := r.takeKey(key, back); w <= 0 || w > time.Second {
		t.Fatalf("after the clock went back an hour: wait %v, want at most the 1 s a token takes", w)
	}
	if w := r.takeKey(key, back+int64(1100*time.Millisecond)); w != 0 {
		t.Errorf("1.1 s later at 1 token/s: wait %v, want a token", w)
	}
}

// A trusted proxy given as an IPv4-mapped prefix (as a dual-stack
// listener names its peers) is trusted: its clients get keys of their own
// instead of all sharing the proxy's.
func TestTrustedProxyMappedPrefix(t *testing.T) {
	r := newRateLimiter(1, 1, 10, []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}, false)
	for _, peer := range []string{"10.1.2.3", "::ffff:10.1.2.3"} {
		if got := r.keyOf(keyCtx(peer, "198.51.100.7")); got != netip.MustParseAddr("198.51.100.7") {
			t.Errorf("clientKey(peer %s behind a trusted ::ffff:10.0.0.0/104) = %s, want 198.51.100.7", peer, got)
		}
	}
	// The walk trusts the mapped proxies in the list too.
	if got := r.keyOf(keyCtx("10.1.2.3", "198.51.100.7, 10.9.9.9")); got != netip.MustParseAddr("198.51.100.7") {
		t.Errorf("clientKey through two mapped-prefix proxies = %s, want 198.51.100.7", got)
	}
	// A mapped prefix shorter than 96 bits is left alone (it is not all
	// IPv4), and an untrusted peer's header still counts for nothing.
	r = newRateLimiter(1, 1, 10, []netip.Prefix{netip.MustParsePrefix("::ffff:0:0/95")}, false)
	if got := r.keyOf(keyCtx("10.1.2.3", "198.51.100.7")); got != netip.MustParseAddr("10.1.2.3") {
		t.Errorf("clientKey behind ::ffff:0:0/95 = %s, want the peer 10.1.2.3", got)
	}
}

// A client that opens connections until the process runs out of file
// descriptors (fewer than MaxConns) must not stop the server: fasthttp
// takes any accept error but a timeout for the listener's end, so the
// cap's listener waits for descriptors and accepts again. Here the
// descriptors are taken with files, one is given to a client's socket,
// and the server's accept of it fails with EMFILE; once the files are
// closed the same connection is served.
func TestAcceptOutOfDescriptors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	s, addr := serve(t, Config{})
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skip("no RLIMIT_NOFILE:", err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	low := old
	low.Cur = uint64(len(ents) + 64)
	if low.Cur >= old.Cur {
		t.Skipf("the descriptor limit %d is too low already", old.Cur)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip("cannot lower RLIMIT_NOFILE:", err)
	}
	var files []*os.File
	restore := func() {
		for _, f := range files {
			f.Close()
		}
		files = nil
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	defer restore()
	for range 200 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		files = append(files, f)
	}
	if len(files) == 0 || len(files) == 200 {
		restore()
		t.Skipf("could not exhaust the descriptors (%d files)", len(files))
	}
	// The last descriptor goes to the client; the server's accept finds
	// none left.
	files[len(files)-1].Close()
	files = files[:len(files)-1]
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		restore()
		t.Skip("dial with one descriptor free:", err)
	}
	time.Sleep(50 * time.Millisecond)
	restore()
	c := newConn(t, nc)
	t.Cleanup(func() { nc.Close() })
	c.c.SetDeadline(time.Now().Add(3 * time.Second))
	c.send(post(pathRPC, valid))
	r, err := c.tryRead()
	if err != nil {
		t.Fatalf("the connection made while descriptors ran out was never served: %v", err)
	}
	want{200, 0, "7", `{"a":1}`, ""}.check(t, r)
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
	if s.open.Load() > 2 {
		t.Errorf("%d connections counted open", s.open.Load())
	}
}

// errListener fails its first accepts with errs, then accepts from the
// next listener.
type errListener struct {
	net.Listener
	errs []error
}

func (l *errListener) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	return l.Listener.Accept()
}

// The cap's listener waits out errors that pass when connections close,
// and passes on every other one: a closed listener ends Serve.
func TestAcceptRetries(t *testing.T) {
	ln := listen(t)
	var open atomic.Int64
	accept := func(errs ...error) (net.Conn, error) {
		l := &capListener{Listener: &errListener{Listener: ln, errs: errs}, open: &open, max: 10}
		return l.Accept()
	}
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
	c, err := accept(opErr(syscall.EMFILE), opErr(syscall.ENFILE), opErr(syscall.ENOBUFS), opErr(syscall.ENOMEM))
	if err != nil {
		t.Fatalf("Accept after running out of descriptors: %v, want the next connection", err)
	}
	c.Close()
	if _, err := accept(net.ErrClosed); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on a closed listener: %v, want net.ErrClosed", err)
	}
	if _, err := accept(opErr(syscall.EINVAL)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Accept with EINVAL: %v, want it passed on", err)
	}
}
