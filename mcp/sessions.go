package mcp

// NOTE: sessions, only where 2025-xx needs them.
//
// The server is stateless by default: every request stands alone, under
// every version. What 2025-xx cannot do without a session is deliver
// notifications that no request asked for: notifications/resources/updated
// after resources/subscribe, on a GET stream. WithSessions turns sessions
// on for 2025-xx clients:
//
//   - initialize issues an Mcp-Session-Id (128 random bits, base64url) and
//     the session remembers the negotiated version, the client's
//     capabilities and, after logging/setLevel, its log level;
//   - a request that carries the header must name a live session: else
//     404 (the client starts over with initialize, as MCP says); one
//     without it is served statelessly, as before;
//   - resources/subscribe and unsubscribe record the session's
//     subscriptions, and the initialize result declares
//     resources.subscribe;
//   - GET /mcp with the header opens the session's notification stream,
//     which Server.NotifyResourceUpdated feeds; DELETE /mcp with the header
//     ends the session (204) and cancels its running requests
//     (sessioncancel.go). A session has one stream: a new GET takes it
//     over (see "Taking a stream over" below);
//   - sessions are bounded in number (SessionOptions.Max: a full table
//     ends the least recently used sessions idle past
//     SessionOptions.Reclaim, a minute, to make room; with none, initialize
//     is refused 503) and in idle time (SessionOptions.Idle:
//     an expired session is gone, 404), and each stream's queue is bounded
//     (SessionOptions.Queue: notifications past it are dropped and
//     counted).
//
// With WithAuth, GET and DELETE of a session need the endpoint's token as
// its POSTs do. Behind a balancer, a session lives in the instance that
// created it: route by the Mcp-Session-Id header (sticky sessions).
//
// 2026-07-28 has no sessions: the header is ignored under it.

// NOTE: taking a stream over.
//
// A client whose connection dropped silently (NAT timeout, sleep, a
// killed proxy) reconnects with a new GET long before the server notices:
// only a failed write tells it, up to a keep-alive period and a write
// timeout later. MCP lets a GET be answered only with a stream or 405, so
// the new GET cannot be refused (it was 409): it takes the stream over.
// Under the session's lock the new stream becomes the session's, the
// notifications queued and not yet taken by the old stream's writer move
// to a new queue in order (the queue is the session's, not the
// connection's: nothing queued is lost), and the old queue is closed,
// which ends the old stream as DELETE does; notifications sent after the
// takeover go to the new stream only. A writer blocked writing to a client
// that does not read would still hold its connection until WriteTimeout:
// if it has not finished streamEndGrace after its stream ended, the
// connection's sending side is shut down, so that its write fails at once
// and the connection is closed. The grace, rather than a shutdown at
// once, lets a writer that took a notification just before the takeover
// write it: only one stuck writing for the whole grace loses what it was
// writing, as a write to a dead connection loses it anyway. Session
// streams are answered with Connection: close, so that an ended stream
// releases its connection rather than keeping it idle for another request.
//
// What is checked before a takeover is what a GET is checked for (the
// token with WithAuth, the session's owner, Accept, HTTP/1.1): a GET
// refused for any of them leaves the stream alone. Two GETs racing take
// the lock in turn: the later owns the stream, the earlier ends at once.
// DELETE and expiry end the session under the same lock: a takeover after
// it finds the session gone (404), one before it is ended with it (its
// stream, too, is cut if its writer is still busy after the grace). The
// new GET waits for the old stream's writer to finish (at most the grace
// and a little more), which gives back the old stream's slots in
// fastserver's MaxStreams and MaxClientStreams: a client at its bound
// takes its own stream over (until 2026-12-06 the takeover was refused
// 503 at the bound, for the slot the stream it replaced still held). A
// GET refused by MaxStreams all the same (503: a writer still stuck, or
// other clients' streams) has taken the stream over nonetheless, which
// frees the slot its retry needs; the queue stays with the session.

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// HeaderSession is the header that carries a session's id (2025-xx).
const HeaderSession = "Mcp-Session-Id"

var keySession = fastserver.NewHeaderKey(HeaderSession)

