package bench

// Serving side by side: the candidates of package servers answer
// tools/call echo over an in-memory listener, driven by one fasthttp
// client (the same for all of them), in one process.
//
// What each request carries (the same for every candidate):
//
//   - the small fixture's shape, {"jsonrpc":"2.0","id":…,"method":"tools/call",
//     "params":{"name":"echo","arguments":{"text":…}}}, with 64 variants of
//     id and text (see serveRequests), the body within ±10 bytes of the
//     fixture's 271;
//   - Content-Type: application/json and Accept: application/json,
//     text/event-stream (the MCP SDKs refuse a POST without both);
//   - the MCP headers MCP-Protocol-Version, Mcp-Method: tools/call and
//     Mcp-Name: echo.
//
// BenchmarkServe uses MCP 2025-11-25, as the load matrix of run.sh does:
// cmd/loadgen's -mcp-version 2026-07-28 sends only the protocolVersion key
// of params._meta, and both SDKs refuse a 2026-07-28 request without
// io.modelcontextprotocol/clientCapabilities (-32602), so 2025-11-25 is
// the newest version every candidate serves with loadgen's requests.
// BenchmarkServe2026 sends what the MCP Go SDK's client sends under
// 2026-07-28: the same headers plus params._meta with protocolVersion,
// clientInfo and clientCapabilities; every answer must then carry
// resultType "complete".

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/rpcedge/rpcedge/bench/servers"
)

// The MCP versions the serving benchmarks send.
const (
	serveVersion     = "2025-11-25"
	serveVersion2026 = "2026-07-28"
)

// smallText is the text of the small fixture (testdata/bench/small.json),
// which the request bodies are built around; TestServeCandidates checks
// that the fixture still has this shape when it is present.
const smallText = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!!"

// meta2026 is the params._meta of the MCP Go SDK client under 2026-07-28.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"rpcedge-bench","version":"0.1.0"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

// serveRequest is one request body and what its answer must hold.
type serveRequest struct {
	body []byte
	id   any    // the id, decoded with UseNumber
	text string // the text, decoded
}

// smallBody returns the small fixture's body with rawID and the raw JSON
// string contents rawText, and _meta when meta is not empty.
func smallBody(rawID, rawText, meta string) []byte {
	b := `{"jsonrpc":"2.0","id":` + rawID + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + rawText + `"}`
	if meta != "" {
		b += "," + meta
	}
	return []byte(b + "}}")
}

// serveRequests returns the 64 bodies a benchmark cycles through, the
// small fixture's shape with the id and text varied: integer ids (small,
// and 16-digit ones up to 2^53: both MCP SDKs decode ids into float64 and
// answer 9007199254740993 with 9007199254740992) and string ids ("req-…",
// some with \u00e9); random ASCII
// texts whose lengths make up for the id's, one in four with escapes
// (\u00e9, \", \\) that a candidate must unescape or pass through.
func serveRequests(version string) []serveRequest {
	meta := ""
	if version == serveVersion2026 {
		meta = meta2026
	}
	rng := rand.New(rand.NewPCG(7, 64))
	base := len(smallBody("1", smallText, ""))
	out := make([]serveRequest, 64)
	for i := range out {
		var id string
		switch i % 4 {
		case 0:
			id = strconv.Itoa(i + 1)
		case 1:
			id = strconv.FormatUint(1e15+rng.Uint64N(1<<53-1e15), 10) // 16 digits, at most 2^53
		case 2:
			id = fmt.Sprintf(`"req-%x"`, rng.Uint32())
		default:
			id = fmt.Sprintf(`"req-%04x-\u00e9"`, rng.Uint32N(1<<16))
		}
		n := len(smallText) - (len(id) - 1) - 10 + rng.IntN(21)
		text := serveText(rng, n)
		if i%4 == 3 {
			const esc = ` caf\u00e9 \"q\" \\` // as long as what it replaces
			text = text[:len(text)-len(esc)] + esc
		}
		if d := len(smallBody(id, text, "")) - base; d < -10 || d > 10 {
			panic(fmt.Sprintf("serveRequests: body %d is %d bytes off the fixture", i, d))
		}
		body := smallBody(id, text, meta)
		r := serveRequest{body: body}
		if err := json.Unmarshal([]byte(`"`+text+`"`), &r.text); err != nil {
			panic(err)
		}
		d := json.NewDecoder(strings.NewReader(id))
		d.UseNumber()
		if err := d.Decode(&r.id); err != nil {
			panic(err)
		}
		out[i] = r
	}
	return out
}

const serveTextChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.!?-'"

// serveText returns n printable ASCII characters in word-like runs.
func serveText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 && sb.Len() < n-1 && rng.IntN(6) == 0 {
			sb.WriteByte(' ')
			continue
		}
		sb.WriteByte(serveTextChars[rng.IntN(len(serveTextChars))])
	}
	return sb.String()
}

