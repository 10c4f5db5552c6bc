package fastserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// Defaults of Config, as the wire contract gives them.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultMaxBodyBytes      = decode.DefaultMaxBytes // 1 MiB
	DefaultMaxDepth          = decode.DefaultMaxDepth // 1000
	DefaultInflightBodyBytes = 256 << 20
	DefaultHandlerTimeout    = 10 * time.Second
	DefaultRateClients       = 100000
	DefaultMaxHeaderBytes    = 8 << 10
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxConns          = 10000
	DefaultShutdownGrace     = 10 * time.Second
	DefaultBudgetWait        = time.Second
	DefaultMinBodyRate       = 1 << 10
	DefaultMinBodyRateGrace  = 5 * time.Second
	DefaultDrainTimeout      = time.Second
	DefaultDrainBytes        = 4 << 20
	DefaultMaxStreams        = 1000
	DefaultClientResponse    = 60 * time.Second
	// ProxyHeaderXForwardedFor and ProxyHeaderForwarded are the values of
	// Config.ProxyHeader.
	ProxyHeaderXForwardedFor = "X-Forwarded-For"
	ProxyHeaderForwarded     = "Forwarded"
	// CompressMinBytes is the smallest answer that is compressed when the
	// client's Accept-Encoding allows it.
	CompressMinBytes = 1 << 10
)

