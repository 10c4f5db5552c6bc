package mcp

import (
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
)

// A client's response whose error is not a JSON-RPC error object (an
// object with an integer code and a string message, JSON-RPC 2.0 §5.1)
// is no response (row 10), even when its id matches a pending request: it
// was taken with 202, and a code of 1.5 or 1e400 was read as 1 (found by
// review on 2026-12-06). A proper error reaches the tool, its code exact.
func TestClientResponseErrorObject(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	for _, e := range []string{
		`"nope"`, `null`, `[]`, `{}`,
		`{"code":1.5,"message":"x"}`, `{"code":1e400,"message":"x"}`, `{"code":1e2,"message":"x"}`,
		`{"code":"-32000","message":"x"}`, `{"code":9223372036854775808,"message":"x"}`,
		`{"code":-32000}`, `{"message":"x"}`, `{"code":-32000,"message":null}`,
		`{"code":-32000,"code":1,"message":"x"}`, `{"code":-32000,"message":"x","message":"y"}`,
	} {
		p := startAsk(t, url, "", "sample")
		resp, body := do(t, "POST", url, "", `{"jsonrpc":"2.0","id":`+p.id+`,"error":`+e+`}`)
		if resp.StatusCode != 400 {
			t.Errorf("error %s: %d %q, want 400 / -32600", e, resp.StatusCode, body)
		}
		p.resp.Body.Close()
	}
	p := startAsk(t, url, "", "sample")
	resp, body := do(t, "POST", url, "", `{"jsonrpc":"2.0","id":`+p.id+`,"error":{"code":-32042,"message":"declined","data":{"why":"no"}}}`)
	if resp.StatusCode != 202 {
		t.Fatalf("a proper error: %d %q, want 202", resp.StatusCode, body)
	}
	if rest := p.rest(); !strings.Contains(rest, `"isError":true`) || !strings.Contains(rest, "declined") {
		t.Errorf("the tool after the client's error: %s", rest)
	}
}
