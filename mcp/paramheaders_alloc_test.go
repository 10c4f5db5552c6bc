//go:build !race

package mcp

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// TestParamHeaderAllocs: a call whose arguments travel in Mcp-Param
// headers too (a string in base64, an integer, a boolean, every one
// compared) allocates what the same call to a tool without annotations
// does, through the whole server — fasthttp's connection loop and the
// server's header snapshot included.
func TestParamHeaderAllocs(t *testing.T) {
	hs := paramHTTP(t)
	perRequest := func(tool string, headers bool) float64 {
		reqs, want := paramRequests(tool, headers)
		conn := &memtest.Conn{}
		run := func(i int) {
			conn.W.Reset()
			conn.R.Write(reqs[i%len(reqs)])
			if err := hs.ServeConn(conn); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 * len(reqs) {
			run(i)
			br := bufio.NewReader(&conn.W)
			for j := range paramBatch {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("%s answer %d: %v", tool, j, err)
				}
				b, _ := io.ReadAll(resp.Body)
				w := want[(i%len(reqs))*paramBatch+j]
				if resp.StatusCode != 200 || !bytes.Contains(b, []byte(w[1:len(w)-1])) {
					t.Fatalf("%s answer %d: %d %s, want %s", tool, j, resp.StatusCode, b, w)
				}
			}
		}
		i := 0
		return testing.AllocsPerRun(50, func() { run(i); i++ }) / paramBatch
	}
	plain := perRequest("bare", false)
	mirrored := perRequest("route", true)
	if mirrored != plain {
		t.Errorf("%v allocations per call with Mcp-Param headers, %v without", mirrored, plain)
	}
	t.Logf("allocations per call: %v with Mcp-Param headers, %v without", mirrored, plain)
}

// BenchmarkParamHeaders: the same calls (varied arguments, a base64
// string, an integer and a boolean) to a tool without annotations and to
// one with the same schema whose three arguments are mirrored into
// Mcp-Param headers and checked, through the whole server, 16 pipelined a connection; ns/op is
// per call.
func BenchmarkParamHeaders(b *testing.B) {
	hs := paramHTTP(b)
	for _, bc := range []struct {
		name    string
		tool    string
		headers bool
	}{{"bare", "bare", false}, {"bare-with-headers", "bare", true}, {"mirrored", "route", true}} {
		b.Run(bc.name, func(b *testing.B) {
			reqs, _ := paramRequests(bc.tool, bc.headers)
			conn := &memtest.Conn{}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				conn.W.Reset()
				conn.R.Write(reqs[i%len(reqs)])
				i++
				if err := hs.ServeConn(conn); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*paramBatch), "ns/call")
		})
	}
}

const paramBatch = 16

// paramHTTP returns paramServer's tools behind a fasthttp server
// configured as fastserver's own.
func paramHTTP(t testing.TB) *fasthttp.Server {
	s := paramServer(t)
	srv, err := fastserver.New(fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	return srv.FastHTTPServer(srv.Handler())
}

// paramRequests returns batches of pipelined 2026-07-28 calls of tool
// with varied arguments — with their Mcp-Param headers when headers —
// and the text each answer must hold (the arguments, quoted).
func paramRequests(tool string, headers bool) (reqs [][]byte, want []string) {
	for b := range 4 {
		var buf bytes.Buffer
		for i := range paramBatch {
			n := b*paramBatch + i
			region := strings.Repeat("zé", 1+n%5) + strconv.Itoa(n)
			prio := strconv.Itoa(n * 7919)
			dry := strconv.FormatBool(n%2 == 0)
			args := `{"region":"` + region + `","priority":` + prio + `,"dryRun":` + dry + `,"query":"q` + strconv.Itoa(n) + `"}`
			want = append(want, strconv.Quote(args))
			body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + meta26 + `}}`
			h := "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: " + tool + "\r\n"
			if headers {
				h += "Mcp-Param-Region: " + b64Sentinel(region) + "\r\nMcp-Param-Priority: " + prio + "\r\nMcp-Param-DryRun: " + dry + "\r\n"
			}
			buf.WriteString("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + h +
				"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		}
		reqs = append(reqs, buf.Bytes())
	}
	return reqs, want
}
