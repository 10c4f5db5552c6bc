package fastserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// Server serves JSON-RPC endpoints over HTTP/1.1 with fasthttp, answering
// exactly as rpcedge's wire contract says. Make one with New; it is safe
// for concurrent use once serving.
type Server struct {
	cfg       Config
	http      *fasthttp.Server
	endpoints map[string]*endpoint
	few       []*endpoint // the endpoints, when there are few: found by comparison (endpointAt)
	gets      map[string]fasthttp.RequestHandler
	origins   origins
	rate      *rateLimiter
	budget    budget
	bufs      *bodyBuffers // large body buffers, shared by the decoders
	metrics   *serverMetrics
	log       *slog.Logger
	flog      *fasthttpLogger // fasthttp's own messages, redacted and rate-limited
	zstd      zstdEncoder     // the answers' zstd encoder: zstdAnswers (a benchmark sets its twin)

	open     atomic.Int64 // connections open, hijacked ones included
	netMu    sync.Mutex
	net      []*http.Server // ServeNetHTTP's servers
	entered  atomic.Uint64  // POST requests whose handler was entered
	answered atomic.Uint64  // of those, the ones answered
	// decoded is the decoded size of the last compressed body read to its
	// end: the size of the idle buffer the next one is lent (readBody).
	decoded atomic.Int64
	serving atomic.Bool
	running *watchdog    // handlers running: deadlines and Shutdown
	streams atomic.Int64 // stream slots held (stream.go)
	// clientStreams counts each client's (Config.MaxClientStreams); nil
	// without that bound.
	clientStreams *clientStreams
	pending       pendingCalls // requests to clients awaiting a response (stream.go)
	shutdown      chan struct{}
	// peers ends the streams whose clients left (stream.go).
	peers    peerWatch
	stopOnce sync.Once
}

type endpoint struct {
	*Endpoint
	labels map[string]string // Route.Label → canonical label
	path   string
	// methods is the preflight's Access-Control-Allow-Methods: POST,
	// OPTIONS and OtherMethods; expose is ExposeHeaders joined, or "".
	methods, expose string
	calls           sync.Pool          // *call, decoding with this endpoint's id policy
	hist            *requestHistograms // its duration and body-size histograms (metrics.go)
}

// Stats are the server's own counts, for operators and tests.
type Stats struct {
	// Entered counts POST requests to an endpoint whose handler was
	// entered: the requests the server has accepted.
	Entered uint64
	// Answered counts the accepted requests that have been answered.
	// Entered - Answered requests are in flight.
	Answered uint64
}

// New returns a Server for the given endpoints. It fails on an invalid
// Config, on an endpoint without a path or Route, on two endpoints at one
// path, and on any endpoint's Err.
func New(cfg Config, endpoints ...*Endpoint) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		endpoints: make(map[string]*endpoint),
		gets:      make(map[string]fasthttp.RequestHandler),
		log:       cfg.Logger,
		flog:      &fasthttpLogger{l: cfg.Logger},
		shutdown:  make(chan struct{}),
	}
	var errs []error
	for _, ep := range endpoints {
		var pathErr error
		if ep != nil {
			pathErr = CheckPath(ep.Path)
		}
		switch {
		case ep == nil:
			errs = append(errs, errors.New("fastserver: nil endpoint"))
			continue
		case ep.Err != nil:
			errs = append(errs, ep.Err)
		case pathErr != nil:
			errs = append(errs, fmt.Errorf("fastserver: endpoint path %q: %v", ep.Path, pathErr))
		case (ep.Path == cfg.HealthPath && !cfg.NoHealth) || (ep.Path == cfg.MetricsPath && !cfg.NoMetrics):
			errs = append(errs, fmt.Errorf("fastserver: endpoint path %s is the server's own route (Config.HealthPath, MetricsPath)", ep.Path))
		case ep.Route == nil:
			errs = append(errs, fmt.Errorf("fastserver: endpoint %s has no Route", ep.Path))
		case s.endpoints[ep.Path] != nil:
			errs = append(errs, fmt.Errorf("fastserver: two endpoints at %s", ep.Path))
		case !allTokens(ep.OtherMethods) || !allTokens(ep.ExposeHeaders):
			errs = append(errs, fmt.Errorf("fastserver: endpoint %s: OtherMethods and ExposeHeaders must be tokens (RFC 9110 §5.6.2)", ep.Path))
		}
		e := &endpoint{Endpoint: ep, labels: make(map[string]string), path: ep.Path,
			methods: strings.Join(append([]string{"POST", "OPTIONS"}, ep.OtherMethods...), ", "),
			expose:  strings.Join(ep.ExposeHeaders, ", ")}
		for _, l := range ep.Labels {
			e.labels[l] = l
		}
		s.endpoints[ep.Path] = e
		s.few = append(s.few, e)
	}
	if len(s.few) > maxFewEndpoints {
		s.few = nil
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !cfg.NoHealth {
		s.gets[cfg.HealthPath] = s.healthz
	}
	if !cfg.NoMetrics {
		s.gets[cfg.MetricsPath] = s.serveMetrics
	}
	s.origins = newOrigins(cfg.AllowedOrigins)
	if cfg.RateLimiter != nil {
		s.rate = newRateLimiter(1, 1, 1, cfg.TrustedProxies, cfg.ProxyHeader == ProxyHeaderForwarded)
		s.rate.limit = cfg.RateLimiter
	} else if cfg.RateLimit > 0 {
		s.rate = newRateLimiter(cfg.RateLimit, cfg.RateBurst, cfg.RateClients, cfg.TrustedProxies, cfg.ProxyHeader == ProxyHeaderForwarded)
	}
	if cfg.MaxClientStreams > 0 {
		keys := s.rate
		if keys == nil {
			keys = newRateLimiter(1, 1, 1, cfg.TrustedProxies, cfg.ProxyHeader == ProxyHeaderForwarded)
		}
		s.clientStreams = newClientStreams(cfg.MaxClientStreams, keys)
	}
	s.bufs = newBodyBuffers(cfg.MaxBodyBytes)
	s.budget.limit = cfg.InflightBodyBytes
	s.budget.stateLimit = cfg.InflightBodyBytes / 4
	// Half, but room for one compressed body of the ceiling with its
	// state when the budget is small.
	s.budget.codedLimit = max(cfg.InflightBodyBytes/2, min(cfg.InflightBodyBytes, decodedFactor*(cfg.MaxBodyBytes+1)+s.budget.stateLimit))
	s.budget.lentLimit = cfg.InflightBodyBytes / 4
	s.zstd = zstdAnswers
	s.running = newWatchdog(cfg.HandlerTimeout, cfg.MinBodyRate, cfg.MinBodyRateGrace, cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout)
	s.metrics = newServerMetrics(s.endpoints, s.inflight)
	s.running.limits.cut = &s.metrics.connTimeouts
	s.running.conns.reclaims = s.metrics.connsReclaimed
	s.running.clientGone = s.metrics.clientGone.Inc
	s.metrics.streamMetrics(func() float64 { return float64(s.streams.Load()) })
	s.metrics.set.NewGauge("rpcedge_inflight_body_bytes", func() float64 { return float64(s.budget.used.Load()) })
	s.metrics.set.NewGauge("rpcedge_connections_open", func() float64 { return float64(s.open.Load()) })
	s.metrics.extra = cfg.MoreMetrics
	for _, e := range s.endpoints {
		e.calls.New = func() any { return s.newCall(e.IDs) }
	}
	s.http = s.newHTTP()
	return s, nil
}