// SessionOptions bounds the sessions WithSessions turns on.
type SessionOptions struct {
	// Max is the most sessions alive at once. When the table is full, an
	// initialize ends the sessions idle for longer than Reclaim without a
	// GET stream, the least recently used first, to make room; when there
	// are none it is refused with 503 and Retry-After. Default 10,000.
	Max int
	// Idle is how long a session lives without a request or an open GET
	// stream. Default 30 minutes.
	Idle time.Duration
	// Queue is how many notifications wait for a session's GET stream;
	// past it they are dropped (Server.DroppedNotifications). Default 64.
	Queue int
	// Subscriptions bounds the resources one session is subscribed to at
	// once: at most this many URIs, of at most 64 KiB together; past it
	// resources/subscribe of another URI is refused with -32602
	// (unsubscribing makes room). Default 256.
	Subscriptions int
	// Reclaim is how long a session must have been idle, without a GET
	// stream, before a full table may end it early for a new one (its
	// client's next request gets 404 and initializes again, as MCP says).
	// Sessions used more recently are never ended for room. Default 1
	// minute; at least Idle means never (a full table refuses initialize
	// until sessions expire).
	Reclaim time.Duration
}

// WithSessions turns on sessions for 2025-xx clients (see the package
// doc): Mcp-Session-Id, logging/setLevel and resource subscriptions that
// last, a GET stream of notifications, DELETE. With WithAuth a session
// belongs to the token that initialized it (its issuer and subject): a
// request with another token finds no session under its id (404).
// Default: off, stateless.
func WithSessions(o SessionOptions) Option {
	return func(s *Server) error {
		if o.Max < 0 || o.Idle < 0 || o.Queue < 0 || o.Subscriptions < 0 || o.Reclaim < 0 {
			return errors.New("mcp: session options must not be negative")
		}
		if o.Max == 0 {
			o.Max = 10000
		}
		if o.Idle == 0 {
			o.Idle = 30 * time.Minute
		}
		if o.Queue == 0 {
			o.Queue = 64
		}
		if o.Subscriptions == 0 {
			o.Subscriptions = 256
		}
		if o.Reclaim == 0 {
			o.Reclaim = time.Minute
		}
		s.sessions = &sessionTable{opts: o, m: make(map[string]*session)}
		return nil
	}
}

type sessionTable struct {
	opts    SessionOptions
	mu      sync.Mutex
	m       map[string]*session
	dropped atomic.Uint64
	// nextRoom: a full table looks for room (sweep, reclaim) at most once
	// per fullScanEvery. A scan visits every session under mu, which
	// every session's requests take: an initialize refused at the cap
	// must not cost one (at 10,000 sessions, some 0.4 ms each).
	nextRoom time.Time
	scans    int // full-table scans for room, for tests
}

// fullScanEvery is how often a full table is scanned for room; between
// scans a full table refuses initialize at once.
const fullScanEvery = time.Second

type session struct {
	id       string
	owner    string // who initialized it, with WithAuth (ownerOf)
	version  Version
	caps     []byte // initialize's params.capabilities, copied
	mu       sync.Mutex
	level    LogLevel
	levelSet bool
	subs     map[string]bool
	subBytes int // the length of the URIs in subs
	// events is the session's queue of notifications, read by its GET
	// stream when one is open; a takeover replaces it with a new channel
	// holding what the old stream's writer had not taken (attach).
	events chan []byte
	stream *sessionStream // the open GET stream, or nil
	seen   time.Time
	ended  bool
	// inflight lists the requests whose handlers run and that
	// notifications/cancelled may end (sessioncancel.go).
	inflight []inflight
}

// streamEndGrace is how long the writer of an ended stream (taken over,
// or its session ended) may take to finish before its connection's
// sending side is shut down (sessionStream.end).
const streamEndGrace = 500 * time.Millisecond

// sessionStream is one GET stream of a session, from the GET that opens
// it until its writer finishes.
type sessionStream struct {
	ctx  *fasthttp.RequestCtx
	conn net.Conn // ctx.Conn(), read by the handler: cut runs on a timer's goroutine

	mu       sync.Mutex
	finished bool          // the writer returned: the connection may serve another request
	cutter   *time.Timer   // set by end
	gone     chan struct{} // closed by finish; nil in tests that never serve st
}

// end follows the closing of st's queue, which ends the stream at its
// writer's next turn. A writer blocked writing to a client that does not
// read has no next turn until WriteTimeout: if st has not finished after
// streamEndGrace, cut shuts its connection down.
func (st *sessionStream) end() {
	st.mu.Lock()
	if !st.finished && st.cutter == nil {
		st.cutter = time.AfterFunc(streamEndGrace, st.cut)
	}
	st.mu.Unlock()
}

