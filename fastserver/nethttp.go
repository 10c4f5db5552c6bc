package fastserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// NOTE: the same server over net/http.
//
// HTTPHandler serves a Server's endpoints and GET routes as an
// http.Handler, through the one pipeline the fasthttp transport runs:
// each request is carried into a fasthttp.RequestCtx of its own (pooled),
// served by the same function, and its answer written back to the
// http.ResponseWriter. So every row of the contract, every limit, the
// metrics, the panic guard and streamed answers behave as over fasthttp;
// what differs is what net/http does before and after:
//
//   - Framing is net/http's: it refuses what it cannot frame (an unknown
//     transfer coding 501, conflicting lengths 400) and hides
//     Transfer-Encoding; trailers are in http.Request.Trailer and never
//     reach a check. What net/http takes and fasthttp refuses: a length
//     and chunked together (served as chunked, the connection kept),
//     Transfer-Encoding on HTTP/1.0 (ignored), two equal Content-Length
//     lines, and obsolete line folding, which it unfolds (RFC 9112 §5.2
//     allows that) before the handler could see it: behind a proxy that
//     frames differently, prefer the fasthttp transport.
//   - Over HTTP/2, net/http removes Expect before the handler runs: such
//     a request is judged when it arrives, never answered 417. The header
//     bound (Config.MaxHeaderBytes) is the HTTP/2 header list size
//     net/http advertises and enforces: a section past it gets 431, but
//     one field longer than the whole bound is a connection error
//     (COMPRESSION_ERROR: HPACK's string bound), which ends the other
//     streams of that connection too.
//   - The header section is http.Request.Header, whose lines of one name
//     keep their order: a field's lines are combined as over fasthttp.
//   - An early answer (rows 1 to 7 with the body still arriving) takes the
//     connection over HTTP/1.x (http.ResponseController.Hijack) and is
//     written, half-closed, drained and closed as over fasthttp; over
//     HTTP/2 it ends the stream.
//   - Expect: 100-continue: rows 1 to 6 decide before the body, and a
//     refusal is 417; otherwise net/http sends 100 Continue when the body
//     is first read.
//   - Read and write deadlines (the data-rate cut, Shutdown, a stream's
//     writes) go through http.ResponseController.
//   - Connection limits, header size and timeouts belong to the
//     http.Server: set them there (cmd/rpcedge -transport nethttp sets
//     them from Config). Over HTTP/1.x the header bound
//     (Config.MaxHeaderBytes, 431) counts the section as net/http kept
//     it: the white space around each value is trimmed before a handler
//     runs, so a section padded with it passes up to the http.Server's
//     own bound (MaxHeaderBytes + 4096 bytes with ServeNetHTTP), where
//     net/http answers 431 itself.

// HTTPHandler returns an http.Handler that serves s's endpoints (POST
// and OPTIONS, 405 otherwise) and its GET routes (/healthz, /metrics,
// HandleGET's) exactly as the fasthttp transport does. It may be mounted
// on any mux at the endpoints' paths, and served over HTTP/1.1, HTTP/2
// or TLS by an http.Server. Shutdown then waits for the requests it is
// serving. Serve and HTTPHandler may be used together.
func (s *Server) HTTPHandler() http.Handler { return (*netHandler)(s) }

type netHandler Server

// ServeNetHTTP serves connections from ln with net/http's server and
// HTTPHandler until Shutdown: HTTP/1.1, and HTTP/2 over TLS when
// Config.TLS is set (ALPN h2 and http/1.1). The http.Server gets the
// Config's limits: MaxHeaderBytes, ReadTimeout (the whole request, as
// over fasthttp), WriteTimeout (the answer's, from when it is written, as
// over fasthttp; streams extend it per write), IdleTimeout, and MaxConns
// over all open connections. It returns nil after a clean shutdown.
func (s *Server) ServeNetHTTP(ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.HTTPHandler(),
		MaxHeaderBytes:    headerBound(s.cfg.MaxHeaderBytes),
		ReadHeaderTimeout: s.cfg.ReadTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		// OPTIONS * goes to the pipeline (404, as over fasthttp), not to
		// net/http's built-in 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.netMu.Lock()
	s.net = append(s.net, hs)
	s.netMu.Unlock()
	s.serving.Store(true)
	ln = &capListener{Listener: ln, open: &s.open, max: int64(s.cfg.MaxConns), tls: s.cfg.TLS != nil}
	defer s.closeOnShutdown(ln)()
	var err error
	if s.cfg.TLS != nil {
		t := s.cfg.TLS.Clone()
		t.NextProtos = []string{"h2", "http/1.1"}
		hs.TLSConfig = t
		err = hs.ServeTLS(ln, "", "")
	} else {
		err = hs.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) || s.stopping() {
		return nil
	}
	return err
}

