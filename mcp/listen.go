package mcp

// NOTE: subscriptions/listen (2026-07-28, SEP-2575).
//
// Under 2026-07-28 a client that wants notifications no request asked
// for opens one long request, subscriptions/listen, whose params name
// what it opts in to (params.notifications, a SubscriptionFilter). The
// answer is a stream: first notifications/subscriptions/acknowledged with
// the subset the server honors, then the notifications themselves, each
// tagged with the listen request's id in
// _meta["io.modelcontextprotocol/subscriptionId"]; the server ends the
// stream gracefully with a SubscriptionsListenResult (shutdown, Close,
// ListenOptions.MaxDuration), and the client ends it by closing it.
//
// What this server honors: resourceSubscriptions, the URIs whose
// notifications/resources/updated the stream carries (Server.
// NotifyResourceUpdated feeds them, as it feeds 2025-xx sessions). Its
// tool, prompt and resource lists are fixed once served, so the three
// *ListChanged opt-ins are never honored: the acknowledgement leaves them
// out, as SEP-2575 says it must for a type the server does not support,
// and server/discover declares no listChanged.
//
// A stream never holds more than one pending notification per URI it
// follows: an update of a URI already waiting to be written is merged
// into it (the notification says "read it again", which one read
// answers), so a client that reads slowly costs its stream at most its
// subscriptions, never a queue that grows or a notification dropped.
// Streams are bounded in number (ListenOptions.Max: one more is refused
// 503) and each in the URIs it follows (ListenOptions.Subscriptions and
// 64 KiB of them); a URI that names no resource and matches no template
// is refused as resources/read refuses it (-32601), before the stream
// starts. Each stream holds one of fastserver's streams (Config.
// MaxStreams, MaxClientStreams) for as long as it is open, and gives its
// request's body back to the in-flight budget once the filter is copied
// (fastserver.Stream.ReleaseBody). With WithRelay, updates noticed on
// another instance of a fleet reach the streams too.
//
// Not served: the stream over stdio (the newline-delimited transport
// serves one call at a time, which a listen stream would hold: the
// request is refused with -32600), and
// notifications/tasks (SEP-2663 leaves them optional and names no opt-in
// in the filter).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/coalesce"
)

// ListenOptions bounds the subscriptions/listen streams of 2026-07-28
// clients (WithListen). Zero fields take their defaults.
type ListenOptions struct {
	// Max bounds the listen streams open at once; one more is refused
	// with 503 / -32603 and Retry-After: 1. Default 1,000.
	Max int
	// Subscriptions bounds the resource URIs one stream may follow
	// (resourceSubscriptions, duplicates counted once), and 64 KiB of
	// them; a request past either is refused with -32602. Default 1,000.
	Subscriptions int
	// KeepAlive is how long a stream stays silent before the server
	// writes an SSE comment, so that proxies keep the connection. Default
	// 15 seconds.
	KeepAlive time.Duration
	// MaxDuration ends a stream gracefully, with its
	// SubscriptionsListenResult, after it has been open that long: the
	// client listens again (and should read again what it follows).
	// Default 1 hour; at most a year.
	MaxDuration time.Duration
}

// Default listen options.
const (
	DefaultMaxListeners        = 1000
	DefaultListenSubscriptions = 1000
	DefaultListenKeepAlive     = 15 * time.Second
	DefaultListenMaxDuration   = time.Hour
)

// maxListenBytes bounds the bytes of one stream's resource URIs.
const maxListenBytes = 64 << 10

// listenSlack is how long past MaxDuration the stream's handler deadline
// lies: the duration ends it, gracefully, before its context does.
const listenSlack = 5 * time.Second

// WithListen sets the bounds of subscriptions/listen streams. Without it
// they have the defaults.
func WithListen(o ListenOptions) Option {
	return func(s *Server) error {
		if o.Max < 0 || o.Subscriptions < 0 || o.KeepAlive < 0 || o.MaxDuration < 0 {
			return errors.New("mcp: ListenOptions fields must not be negative")
		}
		if o.MaxDuration > maxTaskDuration {
			// Found by review on 2026-12-07: math.MaxInt64 ("never")
			// overflowed the stream's deadline, which then lay in the
			// past: every stream ended at once.
			return errors.New("mcp: ListenOptions.MaxDuration must not exceed a year")
		}
		s.listenOpts = o
		return nil
	}
}