// cut shuts down the sending side of st's connection while its writer
// has not finished (after that the connection may be serving another
// request): a blocked write fails at once, and so does any later one,
// whatever deadline it sets; fasthttp then closes the connection.
func (st *sessionStream) cut() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished {
		return
	}
	c := st.conn
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		// TLS: its CloseWrite sends an alert, behind the blocked write;
		// the TCP connection under it is what must stop.
		c = nc.NetConn()
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		return
	}
	// No half-close (a pipe, say): an expired deadline fails the write in
	// progress; the writer's next write sets its own, which WriteTimeout
	// bounds as before.
	st.ctx.SetWriteDeadline(time.Now())
}

// finish records that st's writer returned: from then on its connection
// is not the stream's to cut.
func (st *sessionStream) finish() {
	st.mu.Lock()
	if !st.finished && st.gone != nil {
		close(st.gone)
	}
	st.finished = true
	if st.cutter != nil {
		st.cutter.Stop()
	}
	st.mu.Unlock()
}

// wait waits, at most d, for st's writer to finish (after end): then its
// stream slots (fastserver's MaxStreams and the client's
// MaxClientStreams) are given back, and a stream taking it over is not
// refused for the slot st still held.
func (st *sessionStream) wait(d time.Duration) {
	if st.gone == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-st.gone:
	case <-t.C:
	}
}

// attach makes st the session's stream and returns the queue it reads,
// and the stream it took over (nil when none was open), which the caller
// ends (sessionStream.end); false when the session has ended.
func (ss *session) attach(st *sessionStream) (chan []byte, *sessionStream, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return nil, nil, false
	}
	old := ss.stream
	if old != nil {
		// The old writer may take a notification while this moves the
		// rest (it is not under the lock): that one is its own to write,
		// the others keep their order here. Senders hold the lock, so the
		// old queue is empty when it is closed.
		next := make(chan []byte, cap(ss.events))
	move:
		for {
			select {
			case msg := <-ss.events:
				next <- msg // never blocks: as large as the old
			default:
				break move
			}
		}
		close(ss.events)
		ss.events = next
	}
	ss.stream = st
	return ss.events, old, true
}

// detach ends st's hold on the session when it is still the session's
// stream (a stream taken over is not: its end must not free the new one's).
func (ss *session) detach(st *sessionStream) {
	ss.mu.Lock()
	if ss.stream == st {
		ss.stream = nil
		ss.seen = time.Now()
	}
	ss.mu.Unlock()
}

var (
	errSessionGone = &fastserver.Error{Status: 404, Code: -32001, Message: "session not found: it ended or expired; initialize again"}
	errSessionFull = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "too many sessions", RetryAfter: 1}
)

// create starts a session of version v whose client declared caps, for
// owner (ownerOf).
func (t *sessionTable) create(v Version, caps []byte, owner string, now time.Time) (*session, *fastserver.Error) {
	ss := &session{id: randomID(), owner: owner, version: v, caps: declaredCapabilities(caps),
		subs: map[string]bool{}, events: make(chan []byte, t.opts.Queue), seen: now}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= t.opts.Max {
		if now.Before(t.nextRoom) {
			return nil, errSessionFull
		}
		t.nextRoom = now.Add(fullScanEvery)
		t.scans++
		t.sweep(now)
		if len(t.m) >= t.opts.Max {
			t.reclaim(now)
		}
		if len(t.m) >= t.opts.Max {
			return nil, errSessionFull
		}
	}
	t.m[ss.id] = ss
	return ss, nil
}

// reclaim ends, the least recently used first, sessions idle for longer
// than Reclaim without a stream: enough to leave room for a hundredth of
// Max (one at least), so that the next scan is a second away for a
// burst of initializes rather than one away (t.mu held). Without it a
// full table refused every initialize until sessions expired: 10,000
// initializes every Idle (30 minutes) kept every new client out.
func (t *sessionTable) reclaim(now time.Time) {
	if t.opts.Reclaim >= t.opts.Idle {
		return
	}
	type idle struct {
		seen time.Time
		id   string
		ss   *session
	}
	var c []idle
	for id, ss := range t.m {
		ss.mu.Lock()
		if ss.stream == nil && len(ss.inflight) == 0 && now.Sub(ss.seen) > t.opts.Reclaim {
			c = append(c, idle{ss.seen, id, ss})
		}
		ss.mu.Unlock()
	}
	slices.SortFunc(c, func(a, b idle) int { return a.seen.Compare(b.seen) })
	room := max(1, t.opts.Max/100)
	for _, x := range c[:min(len(c), len(t.m)-t.opts.Max+room)] {
		t.endLocked(x.id, x.ss)
	}
}