// serveHarness is one candidate serving on an in-memory listener, and the
// client that talks to it.
type serveHarness struct {
	srv    servers.Server
	ln     *fasthttputil.InmemoryListener
	client *fasthttp.HostClient
	done   chan error
}

func startServe(name string) (*serveHarness, error) {
	srv, err := servers.New(name)
	if err != nil {
		return nil, err
	}
	ln := fasthttputil.NewInmemoryListener()
	h := &serveHarness{srv: srv, ln: ln, done: make(chan error, 1)}
	h.client = &fasthttp.HostClient{
		Addr:     "127.0.0.1:8080",
		Dial:     func(string) (net.Conn, error) { return ln.Dial() },
		MaxConns: 1024,
	}
	go func() { h.done <- srv.Serve(memListener{ln}) }()
	return h, nil
}

// serveFor starts the candidate for the test and stops it when the test
// ends.
func serveFor(t *testing.T, name string) *serveHarness {
	h, err := startServe(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.close(); err != nil {
			t.Error("close:", err)
		}
	})
	return h
}

// memListener hands out fasthttputil's in-memory connections with their
// timeout error made a net.Error. fasthttputil's ErrTimeout has Timeout
// but not Temporary, so net/http does not recognise the timeout it
// provokes itself to end its background read after a request (the read
// deadline "a long time ago") and takes it for a broken connection: it
// cancels the next request's context on that connection, and the MCP Go
// SDK then answers 200 with an empty body, mark3labs an empty text/plain.
// Every candidate gets the same wrapped connections.
type memListener struct{ *fasthttputil.InmemoryListener }

func (l memListener) Accept() (net.Conn, error) {
	c, err := l.InmemoryListener.Accept()
	if err != nil {
		return nil, err
	}
	return memConn{c}, nil
}

type memConn struct{ net.Conn }

func (c memConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
		err = memTimeout{err}
	}
	return n, err
}

// memTimeout is a net.Error for a read deadline that passed.
type memTimeout struct{ error }

func (memTimeout) Timeout() bool   { return true }
func (memTimeout) Temporary() bool { return true }

var _ net.Error = memTimeout{}

func (h *serveHarness) close() error {
	h.client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	h.ln.Close()
	select {
	case serr := <-h.done:
		return errors.Join(err, serr)
	case <-time.After(5 * time.Second):
		return errors.Join(err, errors.New("Serve did not return within 5 s of Shutdown"))
	}
}

// newRequest returns a POST to /mcp with the headers of version.
func newRequest(version string) *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	req.SetRequestURI("http://127.0.0.1:8080" + servers.Path)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	return req
}

// check sends r and checks the answer: 200, application/json, the
// request's id and an echo result with r's text (and resultType
// "complete" under 2026-07-28).
func (h *serveHarness) check(r serveRequest, version string) error {
	req := newRequest(version)
	defer fasthttp.ReleaseRequest(req)
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	req.SetBodyRaw(r.body)
	if err := h.client.DoTimeout(req, resp, 10*time.Second); err != nil {
		return err
	}
	if err := checkEchoAnswer(resp.StatusCode(), string(resp.Header.ContentType()), resp.Body(), r, version == serveVersion2026); err != nil {
		return fmt.Errorf("%w\nrequest: %s\nanswer: %d %s", err, r.body, resp.StatusCode(), resp.Body())
	}
	return nil
}

func checkEchoAnswer(status int, ctype string, body []byte, r serveRequest, v2026 bool) error {
	if status != 200 {
		return fmt.Errorf("status %d, want 200", status)
	}
	if mt, _, _ := strings.Cut(ctype, ";"); strings.TrimSpace(mt) != "application/json" {
		return fmt.Errorf("Content-Type %q, want application/json", ctype)
	}
	var a struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   json.RawMessage `json:"error"`
		Result  *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError    bool   `json:"isError"`
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("answer is not JSON: %v", err)
	}
	var id any
	d := json.NewDecoder(bytes.NewReader(a.ID))
	d.UseNumber()
	if err := d.Decode(&id); err != nil || !reflect.DeepEqual(id, r.id) {
		return fmt.Errorf("id %s, want %v", a.ID, r.id)
	}
	switch {
	case a.JSONRPC != "2.0":
		return fmt.Errorf("jsonrpc %q", a.JSONRPC)
	case a.Error != nil || a.Result == nil:
		return fmt.Errorf("no result (error %s)", a.Error)
	case a.Result.IsError:
		return errors.New("isError is set")
	case len(a.Result.Content) != 1 || a.Result.Content[0].Type != "text":
		return errors.New(`content is not one "text" item`)
	case a.Result.Content[0].Text != r.text:
		return fmt.Errorf("text %q, want %q", a.Result.Content[0].Text, r.text)
	case v2026 && a.Result.ResultType != "complete":
		return fmt.Errorf(`resultType %q, want "complete"`, a.Result.ResultType)
	}
	return nil
}

