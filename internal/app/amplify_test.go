//go:build !race

package app

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/internal/memtest"
)

// fill builds a body of about size bytes: head + n repetitions of
// item(i) separated by commas + tail.
func fill(size int, head, tail string, item func(i int) string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len()+len(tail) < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteString(tail)
	return b.String()
}

func name3(i int) string { return "x" + strconv.FormatInt(int64(i), 36) }

type ampShape struct {
	name, path, hdr string
	body            func(size int) string
}

func a2aSend(msgHead, msgTail string, item func(int) string) func(int) string {
	return func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1",`+msgHead, msgTail+`}}}`, item)
	}
}

var ampShapes = []ampShape{
	{"a2a/empty-text-parts", "/a2a", "", a2aSend(`"parts":[`, `]`, func(int) string { return `{"text":""}` })},
	{"a2a/empty-text-parts-0.3", "/a2a", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[`, `]}}}`, func(int) string { return `{"kind":"text","text":""}` })
	}},
	{"a2a/part-metadata", "/a2a", "", a2aSend(`"parts":[`, `]`, func(int) string { return `{"text":"","metadata":{}}` })},
	{"a2a/data-parts", "/a2a", "", a2aSend(`"parts":[`, `]`, func(int) string { return `{"data":0}` })},
	{"a2a/url-parts", "/a2a", "", a2aSend(`"parts":[`, `]`, func(int) string { return `{"url":"u"}` })},
	{"a2a/raw-parts", "/a2a", "", a2aSend(`"parts":[`, `]`, func(int) string { return `{"raw":""}` })},
	{"a2a/escaped-text-parts", "/a2a", "", a2aSend(`"parts":[`, `]`, func(int) string { return `{"text":"\n"}` })},
	{"a2a/extensions", "/a2a", "", a2aSend(`"parts":[{"text":"x"}],"extensions":[`, `]`, func(int) string { return `""` })},
	{"a2a/reference-task-ids", "/a2a", "", a2aSend(`"parts":[{"text":"x"}],"referenceTaskIds":[`, `]`, func(int) string { return `""` })},
	{"a2a/message-members", "/a2a", "", a2aSend(`"parts":[{"text":"x"}],`, `,"z":0`, func(i int) string { return `"` + name3(i) + `":0` })},
	{"a2a/params-members", "/a2a", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"x"}]},`, `}}`, func(i int) string { return `"` + name3(i) + `":0` })
	}},
	{"a2a/accepted-output-modes", "/a2a", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"x"}]},"configuration":{"acceptedOutputModes":[`, `]}}}`, func(int) string { return `""` })
	}},
	{"a2a/nested-metadata", "/a2a", "", a2aSend(`"parts":[{"text":"x"}],"metadata":{"m":[`, `]}`, func(int) string { return strings.Repeat("[", 900) + strings.Repeat("]", 900) })},
	{"a2a/number-data", "/a2a", "", a2aSend(`"parts":[{"data":[`, `]}]`, func(int) string { return `0` })},
	{"mcp/echo-many-args", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x",`, `}}}`, func(i int) string { return `"` + name3(i) + `":0` })
	}},
	{"mcp/echo-number-array", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","n":[`, `]}}}`, func(int) string { return `0` })
	}},
	{"mcp/echo-escapes", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`, `"}}}`, func(int) string { return `\u0001` })
	}},
	{"mcp/echo-short-strings", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","s":[`, `]}}}`, func(int) string { return `"\n"` })
	}},
	{"mcp/add-many-args", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,`, `}}}`, func(i int) string { return `"` + name3(i) + `":0` })
	}},
	{"mcp/prompt-many-args", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"x",`, `}}}`, func(i int) string { return `"` + name3(i) + `":""` })
	}},
	{"mcp/prompt-escaped-name", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"`, `"}}}`, func(int) string { return `\n` })
	}},
	{"mcp/resource-long-uri", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"rpcedge://x`, `"}}`, func(int) string { return `\n` })
	}},
	{"mcp/envelope-members", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}},`, `}`, func(i int) string { return `"` + name3(i) + `":0` })
	}},
	{"mcp/params-members", "/mcp", "", func(size int) string {
		return fill(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},`, `}}`, func(i int) string { return `"` + name3(i) + `":0` })
	}},
}

// TestWholeRequestMemory serves the worst request shapes found for A2A
// and MCP through the whole demo server (fasthttp's connection loop,
// the body read, the contract pipeline, the demo agent and tools, the
// task store, the answer) from cold pools, at 64 KiB and 1 MiB, and
// checks what each allocates: at most 8× the body for its decoded form
// (contract §3), plus what the body and answer buffers cost when they
// grow by doubling — under 4× the body (from 4 KiB to the first power of
// two past it) and 4× the answer. AMP_SHAPE=name runs one shape.
func TestWholeRequestMemory(t *testing.T) {
	srv := demoHTTP(t)
	only := os.Getenv("AMP_SHAPE")
	for _, sh := range ampShapes {
		if only != "" && sh.name != only {
			continue
		}
		for _, size := range []int{64 << 10, 1<<20 - 512} {
			body := sh.body(size)
			raw := "POST " + sh.path + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" + sh.hdr +
				"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
			conn := &memtest.Conn{}
			conn.R.WriteString(raw)
			conn.W.Grow(4*len(raw) + 64<<10)
			runtime.GC()
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			if err := srv.ServeConn(conn); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&m1)
			cost := m1.TotalAlloc - m0.TotalAlloc
			out := conn.W.String()
			i := strings.Index(out, "\r\n\r\n")
			if i < 0 || !strings.HasPrefix(out, "HTTP/1.1 200") {
				t.Fatalf("%s: %.200s", sh.name, out)
			}
			answer := len(out) - i - 4
			ratio := float64(cost) / float64(len(body))
			t.Logf("%-28s %8d bytes: %6.2f× (answer %d bytes)", sh.name, len(body), ratio, answer)
			if bound := uint64(8*len(body) + 4*len(body) + 4*answer); cost > bound {
				t.Errorf("%s, %d bytes: %d bytes allocated (%.2f×), past 8× the body plus the buffers' 4× body + 4× answer (%d)", sh.name, len(body), cost, ratio, bound)
			}
		}
	}
}
