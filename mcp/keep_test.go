package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// TestGetCallKeep: on a server's own Request (ServeLines serves a stream
// with one) the first Call stays with it (Request.Keep) and every later
// request gets it again — also after a tool panicked while holding it
// (reclaim, in Check); a Call asked for while the kept one is busy comes
// from the pool; a Request made with Reset keeps nothing.
func TestGetCallKeep(t *testing.T) {
	s, err := New(Info{Name: "k", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []*Call
	var nested *Call
	s.AddTool(Tool{Name: "who", Handler: ToolFunc(func(c *Call) error {
		seen = append(seen, c)
		n := getCall(c.r) // the kept one is busy: a pooled one
		nested = n
		n.release()
		return c.AddTextJSON(nil)
	})})
	s.AddTool(Tool{Name: "boom", Handler: ToolFunc(func(c *Call) error {
		seen = append(seen, c)
		panic("the tool failed")
	})})
	var in strings.Builder
	for i, name := range []string{"who", "who", "boom", "who", "who"} {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", i, name)
	}
	var out strings.Builder
	if err := fastserver.ServeLines(context.Background(), s.StreamEndpoint(), fastserver.Config{Logger: slog.New(slog.DiscardHandler)}, strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), `"result"`) != 4 || !strings.Contains(out.String(), `"code":-32603`) {
		t.Fatalf("answers:\n%s", out.String())
	}
	for i, c := range seen {
		if c != seen[0] || c.home == nil {
			t.Fatalf("request %d got Call %p (home %p), the first got %p: the kept Call was not handed out again", i, c, c.home, seen[0])
		}
	}
	if seen[0].busy {
		t.Error("the kept Call is still busy after the last request")
	}
	if nested == seen[0] || nested.home != nil {
		t.Errorf("a Call asked for while the kept one was busy: %p, home %p", nested, nested.home)
	}

	// A Request made with Reset keeps no Call.
	var r fastserver.Request
	r.Reset(nil, nil, nil)
	c := getCall(&r)
	if r.Keep != nil || c.home != nil {
		t.Fatalf("a Request made with Reset kept its Call: Keep %v, home %p", r.Keep, c.home)
	}
	c.release()
}

// TestKeptCallAcrossRequests: many tools/call, prompts/get and refused
// requests served through one Request in varied order answer as through
// a fresh Request each. (A Request made with Reset keeps no Call, so this
// checks the Calls' reset between requests; TestGetCallKeep and the
// server's own tests run the kept one.)
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
}