// Config configures a Server. The zero value gives the contract's
// defaults: a zero (or nil) field means its documented default, never
// "unlimited". Negative values are errors.
type Config struct {
	// Addr is the address ListenAndServe listens on. Default
	// "127.0.0.1:8080": loopback only; bind beyond it by saying so.
	Addr string

	// MaxBodyBytes is the body ceiling for wire and decoded bytes: 413 /
	// -32600 past it. Default 1 MiB.
	MaxBodyBytes int64
	// MaxDepth is the nesting limit: 400 / -32600 past it. Default 1000.
	MaxDepth int
	// InflightBodyBytes bounds the body bytes held across all connections.
	// A body is charged as its bytes arrive, never its declared length up
	// front: a body without a coding its wire bytes, in steps from 4 KiB
	// doubling to 64 KiB (a declared length up to 64 KiB at once); a
	// compressed body 128 KiB for its decompressors and then twice its
	// decoded bytes, in the same steps. A stalled upload therefore holds
	// at most about twice what it sent. When a step finds no room within
	// BudgetWait, 503 / -32603. Default 256 MiB; at least twice
	// MaxBodyBytes.
	InflightBodyBytes int64
	// BudgetWait is how long a request waits for room in the in-flight
	// budget. Default 1 s.
	BudgetWait time.Duration
	// MinBodyRate is the slowest a body may arrive, in bytes per second
	// averaged since the request began, once MinBodyRateGrace has passed:
	// a slower one is cut off, 408 / -32600, and its connection closed
	// (Kestrel's MinRequestBodyDataRate). Default 1 KiB/s; it is checked on
	// the watchdog's tick (at most 100 ms). ReadTimeout still bounds the
	// whole request.
	MinBodyRate int64
	// MinBodyRateGrace is how long a body may take before MinBodyRate
	// applies. Default 5 s.
	MinBodyRateGrace time.Duration
	// HandlerTimeout is the handler deadline: 500 / -32603 past it.
	// Default 10 s.
	HandlerTimeout time.Duration

	// RateLimit is the sustained requests per second allowed to one
	// client (token bucket); 0 turns rate limiting off (the default).
	// Every POST to an endpoint that reaches the rate check costs one
	// token; nothing else does. 429 / -32603 with Retry-After past it.
	RateLimit float64
	// RateBurst is the bucket size. Default: RateLimit rounded up, at
	// least 1.
	RateBurst int
	// RateClients bounds the table of clients, least recently seen
	// evicted first. Default 100,000.
	RateClients int
	// RateLimiter, when not nil, decides the rate limit instead of the
	// in-process table that RateLimit, RateBurst and RateClients
	// configure (those are then not used): the server derives each
	// request's client key (TrustedProxies) and asks it. Default nil.
	RateLimiter RateLimiter
	// TrustedProxies are the peers whose forwarding header is believed
	// when keying the rate limit: the key is then the rightmost address
	// of that header (all its lines combined) that is not a trusted proxy.
	// Default none: the key is the peer address (IPv6 grouped by /64).
	TrustedProxies []netip.Prefix
	// ProxyHeader names the header the trusted proxies set:
	// ProxyHeaderXForwardedFor (the default) or ProxyHeaderForwarded (RFC
	// 7239's for= parameter). Only that one is read: a proxy that manages
	// one header passes the other through from the client unchecked.
	ProxyHeader string

	// AllowedOrigins are origins allowed besides loopback ones
	// ("https://app.example.com", exact, case-insensitive, a scheme's
	// default port as browsers leave it out: CanonicalOrigin; "*" allows
	// any). Requests with another Origin are refused 403 / -32600.
	AllowedOrigins []string

	// MaxHeaderBytes bounds the request header block: 431 past it.
	// Default 8 KiB.
	MaxHeaderBytes int
	// ReadTimeout, WriteTimeout and IdleTimeout close slow or idle
	// connections: ReadTimeout bounds a request's headers and body (from
	// its first byte; a connection's first request from its acceptance),
	// WriteTimeout the writing of an answer (each write of a streamed
	// one), IdleTimeout the wait between requests. They take effect no
	// earlier than set and at most two watchdog ticks later (package
	// documentation, "Connection timeouts"); the handler's run is bounded
	// by HandlerTimeout instead. Defaults 10 s, 10 s, 60 s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConns bounds the connections open at once, those draining after
	// an early answer included: past it a plain 503 and the connection is
	// closed, unless a connection is idle (Serve's connections): for a
	// second or more between requests, or for 5 s or more since it was
	// accepted without a byte of a request; then the one idle longest is
	// closed to admit the new one (rpcedge_connections_reclaimed_total).
	// A connection with a request waiting unread in its socket is busy.
	// Default 10,000.
	MaxConns int
	// ShutdownGrace bounds how long Shutdown waits for requests in
	// flight. Default 10 s. Idle connections are closed at once, and one
	// that has sent no byte of a request (a TLS handshake not finished
	// included) 5 s after its acceptance, so a grace under 5 s can end
	// with such connections still open.
	ShutdownGrace time.Duration
	// DrainTimeout and DrainBytes bound how long and how much of an
	// unread body is drained after an early answer, before the
	// connection is closed (so the client sees the answer, not a
	// reset). Defaults 1 s and 4 MiB.
	DrainTimeout time.Duration
	DrainBytes   int64

	// MaxStreams bounds the answers that may stream at once (handlers run
	// through Request.Stream, each holding a goroutine and, once it sends,
	// a connection; ServeEvents streams too). Past it a handler runs with
	// a Stream that refuses to send (ErrStreamLimit). Default 1000.
	MaxStreams int
	// MaxClientStreams bounds the streams one client holds at once, so
	// that one client cannot take all of MaxStreams: the client keyed as
	// the rate limit keys it (the peer address, IPv6 grouped by /64; the
	// forwarded address when the peer is one of TrustedProxies). Past it
	// a stream is refused as past MaxStreams, with ErrClientStreamLimit
	// (which errors.Is reports as ErrStreamLimit too): 503 with
	// Retry-After for ServeEvents and the A2A streams. Counted by this
	// Server (in a fleet, per instance). Default 0: no bound per client.
	// Behind a proxy that is not in TrustedProxies, every client has the
	// proxy's key, and so shares one bound.
	MaxClientStreams int
	// ClientResponseTimeout bounds how long Stream.Call waits for the
	// client's response to a request of the server's own. Default 60 s.
	ClientResponseTimeout time.Duration
	// UnmatchedResponse, when set, is offered a client's JSON-RPC response
	// (its raw id, the scope of the POST that carried it as
	// Endpoint.ResponseScope names it, "" without one, and the whole
	// message) that answers no request this server awaits in that scope,
	// before it is refused as row 10 says: a fleet relays it to the
	// instance that awaits it (Server.DeliverResponse there, with the same
	// scope) and returns true, answered 202. Default none.
	UnmatchedResponse func(id []byte, scope string, msg []byte) bool

	// TLS, when set, serves HTTPS with this configuration (a KeyPair's
	// TLSConfig, say): TLS 1.2 and 1.3 only (a lower MinVersion is raised
	// to 1.2), http/1.1 over ALPN. Default nil: plain HTTP.
	TLS *tls.Config
	// MetricsGuard, when set, runs before GET /metrics is answered: it
	// returns true to let the scrape through, or answers the request
	// itself (a 401 with its challenge, say) and returns false. Default
	// nil: /metrics is public, as /healthz is.
	MetricsGuard func(ctx *fasthttp.RequestCtx) bool

	// HealthPath is where GET answers "ok" for load balancers, and
	// MetricsPath where GET answers the Prometheus exposition. Defaults
	// "/healthz" and "/metrics". NoHealth and NoMetrics turn either route
	// off (Server.MetricsHandler serves the exposition elsewhere).
	HealthPath, MetricsPath string
	NoHealth, NoMetrics     bool

	// Logger receives the server's logs. Default slog.Default().
	Logger *slog.Logger
	// MoreMetrics, when not nil, writes more metrics in the Prometheus
	// text format after the server's own at GET /metrics (the fleet
	// package's, for example). It is called on the serving goroutine.
	MoreMetrics func(w io.Writer)
	// AccessLog logs one line per request at Info level. Off by default:
	// it costs allocations on every request.
	AccessLog bool
}