// maxSessionCaps bounds what a session keeps of the client's
// capabilities.
const maxSessionCaps = 4 << 10

// declaredCapabilities returns what ClientSupports needs of initialize's
// params.capabilities: {"name":{},…} for each top-level member, its value
// {} when it was an object and null when not (so that a name given twice,
// or not as an object, stays unsupported), at most maxSessionCaps bytes
// of it. A session must not keep a client's whole object: it may be as
// large as the body ceiling, for each of SessionOptions.Max sessions.
func declaredCapabilities(caps []byte) []byte {
	if kindOf(caps) != kindObject {
		return nil
	}
	out := []byte{'{'}
	var it decode.Members
	for it.Reset(caps); it.Next(); {
		if len(out)+len(it.Name())+9 > maxSessionCaps {
			break
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"') // the raw name, escapes as sent
		out = append(out, it.Name()...)
		out = append(out, '"')
		if kindOf(it.Value()) == kindObject {
			out = append(out, ":{}"...)
		} else {
			out = append(out, ":null"...)
		}
	}
	return append(out, '}')
}

// sweep drops expired sessions (t.mu held).
func (t *sessionTable) sweep(now time.Time) {
	for id, ss := range t.m {
		if ss.expired(now, t.opts.Idle) {
			t.endLocked(id, ss)
		}
	}
}

// expired reports whether ss has been idle past idle: no GET stream, no
// request running (a tool running longer than Idle keeps its session, so
// that the client can still cancel it: found by review on 2026-12-07),
// and none seen for that long.
func (ss *session) expired(now time.Time, idle time.Duration) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.stream == nil && len(ss.inflight) == 0 && now.Sub(ss.seen) > idle
}

// lookup returns the live session id names, when owner owns it, and
// marks it seen. A session of another owner does not exist for it.
func (t *sessionTable) lookup(id []byte, owner string, now time.Time) *session {
	t.mu.Lock()
	ss := t.m[string(id)]
	if ss != nil && ss.owner != owner {
		ss = nil
	}
	if ss != nil && ss.expired(now, t.opts.Idle) {
		t.endLocked(ss.id, ss)
		ss = nil
	}
	t.mu.Unlock()
	if ss != nil {
		ss.mu.Lock()
		ss.seen = now
		ss.mu.Unlock()
	}
	return ss
}

// end ends the session id names, when owner owns it; it reports whether
// there was one.
func (t *sessionTable) end(id []byte, owner string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	ss := t.m[string(id)]
	if ss != nil && ss.owner != owner {
		ss = nil
	}
	if ss != nil {
		t.endLocked(ss.id, ss)
	}
	return ss != nil
}

func (t *sessionTable) endLocked(id string, ss *session) {
	delete(t.m, id)
	var st *sessionStream
	ss.mu.Lock()
	if !ss.ended {
		ss.ended = true
		close(ss.events) // ends its GET stream, once it has written what is queued
		st = ss.stream
		// Its running requests are for no one now (DELETE: the client is
		// done with the session; expiry and reclaiming skip a session
		// with one running): their handlers' contexts end as a
		// notifications/cancelled would end them.
		for _, f := range ss.inflight {
			f.r.Cancel()
		}
	}
	ss.mu.Unlock()
	if st != nil {
		st.end()
	}
}

// sessionOf returns the 2025-xx session r belongs to: over stdio its
// stream's (StreamEndpoint), over HTTP the one its Mcp-Session-Id names
// (WithSessions); or nil.
func (s *Server) sessionOf(r *fastserver.Request) *session {
	if ss := streamSessionOf(r); ss != nil {
		return ss // over stdio, the stream's (checkStream)
	}
	if s.sessions == nil || RequestVersion(r).Stateless() {
		return nil
	}
	id := r.HeaderOf(keySession)
	if id == nil {
		return nil
	}
	return s.sessions.lookup(id, ownerOf(r), time.Now())
}