// newHTTP returns the fasthttp.Server that serves s.
func (s *Server) newHTTP() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:       s.serveTimed,
		ErrorHandler:  s.errorHandler,
		ExpectHandler: s.expectHandler,
		Name:          serverName,
		// The cap is capListener's; connections it reclaimed may still be
		// closing when those admitted in their place are served.
		Concurrency:     s.cfg.MaxConns + maxReclaiming,
		ReadBufferSize:  s.cfg.MaxHeaderBytes,
		WriteBufferSize: writeBuffer,
		// ReadTimeout, WriteTimeout and IdleTimeout are the watchdog's
		// (conntime.go): fasthttp's would cost three deadlines a request.
		ConnState:                     connState,
		LazyRequestTime:               true, // serveRPC reads the monotonic clock itself
		MaxRequestBodySize:            1,    // prefetch one byte; the decoder enforces the ceiling
		StreamRequestBody:             true,
		NoDefaultContentType:          true,
		NoDefaultServerHeader:         false,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		TCPKeepalive:                  true,
		Logger:                        s.flog,
	}
}

// HandleGET serves GET (and HEAD) requests for path with h, such as the
// A2A card at /.well-known/agent-card.json. Call it before serving.
func (s *Server) HandleGET(path string, h fasthttp.RequestHandler) error {
	if s.serving.Load() {
		return errors.New("fastserver: HandleGET after the server started")
	}
	if err := CheckPath(path); err != nil {
		return fmt.Errorf("fastserver: HandleGET(%q): %v", path, err)
	}
	if h == nil {
		return fmt.Errorf("fastserver: HandleGET(%q): no handler", path)
	}
	if _, dup := s.gets[path]; dup || s.endpoints[path] != nil {
		return fmt.Errorf("fastserver: HandleGET(%q): path already served", path)
	}
	s.gets[path] = h
	return nil
}

// Config returns the server's configuration with defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// stopping reports whether Shutdown has been called.
func (s *Server) stopping() bool {
	select {
	case <-s.shutdown:
		return true
	default:
		return false
	}
}

// Stats returns the server's request counts.
func (s *Server) Stats() Stats {
	return Stats{Entered: s.entered.Load(), Answered: s.answered.Load()}
}

// Handler returns the server's fasthttp handler, for serving through a
// fasthttp.Server of your own or in-memory tests. Limits that live in
// the fasthttp.Server (header size, timeouts, connection cap, the body
// prefetch) are then yours to set as New sets them.
func (s *Server) Handler() fasthttp.RequestHandler { return s.serve }

// ListenAndServe listens on Config.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Run listens on Config.Addr, serves until ctx is done (a signal, say:
// signal.NotifyContext), then shuts down gracefully (Shutdown, with the
// grace period of Config.ShutdownGrace) and returns. It logs the address
// it listens on at Info level ("listening", addr=http://HOST:PORT, or
// https:// with Config.TLS), so Addr may be "127.0.0.1:0". It returns nil
// after a clean shutdown, or the error that ended serving.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	scheme := "http://"
	if s.cfg.TLS != nil {
		scheme = "https://"
	}
	s.log.Info("listening", "addr", scheme+ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	err = s.Shutdown(context.WithoutCancel(ctx))
	if serr := <-done; err == nil {
		err = serr
	}
	return err
}

// Serve serves connections from ln until Shutdown, over TLS when
// Config.TLS is set. It returns nil after a clean shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.serving.Store(true)
	s.running.ensure() // the connections' timeouts
	// Phases are stamped with the coarse clock, which only ticks move: a
	// clock left behind by a watchdog stopped earlier would date this
	// server's first connections in the past (reclaimIdle, Shutdown's
	// rule for silent connections compare the stamps with the time).
	advanceClock(monoNow() / int64(time.Millisecond))
	ln = &capListener{Listener: ln, open: &s.open, max: int64(s.cfg.MaxConns), tls: s.cfg.TLS != nil, conns: &s.running.conns}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	defer s.closeOnShutdown(ln)()
	err := s.http.Serve(ln)
	select {
	case <-s.shutdown:
		return nil
	default:
	}
	return err
}

// closeOnShutdown closes ln once Shutdown is called, until the returned
// function is (when Serve returns). Shutdown closes only the listeners
// the HTTP server has taken: a Serve that starts after it, or races it,
// would otherwise serve for ever (found by review on 2026-12-06: a
// SIGTERM just after start left the process running).
func (s *Server) closeOnShutdown(ln net.Listener) (stop func()) {
	served := make(chan struct{})
	go func() {
		select {
		case <-s.shutdown:
			ln.Close()
		case <-served:
		}
	}()
	return func() { close(served) }
}