// TestServeCandidates checks that every candidate answers every variant
// of the echo call correctly under both versions, also with requests on
// several connections at once. It needs neither the fixtures nor the
// network.
func TestServeCandidates(t *testing.T) {
	t.Run("fixture-shape", func(t *testing.T) {
		orig, err := os.ReadFile(fixtureDir + "small.json")
		if err != nil {
			t.Skipf("small fixture absent: %v", err)
		}
		if want := smallBody("1", smallText, ""); !bytes.Equal(bytes.TrimSpace(orig), want) {
			t.Errorf("small.json changed shape; serve_test.go builds\n%s\nthe fixture is\n%s", want, orig)
		}
	})
	for _, version := range []string{serveVersion, serveVersion2026} {
		reqs := serveRequests(version)
		for _, name := range serveNames() {
			t.Run(version+"/"+name, func(t *testing.T) {
				h := serveFor(t, name)
				var wg sync.WaitGroup
				errs := make([]error, len(reqs))
				for w := range 8 {
					wg.Go(func() {
						for i := w; i < len(reqs); i += 8 {
							errs[i] = h.check(reqs[i], version)
						}
					})
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkServe times tools/call echo through each candidate under MCP
// 2025-11-25 (see the top of this file): client and server in this
// process, b.RunParallel with 4 goroutines per P, one keep-alive
// connection each. ns/op is wall time per request over all goroutines;
// cpu-ns/op is the process's CPU time per request (client and server, GC
// included); B/op and allocs/op count both sides too (the client
// allocates nothing once warm: see the floor).
func BenchmarkServe(b *testing.B) { benchServe(b, serveVersion) }

// BenchmarkServe2026 is BenchmarkServe under MCP 2026-07-28, with the
// params._meta the MCP Go SDK's client sends.
func BenchmarkServe2026(b *testing.B) { benchServe(b, serveVersion2026) }

func benchServe(b *testing.B, version string) {
	reqs := serveRequests(version)
	for _, name := range serveNames() {
		// Started on the first call of the sub-benchmark (not at all when
		// -bench filters it out), kept for the calls with larger b.N.
		var h *serveHarness
		b.Run(name, func(b *testing.B) {
			if h == nil {
				var err error
				if h, err = startServe(name); err != nil {
					b.Fatal(err)
				}
				for _, r := range reqs {
					if err := h.check(r, version); err != nil {
						b.Fatal(err)
					}
				}
			}
			var next atomic.Uint32
			var failed atomic.Bool
			b.ReportAllocs()
			b.SetParallelism(4)
			cpu0 := serveCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := newRequest(version)
				resp := fasthttp.AcquireResponse()
				i := int(next.Add(17))
				for pb.Next() {
					req.SetBodyRaw(reqs[i%len(reqs)].body)
					if err := h.client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
						if !failed.Swap(true) {
							b.Errorf("%s: err %v, status %d: %s", name, err, resp.StatusCode(), resp.Body())
						}
					}
					i++
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
			})
			b.StopTimer()
			if cpu := serveCPU() - cpu0; b.N > 0 && cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
		if h != nil {
			if err := h.close(); err != nil {
				b.Errorf("%s: close: %v", name, err)
			}
		}
	}
}

// serveNames are the servers the in-process benchmark runs: the
// candidates, then the diagnostics.
func serveNames() []string { return append(servers.Names(), servers.Diagnostics()...) }

// serveCPU returns the CPU time the whole test process has used, user plus
// system, every thread.
func serveCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestServeGzipBodies: the size sweep's candidates (sweep.sh with GZIP=1)
// answer gzip request bodies right, small and large, as they answer the
// same bodies uncompressed.
func TestServeGzipBodies(t *testing.T) {
	version := serveVersion
	reqs := serveRequests(version)
	for _, name := range []string{servers.Rpcedge, servers.Floor, servers.FastHTTPJSON, servers.NetHTTPJSON, servers.SDK} {
		t.Run(name, func(t *testing.T) {
			h := serveFor(t, name)
			for i, r := range reqs[:8] {
				if i%2 == 1 {
					// A large text: 100 KB of the request's own text.
					text := strings.Repeat(r.text+" ", 100_000/(len(r.text)+1)+1)
					r = serveRequest{body: smallBody(strconv.Itoa(i+1), strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), `"`, `\"`), ""), id: json.Number(strconv.Itoa(i + 1)), text: text}
				}
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(r.body)
				zw.Close()
				req := newRequest(version)
				req.Header.Set("Content-Encoding", "gzip")
				req.SetBodyRaw(z.Bytes())
				resp := fasthttp.AcquireResponse()
				if err := h.client.DoTimeout(req, resp, 10*time.Second); err != nil {
					t.Fatal(err)
				}
				if err := checkEchoAnswer(resp.StatusCode(), string(resp.Header.ContentType()), resp.Body(), r, false); err != nil {
					t.Errorf("request %d (%d bytes, %d gzip): %v\nanswer: %d %.200s", i, len(r.body), z.Len(), err, resp.StatusCode(), resp.Body())
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
			}
		})
	}
}
