package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startStdio is serveStdio for a test: the stream's input is closed
// when the test ends, and ServeLines must then return nil.
func startStdio(t *testing.T, s *Server) (io.WriteCloser, <-chan string) {
	t.Helper()
	inW, lines, done := serveStdio(s)
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeLines: %v", err)
		}
	})
	return inW, lines
}

// stdioLine reads the next output line of serveStdio, decoded.
func stdioLine(t *testing.T, lines <-chan string) (string, map[string]json.RawMessage) {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the output ended")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		return l, m
	case <-time.After(5 * time.Second):
		t.Fatal("no line within 5 s")
		return "", nil
	}
}

// TestStdioStreaming: over stdio a Streaming tool's progress and log
// messages are lines written before its answer (2026-07-28 and 2025-xx),
// and under 2025-xx its request to the client (elicitation) is a line
// whose response the client writes back, read while the tool waits;
// subscriptions/listen is still refused there.
func TestStdioStreaming(t *testing.T) {
	s, err := New(Info{Name: "st", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "steps", Streaming: true,
		InputSchema: `{"type":"object","properties":{"n":{"type":"integer"},"word":{"type":"string"}},"required":["n","word"]}`,
		Handler: ToolFunc(func(c *Call) error {
			n, _ := strconv.Atoi(string(c.Arg("n")))
			word := strings.Trim(string(c.Arg("word")), `"`)
			for i := range n {
				if err := c.Progress(float64(i+1), float64(n), "step "+word); err != nil {
					return err
				}
				if err := c.LogText(LogInfo, "steps", fmt.Sprintf("did %d", i+1)); err != nil {
					return err
				}
			}
			c.AddText("steps " + word)
			return nil
		})})
	s.AddTool(Tool{Name: "ask", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		res, err := c.Elicit("name", []byte(`{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`))
		if err != nil {
			return err
		}
		c.AddText("elicited " + string(res))
		return nil
	})})
	inW, lines := startStdio(t, s)
	send := func(line string) {
		t.Helper()
		if _, err := fmt.Fprintln(inW, line); err != nil {
			t.Fatal(err)
		}
	}

	for _, version := range []string{"2026-07-28", "2025-11-25", ""} {
		n := 1 + rand.IntN(4)
		word := fmt.Sprintf("w%d", rand.IntN(1e6))
		id := strconv.Itoa(rand.IntN(1e6))
		token := strconv.Quote(fmt.Sprintf("tok-%d", rand.IntN(1e6)))
		meta := `"_meta":{"progressToken":` + token
		switch version {
		case "2026-07-28":
			meta += `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"`
		case "2025-11-25":
			meta += `,"io.modelcontextprotocol/protocolVersion":"2025-11-25"`
		}
		meta += "}"
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"steps","arguments":{"n":` + strconv.Itoa(n) + `,"word":"` + word + `"},` + meta + `}}`)
		for i := range n {
			l, m := stdioLine(t, lines)
			var p struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress float64         `json:"progress"`
				Total    float64         `json:"total"`
				Message  string          `json:"message"`
			}
			json.Unmarshal(m["params"], &p)
			if string(m["method"]) != `"notifications/progress"` || string(p.Token) != token || p.Progress != float64(i+1) || p.Total != float64(n) || p.Message != "step "+word {
				t.Fatalf("%s: progress %d: %q", version, i, l)
			}
			l, m = stdioLine(t, lines)
			if string(m["method"]) != `"notifications/message"` || !strings.Contains(l, fmt.Sprintf(`"did %d"`, i+1)) {
				t.Fatalf("%s: log message %d: %q", version, i, l)
			}
		}
		if l, m := stdioLine(t, lines); string(m["id"]) != id || !strings.Contains(string(m["result"]), "steps "+word) {
			t.Fatalf("%s: answer: %q", version, l)
		}
	}

	// 2025-xx: the elicitation is a request line; its response comes back.
	id, name := fmt.Sprintf(`"e-%d"`, rand.IntN(1e6)), fmt.Sprintf("n%d", rand.IntN(1e6))
	send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	l, m := stdioLine(t, lines)
	if string(m["method"]) != `"elicitation/create"` || len(m["id"]) == 0 || !strings.Contains(string(m["params"]), "Your name?") {
		t.Fatalf("the request to the client: %q", l)
	}
	send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"action":"accept","content":{"name":"` + name + `"}}}`)
	if l, m := stdioLine(t, lines); string(m["id"]) != id || !strings.Contains(string(m["result"]), name) || strings.Contains(string(m["result"]), `"isError":true`) {
		t.Fatalf("answer: %q", l)
	}

	// 2026-07-28: the same tool is answered input_required, no request line.
	id = strconv.Itoa(rand.IntN(1e6))
	send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`)
	if l, m := stdioLine(t, lines); string(m["id"]) != id || !strings.Contains(string(m["result"]), "input_required") {
		t.Fatalf("2026-07-28 answer: %q", l)
	}

	// subscriptions/listen is refused over stdio.
	id = strconv.Itoa(rand.IntN(1e6))
	send(`{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if l, m := stdioLine(t, lines); string(m["id"]) != id || !strings.Contains(string(m["error"]), "-32600") {
		t.Fatalf("listen: %q", l)
	}
}
