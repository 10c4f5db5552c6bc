//go:build !race

package fastserver

// Allocations per request through the whole server: fasthttp's
// connection loop, the contract pipeline, a raw handler, metrics and the
// answer, as fasthttp's own allocation_test.go measures ServeConn.

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// allocBatch is the number of pipelined requests per ServeConn call.
const allocBatch = 16

// allocRequests returns batches of allocBatch pipelined requests made by
// body(n), the n-th body, with the extra header fields hdr.
func allocRequests(batches int, body func(n int) string, hdr ...string) [][]byte {
	out := make([][]byte, batches)
	for b := range out {
		var buf bytes.Buffer
		for i := range allocBatch {
			buf.WriteString(post(pathRPC, body(b*allocBatch+i), append([]string{"User-Agent: alloc-test", "Accept: application/json, text/event-stream"}, hdr...)...))
		}
		out[b] = buf.Bytes()
	}
	return out
}

// bigEchoBody is echoBody with a text long enough for its answer to be
// compressed (over CompressMinBytes), varied per request.
func bigEchoBody(n int) string {
	text := strings.Repeat("tool output line "+strconv.Itoa(n)+"; ", 60+n%40)
	return `{"jsonrpc":"2.0","id":` + allocID(n) + `,"method":"echo","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
}

// allocID returns a varied id: integers, strings, big integers.
func allocID(n int) string {
	switch n % 3 {
	case 0:
		return strconv.Itoa(n * 7919)
	case 1:
		return `"req-` + strconv.Itoa(n) + `"`
	}
	return "-" + strconv.Itoa(n) + "12345678901234567890"
}

// echoBody is a tools/call-shaped echo with varied ids and texts.
func echoBody(n int) string {
	text := strings.Repeat("hello ", 1+n%9) + strconv.Itoa(n)
	return `{"jsonrpc":"2.0","id":` + allocID(n) + `,"method":"echo","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
}

// refusalBody is a mix of answers decided after the body is read: rows 8,
// 10, 13, 14, 15, 17 and 16.
func refusalBody(n int) string {
	id := allocID(n)
	switch n % 7 {
	case 0:
		return `"not an object ` + strconv.Itoa(n) + `"`
	case 1:
		return `{"jsonrpc":"1.0","id":` + id + `,"method":"echo"}`
	case 2:
		return `{"jsonrpc":"2.0","method":"echo","params":{"n":` + strconv.Itoa(n) + `}}`
	case 3:
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"nosuch` + strconv.Itoa(n) + `"}`
	case 4:
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":[` + strconv.Itoa(n) + `]}`
	case 5:
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{"a":1,"a":2}}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"refused"}`
}

func allocServer(t testing.TB) *Server {
	var ms Methods
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, r.Msg.Params...), nil
	})
	s, err := New(Config{Logger: quietLogger}, testEndpoint(&ms))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ok200(int) int { return 200 }

// TestAllocsPerRequest: a warm server answers with no heap allocation per
// request, through fasthttp's connection loop, the contract pipeline, a
// raw handler, metrics and the answer.
func TestAllocsPerRequest(t *testing.T) {
	cases := []struct {
		name   string
		body   func(int) string
		status func(n int) int
		pinned float64
		hdr    []string // extra request header fields
		enc    string   // the answers' Content-Encoding
		own    bool     // through Server.ServeConn (its pooled connection wrapper)
	}{
		// The target is 0. The 1 left is fasthttp's, not ours: after
		// every streamed request its server loop calls
		// requestStream.discard (streaming.go:167), whose io.CopyN makes
		// an io.LimitReader that escapes (24 B), even when the handler
		// read the body to its end. TestAllocsOverFasthttp pins rpcedge's
		// own share at 0; a five-line fasthttp patch (discard returns at
		// once at EOF; issue 13's closing note) takes this to 0. Pinned
		// so that it can only go down.
		{name: "echo", body: echoBody, status: ok200, pinned: 1},
		{name: "refusals after the body", body: refusalBody, status: func(n int) int {
			return [...]int{400, 400, 202, 404, 200, 200, 200}[n%7]
		}, pinned: 1},
		{name: "echo through Server.ServeConn", body: echoBody, status: ok200, pinned: 1, own: true},
		{name: "echo, gzip answers", body: bigEchoBody, status: ok200, pinned: 1, hdr: []string{"Accept-Encoding: gzip"}, enc: "gzip"},
		{name: "echo, zstd answers", body: bigEchoBody, status: ok200, pinned: 1, hdr: []string{"Accept-Encoding: zstd"}, enc: "zstd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := allocServer(t)
			batches := allocRequests(7, tc.body, tc.hdr...)
			conn := &memConn{}
			conn.r.Grow(256 << 10)
			conn.w.Grow(256 << 10)
			serveConn := s.http.ServeConn
			if tc.own {
				serveConn = s.ServeConn
			}
			run := func(i int) {
				conn.w.Reset()
				conn.r.Write(batches[i%len(batches)])
				if err := serveConn(conn); err != nil {
					t.Fatal(err)
				}
			}
			// Warm up, and check that every request was answered right.
			for i := range len(batches) * 2 {
				run(i)
				br := bufio.NewReader(&conn.w)
				for j := range allocBatch {
					hr, err := http.ReadResponse(br, nil)
					if err != nil {
						t.Fatalf("batch %d answer %d: %v", i, j, err)
					}
					body := new(bytes.Buffer)
					body.ReadFrom(hr.Body)
					n := (i%len(batches))*allocBatch + j
					if hr.StatusCode != tc.status(n) {
						t.Fatalf("request %d: %d %s", n, hr.StatusCode, body)
					}
					if got := hr.Header.Get("Content-Encoding"); got != tc.enc {
						t.Fatalf("request %d: Content-Encoding %q, want %q", n, got, tc.enc)
					}
				}
			}
			if st := s.Stats(); st.Entered != st.Answered || st.Entered != uint64(2*len(batches)*allocBatch) {
				t.Fatalf("stats %+v", st)
			}
			i := 0
			allocs := testing.AllocsPerRun(200, func() {
				run(i)
				i++
			}) / allocBatch
			t.Logf("%.3f allocations per request", allocs)
			if allocs > tc.pinned {
				t.Errorf("%.3f allocations per request, want at most %v", allocs, tc.pinned)
			}
		})
	}
}

// BenchmarkServeConnEcho is the same path as a benchmark, for
// -memprofile: go test -run '^$' -bench ServeConnEcho -memprofile m.out
// -memprofilerate 1, then go tool pprof -sample_index=alloc_objects.
func BenchmarkServeConnEcho(b *testing.B) {
	s := allocServer(b)
	batches := allocRequests(8, echoBody)
	conn := &memConn{}
	conn.r.Grow(64 << 10)
	conn.w.Grow(64 << 10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += allocBatch {
		conn.w.Reset()
		conn.r.Write(batches[(i/allocBatch)%len(batches)])
		if err := s.http.ServeConn(conn); err != nil {
			b.Fatal(err)
		}
	}
}

// floorStream is the floor's handler for TestAllocsOverFasthttp: it reads
// the body to its end through RequestBodyStream into a reused buffer and
// answers a constant, as little work as a handler can do with a body.
type floorStream struct{ buf [1 << 10]byte }

func (f *floorStream) serve(ctx *fasthttp.RequestCtx) {
	if r := ctx.RequestBodyStream(); r != nil {
		for {
			if _, err := r.Read(f.buf[:]); err != nil {
				break
			}
		}
	}
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	ctx.SetBodyString(`{"jsonrpc":"2.0","id":1,"result":{}}`)
}

// TestAllocsOverFasthttp pins what rpcedge adds to fasthttp's own
// allocations per request: nothing, for bodies with a Content-Length and
// chunked ones. Beside the server, side by side on the same pipelined
// requests:
//
//   - floor-stream: a handler that reads the body and answers a constant,
//     on fasthttp configured exactly as the server is
//     (Server.FastHTTPServer). fasthttp v1.79's streamed-body mode
//     allocates one io.LimitReader per request (requestStream.discard's
//     io.CopyN, even after the body was read to its end): the server may
//     allocate that and nothing more.
//   - in-memory: the server's handler on fasthttp that reads bodies into
//     memory (StreamRequestBody off, as a caller's own fasthttp.Server
//     may): 0 allocations, fasthttp included, for the same requests.
//
// When fasthttp stops allocating in discard (the patch in the closing
// note of issue 13), the first pin goes to 0 by itself.
func TestAllocsOverFasthttp(t *testing.T) {
	chunkedEcho := func(n int) string { return chunk(echoBody(n)) }
	for _, tc := range []struct {
		name    string
		body    func(int) string
		chunked bool
	}{{"content-length", echoBody, false}, {"chunked", chunkedEcho, true}} {
		t.Run(tc.name, func(t *testing.T) {
			batches := make([][]byte, 7)
			for b := range batches {
				var buf bytes.Buffer
				for i := range allocBatch {
					hdr := []string{"User-Agent: alloc-test", "Accept: application/json, text/event-stream"}
					if tc.chunked {
						hdr = append(hdr, "Transfer-Encoding: chunked")
					}
					buf.WriteString(post(pathRPC, tc.body(b*allocBatch+i), hdr...))
				}
				batches[b] = buf.Bytes()
			}
			per := func(serve func(net.Conn) error, check bool) float64 {
				conn := &memConn{}
				run := func(i int) {
					conn.w.Reset()
					conn.r.Write(batches[i%len(batches)])
					if err := serve(conn); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 2 * len(batches) {
					run(i)
					if !check {
						continue
					}
					br := bufio.NewReader(&conn.w)
					for j := range allocBatch {
						hr, err := http.ReadResponse(br, nil)
						if err != nil {
							t.Fatalf("batch %d answer %d: %v", i, j, err)
						}
						body := new(bytes.Buffer)
						body.ReadFrom(hr.Body)
						if hr.StatusCode != 200 || !bytes.Contains(body.Bytes(), []byte(`"text":"hello`)) {
							t.Fatalf("batch %d answer %d: %d %s", i, j, hr.StatusCode, body)
						}
					}
				}
				i := 0
				return testing.AllocsPerRun(100, func() { run(i); i++ }) / allocBatch
			}
			s := allocServer(t)
			rpcedge := per(s.ServeConn, true)
			floor := per(s.FastHTTPServer((&floorStream{}).serve).ServeConn, false)
			mem := allocServer(t)
			hs := s.FastHTTPServer(mem.Handler())
			hs.StreamRequestBody, hs.MaxRequestBodySize = false, int(mem.cfg.MaxBodyBytes)
			inMemory := per(hs.ServeConn, true)
			t.Logf("allocations per request: rpcedge %.3f, floor-stream %.3f, rpcedge on in-memory bodies %.3f", rpcedge, floor, inMemory)
			if rpcedge > floor {
				t.Errorf("rpcedge allocates %.3f per request over fasthttp's %.3f", rpcedge-floor, floor)
			}
			if floor > 1 {
				t.Errorf("fasthttp's streamed mode allocates %.3f per request, pinned at 1", floor)
			}
			if inMemory > 0 {
				t.Errorf("%.3f allocations per request with in-memory bodies, want 0", inMemory)
			}
		})
	}
}