// listenTable holds the open listen streams, indexed by the URIs they
// follow.
type listenTable struct {
	opts ListenOptions

	done chan struct{} // closed by Server.Close: open streams end

	mu    sync.Mutex
	byURI map[string][]*listener
	n     int

	sent, merged, refused atomic.Uint64
}

func newListenTable(o ListenOptions) *listenTable {
	if o.Max == 0 {
		o.Max = DefaultMaxListeners
	}
	if o.Subscriptions == 0 {
		o.Subscriptions = DefaultListenSubscriptions
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultListenKeepAlive
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultListenMaxDuration
	}
	return &listenTable{opts: o, byURI: make(map[string][]*listener), done: make(chan struct{})}
}

// listener is one listen stream's state.
type listener struct {
	uris []string
	q    *coalesce.Queue // the uris updated and not yet written, each once
}

var (
	errListenFull   = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "server busy: too many subscriptions/listen streams open", RetryAfter: 1}
	errListenClosed = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "server closing: no new subscriptions/listen streams"}
	errListenFilter = fastserver.InvalidParams("notifications", "subscriptions/listen needs params.notifications, an object (the SubscriptionFilter)")

	errListenTooManyStreams = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "too many streams open: try again later", RetryAfter: 1}
	errListenNotEventStream = &fastserver.Error{Status: 406, Code: decode.CodeInvalidRequest, Message: "subscriptions/listen answers text/event-stream: the Accept header must allow it"}
	errListenHTTP10         = &fastserver.Error{Status: 406, Code: decode.CodeInvalidRequest, Message: "subscriptions/listen answers text/event-stream, which needs HTTP/1.1: the request is HTTP/1.0"}
	errListenNoStream       = &fastserver.Error{Code: decode.CodeInvalidRequest, Message: "subscriptions/listen needs a transport that streams (HTTP): this one has no streams"}
)

// add registers a stream that follows uris.
func (t *listenTable) add(uris []string) (*listener, *fastserver.Error) {
	l := &listener{uris: uris, q: coalesce.New(0, 0)} // at most uris: nothing to bound
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.isClosed():
		t.refused.Add(1)
		return nil, errListenClosed
	case t.n >= t.opts.Max:
		t.refused.Add(1)
		return nil, errListenFull
	}
	t.n++
	for _, u := range uris {
		t.byURI[u] = append(t.byURI[u], l)
	}
	return l, nil
}

// remove unregisters l.
func (t *listenTable) remove(l *listener) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	for _, u := range l.uris {
		ls := t.byURI[u]
		for i, x := range ls {
			if x == l {
				ls[i] = ls[len(ls)-1]
				ls[len(ls)-1] = nil
				ls = ls[:len(ls)-1]
				break
			}
		}
		if len(ls) == 0 {
			delete(t.byURI, u)
		} else {
			t.byURI[u] = ls
		}
	}
}

// notify marks uri updated for every stream that follows it and returns
// how many do.
func (t *listenTable) notify(uri string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := t.byURI[uri]
	for _, l := range ls {
		if l.q.Add(uri) == coalesce.Merged {
			t.merged.Add(1)
		}
	}
	return len(ls)
}

// close ends every open stream and refuses new ones.
func (t *listenTable) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.isClosed() {
		close(t.done)
	}
}

// isClosed reports whether close was called.
func (t *listenTable) isClosed() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// writePrometheus writes the streams' metrics (Server.WritePrometheus).
func (t *listenTable) writePrometheus(w io.Writer) {
	t.mu.Lock()
	n := t.n
	t.mu.Unlock()
	b := []byte(listenMetricsHelp)
	b = fmt.Appendf(b, "rpcedge_mcp_listen_streams %d\n", n)
	b = fmt.Appendf(b, "rpcedge_mcp_listen_notifications_total %d\n", t.sent.Load())
	b = fmt.Appendf(b, "rpcedge_mcp_listen_merged_total %d\n", t.merged.Load())
	b = fmt.Appendf(b, "rpcedge_mcp_listen_refused_total %d\n", t.refused.Load())
	w.Write(b)
}

