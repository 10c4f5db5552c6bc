package fastserver

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// Metric names, in Prometheus text exposition at GET /metrics:
//
//	rpcedge_requests_total{endpoint,method,status,code}  counter
//	rpcedge_request_duration_seconds{endpoint}            histogram
//	rpcedge_request_body_bytes{endpoint}                  histogram (wire bytes read)
//	rpcedge_requests_in_flight                            gauge
//	rpcedge_inflight_body_bytes                           gauge (the body budget held, row 6)
//	rpcedge_connections_open                              gauge (early answers draining included)
//	rpcedge_panics_total{where}                           counter
//	rpcedge_handler_timeouts_total                        counter
//	rpcedge_handlers_client_gone_total                    counter (handlers cancelled: their client left while they ran)
//	rpcedge_streams_open                                  gauge (stream slots held)
//	rpcedge_streams_total                                 counter (answers that streamed)
//	rpcedge_streams_cut_total                             counter (streams whose final event was not written)
//	rpcedge_stream_events_total                           counter (writes of events)
//	rpcedge_streams_client_refused_total                  counter (streams refused past Config.MaxClientStreams)
//	rpcedge_slow_bodies_total                             counter (bodies cut off for their data rate)
//	rpcedge_connection_timeouts_total{phase}              counter (connections cut off by ReadTimeout,
//	                                                      WriteTimeout or IdleTimeout: phase read, write, idle)
//	rpcedge_connections_reclaimed_total                   counter (idle connections, between requests or since accepted, closed to admit
//	                                                      one past MaxConns)
//
// method is a registered method's name or "other" (unregistered names
// never become labels); code is the JSON-RPC error code or "none" for a
// result or a 202. where names the stage a recovered panic happened in:
// route, headers, body, decode, dispatch, handler, answer, compress,
// metrics, early, expect or error.
type serverMetrics struct {
	set      *metrics.Set
	panics   [numStages]*metrics.Counter
	timeouts *metrics.Counter
	// clientGone counts handler runs ended with ErrClientGone.
	clientGone *metrics.Counter
	// slowBodies counts bodies cut off for their data rate.
	slowBodies *metrics.Counter
	// connTimeouts counts connections the watchdog cut off, by the phase
	// that overstayed (connReading, connWriting, connIdle).
	connTimeouts [connFree]*metrics.Counter
	// connsReclaimed counts idle connections closed to admit a new one
	// past MaxConns (conns.go).
	connsReclaimed *metrics.Counter

	streamsStarted, streamsCut, streamEvents *metrics.Counter
	streamsClientRefused                     *metrics.Counter
	hists                                    []*requestHistograms // the endpoints', by path (histogram.go)
	extra                                    func(w io.Writer)    // Config.MoreMetrics

	mu       sync.RWMutex
	counters map[counterKey]*metrics.Counter
}

type counterKey struct {
	ep     *endpoint
	label  string
	status int
	code   int
}

// newServerMetrics returns the metrics of a server with endpoints eps;
// inflight reports the requests being served (the server counts the
// requests it entered and answered anyway, so the gauge costs no
// counter of its own per request).
func newServerMetrics(eps map[string]*endpoint, inflight func() uint64) *serverMetrics {
	m := &serverMetrics{
		set:      metrics.NewSet(),
		counters: make(map[counterKey]*metrics.Counter),
	}
	m.set.NewGauge("rpcedge_requests_in_flight", func() float64 { return float64(inflight()) })
	for st := range numStages {
		m.panics[st] = m.set.NewCounter(`rpcedge_panics_total{where="` + st.String() + `"}`)
	}
	m.timeouts = m.set.NewCounter("rpcedge_handler_timeouts_total")
	m.clientGone = m.set.NewCounter("rpcedge_handlers_client_gone_total")
	m.slowBodies = m.set.NewCounter("rpcedge_slow_bodies_total")
	for phase, name := range map[int]string{connReading: "read", connWriting: "write", connIdle: "idle"} {
		m.connTimeouts[phase] = m.set.NewCounter(`rpcedge_connection_timeouts_total{phase="` + name + `"}`)
	}
	m.connsReclaimed = m.set.NewCounter("rpcedge_connections_reclaimed_total")
	for _, path := range slices.Sorted(maps.Keys(eps)) {
		ep := eps[path]
		ep.hist = newRequestHistograms(path)
		m.hists = append(m.hists, ep.hist)
	}
	return m
}

// lastCounter is a one-entry cache of the counter a pooled call counted
// its previous request with: under a steady load the next request of
// the call is most often counted with the same labels, and then finds
// its counter without the map and its lock.
type lastCounter struct {
	k counterKey
	c *metrics.Counter
}

// observe counts one answered request. It allocates only the first time
// a combination of labels is seen. last, when not nil, is the calling
// call's cache.
func (m *serverMetrics) observe(ep *endpoint, label string, status, code int, d time.Duration, bodyBytes int64, last *lastCounter) {
	k := counterKey{ep, label, status, code}
	var c *metrics.Counter
	if last != nil && last.c != nil && last.k == k {
		c = last.c
	} else {
		m.mu.RLock()
		c = m.counters[k]
		m.mu.RUnlock()
		if c == nil {
			c = m.counter(k)
		}
		if last != nil {
			*last = lastCounter{k, c}
		}
	}
	c.Inc()
	ep.hist.observe(d.Seconds(), float64(bodyBytes))
}

