package fastserver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// TestHeaderKey: HeaderOf answers exactly as Header for every field of the
// server's table and for others, in any case, present once, repeated
// (combined), empty and absent, through the server's snapshot and for a
// Request made with Reset; the zero key finds nothing.
func TestHeaderKey(t *testing.T) {
	raw := "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nmcp-method: tools/call\r\n" +
		"Accept: application/json\r\nACCEPT: text/event-stream\r\nMcp-Name:\r\nX-Other: 1\r\nx-other: 2\r\n" +
		"Authorization: Bearer t\r\n\r\n"
	h := readHeader(t, raw)
	var f fields
	f.snapshot(h)
	var snap, plain Request
	snap.reset(&f, &decode.Message{}, nil)
	plain.Reset(h, &decode.Message{}, nil)
	names := []string{"X-Other", "x-other", "Host", "Nope", ""}
	for _, n := range fieldNames {
		names = append(names, n, strings.ToLower(n), strings.ToUpper(n))
	}
	for _, n := range names {
		k := NewHeaderKey(n)
		if k.Name() != n {
			t.Errorf("Name() = %q, want %q", k.Name(), n)
		}
		for _, r := range []*Request{&snap, &plain} {
			want, got := r.Header(n), r.HeaderOf(k)
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%q: HeaderOf %q (nil %v), Header %q (nil %v)", n, got, got == nil, want, want == nil)
			}
		}
	}
	if got := snap.HeaderOf(HeaderKey{}); got != nil {
		t.Errorf("the zero key found %q", got)
	}
	if got := string(snap.HeaderOf(NewHeaderKey("accept"))); got != "application/json, text/event-stream" {
		t.Errorf("a repeated field: %q, want both lines combined", got)
	}
}

// TestHeaderLines: HeaderLines returns HeaderOf's value and the number of
// lines the field came in — for table fields and others, through the
// server's snapshot of the raw section and for a Request made with Reset
// over a header built in memory — so that a field holding one value can
// be refused for two lines whatever they combine into.
func TestHeaderLines(t *testing.T) {
	raw := "POST /rpc HTTP/1.1\r\nHost: a\r\nMcp-Name: a\r\nmcp-name: b\r\nOrigin: http://x\r\n" +
		"Mcp-Param-Region: us, eu\r\nX-Two: a\r\nx-two: b\r\nX-Three: 1\r\nX-THREE:\r\nx-three: 3\r\nX-Empty:\r\n\r\n"
	h := readHeader(t, raw)
	var f fields
	f.snapshot(h)
	var snap, plain, built Request
	snap.reset(&f, &decode.Message{}, nil)
	plain.Reset(h, &decode.Message{}, nil)
	var mem fasthttp.RequestHeader
	for _, kv := range [][2]string{{"Mcp-Name", "a"}, {"mcp-name", "b"}, {"Origin", "http://x"}, {"Mcp-Param-Region", "us, eu"},
		{"X-Two", "a"}, {"x-two", "b"}, {"X-Three", "1"}, {"X-THREE", ""}, {"x-three", "3"}, {"X-Empty", ""}} {
		mem.Add(kv[0], kv[1])
	}
	built.Reset(&mem, &decode.Message{}, nil)
	tests := []struct {
		name  string
		value string
		lines int
	}{
		{"Mcp-Name", "a, b", 2}, {"Origin", "http://x", 1}, {"Mcp-Param-Region", "us, eu", 1},
		{"x-two", "a, b", 2}, {"X-Three", "1, , 3", 3}, {"X-Empty", "", 1}, {"Absent", "", 0}, {"Content-Type", "", 0},
	}
	for _, tc := range tests {
		k := NewHeaderKey(tc.name)
		for i, r := range []*Request{&snap, &plain, &built} {
			v, n := r.HeaderLines(k)
			if string(v) != tc.value || n != tc.lines || (v == nil) != (tc.lines == 0) {
				t.Errorf("request %d: HeaderLines(%q) = %q (nil %v), %d; want %q, %d", i, tc.name, v, v == nil, n, tc.value, tc.lines)
			}
			if hv := r.HeaderOf(k); !bytes.Equal(hv, v) || (hv == nil) != (v == nil) {
				t.Errorf("request %d: HeaderOf(%q) = %q, HeaderLines %q", i, tc.name, hv, v)
			}
		}
	}
}