// ServeConn serves the requests of one connection that the caller
// accepted, with the same fasthttp configuration and timeouts Serve uses,
// and returns when the connection is done (closed by either side, or
// hijacked by an early answer). The connection cap (Config.MaxConns) and
// TLS are Serve's: ServeConn applies neither. It serves in-memory
// connections for benchmarks and tests, and listeners of the caller's own.
func (s *Server) ServeConn(c net.Conn) error {
	s.serving.Store(true)
	s.running.ensure()
	cc := servedConns.Get().(*capConn)
	cc.Conn, cc.list = c, &s.running.conns // not counted: ServeConn applies no cap
	cc.closed.Store(false)
	cc.hijacked.Store(false)
	cc.cutReading.Store(false)
	cc.dropHeld()
	cc.list.add(cc)
	err := s.http.ServeConn(cc)
	if !cc.hijacked.Load() {
		// fasthttp closed it (and so took it off the list); a hijacked
		// one lives on with its early answer.
		if !cc.closed.Load() {
			cc.Close()
		}
		cc.Conn = nil
		servedConns.Put(cc)
	}
	return err
}

// servedConns are ServeConn's wrappers, reused: a connection served in
// memory costs no allocation.
var servedConns = sync.Pool{New: func() any { return new(capConn) }}

// serveTimed is the fasthttp handler: serve, then the connection's next
// phase for its timeouts (conntime.go): writing the answer, or none for
// a streamed answer, which gives each write its own deadline.
func (s *Server) serveTimed(ctx *fasthttp.RequestCtx) {
	s.serve(ctx)
	if ctx.Response.IsBodyStream() {
		markConn(ctx, connFree)
		return
	}
	markConn(ctx, connWriting)
	if ctx.LastTimeoutErrorResponse() == nil && !ctx.Hijacked() && // else fasthttp writes another answer, or none
		len(ctx.Response.Body()) >= writeBuffer && !ctx.Response.SkipBody && !ctx.IsHead() && sendsBody(ctx.Response.StatusCode()) {
		// An answer the write buffer cannot hold: its two writes go out
		// as one (conns.go). Over TLS ctx.Conn is the tls.Conn.
		if c, ok := ctx.Conn().(*capConn); ok {
			c.holdNext()
		}
	}
}

// sendsBody reports whether an answer with status code sends its body
// (RFC 9112 §6.3: not 1xx, 204 or 304).
func sendsBody(code int) bool {
	return code >= 200 && code != fasthttp.StatusNoContent && code != fasthttp.StatusNotModified
}

// FastHTTPServer returns a new fasthttp.Server configured exactly as s
// serves (buffer sizes, the body prefetch and streaming, the hooks that
// decide before the body is read, the connection-state hook), around h
// instead of s's own handler: a baseline that pays what the configuration
// costs and none of the pipeline, for benchmarks. The connection timeouts
// are s's watchdog's and apply to the connections Serve and ServeConn
// accept, not to those the returned server accepts itself.
func (s *Server) FastHTTPServer(h fasthttp.RequestHandler) *fasthttp.Server {
	hs := s.newHTTP()
	hs.Handler = h
	return hs
}

// Shutdown stops accepting connections, lets every accepted request finish
// and be answered, and closes idle connections, and those that have sent
// no byte of a request 5 s after their acceptance (a TLS handshake never
// finished included). It waits at most the
// grace period (Config.ShutdownGrace, or ctx's deadline if earlier); then
// it cancels the contexts of the handlers still running (they are
// answered 500 / -32603 when they return) and waits at most one more
// second for their answers. It returns context.DeadlineExceeded when
// connections were still open at the end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.shutdown) })
	s.running.limits.draining.Store(true)
	grace, cancel := context.WithTimeout(ctx, s.cfg.ShutdownGrace)
	defer cancel()
	end, _ := grace.Deadline() // the grace period or ctx's deadline, whichever is first
	wait, cancelWait := context.WithDeadline(context.WithoutCancel(ctx), end.Add(time.Second))
	defer cancelWait()
	done := make(chan error, 1)
	go func() {
		s.netMu.Lock()
		nets := s.net
		s.netMu.Unlock()
		// The net/http servers (ServeNetHTTP) stop accepting and close
		// idle connections; each returns once its connections are idle,
		// which is also when its GET streams (ServeEvents: not requests
		// the counts below see) have ended and given back their slots,
		// as they do at once when shutdown is closed. Waited for: Shutdown
		// returned before them (found in CI on 2026-12-07: a stream's
		// done not yet called, its slot held).
		var wg sync.WaitGroup
		netErr := make([]error, len(nets))
		for i, hs := range nets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				netErr[i] = hs.Shutdown(wait)
			}()
		}
		err := s.http.ShutdownWithContext(wait)
		// Requests served through HTTPHandler are not fasthttp's: wait
		// for them too.
		for s.entered.Load() != s.answered.Load() && wait.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		if err == nil && s.entered.Load() != s.answered.Load() {
			err = context.DeadlineExceeded
		}
		wg.Wait()
		if err == nil {
			err = errors.Join(netErr...)
		}
		done <- err
	}()
	select {
	case err := <-done:
		s.running.stop()
		return err
	case <-grace.Done():
	}
	s.running.cancelAll(errShuttingDown)
	err := <-done
	s.running.stop()
	return err
}

var errShuttingDown = errors.New("fastserver: server shutting down")

// fasthttpLogger sends fasthttp's own messages to slog, as warnings with
// source=fasthttp. fasthttp quotes up to 400 bytes of a request it could
// not parse into its message ("contents: ..."): a header section that may
// carry credentials, or a body. Those bytes are not logged, a message is
// cut at fasthttpLogMax bytes, and at most fasthttpLogBurst messages a
// second are logged; the next one logged says how many were dropped
// (suppressed=N). A client that writes malformed requests can neither put
// its bytes in the log nor fill it.
type fasthttpLogger struct {
	l       *slog.Logger
	mu      sync.Mutex
	sec     int64 // the second (monoNow) messages are counted in
	n       int   // messages in that second
	dropped int   // messages dropped since the last one logged
}

const (
	fasthttpLogBurst = 20
	fasthttpLogMax   = 512
)

// Printf logs one of fasthttp's messages.
func (f *fasthttpLogger) Printf(format string, args ...any) {
	sec := monoNow() / int64(time.Second)
	f.mu.Lock()
	if sec != f.sec {
		f.sec, f.n = sec, 0
	}
	f.n++
	if f.n > fasthttpLogBurst {
		f.dropped++
		f.mu.Unlock()
		return
	}
	dropped := f.dropped
	f.dropped = 0
	f.mu.Unlock()
	msg := redactFasthttp(fmt.Sprintf(format, args...))
	if dropped > 0 {
		f.l.Warn(msg, "source", "fasthttp", "suppressed", dropped)
		return
	}
	f.l.Warn(msg, "source", "fasthttp")
}