// bridge carries one net/http request through the pipeline.
type bridge struct {
	ctx  fasthttp.RequestCtx
	conn bridgeConn
}

var bridges = sync.Pool{New: func() any { return new(bridge) }}

// bridgeConn is the net.Conn the pipeline sees under net/http: its
// deadlines are the ResponseController's; it cannot be read or written
// directly; closing it aborts the response.
type bridgeConn struct {
	rc            *http.ResponseController
	remote, local net.Addr
	early         bool // an early answer: the bridge writes it and closes
	// gone is the request's Done channel: closed when its client went
	// away (a closed connection, an HTTP/2 RST_STREAM), which the
	// watchdog takes for the handler's cancellation (ErrClientGone).
	gone <-chan struct{}
}

var errBridge = errors.New("fastserver: the net/http transport has no raw connection")

func (b *bridgeConn) Read([]byte) (int, error)  { return 0, errBridge }
func (b *bridgeConn) Write([]byte) (int, error) { return 0, errBridge }

// Close aborts the response (the connection is closed by net/http).
func (b *bridgeConn) Close() error         { panic(http.ErrAbortHandler) }
func (b *bridgeConn) LocalAddr() net.Addr  { return b.local }
func (b *bridgeConn) RemoteAddr() net.Addr { return b.remote }
func (b *bridgeConn) SetDeadline(t time.Time) error {
	return errors.Join(b.SetReadDeadline(t), b.SetWriteDeadline(t))
}
func (b *bridgeConn) SetReadDeadline(t time.Time) error  { return b.rc.SetReadDeadline(t) }
func (b *bridgeConn) SetWriteDeadline(t time.Time) error { return b.rc.SetWriteDeadline(t) }

// tcpAddr parses "host:port" as net/http gives RemoteAddr.
func tcpAddr(hostport string) net.Addr {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return &net.TCPAddr{}
	}
	p, _ := strconv.Atoi(port)
	return &net.TCPAddr{IP: net.ParseIP(host), Port: p}
}

func (h *netHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := (*Server)(h)
	s.serving.Store(true)
	b := bridges.Get().(*bridge)
	defer func() {
		b.ctx.Request.Reset()
		b.ctx.Response.Reset()
		b.conn = bridgeConn{}
		bridges.Put(b)
	}()
	b.conn.rc = http.NewResponseController(w)
	b.conn.gone = r.Context().Done()
	// net/http's WriteTimeout runs from the end of the request's header
	// section (over HTTP/2, from the stream's start), so it would take in
	// the body and the handler: an answer after it, even the handler
	// deadline's 500, would be lost. As over fasthttp, it is the answer's
	// own: lifted while the request is read and served, given afresh to
	// the answer (writeResponse, answerEarly).
	wt := netWriteTimeout(r)
	if wt > 0 {
		b.conn.rc.SetWriteDeadline(time.Time{})
	}
	b.conn.remote = tcpAddr(r.RemoteAddr)
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		b.conn.local = la
	} else {
		b.conn.local = &net.TCPAddr{}
	}
	ctx := &b.ctx
	ctx.Init2(&b.conn, s.flog, false)
	ctx.Response.Header.SetNoDefaultContentType(true)
	if r.ProtoMajor == 1 && headerSize(r) > s.cfg.MaxHeaderBytes {
		// net/http reads 4 KiB past its own bound over HTTP/1.x, which
		// ServeNetHTTP sets for HTTP/2 (headerBound): the Config's bound
		// is held here, 431 as over fasthttp.
		s.answerEarly(w, r, bareAnswer(fasthttp.StatusRequestHeaderFieldsTooLarge, nil), fasthttp.StatusRequestHeaderFieldsTooLarge)
		return
	}
	copyRequest(&ctx.Request, r)

	// Any method: a 404 or 405 decided before the body, as over fasthttp
	// (a handler that never reads the body would leave net/http waiting
	// for it, up to the read timeout, before it closed).
	if r.ProtoAtLeast(1, 1) && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		if st := s.expectHandler(ctx); st != fasthttp.StatusContinue {
			s.answerEarly(w, r, bareAnswer(st, ctx.Response.Header.Peek("Allow")), st)
			return
		}
	}
	s.serve(ctx)
	if b.conn.early {
		resp := &ctx.Response
		s.answerEarly(w, r, earlyBytes(&resp.Header, resp.StatusCode(), resp.Header.ContentType(), resp.Body()), resp.StatusCode())
		return
	}
	writeResponse(w, r, b.conn.rc, wt, &ctx.Response)
}

// netWriteTimeout is the WriteTimeout of the http.Server serving r, 0 for
// none or unknown.
func netWriteTimeout(r *http.Request) time.Duration {
	if hs, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok {
		return hs.WriteTimeout
	}
	return 0
}

