package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// TestStdioNegotiatedVersion: over stdio a request that names no version
// in _meta is served under the version the stream's initialize
// negotiated (2025-xx: it holds for the connection), 2025-03-26 before
// one; a version _meta names wins; another stream starts over. Seen in
// tools/list: a tool's title and outputSchema are sent from 2025-06-18
// on (before, a 2025-11-25 client over stdio never saw them).
func TestStdioNegotiatedVersion(t *testing.T) {
	s, err := New(Info{Name: "v", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	title := fmt.Sprintf("Shown %d", rand.IntN(1e6))
	s.AddTool(Tool{Name: "shaped", Title: title,
		OutputSchema: `{"type":"object","properties":{"n":{"type":"integer"}}}`,
		Handler:      ToolFunc(func(c *Call) error { return c.SetStructuredContent([]byte(`{"n":1}`)) })})
	inW, lines := startStdio(t, s)
	id := 0
	list := func(meta string) (schema, titled bool) {
		t.Helper()
		id++
		params := ""
		if meta != "" {
			params = `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + meta + `"}}`
		}
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"%s}`+"\n", id, params)
		l, m := stdioLine(t, lines)
		if string(m["id"]) != fmt.Sprint(id) || m["result"] == nil {
			t.Fatalf("tools/list: %q", l)
		}
		return strings.Contains(l, `"outputSchema"`), strings.Contains(l, title)
	}
	initialize := func(v string) {
		t.Helper()
		id++
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n", id, v)
		if l, m := stdioLine(t, lines); !strings.Contains(string(m["result"]), `"protocolVersion":"`+v+`"`) {
			t.Fatalf("initialize %s: %q", v, l)
		}
	}
	want := func(what string, schema, titled, wantBoth bool) {
		t.Helper()
		if schema != wantBoth || titled != wantBoth {
			t.Errorf("%s: outputSchema %v, title %v; want %v", what, schema, titled, wantBoth)
		}
	}
	s1, t1 := list("")
	want("before initialize (2025-03-26)", s1, t1, false)
	v := []string{"2025-06-18", "2025-11-25"}[rand.IntN(2)]
	initialize(v)
	s1, t1 = list("")
	want("after initialize "+v, s1, t1, true)
	s1, t1 = list("2025-03-26")
	want("naming 2025-03-26 in _meta", s1, t1, false)
	initialize("2025-03-26")
	s1, t1 = list("")
	want("after initialize 2025-03-26", s1, t1, false)
	initialize(v)
	s1, t1 = list("")
	want("after initialize "+v+" again", s1, t1, true)

	// Another stream has its own: it starts at 2025-03-26.
	in2, lines2, done2 := serveStdio(s)
	fmt.Fprintln(in2, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if l, _ := stdioLine(t, lines2); strings.Contains(l, `"outputSchema"`) {
		t.Errorf("a second stream took the first one's version: %q", l)
	}
	in2.Close()
	if err := <-done2; err != nil {
		t.Errorf("ServeLines: %v", err)
	}
}

// TestStdioSession: under 2025-xx a stdio stream is the session its
// initialize began: the capabilities declared there decide
// ClientSupports and whether Ask sends anything (MCP: only negotiated
// capabilities may be used), and logging/setLevel sets the level of the
// log messages later calls send. Before an initialize, nothing is known
// and nothing is refused.
func TestStdioSession(t *testing.T) {
	s, err := New(Info{Name: "ss", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "ask", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		c.AddText(fmt.Sprintf("supports %v", c.ClientSupports("elicitation")))
		res, err := c.Elicit("k", []byte(`{"message":"?","requestedSchema":{"type":"object","properties":{}}}`))
		if err != nil {
			c.AddText("elicit failed: " + err.Error())
			return nil
		}
		c.AddText("elicited " + string(res))
		return nil
	})})
	s.AddTool(Tool{Name: "logs", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		for _, l := range []LogLevel{LogDebug, LogInfo, LogWarning, LogError} {
			if err := c.LogText(l, "t", "at "+l.String()); err != nil {
				return err
			}
		}
		c.AddText("logged")
		return nil
	})})
	inW, lines := startStdio(t, s)
	id := 0
	send := func(format string, args ...any) string {
		id++
		fmt.Fprintf(inW, format+"\n", append([]any{id}, args...)...)
		return fmt.Sprint(id)
	}
	initialize := func(caps string) {
		t.Helper()
		want := send(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":"c","version":"1"}}}`, caps)
		if l, m := stdioLine(t, lines); string(m["id"]) != want {
			t.Fatalf("initialize: %q", l)
		}
	}
	// ask answers its own request line when there is one, and returns
	// the call's result.
	ask := func() (asked bool, result string) {
		t.Helper()
		want := send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
		l, m := stdioLine(t, lines)
		if string(m["method"]) == `"elicitation/create"` {
			asked = true
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"result":{"action":"decline"}}`+"\n", m["id"])
			l, m = stdioLine(t, lines)
		}
		if string(m["id"]) != want {
			t.Fatalf("ask: %q", l)
		}
		return asked, string(m["result"])
	}
	if asked, res := ask(); !asked || !strings.Contains(res, "supports true") || !strings.Contains(res, "decline") {
		t.Errorf("before initialize: asked %v, %s", asked, res)
	}
	initialize(`{"roots":{}}`)
	if asked, res := ask(); asked || !strings.Contains(res, "supports false") || !strings.Contains(res, "elicit failed") {
		t.Errorf("initialized without elicitation: asked %v, %s", asked, res)
	}
	initialize(`{"elicitation":{}}`)
	if asked, res := ask(); !asked || !strings.Contains(res, "supports true") || !strings.Contains(res, "decline") {
		t.Errorf("initialized with elicitation: asked %v, %s", asked, res)
	}

	logs := func() (got []string) {
		t.Helper()
		want := send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"logs","arguments":{}}}`)
		for {
			l, m := stdioLine(t, lines)
			if string(m["id"]) == want {
				return got
			}
			if string(m["method"]) != `"notifications/message"` {
				t.Fatalf("logs: %q", l)
			}
			var p struct {
				Level string `json:"level"`
			}
			json.Unmarshal(m["params"], &p)
			got = append(got, p.Level)
		}
	}
	if got := logs(); fmt.Sprint(got) != "[debug info warning error]" {
		t.Errorf("before logging/setLevel: %v", got)
	}
	level := []string{"info", "warning", "error"}[rand.IntN(3)]
	want := send(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":%q}}`, level)
	if l, m := stdioLine(t, lines); string(m["id"]) != want || m["error"] != nil {
		t.Fatalf("setLevel: %q", l)
	}
	wantLogs := map[string]string{"info": "[info warning error]", "warning": "[warning error]", "error": "[error]"}[level]
	if got := logs(); fmt.Sprint(got) != wantLogs {
		t.Errorf("after logging/setLevel %s: %v, want %s", level, got, wantLogs)
	}
}

