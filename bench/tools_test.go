package bench

// The same two tools (package tools: add, lookup with a pattern) written
// with rpcedge raw, rpcedge typed, the official MCP Go SDK and
// mark3labs/mcp-go, side by side in one process:
//
//   - TestToolsLines counts each implementation's lines;
//   - TestToolsCandidates checks that every candidate answers the same
//     calls alike (sums, lookups, a key refused by the pattern);
//   - BenchmarkTools measures the CPU and allocations of one tools/call
//     through each server's HTTP handler without a network: the raw
//     request bytes in, the answer out. rpcedge is served by fasthttp's
//     ServeConn over an in-memory connection (as fastserver configures
//     it); the SDKs' http.Handlers get a request parsed by
//     http.ReadRequest and a reusable ResponseWriter (net/http's
//     connection loop is left out, to their advantage). Two floors show
//     what the harness itself costs: a constant answer on each side.
//     cpu-ns/op is the process's CPU time per call (garbage collection
//     included), which a busy machine does not inflate as it does ns/op.
//
// Every request is MCP 2025-11-25 with the headers the SDK clients send
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Accept for JSON and SSE);
// ids and arguments vary from call to call.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	m3server "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"

	"github.com/rpcedge/rpcedge/bench/tools"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

// toolCandidates in the order the README's table lists them.
var toolCandidates = []string{"rpcedge-raw", "rpcedge-typed", "mcp-go-sdk", "mark3labs", "floor-fasthttp", "floor-nethttp"}

// toolImpl names each candidate's source file in package tools.
var toolImpl = map[string]string{
	"rpcedge-raw":   "rpcedge_raw.go",
	"rpcedge-typed": "rpcedge_typed.go",
	"mcp-go-sdk":    "sdk.go",
	"mark3labs":     "mark3labs.go",
}

// countLines counts the lines between the markers that are neither blank
// nor only a comment.
func countLines(src string) (int, error) {
	begin := strings.Index(src, "// tools:begin")
	end := strings.Index(src, "// tools:end")
	if begin < 0 || end < begin {
		return 0, fmt.Errorf("markers missing")
	}
	n := 0
	for _, line := range strings.Split(src[begin:end], "\n")[1:] {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		n++
	}
	return n, nil
}

func TestToolsLines(t *testing.T) {
	lines := map[string]int{}
	for _, name := range toolCandidates[:4] {
		src, err := os.ReadFile(filepath.Join("tools", toolImpl[name]))
		if err != nil {
			t.Fatal(err)
		}
		n, err := countLines(string(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines[name] = n
		t.Logf("%-14s %3d lines (tools/%s)", name, n, toolImpl[name])
	}
	if lines["rpcedge-typed"] > lines["mcp-go-sdk"] {
		t.Errorf("rpcedge typed takes %d lines, the SDK %d: the target is at most the SDK's", lines["rpcedge-typed"], lines["mcp-go-sdk"])
	}
}

// toolCall is one request and a substring its answer must hold.
type toolCall struct {
	raw  []byte
	want string
}

func toolRequest(id int, name, args string) []byte {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
	return []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"MCP-Protocol-Version: 2025-11-25\r\nMcp-Method: tools/call\r\nMcp-Name: " + name + "\r\n" +
		"Content-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body)
}

// toolCalls returns n varied calls of one tool.
func toolCalls(tool string, n int) []toolCall {
	keys := []string{"gopher", "ferris", "duke", "zebra"}
	calls := make([]toolCall, n)
	for i := range calls {
		switch tool {
		case "add":
			a, b := int64(i*7919-50000), int64(i*104729)
			calls[i] = toolCall{toolRequest(i+1, "add", fmt.Sprintf(`{"a":%d,"b":%d}`, a, b)), fmt.Sprintf(`"text":"%d"`, a+b)}
		case "lookup":
			k := keys[i%len(keys)]
			v, ok := tools.Table[k]
			if !ok {
				v = tools.Unknown
			}
			calls[i] = toolCall{toolRequest(i+1, "lookup", `{"key":"`+k+`"}`), `"text":"` + v + `"`}
		}
	}
	return calls
}

// toolServer serves one candidate: serve answers one raw HTTP request
// (what the benchmark measures), do also reads the answer back.
type toolServer interface {
	serve(raw []byte) error
	do(raw []byte) (status int, body []byte, err error)
}

// fasthttpServer drives a fasthttp handler through ServeConn.
type fasthttpServer struct {
	srv  *fasthttp.Server
	conn pipeConn
}

func (s *fasthttpServer) serve(raw []byte) error {
	s.conn.w.Reset()
	s.conn.r.Write(raw)
	return s.srv.ServeConn(&s.conn)
}

func (s *fasthttpServer) do(raw []byte) (int, []byte, error) {
	if err := s.serve(raw); err != nil {
		return 0, nil, err
	}
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(&s.conn.w)); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), nil
}

// netHTTPServer drives an http.Handler with a request parsed from raw.
type netHTTPServer struct {
	h http.Handler
	w respWriter
}