// answerEarly answers a refusal decided with the body still arriving.
// Over HTTP/1.x the connection is hijacked and treated as fasthttp's
// early answers are (written, half-closed, drained for a bounded time,
// closed): net/http would otherwise read what is left of the body before
// it closed, holding the connection up to its read timeout. Over HTTP/2
// the answer ends the stream; the client's remaining data is refused by
// the protocol. raw is the answer's bytes for HTTP/1.x.
func (s *Server) answerEarly(w http.ResponseWriter, r *http.Request, raw []byte, status int) {
	if r.ProtoMajor == 1 {
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			defer c.Close()
			raw2 := c
			if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
				raw2 = tc.NetConn()
			}
			s.closeAfter(c, raw2, raw)
			return
		}
	}
	// HTTP/2, or a writer that cannot be hijacked: the answer as it is.
	if wt := netWriteTimeout(r); wt > 0 {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wt))
	}
	i := bytes.Index(raw, []byte("\r\n\r\n"))
	body := raw[i+4:]
	hdr := w.Header()
	for _, line := range bytes.Split(raw[:i], []byte("\r\n"))[1:] {
		k, v, _ := bytes.Cut(line, []byte(": "))
		if !hopByHop(k) {
			hdr.Set(string(k), string(v))
		}
	}
	w.WriteHeader(status)
	w.Write(body)
}

// bareAnswer is an answer of status without a body, with Allow when allow
// is not empty (a 405), and Connection: close.
func bareAnswer(status int, allow []byte) []byte {
	b := make([]byte, 0, 128)
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, fasthttp.StatusMessage(status)...)
	b = append(b, "\r\nServer: "+serverName+"\r\nDate: "...)
	b = appendHTTPDate(b, time.Now())
	b = append(b, "\r\nContent-Length: 0\r\n"...)
	if len(allow) > 0 {
		b = append(b, "Allow: "...)
		b = append(b, allow...)
		b = append(b, "\r\n"...)
	}
	return append(b, "Connection: close\r\n\r\n"...)
}

// headerBound is the http.Server.MaxHeaderBytes that holds a header
// section to max bytes. Over HTTP/2 net/http advertises and enforces
// MaxHeaderBytes + 320 as SETTINGS_MAX_HEADER_LIST_SIZE (and as the
// bound of any one field, a connection error past it); over HTTP/1.x it
// reads MaxHeaderBytes + 4096 before its 431, and ServeHTTP holds the
// Config's bound itself (headerSize). (It was max - 4096 for both: over
// HTTP/2 a 4.8 KiB section got 431, found by review on 2026-12-06.)
func headerBound(limit int) int {
	return max(limit-320, 1)
}

// headerSize is the size of r's request line and header section as an
// HTTP/1.x client sent them (names and values, each line's ": " and
// CRLF, Host included, the empty line).
func headerSize(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + 2
}

// servedPath reports whether r.URL's path is the one r.RequestURI names
// (origin-form, or "*"), rather than one a handler in front rewrote.
func servedPath(r *http.Request) bool {
	p := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(r.RequestURI, p)
	return ok && (rest == "" || rest[0] == '?')
}

// copyRequest carries r's request line, header section and body into req.
// Each line of a field is added on its own, so that the snapshot
// combines them and counts them.
func copyRequest(req *fasthttp.Request, r *http.Request) {
	h := &req.Header
	h.SetMethod(r.Method)
	if r.RequestURI != "" && servedPath(r) {
		h.SetRequestURI(r.RequestURI) // the target as received
	} else {
		// No target (a request made in process), or a handler in front
		// rewrote the path (http.StripPrefix, a mux's prefix): an
		// http.Handler routes on r.URL (found by review on 2026-12-06:
		// mounted under StripPrefix, every request was 404).
		h.SetRequestURI(r.URL.RequestURI())
	}
	h.SetHost(r.Host)
	if !r.ProtoAtLeast(1, 1) {
		h.SetProtocol("HTTP/1.0")
	}
	for name, values := range r.Header {
		switch {
		case equalFoldASCII(name, "Content-Type") && len(values) > 1,
			equalFoldASCII(name, "Trailer"):
			// As plain fields, each line its own. fasthttp keeps one
			// Content-Type: its lines joined were one line to the
			// snapshot, and `application/json; x="a` with `b"` passed
			// row 3, which refuses two lines whatever they combine into.
			// fasthttp's Add takes Trailer as the announcement of a
			// trailer section and moves the lines of the fields it names
			// there, out of the section the snapshot reads: `Trailer:
			// Origin` hid a foreign Origin from row 1, and any field from
			// any row (both found by review on 2026-12-07). net/http
			// keeps Trailer in Header when the body is not chunked; the
			// trailers themselves are in http.Request.Trailer, never
			// copied.
			was := h.DisableSpecialHeader()
			for _, v := range values {
				h.Add(name, v)
			}
			if !was {
				h.EnableSpecialHeader()
			}
		case equalFoldASCII(name, "Content-Type"):
			if len(values) == 0 {
				continue // a handler in front left the name without lines
			}
			ct := values[0]
			if ct == "" {
				ct = " " // present and empty: fasthttp would take "" for absent
			}
			h.SetContentType(ct)
		case equalFoldASCII(name, "Content-Length"), equalFoldASCII(name, "Host"), equalFoldASCII(name, "Transfer-Encoding"):
		default:
			for _, v := range values {
				h.Add(name, v)
			}
		}
	}
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		h.SetContentLength(0)
	default:
		req.SetBodyStream(noClose{r.Body}, int(max(r.ContentLength, -1)))
	}
}

