package fastserver

import (
	"io"
	"strconv"
	"sync"
	"sync/atomic"
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
//	rpcedge_slow_bodies_total                             counter (bodies cut off for their data rate)
//
// method is a registered method's name or "other" (unregistered names
// never become labels); code is the JSON-RPC error code or "none" for a
// result or a 202. where names the stage a recovered panic happened in:
// route, headers, body, decode, dispatch, handler, answer, compress,
// metrics, early, expect or error.
type serverMetrics struct {
	set      *metrics.Set
	inflight atomic.Int64
	panics   [numStages]*metrics.Counter
	timeouts *metrics.Counter
	// slowBodies counts bodies cut off for their data rate.
	slowBodies *metrics.Counter
	latency    map[*endpoint]*metrics.PrometheusHistogram
	size       map[*endpoint]*metrics.PrometheusHistogram
	extra      func(w io.Writer) // Config.MoreMetrics

	mu       sync.RWMutex
	counters map[counterKey]*metrics.Counter
}

type counterKey struct {
	ep     *endpoint
	label  string
	status int
	code   int
}

var sizeBuckets = metrics.ExponentialBuckets(64, 4, 10) // 64 B .. 16 MiB

func newServerMetrics(eps map[string]*endpoint) *serverMetrics {
	m := &serverMetrics{
		set:      metrics.NewSet(),
		latency:  make(map[*endpoint]*metrics.PrometheusHistogram),
		size:     make(map[*endpoint]*metrics.PrometheusHistogram),
		counters: make(map[counterKey]*metrics.Counter),
	}
	m.set.NewGauge("rpcedge_requests_in_flight", func() float64 { return float64(m.inflight.Load()) })
	for st := range numStages {
		m.panics[st] = m.set.NewCounter(`rpcedge_panics_total{where="` + st.String() + `"}`)
	}
	m.timeouts = m.set.NewCounter("rpcedge_handler_timeouts_total")
	m.slowBodies = m.set.NewCounter("rpcedge_slow_bodies_total")
	for path, ep := range eps {
		q := strconv.Quote(path)
		m.latency[ep] = m.set.NewPrometheusHistogram("rpcedge_request_duration_seconds{endpoint=" + q + "}")
		m.size[ep] = m.set.NewPrometheusHistogramExt("rpcedge_request_body_bytes{endpoint="+q+"}", sizeBuckets)
	}
	return m
}

// observe counts one answered request. It allocates only the first time
// a combination of labels is seen.
func (m *serverMetrics) observe(ep *endpoint, label string, status, code int, d time.Duration, bodyBytes int64) {
	k := counterKey{ep, label, status, code}
	m.mu.RLock()
	c := m.counters[k]
	m.mu.RUnlock()
	if c == nil {
		c = m.counter(k)
	}
	c.Inc()
	m.latency[ep].Update(d.Seconds())
	m.size[ep].Update(float64(bodyBytes))
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
	name := "rpcedge_requests_total{endpoint=" + strconv.Quote(k.ep.path) + ",method=" + strconv.Quote(method) +
		",status=\"" + strconv.Itoa(k.status) + "\",code=\"" + code + "\"}"
	c := m.set.GetOrCreateCounter(name)
	m.counters[k] = c
	return c
}

func (m *serverMetrics) serve(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	m.set.WritePrometheus(ctx)
	if m.extra != nil {
		m.extra(ctx)
	}
}