// TestAllocsMixedSizes: bodies of mixed sizes on the same calls allocate
// no body buffers once warm. A body of at most budgetStep is read into a
// buffer of exactly its declared size (65537 bytes here); before decode's
// growth kept to 4 KiB times a power of two, a larger body after it grew
// from there into sizes the pool does not hold (131074, 262148), which
// were dropped after their request: 3 allocations a request where fasthttp's
// one is left now.
func TestAllocsMixedSizes(t *testing.T) {
	s := allocServer(t)
	body := func(n, size int) string {
		text := strings.Repeat("mixed "+strconv.Itoa(n)+" ", size/8+1)
		b := `{"jsonrpc":"2.0","id":` + allocID(n) + `,"method":"echo","params":{"t":"`
		return b + text[:size-len(b)-3] + `"}}`
	}
	const perBatch = 4
	var batches [][]byte
	for k := range 3 {
		var buf bytes.Buffer
		for i := range perBatch / 2 {
			n := k*perBatch + 2*i
			buf.WriteString(post(pathRPC, body(n, budgetStep), "User-Agent: alloc-test"))
			buf.WriteString(post(pathRPC, body(n+1, 200_000), "User-Agent: alloc-test"))
		}
		batches = append(batches, buf.Bytes())
	}
	conn := &memConn{}
	run := func(i int) {
		conn.w.Reset()
		conn.r.Write(batches[i%len(batches)])
		if err := s.http.ServeConn(conn); err != nil {
			t.Fatal(err)
		}
	}
	for i := range len(batches) * 2 {
		run(i)
		br := bufio.NewReader(&conn.w)
		for j := range perBatch {
			hr, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("batch %d answer %d: %v", i, j, err)
			}
			got := new(bytes.Buffer)
			got.ReadFrom(hr.Body)
			n := (i%len(batches))*perBatch + j
			if hr.StatusCode != 200 || !bytes.Contains(got.Bytes(), []byte("mixed "+strconv.Itoa(n)+" ")) {
				t.Fatalf("request %d: %d %.200s", n, hr.StatusCode, got)
			}
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(50, func() {
		run(i)
		i++
	}) / perBatch
	t.Logf("%.3f allocations per request", allocs)
	// fasthttp's one (TestAllocsPerRequest).
	if allocs > 1 {
		t.Errorf("%.3f allocations per request, want at most 1", allocs)
	}
}