// redactFasthttp drops the request bytes fasthttp quotes into a message
// and cuts it at fasthttpLogMax bytes (on a UTF-8 boundary). Besides the
// buffer after ", contents: ", fasthttp quotes (%q) the whole request in
// some refusals ("invalid request uri %q in %q", "unsupported http
// version %q in %q", "cannot find whitespace in the first line of request
// %q") and a header's value in others ("invalid header value %q"): every
// quoted string but a connection's address becomes "…".
func redactFasthttp(msg string) string {
	if i := strings.Index(msg, ", contents: "); i >= 0 {
		msg = msg[:i] + ", contents not logged"
	}
	if strings.IndexByte(msg, '"') >= 0 {
		msg = redactQuoted(msg)
	}
	if len(msg) > fasthttpLogMax {
		cut := fasthttpLogMax
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// redactQuoted replaces each double-quoted string of msg (Go syntax,
// backslash escapes) with "…" unless it is an address (host:port), and
// the rest of msg from an unterminated one.
func redactQuoted(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		j := i + 1
		for j < len(msg) && msg[j] != '"' {
			if msg[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(msg) {
			b.WriteString(`"…"`)
			return b.String()
		}
		if q := msg[i+1 : j]; isAddress(q) {
			b.WriteString(msg[i : j+1])
		} else {
			b.WriteString(`"…"`)
		}
		msg = msg[j+1:]
	}
}

// isAddress reports whether s looks like a connection's address as
// net.Addr prints it (an IP or a name, and a port): letters, digits,
// '.', '-', '[', ']', '%' and a ':'.
func isAddress(s string) bool {
	if s == "" || strings.IndexByte(s, ':') < 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || strings.IndexByte(".-[]%:", c) >= 0) {
			return false
		}
	}
	return true
}

// call is the per-request state, pooled.
type call struct {
	s     *Server
	dec   decode.Decoder
	msg   decode.Message
	req   Request
	f     fields // the header snapshot
	body  bodyReader
	dz    decodedReader // the decoding layer of a compressed body
	first int64         // the first reservation of the body budget
	lent  int64         // the idle buffer lent to the body (budget.lend)
	state bool          // first is decompressor state
	start int64         // when the request's handler was entered (monoNow)
	end   int64         // when its RPC handler returned (monoNow), or 0
	// streamed says the answer became a stream: it ends after end. held
	// says the stream was handed to fasthttp as the answer's body: the
	// handler still reads the body (its params borrow from the decoder's
	// buffer), so what the body holds of the budget is released when the
	// stream ends (finishRPC), not when runBody returns.
	streamed bool
	held     bool
	counted  lastCounter  // the counter of the call's previous request
	labels   lastLabels   // the labels of the call's previous request
	mem      bytes.Reader // the body when fasthttp holds it in memory
	out      []byte
	hdr      []HeaderField // header fields of the answer's *Error
	zbuf     []byte
	dl       deadlineCtx
	stage    stage // where the request is, for the panic guard
	pending  bool  // the body may still be arriving on the connection
	early    bool  // an early answer took the connection
	retry    int   // the handler error's RetryAfter, for the answer's header
	// cancelled says the client cancelled the request (Endpoint.Cancel,
	// on a stream of messages, where the answer is not written; or
	// Request.Cancel): invoke ends the handler's context as soon as it is
	// armed.
	cancelled atomic.Bool

	// For answers that stream (stream.go): the request being served, its
	// endpoint and label, the result's offset in out, the stream.
	rctx   *fasthttp.RequestCtx
	ep     *endpoint
	label  string
	prefix int
	st     Stream
	// lineOut is the output of a stream of messages (ServeLines), where a
	// stream's events are lines written before the answer; nil over
	// HTTP. lineStream is the Stream of the handler running on it, if
	// any (Request.Stream).
	lineOut    *lineOut
	lineStream *Stream
	// strayResponse says the line is a client's response that no call
	// awaits: refused with a null id (lines.answer).
	strayResponse bool
}

// cancel is the client's cancellation of c's request (Endpoint.Cancel,
// Request.Cancel): the flag first, so that invoke, arming the context
// after this cancel found it unarmed, sees the flag and cancels it.
func (c *call) cancel() {
	c.cancelled.Store(true)
	c.dl.cancel(context.Canceled)
}

// trimAnswer drops answer buffers over keepAnswerBuffer. The answer
// buffer rotates with fasthttp's response body (SwapBody), so a buffer
// that once held a large answer would otherwise come back into a pooled
// call a request later and stay there; the compressed answer's buffer
// keeps the uncompressed one the same way.
func (c *call) trimAnswer() {
	if cap(c.out) > keepAnswerBuffer {
		c.out = nil
	}
	if cap(c.zbuf) > keepAnswerBuffer {
		c.zbuf = nil
	}
}

func (s *Server) newCall(ids decode.IDPolicy) *call {
	c := &call{s: s, out: make([]byte, 0, 4096)}
	if err := c.dec.SetOptions(decode.Options{MaxBytes: s.cfg.MaxBodyBytes, MaxDepth: s.cfg.MaxDepth, IDs: ids, Buffers: s.bufs}); err != nil {
		panic(err) // Config was validated
	}
	c.dl.init(s.cfg.HandlerTimeout)
	c.st.c = c
	c.dz.zr.Reserve = c.dz.reserveHistory
	return c
}

var (
	ctJSON       = []byte("application/json")
	allowPOST    = []byte("POST, OPTIONS")
	allowGET     = []byte("GET, HEAD")
	strOK        = []byte("ok")
	strTextPlain = []byte("text/plain; charset=utf-8")
)

// maxFewEndpoints bounds the endpoints endpointAt compares one by one.
const maxFewEndpoints = 4

// endpointAt returns the endpoint at path, or nil. A server has one or
// two endpoints most often: comparing the path with each costs less than
// hashing it for the map.
func (s *Server) endpointAt(path []byte) *endpoint {
	if s.few == nil {
		return s.endpoints[string(path)]
	}
	for _, ep := range s.few {
		if string(path) == ep.path {
			return ep
		}
	}
	return nil
}

// serverName is the Server field of every answer, whichever transport
// writes it.
const serverName = "rpcedge"

// serve routes a request.
func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	ep := s.endpointAt(path)
	if ep != nil && ctx.IsPost() && !unsupportedVersion(&ctx.Request.Header) {
		s.serveRPC(ctx, ep) // guarded on its own
		return
	}
	// Not a call: its request has been read (a body it has is fasthttp's
	// to discard), so no read timeout while its handler runs.
	markConn(ctx, connHandling)
	if ctx.Request.Header.ContentLength() != 0 {
		// A body no handler here reads: fasthttp discards up to 256 KiB
		// of it and serves on, or closes on the rest.
		s.drainAtClose(ctx)
	}
	if unsupportedVersion(&ctx.Request.Header) {
		// RFC 9110 §15.6.6 (fasthttp closes after it, as after HTTP/1.0
		// without keep-alive).
		ctx.SetStatusCode(fasthttp.StatusHTTPVersionNotSupported)
		ctx.SetContentTypeBytes(strTextPlain)
		ctx.SetBodyString("HTTP version not supported\n")
		return
	}
	defer func() {
		if v := recover(); v != nil {
			s.recoverPlain(ctx, stageRoute, v)
		}
	}()
	at(stageRoute)
	if st := s.routeRefusal(ctx, ep); st != 0 {
		ctx.SetStatusCode(st)
		return
	}
	if ep != nil {
		if ctx.IsOptions() {
			s.preflight(ctx, ep)
		} else {
			s.serveOther(ctx, ep)
		}
		return
	}
	s.gets[string(path)](ctx)
}