func (m *serverMetrics) counter(k counterKey) *metrics.Counter {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.counters[k]; c != nil {
		return c
	}
	method := k.label
	if method == "" {
		method = "other"
	}
	code := "none"
	if k.code != 0 {
		code = strconv.Itoa(k.code)
	}
	name := "rpcedge_requests_total{endpoint=" + quoteLabel(k.ep.path) + ",method=" + quoteLabel(method) +
		",status=\"" + strconv.Itoa(k.status) + "\",code=\"" + code + "\"}"
	c := m.set.GetOrCreateCounter(name)
	m.counters[k] = c
	return c
}

func (m *serverMetrics) serve(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.SetBody(m.exposition(nil))
}

// exposition appends the Prometheus text exposition of every metric to
// dst: each family preceded by its # HELP and # TYPE lines, as promtool
// and metadata-aware tooling want them.
func (m *serverMetrics) exposition(dst []byte) []byte {
	var raw, sizes bytes.Buffer
	m.set.WritePrometheus(&raw)
	for _, h := range m.hists {
		h.writeTo(&raw, &sizes)
	}
	raw.Write(sizes.Bytes())
	if m.extra != nil {
		m.extra(&raw) // Config.MoreMetrics
	}
	lines := bytes.SplitAfter(raw.Bytes(), []byte("\n"))
	// # HELP and # TYPE lines in the input (MoreMetrics may write them)
	// describe their families; the table describes ours.
	given := map[string]metricDesc{}
	for _, line := range lines {
		kind, rest, ok := bytes.Cut(line, []byte(" "))
		if !ok || kind[0] != '#' {
			continue
		}
		_, rest, _ = bytes.Cut(rest, []byte(" ")) // after "# "
		name, text, _ := bytes.Cut(bytes.TrimRight(rest, "\n"), []byte(" "))
		d := given[string(name)]
		switch {
		case bytes.HasPrefix(line, []byte("# HELP ")):
			d.help = string(text)
		case bytes.HasPrefix(line, []byte("# TYPE ")):
			d.typ = string(text)
		}
		given[string(name)] = d
	}
	family := ""
	for _, line := range lines {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name := line
		if i := bytes.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		f, d := describe(string(name), given)
		if f != family {
			family = f
			dst = append(dst, "# HELP "...)
			dst = append(dst, f...)
			dst = append(dst, ' ')
			dst = append(dst, d.help...)
			dst = append(dst, "\n# TYPE "...)
			dst = append(dst, f...)
			dst = append(dst, ' ')
			dst = append(dst, d.typ...)
			dst = append(dst, '\n')
		}
		dst = append(dst, line...)
	}
	return dst
}

// metricDesc is a metric family's type and help text.
type metricDesc struct{ typ, help string }

// families describes every family the server exposes.
var families = map[string]metricDesc{
	"rpcedge_requests_total":               {"counter", "JSON-RPC requests answered, by endpoint, method (registered names, else other), HTTP status and JSON-RPC code (none for a result or a 202)."},
	"rpcedge_request_duration_seconds":     {"histogram", "Time from the handler being entered to the answer, by endpoint."},
	"rpcedge_request_body_bytes":           {"histogram", "Wire bytes of request bodies read, by endpoint."},
	"rpcedge_requests_in_flight":           {"gauge", "JSON-RPC requests being served."},
	"rpcedge_inflight_body_bytes":          {"gauge", "Bytes of the in-flight body budget held (row 6 of the contract)."},
	"rpcedge_connections_open":             {"gauge", "Connections open, those draining after an early answer included."},
	"rpcedge_panics_total":                 {"counter", "Panics recovered, by the stage of the request they happened in."},
	"rpcedge_handler_timeouts_total":       {"counter", "Handlers that passed their deadline."},
	"rpcedge_handlers_client_gone_total":   {"counter", "Handlers whose context was cancelled because their client went away while they ran."},
	"rpcedge_slow_bodies_total":            {"counter", "Request bodies cut off for arriving slower than the minimum data rate."},
	"rpcedge_streams_open":                 {"gauge", "Stream slots held: answers that may stream, and event streams."},
	"rpcedge_streams_total":                {"counter", "Answers that became event streams, and event streams opened."},
	"rpcedge_streams_cut_total":            {"counter", "Streams whose final event was not written (the client left, a write timed out)."},
	"rpcedge_stream_events_total":          {"counter", "Events queued on streams (a stream's final response excluded)."},
	"rpcedge_streams_client_refused_total": {"counter", "Streams refused because their client held Config.MaxClientStreams."},
	"rpcedge_connection_timeouts_total":    {"counter", "Connections cut off by the read, write or idle timeout, by phase."},
	"rpcedge_connections_reclaimed_total":  {"counter", "Idle connections (between requests, or silent since accepted) closed to admit a new connection past the connection cap."},
}

// describe returns the family a series name belongs to and its
// description: from given (the input's own # HELP and # TYPE lines), else
// from the table. A family outside both is described by its name: a
// counter when it ends in _total, a histogram when its series end in
// _bucket, _sum or _count, else a gauge.
func describe(name string, given map[string]metricDesc) (string, metricDesc) {
	lookup := func(n string) (metricDesc, bool) {
		if d, ok := given[n]; ok && d.help != "" && d.typ != "" {
			return d, true
		}
		d, ok := families[n]
		return d, ok
	}
	if d, ok := lookup(name); ok {
		return name, d
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if d, ok := lookup(base); ok && d.typ == "histogram" {
				return base, d
			}
		}
	}
	typ := "gauge"
	if strings.HasSuffix(name, "_total") {
		typ = "counter"
	}
	return name, metricDesc{typ, "rpcedge metric " + name + "."}
}
