package fastserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// BenchmarkStreamMechanisms measures the ways a fasthttp server can send
// a stream of N events then a final one, side by side, over loopback with
// one client connection reading every byte:
//
//	fastserver   fastserver's Request.Stream (the whole JSON-RPC pipeline:
//	             decode, dispatch, the handler's goroutine, two swapped
//	             buffers, BodyWriterTo chunks)
//	bodywriter   a bare fasthttp handler with SetBodyStreamWriter (its
//	             writer goroutine and in-memory pipe), no decoding
//	hijack       a bare fasthttp handler that hijacks the connection and
//	             writes the chunked events itself, then closes (no
//	             keep-alive: the client dials per stream)
//
// events/s and allocations per stream are reported.
func BenchmarkStreamMechanisms(b *testing.B) {
	for _, n := range []int{16, 256} {
		event := []byte(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}` + "\n\n")
		final := []byte(`data: {"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n")

		// fastserver: the real thing.
		var ms Methods
		note := bytes.TrimSuffix(bytes.TrimPrefix(event, []byte("data: ")), []byte("\n\n"))
		ms.HandleFunc("s", func(r *Request, dst []byte) ([]byte, error) {
			return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
				for range n {
					if err := st.Send(note); err != nil {
						return dst, err
					}
				}
				return append(dst, "{}"...), nil
			}))
		})
		srv, err := New(Config{Logger: quietLogger}, ms.Endpoint("/rpc", decode.IDsJSONRPC))
		if err != nil {
			b.Fatal(err)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"s"}`
		req := []byte(post("/rpc", body, acceptSSE))
		b.Run(fmt.Sprintf("fastserver/events=%d", n), func(b *testing.B) {
			benchStreams(b, srv.Handler(), req, n, false)
		})

		// bodywriter: fasthttp's SetBodyStreamWriter.
		bw := func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/event-stream")
			ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
				for range n {
					w.Write(event)
					if w.Flush() != nil {
						return
					}
				}
				w.Write(final)
			})
		}
		b.Run(fmt.Sprintf("bodywriter/events=%d", n), func(b *testing.B) {
			benchStreams(b, bw, req, n, false)
		})

		// hijack: by hand on the raw connection.
		hj := func(ctx *fasthttp.RequestCtx) {
			ctx.HijackSetNoResponse(true)
			ctx.Hijack(func(c net.Conn) {
				w := bufio.NewWriterSize(c, 4096)
				w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
				chunk := func(p []byte) error {
					w.WriteString(strconv.FormatInt(int64(len(p)), 16))
					w.WriteString("\r\n")
					w.Write(p)
					w.WriteString("\r\n")
					return w.Flush()
				}
				for range n {
					if chunk(event) != nil {
						return
					}
				}
				chunk(final)
				w.WriteString("0\r\n\r\n")
				w.Flush()
			})
		}
		b.Run(fmt.Sprintf("hijack/events=%d", n), func(b *testing.B) {
			benchStreams(b, hj, req, n, true)
		})
	}
}

// benchStreams serves h on loopback and reads b.N streamed answers to req
// on one connection (a new one per answer when closeEach).
func benchStreams(b *testing.B, h fasthttp.RequestHandler, req []byte, events int, closeEach bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &fasthttp.Server{Handler: h, MaxRequestBodySize: 1, StreamRequestBody: true, NoDefaultContentType: true}
	go s.Serve(ln)
	defer s.Shutdown()
	addr := ln.Addr().String()
	var c net.Conn
	var br *bufio.Reader
	dial := func() {
		if c != nil {
			c.Close()
		}
		if c, err = net.Dial("tcp", addr); err != nil {
			b.Fatal(err)
		}
		br = bufio.NewReaderSize(c, 64<<10)
	}
	dial()
	defer func() { c.Close() }()
	end := []byte("0\r\n\r\n")
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if closeEach {
			dial()
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		// Read to the end of the chunked body (or to EOF): the last chunk
		// is "0\r\n" followed by an empty line.
		prevZero := false
		for {
			line, err := br.ReadSlice('\n')
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if prevZero && string(line) == "\r\n" {
				break
			}
			prevZero = string(line) == string(end[:3])
		}
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N*events)/el.Seconds(), "events/s")
}
