package bench

// The pipeline above fasthttp, in process: tools/call echo served by
// rpcedge through fasthttp's own connection loop (ServeConn over an
// in-memory connection, 16 pipelined requests per call), beside the floor
// handler on fasthttp configured exactly as rpcedge configures it
// (floor-stream) and on fasthttp's defaults (floor). No network, no
// client: what is left is fasthttp's per-request work and the handler's.
//
//	go test -run '^$' -bench '^BenchmarkPipeline$' -count 6 . | benchstat -col /server -
//
// rpcedge's time per request minus floor-stream's is the pipeline above
// fasthttp (decode, the contract's rows, the MCP header and schema checks,
// the tool, the answer, metrics).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/bench/servers"
)

// pipeConn is a net.Conn over two buffers: ServeConn reads the pipelined
// requests in r until it is empty, writes the answers to w, and returns.
type pipeConn struct{ r, w bytes.Buffer }

var pipeAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

func (c *pipeConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *pipeConn) Write(p []byte) (int, error)      { return c.w.Write(p) }
func (c *pipeConn) Close() error                     { return nil }
func (c *pipeConn) LocalAddr() net.Addr              { return pipeAddr }
func (c *pipeConn) RemoteAddr() net.Addr             { return pipeAddr }
func (c *pipeConn) SetDeadline(time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// connServer is a candidate that serves one connection it is handed.
type connServer interface {
	ServeConn(c net.Conn) error
}

// pipeBatch is the number of pipelined requests per ServeConn call.
const pipeBatch = 16

// pipeRequest returns one request as loadgen and the wrk script send it:
// Host, Content-Type, Accept, the MCP headers, Content-Length.
func pipeRequest(body []byte, version string) []byte {
	return []byte("POST " + servers.Path + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: " + version +
		"\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}

// pipeBatches returns the 64 request variants of serveRequests as 4
// batches of pipeBatch pipelined requests.
func pipeBatches(reqs []serveRequest, version string) [][]byte {
	var out [][]byte
	for b := 0; b*pipeBatch < len(reqs); b++ {
		var buf bytes.Buffer
		for _, r := range reqs[b*pipeBatch : (b+1)*pipeBatch] {
			buf.Write(pipeRequest(r.body, version))
		}
		out = append(out, buf.Bytes())
	}
	return out
}

// pipeNames are the servers BenchmarkPipeline compares.
var pipeNames = []string{servers.Floor, servers.FloorStream, servers.Rpcedge}

// startPipe returns the candidate as a connServer and checks every
// answer to the batches once.
func startPipe(name string, batches [][]byte, reqs []serveRequest, version string) (connServer, error) {
	srv, err := servers.New(name)
	if err != nil {
		return nil, err
	}
	cs, ok := srv.(connServer)
	if !ok {
		return nil, fmt.Errorf("%s cannot serve a connection it is handed", name)
	}
	conn := &pipeConn{}
	for b, batch := range batches {
		conn.r.Write(batch)
		if err := cs.ServeConn(conn); err != nil {
			return nil, err
		}
		br := bufio.NewReader(&conn.w)
		for j := range pipeBatch {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: answer %d: %v", name, j, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if err := checkEchoAnswer(resp.StatusCode, resp.Header.Get("Content-Type"), body, reqs[b*pipeBatch+j], version == serveVersion2026); err != nil {
				return nil, fmt.Errorf("%s: %w\nanswer: %s", name, err, body)
			}
		}
		conn.w.Reset()
	}
	return cs, nil
}

// TestPipelineAnswers checks that every candidate of BenchmarkPipeline
// answers every request right over the in-memory connection.
func TestPipelineAnswers(t *testing.T) {
	for _, version := range []string{serveVersion, serveVersion2026} {
		reqs := serveRequests(version)
		batches := pipeBatches(reqs, version)
		for _, name := range pipeNames {
			if _, err := startPipe(name, batches, reqs, version); err != nil {
				t.Errorf("%s: %v", version, err)
			}
		}
	}
}

// BenchmarkPipeline measures one request through fasthttp's connection
// loop and each candidate's handler: ns/request (wall), cpu-ns/request
// (the process's CPU time, GC included), allocs/op per 16 requests.
func BenchmarkPipeline(b *testing.B) {
	reqs := serveRequests(serveVersion)
	batches := pipeBatches(reqs, serveVersion)
	for _, name := range pipeNames {
		b.Run("server="+name, func(b *testing.B) {
			cs, err := startPipe(name, batches, reqs, serveVersion)
			if err != nil {
				b.Fatal(err)
			}
			conn := &pipeConn{}
			conn.r.Grow(32 << 10)
			conn.w.Grow(32 << 10)
			b.ReportAllocs()
			cpu0 := serveCPU()
			i := 0
			for b.Loop() {
				conn.w.Reset()
				conn.r.Write(batches[i%len(batches)])
				if err := cs.ServeConn(conn); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pipeBatch), "ns/request")
			b.ReportMetric(float64((serveCPU()-cpu0).Nanoseconds())/float64(b.N*pipeBatch), "cpu-ns/request")
		})
	}
}

// sizeRequests returns batches of pipelined tools/call echo requests
// whose texts are size bytes (the sweep's sentence, rotated per request),
// ids varied, gzip-compressed when gz, and the requests as serveRequests
// would check them.
func sizeRequests(size, batches, perBatch int, gz bool) ([][]byte, []serveRequest) {
	const sentence = "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!! "
	long := strings.Repeat(sentence, size/len(sentence)+2)
	var out [][]byte
	var reqs []serveRequest
	for b := range batches {
		var buf bytes.Buffer
		for i := range perBatch {
			n := b*perBatch + i
			text := long[n%len(sentence):][:size]
			body := smallBody(strconv.Itoa(n+1), text, "")
			if gz {
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(body)
				zw.Close()
				req := pipeRequest(z.Bytes(), serveVersion)
				i := bytes.Index(req, []byte("Content-Length: "))
				buf.Write(req[:i])
				buf.WriteString("Content-Encoding: gzip\r\n")
				buf.Write(req[i:])
			} else {
				buf.Write(pipeRequest(body, serveVersion))
			}
			reqs = append(reqs, serveRequest{body: body, id: json.Number(strconv.Itoa(n + 1)), text: text})
		}
		out = append(out, buf.Bytes())
	}
	return out, reqs
}

// BenchmarkPipelineSize is BenchmarkPipeline with texts of 1 KiB, 16 KiB
// and 256 KiB (the size sweep's, sweep.sh, in process), identity and
// gzip: where the cost that grows with the body goes. The floors undo
// gzip with a pooled klauspost reader, rpcedge with its own decoding
// layer.
func BenchmarkPipelineSize(b *testing.B) {
	for _, enc := range []string{"identity", "gzip"} {
		for _, size := range []int{1 << 10, 16 << 10, 256 << 10} {
			benchPipelineSize(b, enc, size)
		}
	}
}

func benchPipelineSize(b *testing.B, enc string, size int) {
	{
		per := max(1, min(pipeBatch, (64<<10)/size))
		batches, reqs := sizeRequests(size, 2, per, enc == "gzip")
		for _, name := range pipeNames {
			b.Run(fmt.Sprintf("enc=%s/size=%dk/server=%s", enc, size>>10, name), func(b *testing.B) {
				srv, err := servers.New(name)
				if err != nil {
					b.Fatal(err)
				}
				cs := srv.(connServer)
				conn := &pipeConn{}
				for bi, batch := range batches {
					conn.r.Write(batch)
					if err := cs.ServeConn(conn); err != nil {
						b.Fatal(err)
					}
					br := bufio.NewReader(&conn.w)
					for j := range per {
						resp, err := http.ReadResponse(br, nil)
						if err != nil {
							b.Fatal(err)
						}
						body, _ := io.ReadAll(resp.Body)
						if err := checkEchoAnswer(resp.StatusCode, resp.Header.Get("Content-Type"), body, reqs[bi*per+j], false); err != nil {
							b.Fatalf("%s: %v", name, err)
						}
					}
					conn.w.Reset()
				}
				b.ReportAllocs()
				b.SetBytes(int64(size * per))
				cpu0 := serveCPU()
				i := 0
				for b.Loop() {
					conn.w.Reset()
					conn.r.Write(batches[i%len(batches)])
					if err := cs.ServeConn(conn); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/request")
				b.ReportMetric(float64((serveCPU()-cpu0).Nanoseconds())/float64(b.N*per), "cpu-ns/request")
			})
		}
	}
}
