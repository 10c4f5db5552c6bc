package fastserver

// zstd answers scale with cores like gzip's (issue #18 item 8). The
// baseline twin is the encoder the server used before: one state
// (concurrency 1, klauspost's default 8 MiB window) for every answer.
//
//	go test ./fastserver -run '^$' -bench 'CompressAnswer|ZstdSmallBesideLarge' -benchtime 300x -count 6

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rpcedge/rpcedge/decode"
)

// serialZstd is the answers' encoder before issue #18 item 8.
var serialZstd, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))

// answerText returns a JSON string of about n bytes of varied words (an
// answer that compresses like text, not like a run of one byte).
func answerText(seed uint64, n int) []byte {
	words := []string{"tool", "result", "content", "text", "resource", "uri", "rpcedge", "alpha", "beta", "42", "true", "null"}
	rng := rand.New(rand.NewPCG(seed, 3))
	b := []byte{'"'}
	for len(b) < n-1 {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ', byte('a'+rng.IntN(26)))
	}
	return append(b[:n-1], '"')
}

// BenchmarkCompressAnswer compresses answers from every core at once
// (b.RunParallel): zstd through the pooled encoder and through its serial
// twin, and gzip through its writers' pool.
func BenchmarkCompressAnswer(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10} {
		src := answerText(uint64(size), size)
		for _, tc := range []struct {
			name string
			enc  int
			ze   zstdEncoder
		}{
			{"zstd-pooled", encZstd, zstdAnswers},
			{"zstd-serial", encZstd, serialZstd},
			{"gzip", encGzip, nil},
		} {
			b.Run(tc.name+"/"+strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					dst := make([]byte, 0, len(src))
					for pb.Next() {
						var ok bool
						if dst, ok = compressAnswer(dst[:0], src, tc.enc, tc.ze); !ok {
							panic("not compressed")
						}
					}
				})
			})
		}
	}
}

// besideLargeEndpoint answers "small" with a 2 KiB text and "large" with
// a 512 KiB one.
func besideLargeEndpoint() *Endpoint {
	small, large := answerText(1, 2<<10), answerText(2, 512<<10)
	var ms Methods
	ms.HandleFunc("small", func(r *Request, dst []byte) ([]byte, error) { return append(dst, small...), nil })
	ms.HandleFunc("large", func(r *Request, dst []byte) ([]byte, error) { return append(dst, large...), nil })
	return ms.Endpoint(pathJR, decode.IDsJSONRPC)
}

// BenchmarkZstdSmallBesideLarge reproduces issue #18 item 8: six clients
// fetch a large zstd answer over and over while one client times small
// answers, zstd and uncompressed. Two servers run side by side, one with
// the pooled encoder, one with its serial twin; the six clients move
// between them every 25 probes, so both are measured interleaved, under
// the same load, in one run. b.N is the number of small zstd answers
// timed per server; the p50s are reported as metrics.
func BenchmarkZstdSmallBesideLarge(b *testing.B) {
	modes := []string{"pooled", "serial"}
	addrs := make([]string, 2)
	for i, ze := range []zstdEncoder{zstdAnswers, serialZstd} {
		s, addr := serve(b, Config{Logger: quietLogger}, besideLargeEndpoint())
		s.zstd = ze // before any request: Serve reads it per answer
		addrs[i] = addr
	}
	call := func(method string, id int, ae string) string {
		h := []string{}
		if ae != "" {
			h = append(h, "Accept-Encoding: "+ae)
		}
		return post(pathJR, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"`+method+`"}`, h...)
	}
	var active atomic.Int32 // the server the six clients load
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var large [2]atomic.Int64 // large answers fetched from each server
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns := []*conn{dial(b, addrs[0]), dial(b, addrs[1])}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m := active.Load()
				r := conns[m].do(call("large", g*1e6+i, "zstd"))
				if r.Status != 200 || r.Header.Get("Content-Encoding") != "zstd" {
					panic("large answer: " + r.StatusLine)
				}
				large[m].Add(1)
			}
		}()
	}
	probes := []*conn{dial(b, addrs[0]), dial(b, addrs[1])}
	lat := [2][2][]time.Duration{} // [mode][zstd, identity]
	var took [2]time.Duration      // time each server was loaded
	b.ResetTimer()
	for i := 0; i < b.N; i += 25 {
		for _, m := range []int{i / 25 % 2, (i/25 + 1) % 2} {
			active.Store(int32(m))
			time.Sleep(20 * time.Millisecond) // the loaders move over
			from := time.Now()
			for j := i; j < min(i+25, b.N); j++ {
				for k, ae := range []string{"zstd", ""} {
					start := time.Now()
					r := probes[m].do(call("small", j, ae))
					lat[m][k] = append(lat[m][k], time.Since(start))
					if r.Status != 200 || (ae == "zstd") != (r.Header.Get("Content-Encoding") == "zstd") {
						b.Fatalf("small answer: %s, Content-Encoding %q", r.StatusLine, r.Header.Get("Content-Encoding"))
					}
				}
			}
			took[m] += time.Since(from)
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	for m, name := range modes {
		b.ReportMetric(p50(lat[m][0]), name+"-zstd-p50-µs")
		b.ReportMetric(p50(lat[m][1]), name+"-plain-p50-µs")
		b.ReportMetric(float64(large[m].Load())/took[m].Seconds(), name+"-large/s")
	}
	b.ReportMetric(0, "ns/op")
}
