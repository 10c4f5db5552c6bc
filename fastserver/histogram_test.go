package fastserver

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/VictoriaMetrics/metrics"
)

// TestRequestHistogramsExposition: the pair of histograms writes, for the
// same observations, exactly the lines two metrics.PrometheusHistograms
// write (the exposition's format before they were merged): values on the
// bounds, between them, past the last (+Inf), zero, integral and
// fractional sums.
func TestRequestHistogramsExposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 500} {
		for _, path := range []string{"/mcp", `/a"b\c`} {
			set := metrics.NewSet()
			dur := set.NewPrometheusHistogram("rpcedge_request_duration_seconds{endpoint=" + strconv.Quote(path) + "}")
			size := set.NewPrometheusHistogramExt("rpcedge_request_body_bytes{endpoint="+strconv.Quote(path)+"}", sizeBounds)
			h := newRequestHistograms(path)
			for i := range n {
				var s, b float64
				switch i % 5 {
				case 0: // on a bound
					s = durationBounds[rng.IntN(len(durationBounds))]
					b = sizeBounds[rng.IntN(len(sizeBounds))]
				case 1: // past the last bound
					s, b = 10+rng.Float64()*100, float64(16<<20+rng.IntN(1<<20))
				case 2:
					s, b = 0, 0
				default:
					s, b = rng.Float64()*3, float64(rng.IntN(1<<20))
				}
				dur.Update(s)
				size.Update(b)
				h.observe(s, b)
			}
			var want bytes.Buffer
			set.WritePrometheus(&want)
			var got, sizes bytes.Buffer
			h.writeTo(&got, &sizes)
			got.Write(sizes.Bytes())
			if w, g := sortedLines(want.String()), sortedLines(got.String()); w != g {
				t.Errorf("%d observations at %s:\n got %s\nwant %s", n, path, g, w)
			}
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var out []string
	for _, l := range lines {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestRequestHistogramsConcurrent: observations from many goroutines,
// written out meanwhile (go test -race), all counted, each family's
// buckets cumulative up to the count.
func TestRequestHistogramsConcurrent(t *testing.T) {
	h := newRequestHistograms("/mcp")
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				h.observe(float64(i%13)/10, float64(w*i))
			}
		}()
	}
	for range 20 {
		var a, b bytes.Buffer
		h.writeTo(&a, &b)
	}
	wg.Wait()
	var a, b bytes.Buffer
	h.writeTo(&a, &b)
	for _, text := range []string{a.String(), b.String()} {
		if !strings.Contains(text, `_count{endpoint="/mcp"} 16000`+"\n") || !strings.Contains(text, `le="+Inf"} 16000`+"\n") {
			t.Errorf("not every observation counted:\n%s", text)
		}
	}
}

// TestQuoteLabel: label values are quoted with the Prometheus text
// format's three escapes only, so that any endpoint path or method name
// leaves the exposition parseable: unquoting by the format's rules gives
// the value back (invalid UTF-8 as U+FFFD), no other backslash escape and
// no raw line feed appear, and the metrics library takes the name.
func TestQuoteLabel(t *testing.T) {
	for _, v := range []string{"/mcp", `/a"b\c`, "tab\there", "nl\nx", "cr\rx", "é/ü", "bad\xffbyte", "nul\x00", `\n literal`, ""} {
		q := quoteLabel(v)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' || !utf8.ValidString(q) || strings.ContainsRune(q, '\n') {
			t.Errorf("%q: quoted %q", v, q)
			continue
		}
		var back strings.Builder
		body := q[1 : len(q)-1]
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '"' {
				t.Errorf("%q: unescaped quote in %q", v, q)
			}
			if c != '\\' {
				back.WriteByte(c)
				continue
			}
			i++
			switch body[i] {
			case '\\':
				back.WriteByte('\\')
			case '"':
				back.WriteByte('"')
			case 'n':
				back.WriteByte('\n')
			default:
				t.Errorf("%q: escape \\%c in %q, which the format does not know", v, body[i], q)
			}
		}
		if want := strings.ToValidUTF8(v, "\uFFFD"); back.String() != want {
			t.Errorf("%q: quoted %q reads back as %q, want %q", v, q, back.String(), want)
		}
		metrics.NewSet().GetOrCreateCounter("x{a=" + q + "}").Inc() // panics on a name it refuses
	}
}