func (s *netHTTPServer) serve(raw []byte) error {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return err
	}
	s.w.reset()
	s.h.ServeHTTP(&s.w, req)
	return nil
}

func (s *netHTTPServer) do(raw []byte) (int, []byte, error) {
	if err := s.serve(raw); err != nil {
		return 0, nil, err
	}
	return s.w.status, s.w.body.Bytes(), nil
}

// respWriter is a reusable http.ResponseWriter (and Flusher).
type respWriter struct {
	hdr    http.Header
	status int
	body   bytes.Buffer
}

func (w *respWriter) reset() {
	if w.hdr == nil {
		w.hdr = make(http.Header)
	}
	clear(w.hdr)
	w.status = 0
	w.body.Reset()
}
func (w *respWriter) Header() http.Header { return w.hdr }
func (w *respWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *respWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	return w.body.Write(p)
}
func (w *respWriter) Flush() {}

func newToolServer(tb testing.TB, name string) toolServer {
	tb.Helper()
	fast := func(h fasthttp.RequestHandler) toolServer {
		// As fastserver.New configures its own fasthttp.Server.
		return &fasthttpServer{srv: &fasthttp.Server{
			Handler:              h,
			StreamRequestBody:    true,
			MaxRequestBodySize:   1,
			NoDefaultContentType: true,
			ReadBufferSize:       8 << 10,
		}}
	}
	rpcedge := func(register func(*mcp.Server) error) toolServer {
		s, err := mcp.New(mcp.Info{Name: "tools", Version: "1.0.0"})
		if err != nil {
			tb.Fatal(err)
		}
		if err := register(s); err != nil {
			tb.Fatal(err)
		}
		srv, err := fastserver.New(fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, s.Endpoint())
		if err != nil {
			tb.Fatal(err)
		}
		return fast(srv.Handler())
	}
	switch name {
	case "rpcedge-raw":
		return rpcedge(tools.RpcedgeRaw)
	case "rpcedge-typed":
		return rpcedge(tools.RpcedgeTyped)
	case "mcp-go-sdk":
		s := sdk.NewServer(&sdk.Implementation{Name: "tools", Version: "1.0.0"}, nil)
		if err := tools.SDK(s); err != nil {
			tb.Fatal(err)
		}
		return &netHTTPServer{h: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
			&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})}
	case "mark3labs":
		s := m3server.NewMCPServer("tools", "1.0.0", m3server.WithToolCapabilities(false), m3server.WithInputSchemaValidation())
		if err := tools.Mark3labs(s); err != nil {
			tb.Fatal(err)
		}
		return &netHTTPServer{h: m3server.NewStreamableHTTPServer(s, m3server.WithStateLess(true), m3server.WithDisableStreaming(true))}
	case "floor-fasthttp":
		answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"floor"}]}}`)
		return fast(func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(answer)
		})
	case "floor-nethttp":
		answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"floor"}]}}`)
		return &netHTTPServer{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write(answer)
		})}
	}
	tb.Fatalf("no tool candidate %q", name)
	return nil
}

func TestToolsCandidates(t *testing.T) {
	for _, name := range toolCandidates[:4] {
		t.Run(name, func(t *testing.T) {
			s := newToolServer(t, name)
			for _, tool := range []string{"add", "lookup"} {
				for _, c := range toolCalls(tool, 8) {
					status, body, err := s.do(c.raw)
					if err != nil || status != 200 || !bytes.Contains(body, []byte(c.want)) || bytes.Contains(body, []byte(`"isError":true`)) {
						t.Fatalf("%s: %d %s %v, want %s", c.raw[bytes.LastIndex(c.raw, []byte("\r\n"))+2:], status, body, err, c.want)
					}
				}
			}
			// A key the pattern refuses never reaches the handler: a
			// JSON-RPC error (rpcedge, the SDK) or an error result
			// (mark3labs, as SEP-1303 proposes).
			for _, key := range []string{"Gopher", "go pher", ""} {
				status, body, err := s.do(toolRequest(99, "lookup", `{"key":"`+key+`"}`))
				refused := bytes.Contains(body, []byte(`"error"`)) || bytes.Contains(body, []byte(`"isError":true`))
				if err != nil || status != 200 || !refused || bytes.Contains(body, []byte(tools.Unknown)) {
					t.Errorf("key %q: %d %s %v, want a refusal", key, status, body, err)
				}
			}
		})
	}
}

func BenchmarkTools(b *testing.B) {
	for _, tool := range []string{"add", "lookup"} {
		calls := toolCalls(tool, 64)
		for _, name := range toolCandidates {
			b.Run(tool+"/"+name, func(b *testing.B) {
				s := newToolServer(b, name)
				for _, c := range calls[:4] {
					if status, body, err := s.do(c.raw); err != nil || status != 200 {
						b.Fatalf("%d %s %v", status, body, err)
					}
				}
				b.ReportAllocs()
				i := 0
				cpu := processCPU()
				for b.Loop() {
					if err := s.serve(calls[i%len(calls)].raw); err != nil {
						b.Fatal(err)
					}
					i++
				}
				if cpu = processCPU() - cpu; b.N > 0 && cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
