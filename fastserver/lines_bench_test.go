package fastserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
)

// BenchmarkServeLines measures ServeLines serving plain calls (an echo of
// a ~200-byte params object) read from memory and answered to
// io.Discard: ns and allocations per line (the stream's set-up,
// amortized over 4,096 lines an op).
func BenchmarkServeLines(b *testing.B) {
	ms := &Methods{}
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, r.Msg.Params...), nil
	})
	benchLines(b, testEndpoint(ms), "echo")
}

// BenchmarkServeLinesEvents is BenchmarkServeLines with a streamed
// answer: each call sends 16 notifications, each a line of its own,
// before its answer (stdio's progress and log messages).
func BenchmarkServeLinesEvents(b *testing.B) {
	ms := &Methods{}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":16}}`)
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			for range 16 {
				if err := st.Send(note); err != nil {
					return dst, err
				}
			}
			return append(dst, r.Msg.Params...), nil
		}))
	})
	benchLines(b, testEndpoint(ms), "echo")
}

func benchLines(b *testing.B, ep *Endpoint, method string) {
	const perOp = 4096
	var in bytes.Buffer
	for i := range perOp {
		in.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"` + method + `","params":{"text":"The quick brown fox jumps over the lazy dog, line ` + strconv.Itoa(i) + `","n":` + strconv.Itoa(i*7) + `,"tags":["a","b","c"],"nested":{"k":true,"v":null}}}` + "\n")
	}
	cfg := Config{Logger: slog.New(slog.DiscardHandler)}
	b.ReportAllocs()
	b.SetBytes(int64(in.Len()))
	for b.Loop() {
		if err := ServeLines(context.Background(), ep, cfg, bytes.NewReader(in.Bytes()), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perOp), "ns/line")
}