// withDefaults returns c with every zero field set to its default, or an
// error naming the first invalid field.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	bad := func(field string, v any) {
		errs = append(errs, fmt.Errorf("fastserver: invalid Config.%s: %v", field, v))
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	setI64 := func(field string, p *int64, def int64) {
		if *p < 0 {
			bad(field, *p)
		} else if *p == 0 {
			*p = def
		}
	}
	setInt := func(field string, p *int, def int) {
		if *p < 0 {
			bad(field, *p)
		} else if *p == 0 {
			*p = def
		}
	}
	setDur := func(field string, p *time.Duration, def time.Duration) {
		if *p < 0 {
			bad(field, *p)
		} else if *p == 0 {
			*p = def
		}
	}
	setI64("MaxBodyBytes", &c.MaxBodyBytes, DefaultMaxBodyBytes)
	setInt("MaxDepth", &c.MaxDepth, DefaultMaxDepth)
	setI64("InflightBodyBytes", &c.InflightBodyBytes, DefaultInflightBodyBytes)
	setDur("BudgetWait", &c.BudgetWait, DefaultBudgetWait)
	setI64("MinBodyRate", &c.MinBodyRate, DefaultMinBodyRate)
	setDur("MinBodyRateGrace", &c.MinBodyRateGrace, DefaultMinBodyRateGrace)
	setDur("HandlerTimeout", &c.HandlerTimeout, DefaultHandlerTimeout)
	if c.RateLimit < 0 || c.RateLimit != c.RateLimit {
		bad("RateLimit", c.RateLimit)
	}
	if c.RateBurst < 0 {
		bad("RateBurst", c.RateBurst)
	} else if c.RateBurst == 0 && c.RateLimit > 0 {
		c.RateBurst = int(c.RateLimit)
		if float64(c.RateBurst) < c.RateLimit {
			c.RateBurst++
		}
		if c.RateBurst < 1 {
			c.RateBurst = 1
		}
	}
	setInt("RateClients", &c.RateClients, DefaultRateClients)
	switch c.ProxyHeader {
	case "":
		c.ProxyHeader = ProxyHeaderXForwardedFor
	case ProxyHeaderXForwardedFor, ProxyHeaderForwarded:
	default:
		bad("ProxyHeader", c.ProxyHeader+" (want X-Forwarded-For or Forwarded)")
	}
	for _, p := range c.TrustedProxies {
		if !p.IsValid() {
			bad("TrustedProxies", p)
		}
	}
	for _, o := range c.AllowedOrigins {
		if _, err := CanonicalOrigin(o); err != nil {
			bad("AllowedOrigins", err)
		}
	}
	setInt("MaxHeaderBytes", &c.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setDur("ReadTimeout", &c.ReadTimeout, DefaultReadTimeout)
	setDur("WriteTimeout", &c.WriteTimeout, DefaultWriteTimeout)
	setDur("IdleTimeout", &c.IdleTimeout, DefaultIdleTimeout)
	setInt("MaxConns", &c.MaxConns, DefaultMaxConns)
	setDur("ShutdownGrace", &c.ShutdownGrace, DefaultShutdownGrace)
	setDur("DrainTimeout", &c.DrainTimeout, DefaultDrainTimeout)
	setI64("DrainBytes", &c.DrainBytes, DefaultDrainBytes)
	setInt("MaxStreams", &c.MaxStreams, DefaultMaxStreams)
	if c.MaxClientStreams < 0 {
		bad("MaxClientStreams", c.MaxClientStreams)
	}
	setDur("ClientResponseTimeout", &c.ClientResponseTimeout, DefaultClientResponse)
	if t, err := serverTLS(c.TLS); err != nil {
		errs = append(errs, err)
	} else {
		c.TLS = t
	}
	if c.HealthPath == "" {
		c.HealthPath = "/healthz"
	}
	if c.MetricsPath == "" {
		c.MetricsPath = "/metrics"
	}
	for _, p := range []struct{ name, v string }{{"HealthPath", c.HealthPath}, {"MetricsPath", c.MetricsPath}} {
		if err := CheckPath(p.v); err != nil {
			bad(p.name, fmt.Sprintf("%s (%v)", p.v, err))
		}
	}
	if c.HealthPath == c.MetricsPath && !c.NoHealth && !c.NoMetrics {
		bad("MetricsPath", c.MetricsPath+" (the same as HealthPath)")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.InflightBodyBytes < 2*c.MaxBodyBytes && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("fastserver: Config.InflightBodyBytes (%d) is below twice MaxBodyBytes (%d): a compressed body could never be read", c.InflightBodyBytes, c.MaxBodyBytes))
	}
	return c, errors.Join(errs...)
}

// CheckPath refuses a route path no request could reach: requests are
// matched by their decoded, cleaned path (fasthttp's), so a path that does
// not start with /, or holds "..", "//", a query, a fragment or a percent
// escape, would answer 404 to every request meant for it. Config's own
// routes, endpoint paths and HandleGET's are checked with it.
func CheckPath(p string) error {
	if p == "" || p[0] != '/' {
		return errors.New("a route must start with /")
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/-._~!$&'()*+,;=:@", r)) {
			return fmt.Errorf("%q cannot appear in a route (requests are matched by their decoded path)", r)
		}
	}
	if p != "/" && path.Clean(p) != strings.TrimSuffix(p, "/") {
		return fmt.Errorf("not a clean path: requests for it arrive as %s", path.Clean(p))
	}
	return nil
}