// serverField is the Server field of answers written through net/http,
// as fasthttp writes its Name (read only: shared by every answer).
var serverField = []string{serverName}

// noClose keeps fasthttp's Request.Reset from closing a net/http body:
// net/http closes (and drains) it itself, after the answer is written.
type noClose struct{ io.Reader }

// hopByHop are the fields the pipeline sets that net/http writes itself.
// (Server is not among them: net/http writes none, so the pipeline's, or
// serverName, is copied.)
func hopByHop(name []byte) bool {
	for _, n := range [...]string{"Content-Length", "Connection", "Transfer-Encoding", "Date"} {
		if equalFoldASCII(name, n) {
			return true
		}
	}
	return false
}

// writeResponse writes the pipeline's answer to w: status, header fields,
// and the body, a streamed one event batch by event batch, each flushed.
// The answer gets a write timeout of timeout from now, when it is positive
// (a stream's batches each get Config.WriteTimeout: Stream.armWrite).
func writeResponse(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, timeout time.Duration, resp *fasthttp.Response) {
	hdr := w.Header()
	for k, v := range resp.Header.All() {
		if hopByHop(k) {
			continue
		}
		hdr.Add(string(k), string(v))
	}
	if _, ok := hdr["Server"]; !ok {
		hdr["Server"] = serverField
	}
	if resp.ConnectionClose() && r.ProtoMajor == 1 {
		hdr.Set("Connection", "close")
	}
	if len(resp.Header.ContentType()) == 0 {
		hdr.Del("Content-Type")
	}
	status := resp.StatusCode()
	stream := resp.BodyStream()
	if timeout > 0 {
		rc.SetWriteDeadline(time.Now().Add(timeout))
	}
	if stream == nil {
		body := resp.Body()
		if len(body) > 0 {
			hdr.Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
		return
	}
	w.WriteHeader(status)
	// A client that goes away while the stream is quiet (an HTTP/2
	// RST_STREAM, a closed connection) cancels r's context, and no write
	// fails to tell: the stream is closed then, its handler cancelled and
	// its MaxStreams slot freed (found by review on 2026-12-06: they were
	// held until the handler deadline). fasthttp reads nothing during a
	// stream, so only a write tells it.
	var stop func() bool
	var stopped chan struct{}
	if f, ok := stream.(*eventFeed); ok {
		f.gone = r.Context().Done() // ServeEvents' stream ends with it
	}
	if st, ok := stream.(*Stream); ok {
		stopped = make(chan struct{})
		stop = context.AfterFunc(r.Context(), func() {
			defer close(stopped)
			st.left = true // read by finish after stopped, below
			st.close()
		})
	}
	fw := &flushWriter{w: w, rc: rc, idle: r.ProtoMajor >= 2}
	var err error
	if wt, ok := stream.(io.WriterTo); ok {
		_, err = wt.WriteTo(fw)
	} else {
		_, err = io.Copy(fw, stream)
	}
	if stop != nil && !stop() {
		<-stopped // the stream must be closed before it is finished
	}
	if st, ok := stream.(*Stream); ok && err != nil && st.writeErr == nil {
		st.writeErr = err
	}
	// Closed once, and taken off the answer: closed here and again by
	// the answer's Reset, a stream finished its request twice, the second
	// time after its pooled call served another request (found by review
	// on 2026-12-06, a race under load).
	resp.CloseBodyStream()
}

// flushWriter flushes every write: each batch of events leaves at once.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
	// idle: lift the write deadline once a batch is out. Over HTTP/2 a
	// deadline passing resets the stream even between writes, so a
	// stream quiet for longer than the write timeout would die; over
	// HTTP/1.x it bounds only a write under way, and the next batch's
	// arms its own.
	idle bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	if err := f.rc.Flush(); err != nil {
		return n, err
	}
	if f.idle {
		f.rc.SetWriteDeadline(time.Time{})
	}
	return n, nil
}