const listenMetricsHelp = `# HELP rpcedge_mcp_listen_streams MCP subscriptions/listen streams open (2026-07-28).
# TYPE rpcedge_mcp_listen_streams gauge
# HELP rpcedge_mcp_listen_notifications_total Resource updates written to subscriptions/listen streams.
# TYPE rpcedge_mcp_listen_notifications_total counter
# HELP rpcedge_mcp_listen_merged_total Resource updates merged into one already waiting on a subscriptions/listen stream.
# TYPE rpcedge_mcp_listen_merged_total counter
# HELP rpcedge_mcp_listen_refused_total subscriptions/listen streams refused: ListenOptions.Max open, or the server closed.
# TYPE rpcedge_mcp_listen_refused_total counter
`

// Relay carries resource updates between the instances of a fleet
// (WithRelay), so that NotifyResourceUpdated on one instance reaches the
// listen streams and sessions of every instance. Package fleet's
// ResourceUpdates is one, over Redis. Implementations must be safe for
// concurrent use.
type Relay interface {
	// Publish carries an update of uri to the other instances. It must
	// not wait on the network: NotifyResourceUpdated calls it.
	Publish(uri string)
	// Receive is called by New with the function that tells this
	// instance's streams and sessions of an update another instance
	// published; it does not wait either. A Relay given to several
	// Servers gets one function from each, and must call them all.
	Receive(deliver func(uri string))
}

// WithRelay makes NotifyResourceUpdated carry each update to the other
// instances of a fleet through r, and r's updates reach this instance's
// streams and sessions.
func WithRelay(r Relay) Option {
	return func(s *Server) error {
		if r == nil {
			return errors.New("mcp: WithRelay needs a Relay")
		}
		s.relay = r
		return nil
	}
}