// ownerOf returns who r's token names (its issuer and subject, or its
// client id when it names no subject), or "" without one: with WithAuth
// a session is its initializer's, and a request with another token does
// not find it (MCP's security practices: bind session ids to the user).
func ownerOf(r *fastserver.Request) string {
	if t := auth.FromRequest(r); t != nil {
		return t.Principal()
	}
	return ""
}

// checkSession refuses, under 2025-xx with sessions on, a request whose
// Mcp-Session-Id names no live session: 404.
func (s *Server) checkSession(r *fastserver.Request) *fastserver.Error {
	if s.sessions == nil || RequestVersion(r).Stateless() {
		return nil
	}
	if id := r.HeaderOf(keySession); id != nil && s.sessions.lookup(id, ownerOf(r), time.Now()) == nil {
		return errSessionGone
	}
	return nil
}

// responseScope is the endpoint's ResponseScope: a client's response to a
// request of the server's own (Ask under 2025-xx) is taken only from the
// token holder (WithAuth) and the session (WithSessions) that the request
// came from. A response that names a session that ended is 404, as any
// request naming one; under 2026-07-28 the session header is ignored.
func (s *Server) responseScope(r *fastserver.Request) (string, *fastserver.Error) {
	owner := ownerOf(r)
	if s.sessions == nil {
		return owner, nil
	}
	if hv := r.HeaderOf(keyProtocolVersion); hv != nil {
		v, ok := ParseVersion(hv)
		if !ok {
			return "", unsupportedVersion(hv)
		}
		if v.Stateless() {
			return owner, nil
		}
	}
	id := r.HeaderOf(keySession)
	if id == nil {
		return owner, nil
	}
	if s.sessions.lookup(id, owner, time.Now()) == nil {
		return "", errSessionGone
	}
	// No owner holds a NUL (issuer and subject are JSON strings that a
	// token's verification decoded, rejected with control characters),
	// and a session id is base64url: the pair is unambiguous.
	return owner + "\x00" + string(id), nil
}

// Sessions returns how many sessions are alive (0 without WithSessions).
func (s *Server) Sessions() int {
	if s.sessions == nil {
		return 0
	}
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	s.sessions.sweep(time.Now())
	return len(s.sessions.m)
}

// DroppedNotifications counts the notifications dropped because a
// session's queue, or a stdio stream's (64 resource updates), was full.
func (s *Server) DroppedNotifications() uint64 {
	n := s.stdio.dropped.Load()
	if s.sessions != nil {
		n += s.sessions.dropped.Load()
	}
	return n
}

// NotifyResourceUpdated sends notifications/resources/updated for uri to
// every 2026-07-28 subscriptions/listen stream that follows it (merged
// into one already waiting there to be written) and to every 2025-xx
// session subscribed to it (on its GET stream, when one is open; queued
// until one opens, up to SessionOptions.Queue), and with WithRelay to
// those of the fleet's other instances. It returns how many streams and
// sessions of this instance it was queued for. Safe for concurrent use.
func (s *Server) NotifyResourceUpdated(uri string) int {
	if s.relay != nil {
		s.relay.Publish(uri)
	}
	return s.notifyLocal(uri)
}