// serveOther offers a request with a method other than POST and OPTIONS
// to the endpoint's Other (405 when it does not answer), after row 1: a
// foreign Origin is 403, as for a POST (an MCP session's stream and its
// end are requests to the same endpoint). An allowed origin gets its CORS
// fields on whatever answer Other made (ctx.Error resets the answer's
// header, so they are set after).
func (s *Server) serveOther(ctx *fasthttp.RequestCtx, ep *endpoint) {
	var f fields
	f.snapshot(&ctx.Request.Header)
	origin := f.get(fOrigin)
	if origin != nil && (f.count(fOrigin) > 1 || !s.origins.allowed(origin)) {
		ctx.Error("origin not allowed", fasthttp.StatusForbidden)
		return
	}
	if !ep.Other(s, ctx) {
		refuseMethod(ctx, allowPOST)
	}
	if origin != nil {
		ep.allowOrigin(ctx, origin)
	}
}

// allowOrigin sets the CORS fields of an answer to an allowed origin.
func (ep *endpoint) allowOrigin(ctx *fasthttp.RequestCtx, origin []byte) {
	h := &ctx.Response.Header
	h.SetBytesV("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if ep.expose != "" {
		h.Set("Access-Control-Expose-Headers", ep.expose)
	}
}

// allTokens reports whether every string of l is a token.
func allTokens(l []string) bool {
	for _, t := range l {
		if !isToken(t) {
			return false
		}
	}
	return true
}

// isToken reports whether t is a token (RFC 9110 §5.6.2).
func isToken[T string | []byte](t T) bool {
	if len(t) == 0 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !tchars[t[i]] {
			return false
		}
	}
	return true
}

// unsupportedVersion reports a request line whose HTTP version is not
// 1.x: fasthttp takes any HTTP/d.d (HTTP/2.0, HTTP/0.9) and serves it as
// HTTP/1.0. An HTTP/1.1 request costs one comparison.
func unsupportedVersion(h *fasthttp.RequestHeader) bool {
	if h.IsHTTP11() {
		return false
	}
	p := h.Protocol()
	return len(p) != len("HTTP/1.0") || p[5] != '1'
}

// routeRefusal returns the answer serve gives a request that is not a
// call from its method and path alone: 404 for a path nothing serves, 405
// (its Allow field set) for a method the path does not take; or 0 when a
// handler decides (a GET route, a preflight, an endpoint's Other). The
// Expect handler asks it too, so that such a request is answered before
// its body is sent rather than after 100 Continue.
func (s *Server) routeRefusal(ctx *fasthttp.RequestCtx, ep *endpoint) int {
	if ep != nil {
		if ctx.IsPost() || ctx.IsOptions() || ep.takesOther(ctx.Method()) {
			return 0
		}
		return refuseMethod(ctx, allowPOST)
	}
	if s.gets[string(ctx.Path())] == nil {
		return fasthttp.StatusNotFound
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		return refuseMethod(ctx, allowGET)
	}
	return 0
}

// refuseMethod answers 405 with the methods allowed.
func refuseMethod(ctx *fasthttp.RequestCtx, allow []byte) int {
	ctx.Response.Header.SetBytesV("Allow", allow)
	ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
	return fasthttp.StatusMethodNotAllowed
}

// MetricsHandler returns the handler of the Prometheus exposition (behind
// Config.MetricsGuard), to serve it at a path or port of one's own with
// Config.NoMetrics set; over net/http, mount HTTPHandler there after
// HandleGET(path, s.MetricsHandler()).
func (s *Server) MetricsHandler() fasthttp.RequestHandler { return s.serveMetrics }

// serveMetrics answers GET /metrics behind Config.MetricsGuard.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if g := s.cfg.MetricsGuard; g != nil && !g(ctx) {
		return
	}
	s.metrics.serve(ctx)
}

func (s *Server) healthz(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentTypeBytes(strTextPlain)
	ctx.SetBody(strOK)
}

// serveRPC runs the contract's checks in order for one POST. A panic
// anywhere in it costs this request only (recoverRPC).
func (s *Server) serveRPC(ctx *fasthttp.RequestCtx, ep *endpoint) {
	s.entered.Add(1)
	// fasthttp reads no clock (LazyRequestTime): the request's one
	// reading of the monotonic clock starts it here.
	start := monoNow()
	c := ep.calls.Get().(*call)
	c.stage, c.pending, c.early, c.start, c.end, c.streamed, c.held = stageHeaders, false, false, start, 0, false, false
	c.req.at, c.req.wall = start, time.Time{} // Request.Time, for the hooks: read when asked
	c.hdr = nil
	defer func() {
		if v := recover(); v != nil {
			s.recoverRPC(ctx, ep, c, v)
		}
	}()
	c.ep, c.rctx, c.label = ep, ctx, ""
	status, code := s.runRPC(ctx, ep, c, &c.label)
	if c.st.started {
		return // the answer is a stream: its end finishes the request (stream.go)
	}
	s.finishRPC(ctx, c, status, code)
}

