//go:build !race

package app

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/authtest"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// demoHTTP returns a fasthttp.Server around the whole demo server's
// handler, configured as fastserver.New configures its own (streamed
// bodies, one byte of prefetch, no default Content-Type), with metrics on.
func demoHTTP(t testing.TB) *fasthttp.Server {
	return demoHTTPWith(t, AuthOptions{})
}

// demoHTTPWith is demoHTTP with authorization options.
func demoHTTPWith(t testing.TB, ao AuthOptions) *fasthttp.Server {
	a, err := New(Options{Server: fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Auth: ao})
	if err != nil {
		t.Fatal(err)
	}
	return &fasthttp.Server{
		Handler:              a.Server().Handler(),
		StreamRequestBody:    true,
		MaxRequestBodySize:   1,
		NoDefaultContentType: true,
		ReadBufferSize:       8 << 10,
	}
}

const batch = 16

// echoRequestsAuth returns batches of pipelined tools/call echo requests with
// varied ids and texts, under 2026-07-28 (all headers and _meta) when
// modern, else with no MCP headers.
// An Authorization field is added to each when authz is not empty.
func echoRequestsAuth(batches int, modern bool, authz string) (reqs [][]byte, texts []string) {
	if authz != "" {
		authz = "Authorization: " + authz + "\r\n"
	}
	for b := 0; b < batches; b++ {
		var buf bytes.Buffer
		for i := 0; i < batch; i++ {
			n := b*batch + i
			id := strconv.Itoa(n * 7919)
			if n%2 == 1 {
				id = `"req-` + strconv.Itoa(n) + `"`
			}
			text := strings.Repeat("héllo ", 1+n%7) + strconv.Itoa(n)
			texts = append(texts, text)
			meta, hdr := "", ""
			if modern {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
				hdr = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
			}
			body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}` + meta + `}}`
			buf.WriteString("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n" + hdr + authz +
				"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		}
		reqs = append(reqs, buf.Bytes())
	}
	return reqs, texts
}

// TestAllocsPerEcho pins the allocations of tools/call echo through the
// whole demo server — fasthttp's connection loop, the contract pipeline,
// MCP's header checks, the schema check, the tool, metrics and the
// answer. rpcedge's own code allocates nothing; the 1 left is fasthttp's
// (requestStream.discard's io.CopyN after every streamed request), so it
// is pinned and can only go down.
func TestAllocsPerEcho(t *testing.T) {
	for _, tc := range []struct {
		modern, auth bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		modern := tc.modern
		t.Run("2026-07-28="+strconv.FormatBool(modern)+"/auth="+strconv.FormatBool(tc.auth), func(t *testing.T) {
			srv, authz := demoHTTP(t), ""
			if tc.auth {
				// A token in the verified-token cache costs nothing more.
				as := authtest.New(t)
				srv = demoHTTPWith(t, AuthOptions{Issuer: as.URL, Audience: "https://agents.test/mcp", ToolScopes: map[string][]string{"echo": {"echo"}}})
				authz = "Bearer " + as.Token(as.Claims("https://agents.test/mcp", "echo"))
			}
			reqs, texts := echoRequestsAuth(8, modern, authz)
			conn := &memtest.Conn{}
			run := func(i int) {
				conn.W.Reset()
				conn.R.Write(reqs[i%len(reqs)])
				if err := srv.ServeConn(conn); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 2*len(reqs); i++ {
				run(i)
				br := bufio.NewReader(&conn.W)
				for j := 0; j < batch; j++ {
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						t.Fatalf("answer %d: %v", j, err)
					}
					b, _ := io.ReadAll(resp.Body)
					want := `"text":"` + texts[(i%len(reqs))*batch+j] + `"`
					if resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
						t.Fatalf("answer %d: %d %s, want %s", j, resp.StatusCode, b, want)
					}
				}
			}
			i := 0
			per := testing.AllocsPerRun(50, func() { run(i); i++ }) / batch
			const pinned = 1
			if per > pinned {
				t.Errorf("%.2f allocations per request, pinned at %d", per, pinned)
			}
			t.Logf("%.2f allocations per request", per)
		})
	}
}

// BenchmarkServeConn measures tools/call echo through the whole demo
// server without a network: the CPU cost of a request in rpcedge and
// fasthttp, beside the floor: fasthttp answering a constant body, and
// with authorization on (a JWT of about 800 bytes in every request).
func BenchmarkServeConn(b *testing.B) {
	for _, name := range []string{"floor", "rpcedge", "rpcedge-token", "rpcedge-auth", "rpcedge-2026-07-28", "rpcedge-2026-07-28-auth"} {
		b.Run(name, func(b *testing.B) {
			modern := strings.HasPrefix(name, "rpcedge-2026-07-28")
			var srv *fasthttp.Server
			authz := ""
			if strings.HasSuffix(name, "-auth") {
				// Authorization on, every request with one valid token:
				// the verified-token cache's hot path.
				as := authtest.New(b)
				srv = demoHTTPWith(b, AuthOptions{Issuer: as.URL, Audience: "https://agents.test/mcp"})
				authz = "Bearer " + as.Token(as.Claims("https://agents.test/mcp", ""))
			} else if name == "rpcedge-token" {
				// Authorization off, the same token sent anyway: what
				// carrying it costs fasthttp and the header snapshot.
				as := authtest.New(b)
				srv = demoHTTP(b)
				authz = "Bearer " + as.Token(as.Claims("https://agents.test/mcp", ""))
			} else if name == "floor" {
				answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`)
				srv = &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
					ctx.SetContentType("application/json")
					ctx.SetBody(answer)
				}}
			} else {
				srv = demoHTTP(b)
			}
			reqs, _ := echoRequestsAuth(8, modern, authz)
			conn := &memtest.Conn{}
			conn.R.Write(reqs[0]) // warm: the token verified and cached
			srv.ServeConn(conn)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				conn.W.Reset()
				conn.R.Write(reqs[i%len(reqs)])
				if err := srv.ServeConn(conn); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/request")
			// The process's CPU time per request: on a shared machine it
			// drifts less than the wall clock.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*batch), "cpu-ns/request")
		})
	}
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