// TestStdioSubscribe: under 2025-xx a stdio stream's initialize offers
// resources.subscribe, and NotifyResourceUpdated writes
// notifications/resources/updated, as a line between answers, to a
// stream subscribed to the URI (while it waits for input too), and to no
// other; unsubscribing, a new initialize and the stream's end stop them.
func TestStdioSubscribe(t *testing.T) {
	s, err := New(Info{Name: "sub", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fmt.Sprintf("test://a/%d", rand.IntN(1e6)), fmt.Sprintf("test://b/%d", rand.IntN(1e6))
	for _, u := range []string{a, b} {
		if err := s.AddResource(Resource{URI: u, Name: u, Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	inW, lines, done := serveStdio(s)
	id := 0
	call := func(method, params string) map[string]json.RawMessage {
		t.Helper()
		id++
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		l, m := stdioLine(t, lines)
		if string(m["id"]) != fmt.Sprint(id) || m["error"] != nil {
			t.Fatalf("%s: %q", method, l)
		}
		return m
	}
	updated := func(uri string) {
		t.Helper()
		l, m := stdioLine(t, lines)
		if string(m["method"]) != `"notifications/resources/updated"` || !strings.Contains(string(m["params"]), `"uri":"`+uri+`"`) {
			t.Fatalf("want an update of %s, got %q", uri, l)
		}
	}
	quiet := func() {
		t.Helper()
		// Nothing may come before the answer to a ping.
		if m := call("ping", "{}"); m["result"] == nil {
			t.Fatal("ping")
		}
	}
	init := func() {
		t.Helper()
		if m := call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`); !strings.Contains(string(m["result"]), `"resources":{"subscribe":true}`) {
			t.Fatalf("initialize does not offer resources.subscribe: %s", m["result"])
		}
	}
	init()
	call("resources/subscribe", `{"uri":"`+a+`"}`)
	if n := s.NotifyResourceUpdated(a); n != 1 {
		t.Errorf("NotifyResourceUpdated(a) reached %d, want 1", n)
	}
	updated(a) // written while the stream waits for input
	if n := s.NotifyResourceUpdated(b); n != 0 {
		t.Errorf("NotifyResourceUpdated(b) reached %d, want 0", n)
	}
	quiet()
	call("resources/subscribe", `{"uri":"`+b+`"}`)
	s.NotifyResourceUpdated(b)
	s.NotifyResourceUpdated(a)
	updated(b)
	updated(a)
	call("resources/unsubscribe", `{"uri":"`+a+`"}`)
	s.NotifyResourceUpdated(a)
	quiet()
	init() // a new session: no subscriptions
	s.NotifyResourceUpdated(b)
	quiet()
	call("resources/subscribe", `{"uri":"`+b+`"}`)
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	if n := s.NotifyResourceUpdated(b); n != 0 {
		t.Errorf("after the stream ended NotifyResourceUpdated reached %d, want 0", n)
	}
}

// TestStdioSubscribeSlowReader: resource updates for a stdio client that
// does not read are queued up to 64 and then dropped
// (DroppedNotifications): NotifyResourceUpdated never waits for it.
func TestStdioSubscribeSlowReader(t *testing.T) {
	s, err := New(Info{Name: "slow", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("test://r/%d", rand.IntN(1e6))
	if err := s.AddResource(Resource{URI: u, Name: "r", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- fastserver.ServeLines(context.Background(), s.StreamEndpoint(), fastserver.Config{Logger: slog.New(slog.DiscardHandler)}, inR, outW)
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	br.ReadString('\n')
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"`+u+`"}}`)
	br.ReadString('\n')
	// The output is no longer read: the writer blocks on its first
	// update, 64 wait, the rest are dropped.
	start := time.Now()
	total := 0
	for range 500 {
		total += s.NotifyResourceUpdated(u)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("500 updates took %v: NotifyResourceUpdated waited for the client", d)
	}
	if dropped := s.DroppedNotifications(); total+int(dropped) != 500 || dropped < 500-stdioQueue-2 {
		t.Errorf("queued %d, dropped %d of 500", total, dropped)
	}
	// Reading again, the queued updates come, then the stream ends.
	inW.Close()
	got := 0
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			break
		}
		if strings.Contains(l, "notifications/resources/updated") {
			got++
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	if got > total {
		t.Errorf("%d updates written, %d queued", got, total)
	}
}
