package fastserver

import (
	"testing"
)

// BenchmarkSnapshot takes the header snapshot of the request loadgen and
// the serving benchmarks send (8 fields, 6 of them in the table).
func BenchmarkSnapshot(b *testing.B) {
	raw := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: echo\r\nUser-Agent: loadgen\r\nContent-Length: 271\r\n\r\n"
	h := readHeader(b, raw)
	var f fields
	f.snapshot(h)
	if string(f.get(fMCPMethod)) != "tools/call" || string(f.get(fContentLength)) != "271" {
		b.Fatalf("snapshot: %q %q", f.get(fMCPMethod), f.get(fContentLength))
	}
	for b.Loop() {
		f.snapshot(h)
	}
}