// Listeners returns how many subscriptions/listen streams are open.
func (s *Server) Listeners() int {
	t := s.listen
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// listenFilter is a SubscriptionFilter as this server reads it.
type listenFilter struct {
	uris []string // resourceSubscriptions, each once, in order; nil when absent
	has  bool     // resourceSubscriptions was given
}

// readListenFilter checks params.notifications and the URIs it names.
func (s *Server) readListenFilter(r *fastserver.Request) (listenFilter, *fastserver.Error) {
	var f listenFilter
	m := r.Msg
	if m.ParamsType != decode.ParamsObject {
		return f, errListenFilter
	}
	obj, n := decode.Lookup(m.Params, "notifications")
	if n != 1 || kindOf(obj) != kindObject {
		return f, errListenFilter
	}
	if _, dup := duplicateName(obj); dup {
		return f, duplicateIn(obj, "notifications.")
	}
	var it decode.Members
	it.Reset(obj)
	seen := make(map[string]bool)
	bytes := 0
	for it.Next() {
		v := it.Value()
		switch {
		case it.NameIs("toolsListChanged"), it.NameIs("promptsListChanged"), it.NameIs("resourcesListChanged"):
			if kindOf(v) != kindBool {
				field := "notifications." + memberName(&it)
				return f, fastserver.InvalidParams(field, field+" must be a boolean")
			}
		case it.NameIs("resourceSubscriptions"):
			if kindOf(v) != kindArray {
				return f, fastserver.InvalidParams("notifications.resourceSubscriptions", "notifications.resourceSubscriptions must be an array of resource URIs")
			}
			f.has = true
			f.uris = make([]string, 0, 4)
			var el decode.Elements
			el.Reset(v)
			for el.Next() {
				if !isString(el.Value()) {
					return f, fastserver.InvalidParams("notifications.resourceSubscriptions", "notifications.resourceSubscriptions must hold only strings (resource URIs)")
				}
				u := string(decode.AppendUnquoted(nil, el.Value()))
				if seen[u] {
					continue
				}
				if len(f.uris) >= s.listen.opts.Subscriptions || bytes+len(u) > maxListenBytes {
					return f, fastserver.InvalidParams("notifications.resourceSubscriptions", "notifications.resourceSubscriptions names more than "+
						strconv.Itoa(s.listen.opts.Subscriptions)+" resources or 64 KiB of URIs, the most one stream may follow (ListenOptions.Subscriptions)")
				}
				if _, ok := s.resIndex[u]; !ok {
					if tm, _ := s.findTemplate(u); tm == nil {
						return f, unknownResource(u)
					}
				}
				seen[u] = true
				bytes += len(u)
				f.uris = append(f.uris, u)
			}
		}
		// Other members: opt-ins of later revisions, not honored.
	}
	return f, nil
}

// serveListen answers subscriptions/listen (2026-07-28): the filter is
// checked and the stream registered before anything is sent, so that a
// refusal is a plain JSON answer.
func (s *Server) serveListen(r *fastserver.Request, dst []byte) ([]byte, error) {
	f, e := s.readListenFilter(r)
	if e != nil {
		return dst, e
	}
	return r.Stream(dst, fastserver.StreamHandlerFunc(func(st *fastserver.Stream, dst []byte) ([]byte, error) {
		switch err := st.Err(); {
		case err == nil && st.Lines():
			// A stream of messages (stdio) serves nothing else while a
			// handler runs: a listen stream would hold it.
			return dst, errListenNoStream
		case err == nil:
		case errors.Is(err, fastserver.ErrStreamLimit):
			return dst, errListenTooManyStreams
		case errors.Is(err, fastserver.ErrStreamHTTP10):
			return dst, errListenHTTP10
		case errors.Is(err, fastserver.ErrStreamNotAccepted):
			return dst, errListenNotEventStream
		case errors.Is(err, fastserver.ErrStreamUnavailable):
			return dst, errListenNoStream
		default:
			return dst, err
		}
		// The filter's URIs are copied: the body goes back now, not
		// when the stream ends an hour later (found by review on
		// 2026-12-07: 256 listens padded to 1 MiB held the whole
		// in-flight budget, and every other request was refused 503).
		st.ReleaseBody()
		l, e := s.listen.add(f.uris)
		if e != nil {
			return dst, e
		}
		defer s.listen.remove(l)
		return s.listenStream(st, r.Msg.ID, l, f, dst) // the id, as ReleaseBody copied it
	}))
}

// listenStream sends the acknowledgement, then each pending update, until
// the stream ends.
func (s *Server) listenStream(st *fastserver.Stream, id []byte, l *listener, f listenFilter, dst []byte) ([]byte, error) {
	t := s.listen
	// Past the handler timeout: the duration ends the stream, gracefully.
	st.SetDeadline(time.Now().Add(t.opts.MaxDuration + listenSlack))
	tag := append(append([]byte(`"_meta":{"io.modelcontextprotocol/subscriptionId":`), id...), "}}}"...)
	ev := append(make([]byte, 0, 256), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{`...)
	if f.has {
		ev = append(ev, `"resourceSubscriptions":[`...)
		for i, u := range f.uris {
			if i > 0 {
				ev = append(ev, ',')
			}
			ev = decode.AppendString(ev, u)
		}
		ev = append(ev, ']')
	}
	ev = append(append(ev, "},"...), tag...)
	if err := st.Send(ev); err != nil {
		return dst, err
	}
	limit := time.NewTimer(t.opts.MaxDuration)
	defer limit.Stop()
	tick := time.NewTicker(t.opts.KeepAlive)
	defer tick.Stop()
	ctx := st.Context()
	var uris []string
	for {
		select {
		case <-l.q.Wake():
			uris = l.q.Take(uris)
			for _, u := range uris {
				ev = append(ev[:0], `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":`...)
				ev = decode.AppendString(ev, u)
				ev = append(append(ev, ','), tag...)
				if err := st.Send(ev); err != nil {
					return dst, err
				}
				t.sent.Add(1)
			}
			tick.Reset(t.opts.KeepAlive)
		case <-tick.C:
			if err := st.Comment("keep-alive"); err != nil {
				return dst, err
			}
		case <-t.done:
			return s.listenResult(dst, id), nil
		case <-st.Stopping():
			return s.listenResult(dst, id), nil
		case <-limit.C:
			return s.listenResult(dst, id), nil
		case <-ctx.Done():
			return dst, context.Cause(ctx)
		}
	}
}

// listenResult appends the SubscriptionsListenResult that ends a stream
// gracefully: serverInfo and the subscription's id in its _meta.
func (s *Server) listenResult(dst, id []byte) []byte {
	dst = append(dst, `{"resultType":"complete"`...)
	dst = append(dst, s.meta[:len(s.meta)-2]...) // ,"_meta":{…serverInfo…
	dst = append(dst, `,"io.modelcontextprotocol/subscriptionId":`...)
	dst = append(dst, id...)
	return append(dst, "}}"...)
}
