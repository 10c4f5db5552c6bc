package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// TestGetCallKeep: the first Call a Request asks for stays with it
// (Request.Keep) and is handed out again once released; one asked for
// while the kept one is busy comes from the pool and goes back to it.
func TestGetCallKeep(t *testing.T) {
	var r fastserver.Request
	c1 := getCall(&r)
	if r.Keep != c1 || c1.home != &r || !c1.busy {
		t.Fatalf("first call not kept: Keep %v, home %p, busy %v", r.Keep, c1.home, c1.busy)
	}
	c2 := getCall(&r)
	if c2 == c1 || c2.home != nil || r.Keep != c1 {
		t.Fatalf("a call asked for while the kept one is busy: %p (kept %p), home %p", c2, c1, c2.home)
	}
	c2.release()
	c1.release()
	if c1.busy || r.Keep != c1 {
		t.Fatalf("released: busy %v, Keep %v", c1.busy, r.Keep)
	}
	if c3 := getCall(&r); c3 != c1 {
		t.Fatalf("the kept call was not handed out again: %p, kept %p", c3, c1)
	}
	c1.release()
}

// TestKeptCallAcrossRequests: many tools/call, prompts/get and refused
// requests served through one Request, as one pooled server call serves
// them, in varied order: every answer is what a fresh Request gets, so
// nothing of one request's Call reaches the next.
func TestKeptCallAcrossRequests(t *testing.T) {
	_, ep := testServer(t)
	d, err := decode.NewDecoder(decode.Options{IDs: decode.IDsMCP})
	if err != nil {
		t.Fatal(err)
	}
	bodies := []string{
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d"}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%d}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nope%d","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":2}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"n%d"}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","name":"echo","arguments":{"text":"d%d"}}}`,
	}
	var kept fastserver.Request
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetRequestURI("/mcp")
	h.Set(HeaderProtocolVersion, "2025-11-25")
	for i := range 300 {
		body := fmt.Sprintf(bodies[(i*7)%len(bodies)], i, i)
		var m1, m2 decode.Message
		if err := d.Decode([]byte(body), &m1); err != nil {
			t.Fatal(err)
		}
		kept.Reset(&h, &m1, nil)
		got := serve(t, ep, &kept)
		d2, _ := decode.NewDecoder(decode.Options{IDs: decode.IDsMCP})
		if err := d2.Decode([]byte(body), &m2); err != nil {
			t.Fatal(err)
		}
		var fresh fastserver.Request
		fresh.Reset(&h, &m2, nil)
		want := serve(t, ep, &fresh)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s:\nkept call:  %+v\nfresh call: %+v", body, got, want)
		}
		if strings.Contains(body, `"echo","arguments":{"text":"t`) && !strings.Contains(string(got.Result), fmt.Sprintf(`t%d`, i)) {
			t.Fatalf("%s: %s", body, got.Result)
		}
	}
	if c, ok := kept.Keep.(*Call); !ok || c.busy {
		t.Fatalf("after the requests: Keep %v", kept.Keep)
	}
}