// notifyLocal is NotifyResourceUpdated for this instance's streams and
// sessions only.
func (s *Server) notifyLocal(uri string) int {
	n := s.listen.notify(uri)
	msg := append([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":`), decode.AppendString(nil, uri)...)
	msg = append(msg, "}}"...)
	n += s.stdio.notify(uri, msg)
	if s.sessions == nil {
		return n
	}
	t := s.sessions
	now := time.Now()
	t.mu.Lock()
	var targets []*session
	for id, ss := range t.m {
		if ss.expired(now, t.opts.Idle) {
			// Gone (404 to its client): nothing is queued for it.
			t.endLocked(id, ss)
			continue
		}
		ss.mu.Lock()
		if ss.subs[uri] {
			targets = append(targets, ss)
		}
		ss.mu.Unlock()
	}
	t.mu.Unlock()
	for _, ss := range targets {
		ss.mu.Lock()
		if !ss.ended {
			select {
			case ss.events <- msg:
				n++
			default:
				t.dropped.Add(1)
			}
		}
		ss.mu.Unlock()
	}
	return n
}

// serveOther answers GET (a session's notification stream) and DELETE
// (the end of a session) on the endpoint when sessions are on.
func (s *Server) serveOther(srv *fastserver.Server, ctx *fasthttp.RequestCtx) bool {
	if s.sessions == nil {
		return false
	}
	// Judged by all its lines, as a POST's (two name no session: 404),
	// never by its first line alone.
	id := fieldValue(ctx, HeaderSession)
	owner := ""
	if len(id) > 0 && s.auth != nil && (ctx.IsDelete() || ctx.IsGet()) {
		// A session's stream and its end need the endpoint's token, as
		// its POSTs do (WithAuth), and the session's own owner's.
		var r fastserver.Request
		r.Reset(&ctx.Request.Header, nil, ctx)
		e := s.auth.Authorize(&r)
		owner = ownerOf(&r)
		if e != nil {
			status := e.Status
			if status == 0 {
				status = fasthttp.StatusUnauthorized
			}
			ctx.Error(e.Message, status) // resets the headers: set them after
			for _, h := range e.Header {
				ctx.Response.Header.Add(h.Name, h.Value)
			}
			return true
		}
	}
	// The protocol version, as for a POST (row 11): one this server does
	// not serve is 400; under 2026-07-28 there are no sessions, so no
	// session stream or end (405).
	if hv := fieldValue(ctx, HeaderProtocolVersion); hv != nil {
		v, ok := ParseVersion(hv)
		if !ok {
			e := unsupportedVersion(hv)
			ctx.Error("", e.Status) // resets the answer: its body is set after
			ctx.SetContentType("application/json")
			ctx.SetBody(decode.AppendError(nil, []byte("null"), e.Code, e.Message, e.Data))
			return true
		}
		if v.Stateless() {
			return false
		}
	}
	switch {
	case ctx.IsDelete():
		if len(id) == 0 {
			ctx.Error("DELETE needs the Mcp-Session-Id of the session to end", fasthttp.StatusBadRequest)
		} else if s.sessions.end(id, owner) {
			ctx.SetStatusCode(fasthttp.StatusNoContent)
		} else {
			ctx.Error("session not found", fasthttp.StatusNotFound)
		}
		return true
	case ctx.IsGet():
		if len(id) == 0 {
			return false // 405: no stream without a session
		}
		ss := s.sessions.lookup(id, owner, time.Now())
		if ss == nil {
			ctx.Error("session not found", fasthttp.StatusNotFound)
			return true
		}
		if !fastserver.AcceptsEventStream(fieldValue(ctx, "Accept")) {
			ctx.Error("the session stream is text/event-stream", fasthttp.StatusNotAcceptable)
			return true
		}
		if !ctx.Request.Header.IsHTTP11() {
			// The stream is a chunked body, which HTTP/1.0 cannot carry
			// (RFC 9112 §6.1), as for a POST's stream (ErrStreamHTTP10).
			ctx.Error("the session stream needs HTTP/1.1: an HTTP/1.0 request cannot get a chunked stream", fasthttp.StatusNotAcceptable)
			return true
		}
		// Everything a GET is refused for has been checked: this one takes
		// the session's stream over (see the note at the top).
		st := &sessionStream{ctx: ctx, conn: ctx.Conn(), gone: make(chan struct{})}
		events, old, ok := ss.attach(st)
		if !ok { // ended since lookup (DELETE, expiry)
			ctx.Error("session not found", fasthttp.StatusNotFound)
			return true
		}
		if old != nil {
			// Ended, the old stream gives its slots back when its writer
			// returns, at its next turn, or when end cuts it after
			// streamEndGrace: wait for that, so that a client at its
			// bound (MaxClientStreams) may take its own stream over.
			old.end()
			old.wait(streamEndGrace + 100*time.Millisecond)
		}
		// An ended stream closes its connection: one whose client went
		// away must not stay open, idle, for another request.
		ctx.SetConnectionClose()
		srv.ServeEvents(ctx, events, func() {
			st.finish()
			ss.detach(st)
		})
		return true
	}
	return false
}

// fieldValue returns the request's field name, its lines joined with
// ", " as one value (RFC 9110 §5.3): nil when there is none.
func fieldValue(ctx *fasthttp.RequestCtx, name string) []byte {
	vals := ctx.Request.Header.PeekAll(name)
	switch len(vals) {
	case 0:
		return nil
	case 1:
		return append([]byte{}, vals[0]...)
	}
	return bytes.Join(vals, []byte(", "))
}