// lastLabels remembers the metric labels a call's previous request got
// from its endpoint's table, by method and by route: a pooled call most
// often serves the same method again, and comparing the method's bytes
// costs less than hashing them into the map. The table maps every label
// to itself, so its answer for "" is "": the zero lastLabels is already
// right for the empty name and key.
type lastLabels struct {
	name                 []byte
	nameLabel            string
	routeKey, routeLabel string
}

// maxRememberedMethod bounds the method names lastLabels copies: a
// client's long name is looked up, not kept.
const maxRememberedMethod = 64

// method returns ep.labels[string(name)].
func (l *lastLabels) method(ep *endpoint, name []byte) string {
	if bytes.Equal(name, l.name) {
		return l.nameLabel
	}
	label := ep.labels[string(name)]
	if len(name) <= maxRememberedMethod {
		l.name = append(l.name[:0], name...)
		l.nameLabel = label
	}
	return label
}

// route returns ep.labels[key].
func (l *lastLabels) route(ep *endpoint, key string) string {
	if key != l.routeKey {
		l.routeKey, l.routeLabel = key, ep.labels[key]
	}
	return l.routeLabel
}

// inflight returns the requests entered and not yet answered. answered
// is read first: entered only grows, so the difference is never below
// the true count at the first read.
func (s *Server) inflight() uint64 {
	a := s.answered.Load()
	return s.entered.Load() - a
}

// finishRPC counts an answered request and releases its call.
func (s *Server) finishRPC(ctx *fasthttp.RequestCtx, c *call, status, code int) {
	ep, label, start := c.ep, c.label, c.start
	c.enter(stageMetrics)
	var took time.Duration
	if c.end == 0 || c.streamed {
		took = time.Duration(monoNow() - start)
	} else {
		took = time.Duration(c.end - start) // the clock read that ended the handler
	}
	s.metrics.observe(ep, label, status, code, took, c.body.n, &c.counted)
	if s.cfg.AccessLog {
		if label == "" {
			label = "other"
		}
		s.log.Info("rpc", "endpoint", ep.path, "method", label, "status", status, "code", code,
			"remote", ctx.RemoteAddr().String(), "duration", time.Duration(monoNow()-start))
	}
	if c.held {
		// A stream's body was held until now: the decoder's buffer
		// goes with it (Trim below).
		c.held = false
		s.releaseBody(c)
	}
	c.body = bodyReader{}
	c.dz.ch = charge{}
	c.dz.held = 0
	c.first = 0
	c.mem.Reset(nil)
	c.f.reset()
	c.dec.Trim(keepBodyBuffer)
	c.trimAnswer()
	c.rctx, c.ep = nil, nil
	if c.cancelled.Load() {
		c.cancelled.Store(false) // Request.Cancel's
	}
	s.running.unlink(&c.dl)
	ep.calls.Put(c)
	s.answered.Add(1)
}

// runRPC answers one POST and returns its HTTP status and JSON-RPC code
// (0 for none) for metrics; label is set to the method's metrics label.
func (s *Server) runRPC(ctx *fasthttp.RequestCtx, ep *endpoint, c *call, label *string) (int, int) {
	h := &ctx.Request.Header
	f := &c.f
	c.enter(stageHeaders)
	f.snapshot(h) // before any body byte: trailers never count
	stream := ctx.RequestBodyStream()
	if stream == nil {
		// No body on the wire (RFC 9112 §6.3: neither Content-Length nor
		// Transfer-Encoding means length zero), or a fasthttp.Server of
		// the caller's own that read the body into memory.
		c.mem.Reset(ctx.PostBody())
		stream = &c.mem
	} else {
		c.pending = h.ContentLength() != 0
	}
	// Framing the table does not take: refused before anything is read
	// from the header section (a folded line may hold any field's end).
	if st, msg := framingError(f); st != 0 {
		s.earlyAnswer(ctx, st, strTextPlain, []byte(msg))
		c.early = true
		return st, 0
	}
	origin := f.get(fOrigin)
	originOK := origin == nil || (f.count(fOrigin) == 1 && s.origins.allowed(origin))
	if originOK && origin != nil {
		ep.allowOrigin(ctx, origin)
	}
	// Row 1.
	if !originOK {
		return s.refuse(ctx, c, fasthttp.StatusForbidden, decode.CodeInvalidRequest, "origin not allowed", 0)
	}
	// Row 2 (unless expectHandler took the token).
	if s.rate != nil && ctx.UserValue(userRated) == nil {
		if wait := s.rate.take(ctx, f); wait > 0 {
			c.pending = true // the body is never read: always answer early
			return s.refuse(ctx, c, fasthttp.StatusTooManyRequests, decode.CodeInternalError, "rate limit reached", wait)
		}
	}
	// Row 2a: the endpoint's authorization, from the request line and
	// the header section alone.
	if ep.Authorize != nil {
		r := &c.req
		r.reset(f, nil, nil)
		r.Auth = nil
		if e := ep.Authorize(r); e != nil {
			return s.refuseError(ctx, c, e)
		}
	}
	// Rows 3 to 5.
	enc, encErr := contentEncoding(f)
	if st, code, msg := s.checkHeaders(f, h, encErr); st != 0 {
		return s.refuse(ctx, c, st, code, msg, 0)
	}
	// Row 6: the first reservation; the rest as the bytes arrive.
	reserve, whole := s.firstReservation(h, enc)
	acquire := s.budget.acquire
	if !enc.IsIdentity() {
		acquire = s.budget.acquireState
	}
	if !acquire(reserve, s.cfg.BudgetWait) {
		return s.refuse(ctx, c, fasthttp.StatusServiceUnavailable, decode.CodeInternalError, "server busy: in-flight body budget spent", 1)
	}
	c.first = reserve
	c.state = !enc.IsIdentity()
	return s.runBody(ctx, ep, c, f, h, stream, enc, whole, label)
}

