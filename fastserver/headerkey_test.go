package fastserver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
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
