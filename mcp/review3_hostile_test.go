//go:build !race

package mcp

// A third hostile review: the method handlers and the argument schema
// check, attacked with arguments a client controls.

import (
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// Contract §2: "Deeper duplicates are not checked (the last one wins)".
// The compiled check judges only the last occurrence of a repeated name
// below the top level, and finds out whether a failing member is the last
// with isLast, a decode.Lookup over the whole object for every failing
// occurrence: n repeated failing members cost n walks of the object,
// quadratic in the body (32 KiB took 0.4 s; 128 KiB 6.9 s; now a map of
// the last occurrences, built once per object that repeats a name).
func TestReview3NestedDuplicatesQuadratic(t *testing.T) {
	s, err := New(Info{Name: "test", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{
		Name:        "nested",
		InputSchema: `{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"string"}}}}}`,
		Handler:     ToolFunc(func(c *Call) error { c.AddText("ok"); return nil }),
	})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	// The time to check n bytes of repeated names, best of three: 64
	// times the bytes must cost far less than 64² times the time (a ratio,
	// not a time: the machine's speed cancels out).
	check := func(size int) time.Duration {
		body := memtest.FillBody(size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nested","arguments":{"o":{`, `,"k":"s"}}}}`,
			func(int) string { return `"k":1` })
		var h fasthttp.RequestHeader
		h.SetMethod("POST")
		h.SetRequestURI("/mcp")
		h.Set("MCP-Protocol-Version", "2025-11-25")
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			_, err := memtest.Serve(ep, &h, body, nil)
			best = min(best, time.Since(start))
			if err != nil {
				t.Fatalf("%d bytes refused: %v; the last occurrence is valid", size, err)
			}
		}
		return best
	}
	small, large := check(1<<10), check(64<<10)
	if ratio := float64(large) / float64(max(small, time.Microsecond)); ratio > 400 {
		t.Errorf(`arguments {"o":{"k":1,"k":1,…,"k":"s"}}: 1 KiB checked in %v, 64 KiB in %v (%.0fx for 64x the bytes: quadratic)`, small, large, ratio)
	}
}
