package fastserver

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/VictoriaMetrics/metrics"
)

// NOTE: one lock for a request's two histograms.
//
// Every answered request updates its endpoint's duration and body-size
// histograms. As two metrics.PrometheusHistograms that took two mutexes,
// four locked instructions a request; requestHistograms keeps both under
// one mutex and writes the exposition lines metrics.PrometheusHistogram
// writes for the same observations (TestRequestHistogramsExposition).

// durationBounds and sizeBounds are the buckets' upper bounds: Prometheus'
// default latency buckets, and 64 B to 16 MiB by fours.
// durationLE and sizeLE are their le labels (`le="0.005"`, …, `le="+Inf"`),
// formatted as metrics.PrometheusHistogram formats them.
var (
	durationBounds = metrics.PrometheusHistogramDefaultBuckets
	sizeBounds     = metrics.ExponentialBuckets(64, 4, 10)
	durationLE     = leLabels(durationBounds)
	sizeLE         = leLabels(sizeBounds)
)

// requestHistograms are one endpoint's rpcedge_request_duration_seconds
// and rpcedge_request_body_bytes. The zero value is not ready: use
// newRequestHistograms.
type requestHistograms struct {
	mu      sync.Mutex
	count   uint64   // observations, of both
	dur     []uint64 // per bucket, not cumulative; the last is +Inf
	size    []uint64 // the same
	durSum  float64  // seconds
	sizeSum float64  // bytes
	labels  string   // `endpoint="/mcp"`
}

// newRequestHistograms returns the histograms of the endpoint at path.
func newRequestHistograms(path string) *requestHistograms {
	return &requestHistograms{
		dur:    make([]uint64, len(durationBounds)+1),
		size:   make([]uint64, len(sizeBounds)+1),
		labels: "endpoint=" + quoteLabel(path),
	}
}

// quoteLabel quotes a label value for the Prometheus text format, which
// knows three escapes only: \\, \" and \n (strconv.Quote's \t or \x01
// would make a scraper refuse the whole exposition). Other bytes are kept,
// except that a byte that is not UTF-8 becomes U+FFFD, as the format
// wants UTF-8.
func quoteLabel(v string) string {
	b := make([]byte, 0, len(v)+2)
	b = append(b, '"')
	for _, r := range v { // an invalid byte comes as utf8.RuneError
		switch r {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(append(b, '"'))
}

// leLabels formats the le labels of bounds and of +Inf.
func leLabels(bounds []float64) []string {
	out := make([]string, 0, len(bounds)+1)
	for _, ub := range bounds {
		out = append(out, fmt.Sprintf(`le="%v"`, ub))
	}
	return append(out, `le="+Inf"`)
}

// bucketOf returns the index of the first bound v is at or under, or
// len(bounds) (+Inf).
func bucketOf(bounds []float64, v float64) int {
	for i, ub := range bounds {
		if v <= ub {
			return i
		}
	}
	return len(bounds)
}

// observe records one request that took seconds and read bytes of body,
// neither negative.
func (h *requestHistograms) observe(seconds, bytes float64) {
	di, si := bucketOf(durationBounds, seconds), bucketOf(sizeBounds, bytes)
	h.mu.Lock()
	h.count++
	h.durSum += seconds
	h.sizeSum += bytes
	h.dur[di]++
	h.size[si]++
	h.mu.Unlock()
}

// writeTo writes both histograms in the Prometheus text format, each
// family's series together: the duration's to durW, the size's to sizeW.
func (h *requestHistograms) writeTo(durW, sizeW io.Writer) {
	h.mu.Lock()
	count, durSum, sizeSum := h.count, h.durSum, h.sizeSum
	dur, size := slices.Clone(h.dur), slices.Clone(h.size)
	h.mu.Unlock()
	writeHistogram(durW, "rpcedge_request_duration_seconds", h.labels, durationLE, dur, durSum, count)
	writeHistogram(sizeW, "rpcedge_request_body_bytes", h.labels, sizeLE, size, sizeSum, count)
}

// writeHistogram writes one histogram's series as
// metrics.PrometheusHistogram does: cumulative buckets, +Inf, _sum (an
// integer when the sum is one), _count.
func writeHistogram(w io.Writer, name, labels string, le []string, buckets []uint64, sum float64, count uint64) {
	var cum uint64
	for i, l := range le[:len(le)-1] {
		cum += buckets[i]
		fmt.Fprintf(w, "%s_bucket{%s,%s} %d\n", name, labels, l, cum)
	}
	fmt.Fprintf(w, "%s_bucket{%s,%s} %d\n", name, labels, le[len(le)-1], count)
	if float64(int64(sum)) == sum {
		fmt.Fprintf(w, "%s_sum{%s} %d\n", name, labels, int64(sum))
	} else {
		fmt.Fprintf(w, "%s_sum{%s} %g\n", name, labels, sum)
	}
	fmt.Fprintf(w, "%s_count{%s} %d\n", name, labels, count)
}