// runBody is runRPC from row 7 on: it reads the body, dispatches and
// answers, and releases the body's budget when it returns. A function of
// its own so that its defer is open-coded: runRPC's many returns would
// put it on the runtime's slower path.
func (s *Server) runBody(ctx *fasthttp.RequestCtx, ep *endpoint, c *call, f *fields, h *fasthttp.RequestHeader,
	stream io.Reader, enc decode.Encoding, whole bool, label *string) (int, int) {
	defer s.releaseBody(c)
	length := int64(-1)
	if c.pending {
		length = int64(max(h.ContentLength(), -1))
	}

	// Rows 7 to 10, under the data-rate watchdog, and while Shutdown may
	// unblock a stalled body.
	m := &c.msg
	// The context stays linked until the call is released (finishRPC):
	// its handler deadline is armed in the same place in the list.
	c.dl.conn = ctx.Conn()
	c.dl.bodyStart.Store(c.start)
	c.dl.bodyBytes.Store(0)
	c.dl.slow.Store(false)
	c.dl.deadline.Store(math.MaxInt64) // no handler yet
	s.running.ensure()
	s.running.link(&c.dl)
	c.enter(stageDecode)
	err := s.readBody(c, stream, enc, whole, length)
	c.dl.bodyStart.Store(0)     // the body is in: the data rate no longer applies
	markConn(ctx, connHandling) // no read timeout while the handler runs
	if err != nil {
		de, ok := err.(*decode.Error)
		switch {
		case err == errBudget:
			return s.refuse(ctx, c, fasthttp.StatusServiceUnavailable, decode.CodeInternalError, "server busy: in-flight body budget spent", 1)
		case !ok && s.stopping():
			return s.refuse(ctx, c, fasthttp.StatusServiceUnavailable, decode.CodeInternalError, "server shutting down", 0)
		case !ok && isTimeout(err) && c.dl.slow.Load():
			s.metrics.slowBodies.Inc()
			return s.refuse(ctx, c, fasthttp.StatusRequestTimeout, decode.CodeInvalidRequest, "the body arrived slower than the minimum data rate", 0)
		case !ok && isTimeout(err):
			return s.refuse(ctx, c, fasthttp.StatusRequestTimeout, decode.CodeInvalidRequest, "the body did not arrive within the read timeout", 0)
		case !ok:
			// The body could not be read (a broken chunk, a timeout, a
			// client gone): answer if we still can, then close.
			return s.refuse(ctx, c, fasthttp.StatusBadRequest, decode.CodeParseError, "the body could not be read", 0)
		}
		if !c.body.eof {
			return s.refuse(ctx, c, de.HTTPStatus(), de.Code, de.Reason, 0)
		}
		if de.Err == decode.ErrEnvelope && isClientResponse(m, c.dec.Body()) {
			// A client's response to a request of the server's own (stream.go).
			ok, e := s.clientResponse(c, ep, f, m, c.dec.Body())
			if e != nil {
				st, code := c.rpcError(e, nullJSON)
				s.writeJSON(ctx, c, st)
				return st, code
			}
			if ok {
				ctx.SetStatusCode(fasthttp.StatusAccepted)
				return fasthttp.StatusAccepted, 0
			}
		}
		return s.answerError(ctx, c, de.HTTPStatus(), m.AnswerID(), de.Code, de.Reason, nil)
	}
	if !c.body.eof {
		// The decoder stops at EOF; anything else is a bug in a reader.
		return s.refuse(ctx, c, fasthttp.StatusBadRequest, decode.CodeParseError, "the body could not be read", 0)
	}
	c.pending = false

	c.enter(stageDispatch)
	c.retry = 0
	status, code := s.dispatch(c, ep, f, label)
	c.enter(stageAnswer)
	if status == fasthttp.StatusAccepted {
		ctx.SetStatusCode(status)
		return status, 0
	}
	if c.st.started {
		c.streamed = true // the answer ends later: finishRPC reads the clock
		s.startStream(ctx, c)
		return status, code
	}
	if c.retry > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(c.retry))
	}
	s.writeJSON(ctx, c, status)
	return status, code
}

var nullJSON = []byte("null")

// dispatch decides rows 11 to 19 for a valid message in c.msg, whatever
// the transport: it leaves the answer in c.out and returns its status
// and code (202 and no answer for a notification).
func (s *Server) dispatch(c *call, ep *endpoint, f *fields, label *string) (int, int) {
	m := &c.msg
	// A registered method is labelled by its name from here on, also when
	// rows 11 to 13 answer it (metrics never label by a name they do not
	// list).
	*label = c.labels.method(ep, m.Method)
	// Rows 11 and 12.
	r := &c.req
	r.reset(f, m, nil)
	r.st = &c.st
	if ep.Check != nil {
		if e := ep.Check(r); e != nil {
			id := m.AnswerID()
			if m.Kind == decode.KindNotification {
				id = nullJSON
			}
			return c.rpcError(e, id)
		}
	}
	// Row 13.
	if m.Kind == decode.KindNotification {
		return fasthttp.StatusAccepted, 0
	}
	// Rows 14 and 16 (refused outright).
	route := ep.Route(r)
	*label = c.labels.route(ep, route.Label)
	if route.Refuse != nil {
		return c.rpcError(route.Refuse, m.ID)
	}
	if route.Handler == nil {
		*label = ""
		return c.error(fasthttp.StatusNotFound, m.ID, decode.CodeMethodNotFound, "method not found", nil)
	}
	// Rows 15 and 17, unless the handler owns them.
	if !route.OwnParams && m.ParamsType != decode.ParamsAbsent {
		if m.ParamsType != decode.ParamsObject {
			return c.error(fasthttp.StatusOK, m.ID, decode.CodeInvalidParams, "params must be an object", nil)
		}
		if decode.DuplicateName(m.Params) {
			return c.error(fasthttp.StatusOK, m.ID, decode.CodeInvalidParams, "a member name appears twice in params", nil)
		}
	}
	// Rows 18 and 19.
	c.stage = stageHandler
	return s.invoke(c, route.Handler)
}

