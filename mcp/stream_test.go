package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// streamServer serves, on loopback, a server whose Streaming tools send
// progress and log messages and ask the client for input.
func streamServer(t testing.TB) string {
	t.Helper()
	s, err := New(Info{Name: "st", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "work", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		for i := range 3 {
			if err := c.Progress(float64(i*50), 100, "step"); err != nil {
				return err
			}
			for _, l := range []LogLevel{LogDebug, LogWarning} {
				if err := c.LogText(l, "work", l.String()); err != nil {
					return err
				}
			}
		}
		c.AddText("worked")
		return nil
	})})
	s.AddTool(Tool{Name: "ask", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		res, err := c.Sample("q", []byte(`{"messages":[],"maxTokens":1}`))
		if err != nil {
			return err
		}
		c.AddText("client said " + string(res))
		return nil
	})})
	s.AddTool(Tool{Name: "quiet", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		c.AddText("nothing to say")
		return nil
	})})
	_, url := serveLoopback(t, s, fastserver.Config{})
	return url
}

type sseAnswer struct {
	status      int
	contentType string
	events      []map[string]any
	raw         []byte
}

func postMCP(t testing.TB, url, version, method, name, body string, accept string) sseAnswer {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if version != "" {
		req.Header.Set(HeaderProtocolVersion, version)
	}
	if version == "2026-07-28" {
		req.Header.Set(HeaderMethod, method)
		if name != "" {
			req.Header.Set(HeaderName, name)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := sseAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), raw: raw}
	if a.contentType == "text/event-stream" {
		for _, ev := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
			data, ok := strings.CutPrefix(ev, "data: ")
			if !ok {
				t.Fatalf("event %q", ev)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			a.events = append(a.events, m)
		}
	}
	return a
}

const sse = "application/json, text/event-stream"

func TestStreamedProgressAndLogs(t *testing.T) {
	url := streamServer(t)
	meta := func(more string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + more + `}`
	}
	callWork := func(m string) string {
		return `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"work",` + m + `}}`
	}
	// 2026-07-28, a progress token and no log level: three progress
	// notifications, then the result.
	a := postMCP(t, url, "2026-07-28", "tools/call", "work", callWork(meta(`,"progressToken":"tok-1"`)), sse)
	if a.status != 200 || len(a.events) != 4 {
		t.Fatalf("progress: %d %s", a.status, a.raw)
	}
	for i, ev := range a.events[:3] {
		p, _ := ev["params"].(map[string]any)
		if ev["method"] != "notifications/progress" || p["progressToken"] != "tok-1" || p["progress"] != float64(i*50) || p["total"] != 100.0 {
			t.Errorf("event %d: %v", i, ev)
		}
	}
	if last := a.events[3]; last["id"] != "w" || !strings.Contains(string(a.raw), `"text":"worked"`) {
		t.Errorf("final: %v", last)
	}
	// An integer token, and logs at warning and above.
	a = postMCP(t, url, "2026-07-28", "tools/call", "work", callWork(meta(`,"progressToken":7,"io.modelcontextprotocol/logLevel":"warning"`)), sse)
	if len(a.events) != 7 {
		t.Fatalf("logs: %s", a.raw)
	}
	for _, ev := range a.events[:6] {
		if ev["method"] == "notifications/message" {
			p := ev["params"].(map[string]any)
			if p["level"] != "warning" || p["logger"] != "work" || p["data"] != "warning" {
				t.Errorf("log %v", ev)
			}
		} else if ev["params"].(map[string]any)["progressToken"] != 7.0 {
			t.Errorf("progress %v", ev)
		}
	}
	// Neither token nor level: nothing to stream, a plain answer.
	a = postMCP(t, url, "2026-07-28", "tools/call", "work", callWork(meta("")), sse)
	if a.contentType != "application/json" || !strings.Contains(string(a.raw), `"text":"worked"`) {
		t.Errorf("plain: %s %s", a.contentType, a.raw)
	}
	// A client that does not accept text/event-stream gets the plain answer.
	a = postMCP(t, url, "2026-07-28", "tools/call", "work", callWork(meta(`,"progressToken":"x"`)), "application/json")
	if a.contentType != "application/json" || !strings.Contains(string(a.raw), `"text":"worked"`) {
		t.Errorf("no SSE accepted: %s %s", a.contentType, a.raw)
	}
	// 2025-xx: logs at every level (no session for setLevel), progress
	// with its token.
	a = postMCP(t, url, "2025-11-25", "", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`, sse)
	if len(a.events) != 10 {
		t.Errorf("2025: %d events: %s", len(a.events), a.raw)
	}
	// A Streaming tool that sends nothing keeps the plain answer.
	a = postMCP(t, url, "2025-11-25", "", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"quiet"}}`, sse)
	if a.contentType != "application/json" || string(a.raw) != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"nothing to say"}]}}` {
		t.Errorf("quiet: %s %s", a.contentType, a.raw)
	}
}

// Under 2025-xx a request to the client goes on the stream; the client
// POSTs its response, answered 202, and the tool's result follows.
func TestStreamedClientRequest2025(t *testing.T) {
	url := streamServer(t)
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse)
	req.Header.Set(HeaderProtocolVersion, "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, _ := br.ReadString('\n')
	br.ReadString('\n')
	data, _ := strings.CutPrefix(strings.TrimSpace(line), "data: ")
	id, _ := decode.Lookup([]byte(data), "id")
	method, _ := decode.Lookup([]byte(data), "method")
	if string(method) != `"sampling/createMessage"` || len(id) < 10 {
		t.Fatalf("request event %q", line)
	}
	a := postMCP(t, url, "2025-06-18", "", "", `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`, sse)
	if a.status != 202 || len(a.raw) != 0 {
		t.Fatalf("response POST: %d %s", a.status, a.raw)
	}
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), `"id":9,"result":{"content":[{"type":"text","text":"client said {\"role\":\"assistant\"`) {
		t.Errorf("after the response: %s", rest)
	}
	// The client's error is the tool's failure: a result with isError.
	resp2, err := http.DefaultClient.Do(func() *http.Request {
		r, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ask"}}`))
		r.Header.Set("Accept", sse)
		return r
	}())
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	br = bufio.NewReader(resp2.Body)
	line, _ = br.ReadString('\n')
	br.ReadString('\n')
	data, _ = strings.CutPrefix(strings.TrimSpace(line), "data: ")
	id, _ = decode.Lookup([]byte(data), "id")
	postMCP(t, url, "", "", "", `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32601,"message":"no sampling here"}}`, "")
	rest, _ = io.ReadAll(br)
	if !strings.Contains(string(rest), `"isError":true`) || !strings.Contains(string(rest), "no sampling here") {
		t.Errorf("client error: %s", rest)
	}
	// Without text/event-stream the request cannot reach the client.
	a = postMCP(t, url, "2025-06-18", "", "", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"ask"}}`, "application/json")
	if !strings.Contains(string(a.raw), `"isError":true`) || !strings.Contains(string(a.raw), "cannot stream") {
		t.Errorf("no stream: %s", a.raw)
	}
}
