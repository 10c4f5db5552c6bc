package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
)

// TestGetCallKeep: on a server's own Request (ServeLines serves a stream
// with a few) the first Call stays with it (Request.Keep) and every later
// request gets it again — also after a tool panicked while holding it
// (reclaim, in Check); a Call asked for while the kept one is busy comes
// from the pool; a Request made with Reset keeps nothing.
func TestGetCallKeep(t *testing.T) {
	s, err := New(Info{Name: "k", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []*Call
	var reqs []*fastserver.Request
	var nested *Call
	s.AddTool(Tool{Name: "who", Handler: ToolFunc(func(c *Call) error {
		seen, reqs = append(seen, c), append(reqs, c.r)
		n := getCall(c.r) // the kept one is busy: a pooled one
		nested = n
		n.release()
		return c.AddTextJSON(nil)
	})})
	s.AddTool(Tool{Name: "boom", Handler: ToolFunc(func(c *Call) error {
		seen, reqs = append(seen, c), append(reqs, c.r)
		panic("the tool failed")
	})})
	// The requests go one at a time, each after the answer before it, so
	// that the stream reads them into a few calls in turn (one served, one
	// waiting for the next line, a third when the first has not come back
	// yet): each Request keeps its Call.
	inW, lines, done := serveStdio(s)
	var out strings.Builder
	for i, name := range []string{"who", "who", "boom", "who", "who", "who", "who", "boom", "who", "who", "who", "who"} {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", i, name)
		line, ok := <-lines
		if !ok {
			t.Fatal("the output ended")
		}
		out.WriteString(line)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), `"result"`) != 10 || strings.Count(out.String(), `"code":-32603`) != 2 {
		t.Fatalf("answers:\n%s", out.String())
	}
	kept := map[*fastserver.Request]*Call{}
	for i, c := range seen {
		if !c.kept {
			t.Fatalf("request %d got Call %p, not kept", i, c)
		}
		if k, ok := kept[reqs[i]]; ok && k != c {
			t.Fatalf("request %d got Call %p, its Request kept %p: the kept Call was not handed out again", i, c, k)
		}
		kept[reqs[i]] = c
	}
	if len(kept) >= len(seen) {
		t.Fatalf("%d Requests for %d requests: none served twice", len(kept), len(seen))
	}
	for _, c := range seen {
		if c.busy {
			t.Error("a kept Call is still busy after the last request")
		}
	}
	if nested == seen[0] || nested.kept {
		t.Errorf("a Call asked for while the kept one was busy: %p, kept %v", nested, nested.kept)
	}

	// A Request made with Reset keeps no Call.
	var r fastserver.Request
	r.Reset(nil, nil, nil)
	c := getCall(&r)
	if r.Keep != nil || c.kept {
		t.Fatalf("a Request made with Reset kept its Call: Keep %v, kept %v", r.Keep, c.kept)
	}
	c.release()
}

// TestKeptCallAcrossRequests: varied tools/call and prompts/get requests,
// refusals and a tool that marks its result an error with structured
// content among them, served one after another by one server call (its
// kept Call, ServeLines), answer exactly as each does on a server call of
// its own: nothing of one request's Call reaches the next.
func TestKeptCallAcrossRequests(t *testing.T) {
	s, _ := testServer(t)
	ep := s.StreamEndpoint()
	bodies := []string{
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"rich","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d"}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fail","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%d}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"strict","arguments":{"n":%d}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"refuse","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nope%d","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"n%d"}}}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","name":"echo","arguments":{"text":"d%d"}}}`,
	}
	cfg := fastserver.Config{Logger: slog.New(slog.DiscardHandler)}
	serveLines := func(in string) []string {
		var out strings.Builder
		if err := fastserver.ServeLines(context.Background(), ep, cfg, strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	}
	var lines []string
	for i := range 120 {
		b := bodies[(i*7)%len(bodies)]
		if strings.Count(b, "%d") == 2 {
			b = fmt.Sprintf(b, i, i-60)
		} else {
			b = fmt.Sprintf(b, i)
		}
		lines = append(lines, b)
	}
	kept := serveLines(strings.Join(lines, "\n") + "\n")
	if len(kept) != len(lines) {
		t.Fatalf("%d answers to %d requests", len(kept), len(lines))
	}
	for i, l := range lines {
		if own := serveLines(l + "\n"); len(own) != 1 || own[0] != kept[i] {
			t.Fatalf("%s:\none server call for all: %s\none of its own:     %v", l, kept[i], own)
		}
	}
	if !strings.Contains(strings.Join(kept, "\n"), `"isError":true`) || !strings.Contains(strings.Join(kept, "\n"), `"text":"t-`) {
		t.Fatalf("the requests did not take the paths meant:\n%s", strings.Join(kept, "\n"))
	}
}