// invoke runs the handler under the deadline, recovering panics, and
// leaves the answer in c.out.
func (s *Server) invoke(c *call, h Handler) (status, code int) {
	m := &c.msg
	c.retry = 0
	c.out = append(c.out[:0], `{"jsonrpc":"2.0","id":`...)
	c.out = append(c.out, m.ID...)
	c.out = append(c.out, `,"result":`...)
	c.prefix = len(c.out)
	s.running.ensure()
	c.req.ctx = s.running.arm(&c.dl, c.req.GoneCancels) // linked already if it had a body
	if c.cancelled.Load() {
		// Cancelled while it was being dispatched: the canceller's own
		// cancel of the context came before it was armed (call.cancel).
		c.dl.cancel(context.Canceled)
	}
	out, err, panicked := s.callHandler(h, &c.req, c.out)
	if c.st.started {
		// The answer is a stream (stream.go): its StreamHandler goes on
		// and gives the final event, whatever the handler returned. One
		// that does not return Request.Stream's marker as it is (wraps
		// it, or returns a result or an error of its own) is a misuse the
		// stream survives: it once wrote its error's head into the final
		// event, which was then not JSON.
		if err != errStreaming && !panicked {
			s.log.Warn("handler did not return Request.Stream's result as it is; the answer streams all the same", "method", string(c.msg.Method))
		}
		return fasthttp.StatusOK, 0
	}
	return s.afterHandler(c, out, err, panicked)
}

// afterHandler ends a handler's run (its deadline, its context) and leaves
// the answer in c.out: the result, or the error its outcome calls for.
func (s *Server) afterHandler(c *call, out []byte, err error, panicked bool) (status, code int) {
	m := &c.msg
	c.end = monoNow()
	expired := c.dl.stop(c.end)
	c.req.ctx = nil
	switch {
	case panicked:
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "internal error", nil)
	case expired == errShuttingDown:
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "server shutting down", nil)
	case expired == ErrStreamClosed: // the stream's client is gone (stream.go): no deadline passed
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "the stream is closed", nil)
	case expired == ErrClientGone: // the client left while the handler ran (deadline.go): no one reads the answer
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "the client went away", nil)
	case expired == context.Canceled: // the client cancelled it (call.cancel): over stdio the answer is not written
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "request cancelled", nil)
	case expired != nil:
		s.metrics.timeouts.Inc()
		s.log.Warn("handler passed its deadline", "method", string(m.Method), "deadline", s.cfg.HandlerTimeout)
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "handler deadline exceeded", nil)
	case err != nil:
		var e *Error
		if errors.As(err, &e) {
			c.retry = e.RetryAfter
			return c.rpcError(e, m.ID)
		}
		s.log.Error("handler failed", "method", string(m.Method), "error", err)
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "internal error", nil)
	case len(out) == c.prefix:
		s.log.Error("handler appended no result", "method", string(m.Method))
		return c.error(fasthttp.StatusInternalServerError, m.ID, decode.CodeInternalError, "internal error", nil)
	}
	c.out = append(out, '}')
	return fasthttp.StatusOK, 0
}

// rpcError leaves the answer of e in c.out, and its header fields in
// c.hdr for writeJSON.
func (c *call) rpcError(e *Error, id []byte) (int, int) {
	st := e.Status
	if st == 0 {
		st = fasthttp.StatusOK
	}
	c.hdr = e.Header
	return c.error(st, id, e.Code, e.Message, e.Data)
}

// error leaves a JSON-RPC error answer in c.out.
func (c *call) error(status int, id []byte, code int, msg string, data []byte) (int, int) {
	c.out = decode.AppendError(c.out[:0], id, code, msg, data)
	return status, code
}

// callHandler calls h, turning a panic into panicked = true.
func (s *Server) callHandler(h Handler, r *Request, dst []byte) (out []byte, err error, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			s.panicked(stageHandler, v, "method", string(r.Msg.Method))
		}
	}()
	at(stageHandler)
	out, err = h.ServeRPC(r, dst)
	return out, err, false
}

// answerError writes a JSON-RPC error answer on a connection that stays
// open.
func (s *Server) answerError(ctx *fasthttp.RequestCtx, c *call, status int, id []byte, code int, msg string, data []byte) (int, int) {
	c.error(status, id, code, msg, data)
	s.writeJSON(ctx, c, status)
	return status, code
}

// writeJSON sends c.out as the JSON answer, compressed when allowed.
func (s *Server) writeJSON(ctx *fasthttp.RequestCtx, c *call, status int) {
	ctx.SetStatusCode(status)
	for _, h := range c.hdr {
		ctx.Response.Header.Set(h.Name, h.Value)
	}
	c.hdr = nil
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	if len(c.out) >= CompressMinBytes {
		if ae := c.f.get(fAcceptEncoding); len(ae) > 0 {
			if zenc := pickEncoding(ae); zenc != encIdentity {
				c.enter(stageCompress)
				if z, ok := compressAnswer(c.zbuf[:0], c.out, zenc, s.zstd); ok {
					c.zbuf = c.out
					c.out = z
					ctx.Response.Header.SetBytesV("Content-Encoding", encNames[zenc])
				}
				ctx.Response.Header.Add("Vary", "Accept-Encoding")
			}
		}
	}
	c.out = ctx.Response.SwapBody(c.out)
}

// refuse answers a refusal decided before or while the body is read. When
// the body may not have been read to its end (c.pending), the answer is
// written on the hijacked connection, which is then half-closed, drained
// for a bounded time and size, and closed: the client sees the answer, not
// a reset. retryAfter > 0 adds Retry-After in seconds.
func (s *Server) refuse(ctx *fasthttp.RequestCtx, c *call, status, code int, msg string, retryAfter int) (int, int) {
	if retryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	if !c.pending {
		c.error(status, nullJSON, code, msg, nil)
		s.writeJSON(ctx, c, status)
		return status, code
	}
	c.enter(stageEarly)
	c.early = true
	s.earlyAnswer(ctx, status, ctJSON, decode.AppendError(nil, nullJSON, code, msg, nil))
	return status, code
}

// refuseError answers e, an endpoint hook's refusal decided before the
// body is read, as refuse does, with e's header fields and Retry-After.
func (s *Server) refuseError(ctx *fasthttp.RequestCtx, c *call, e *Error) (int, int) {
	for _, h := range e.Header {
		ctx.Response.Header.Set(h.Name, h.Value)
	}
	st := e.Status
	if st == 0 {
		st = fasthttp.StatusOK
	}
	return s.refuse(ctx, c, st, e.Code, e.Message, e.RetryAfter)
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
