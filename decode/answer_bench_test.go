package decode

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Benchmarks of the answer encoders, each with an encoding/json twin that
// marshals an equivalent struct (or string). Inputs rotate through a few
// variants per fixture so that no fast path keys on one exact input.

// jsonAnswer and jsonError are the encoding/json equivalents of the answers.
type jsonAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonError      `json:"error,omitempty"`
}

type jsonError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// answerBenchTexts are the AppendString fixtures, each with a few variants.
var answerBenchTexts = []struct {
	name  string
	texts []string
}{
	{"short", answerVariants("Method not found")},
	{"ascii-180", answerVariants(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)[:180])},
	{"escapes-180", answerVariants(strings.Repeat("line \"1\"\\\n\ttab ", 12))},
	{"utf8-175", answerVariants(strings.Repeat("café ✓ 日本語 👍 ", 7))},
	{"invalid-180", answerVariants(strings.Repeat("ok \xff\xe2\x82 \xed\xa0\x80 ", 15))},
	{"ascii-16k", answerVariants(strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 288)[:16384])},
}

// answerVariants returns s with its first bytes replaced by 0..7, same length.
func answerVariants(s string) []string {
	out := make([]string, 8)
	for i := range out {
		p := strconv.Itoa(i)
		out[i] = p + s[len(p):]
	}
	return out
}

var answerBenchIDs = [][]byte{[]byte(`1`), []byte(`"req-42"`), []byte(`12345678901234567890123`), []byte(`"caf\u00e9"`)}

var answerSink []byte

func BenchmarkAppendString(b *testing.B) {
	for _, fx := range answerBenchTexts {
		b.Run(fx.name+"/rpcedge", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(fx.texts[0])))
			dst := make([]byte, 0, 2*len(fx.texts[0])+64)
			i := 0
			for b.Loop() {
				dst = AppendString(dst[:0], fx.texts[i&7])
				i++
			}
			answerSink = dst
		})
		b.Run(fx.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(fx.texts[0])))
			i := 0
			for b.Loop() {
				out, err := json.Marshal(fx.texts[i&7])
				if err != nil {
					b.Fatal(err)
				}
				answerSink = out
				i++
			}
		})
	}
}

func BenchmarkAppendResult(b *testing.B) {
	results := [][]byte{
		[]byte(`{"content":[{"type":"text","text":"hello"}]}`),
		[]byte(`{"content":[{"type":"text","text":"hello, world"}]}`),
		[]byte(`{"content":[{"type":"text","text":"héllo"}],"isError":false}`),
		[]byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`),
	}
	b.Run("rpcedge", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(results[0])))
		dst := make([]byte, 0, 256)
		i := 0
		for b.Loop() {
			dst = AppendResult(dst[:0], answerBenchIDs[i&3], results[i&3])
			i++
		}
		answerSink = dst
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(results[0])))
		i := 0
		for b.Loop() {
			out, err := json.Marshal(jsonAnswer{JSONRPC: "2.0", ID: answerBenchIDs[i&3], Result: results[i&3]})
			if err != nil {
				b.Fatal(err)
			}
			answerSink = out
			i++
		}
	})
}

func BenchmarkAppendError(b *testing.B) {
	data := []byte(`{"supported":["2026-07-28","2025-11-25"],"requested":"1999-01-01"}`)
	msgs := []string{"Method not found", "Invalid params: \"text\" is required", "Unsupported protocol version", "Internal error"}
	b.Run("rpcedge", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msgs[0]) + len(data)))
		dst := make([]byte, 0, 256)
		i := 0
		for b.Loop() {
			dst = AppendError(dst[:0], answerBenchIDs[i&3], CodeMethodNotFound, msgs[i&3], data)
			i++
		}
		answerSink = dst
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msgs[0]) + len(data)))
		i := 0
		for b.Loop() {
			out, err := json.Marshal(jsonAnswer{JSONRPC: "2.0", ID: answerBenchIDs[i&3],
				Error: &jsonError{Code: CodeMethodNotFound, Message: msgs[i&3], Data: data}})
			if err != nil {
				b.Fatal(err)
			}
			answerSink = out
			i++
		}
	})
}
