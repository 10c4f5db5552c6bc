package mcp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// reviewServer serves, on loopback, a server with sessions whose
// Streaming tools ask the client for input.
func reviewServer(t testing.TB, cfg fastserver.Config, o SessionOptions) (*Server, *fastserver.Server, string) {
	t.Helper()
	s, err := New(Info{Name: "rev", Version: "1"}, WithSessions(o))
	if err != nil {
		t.Fatal(err)
	}
	s.AddResource(Resource{URI: "test://watched", Text: "v1"})
	s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://item/{id}", Read: func(*fastserver.Request, string, map[string]string) ([]ResourceContents, error) {
		return nil, nil
	}})
	ask := func(method string) ToolHandler {
		return ToolFunc(func(c *Call) error {
			res, err := c.Ask("q", method, []byte(`{"message":"?","requestedSchema":{"type":"object"}}`))
			if err != nil {
				return err
			}
			c.AddText("client said " + string(res))
			return nil
		})
	}
	s.AddTool(Tool{Name: "elicit", Streaming: true, Handler: ask("elicitation/create")})
	s.AddTool(Tool{Name: "sample", Streaming: true, Handler: ask("sampling/createMessage")})
	srv, url := serveLoopback(t, s, cfg)
	return s, srv, url
}

// initSession initializes a session whose client declares caps.
func initSession(t testing.TB, url, caps string) string {
	t.Helper()
	resp, body := do(t, "POST", url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get(HeaderSession)
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	return id
}

// pendingAsk is a tools/call whose answer is a stream, stopped at the
// server's request to the client.
type pendingAsk struct {
	resp   *http.Response
	br     *bufio.Reader
	id     string // the id of the server's request, raw JSON
	method string
}

// startAsk calls tool on session and reads the server's request from the
// stream.
func startAsk(t testing.TB, url, session, tool string) *pendingAsk {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+tool+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse)
	req.Header.Set(HeaderProtocolVersion, "2025-11-25")
	if session != "" {
		req.Header.Set(HeaderSession, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	p := &pendingAsk{resp: resp, br: bufio.NewReader(resp.Body)}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(p.br)
		t.Fatalf("tools/call %s: %d %s %s", tool, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	line, _ := p.br.ReadString('\n')
	p.br.ReadString('\n')
	data, _ := strings.CutPrefix(strings.TrimSpace(line), "data: ")
	id, _ := decode.Lookup([]byte(data), "id")
	m, _ := decode.Lookup([]byte(data), "method")
	p.id, p.method = string(id), string(m)
	if len(id) < 10 {
		t.Fatalf("request event %q", line)
	}
	return p
}

// rest reads what is left of the stream.
func (p *pendingAsk) rest() string {
	b, _ := io.ReadAll(p.br)
	return string(b)
}

// A client's response to a request of the server's is answered 202 only
// when it is a JSON-RPC response to a pending request: an id never asked,
// an id of another type, a response with both result and error, or one
// answered already is row 10 (400 / -32600); the first good one reaches
// the handler.
func TestSessionHostileClientResponses(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	sid := initSession(t, url, `{"sampling":{}}`)
	p := startAsk(t, url, sid, "sample")
	if p.method != `"sampling/createMessage"` {
		t.Fatalf("method %s", p.method)
	}
	bare := strings.Trim(p.id, `"`)
	refused := []struct{ name, body string }{
		{"never asked", `{"jsonrpc":"2.0","id":"rpcedge-nope","result":{}}`},
		{"integer id", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.0,"result":{}}`},
		{"id in another case", `{"jsonrpc":"2.0","id":"` + "RPCEDGE-" + strings.TrimPrefix(bare, "rpcedge-") + `","result":{}}`},
		{"result and error", `{"jsonrpc":"2.0","id":` + p.id + `,"result":{},"error":{"code":1,"message":"x"}}`},
		{"neither", `{"jsonrpc":"2.0","id":` + p.id + `}`},
	}
	for _, c := range refused {
		resp, body := do(t, "POST", url, sid, c.body)
		if resp.StatusCode != 400 || !strings.Contains(body, `"code":-32600`) {
			t.Errorf("%s: %d %s, want 400 / -32600", c.name, resp.StatusCode, body)
		}
	}
	good := `{"jsonrpc":"2.0","id":` + p.id + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
	if resp, body := do(t, "POST", url, sid, good); resp.StatusCode != 202 || body != "" {
		t.Fatalf("response: %d %q", resp.StatusCode, body)
	}
	if resp, body := do(t, "POST", url, sid, good); resp.StatusCode != 400 || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("answered twice: %d %s, want 400", resp.StatusCode, body)
	}
	if rest := p.rest(); !strings.Contains(rest, `"id":7,"result":{"content":[{"type":"text","text":"client said {\"role\"`) {
		t.Errorf("after the response: %s", rest)
	}
}

// A response that is not JSON-RPC 2.0 ("jsonrpc" missing or not "2.0")
// is row 10, even when its id matches a pending request: the contract
// grants 202 only to "its JSON-RPC response".
func TestSessionHostileClientResponseJSONRPCVersion(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	for _, env := range []string{`"jsonrpc":"1.0",`, ``} {
		p := startAsk(t, url, "", "sample")
		resp, body := do(t, "POST", url, "", `{`+env+`"id":`+p.id+`,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
		if resp.StatusCode != 400 {
			t.Errorf("response with %q: %d %q, want 400 / -32600", env, resp.StatusCode, body)
		}
		p.resp.Body.Close()
	}
}

// A response that arrives after the server stopped waiting (its
// ClientResponseTimeout passed, or the stream's connection closed) finds
// no pending request: 400, and the handler has ended (no pending entry,
// no goroutine left behind).
func TestSessionHostileLateClientResponse(t *testing.T) {
	_, srv, url := reviewServer(t, fastserver.Config{ClientResponseTimeout: 200 * time.Millisecond}, SessionOptions{})
	p := startAsk(t, url, "", "sample")
	rest := p.rest() // the tool fails when the wait times out
	if !strings.Contains(rest, `"isError":true`) {
		t.Errorf("after the timeout: %s", rest)
	}
	late := `{"jsonrpc":"2.0","id":` + p.id + `,"result":{}}`
	if resp, body := do(t, "POST", url, "", late); resp.StatusCode != 400 {
		t.Errorf("late response: %d %s, want 400", resp.StatusCode, body)
	}

	if srv.DeliverResponse([]byte(p.id), "", []byte(late)) {
		t.Error("the timed-out request is still pending")
	}
}

// Under 2025-xx a session knows the client's capabilities (initialize):
// a request to the client for one it did not declare must not be sent
// (MCP lifecycle: "Only use capabilities that were successfully
// negotiated"). Ask fails instead, and the tool with it (isError).
func TestSessionHostileAskUndeclaredCapability(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{ClientResponseTimeout: 2 * time.Second}, SessionOptions{})
	sid := initSession(t, url, `{"sampling":{}}`)
	resp, body := do(t, "POST", url, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"elicit"}}`)
	if resp.StatusCode != 200 || strings.Contains(body, "elicitation/create") || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "elicitation") {
		t.Errorf("elicitation without the capability: %d %s", resp.StatusCode, body)
	}
	// Declared: the request goes out. Without a session nothing is known
	// and the request goes out too.
	for _, sess := range []string{sid, ""} {
		p := startAsk(t, url, sess, "sample")
		if p.method != `"sampling/createMessage"` {
			t.Errorf("session %q: %s", sess, p.method)
		}
		p.resp.Body.Close()
	}
}

// A session keeps initialize's capabilities for ClientSupports, and only
// that: a client's 512 KiB capabilities object must not be kept whole
// by every session (Max sessions of 1 MiB each would hold GiBs).
func TestSessionHostileCapabilitiesBounded(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	big := `{"sampling":{},"roots":{"listChanged":true},"experimental":{"pad":"` + strings.Repeat("x", 512<<10) + `"},"elicitation":{"form":{}},"dup":{},"dup":{},"flag":true}`
	sid := initSession(t, url, big)
	s.sessions.mu.Lock()
	ss := s.sessions.m[sid]
	s.sessions.mu.Unlock()
	if ss == nil {
		t.Fatal("no session")
	}
	if len(ss.caps) > 4<<10 {
		t.Errorf("the session keeps %d bytes of capabilities", len(ss.caps))
	}
	c := &Call{}
	c.v, c.sess = Version20251125, ss
	for capability, want := range map[string]bool{"sampling": true, "roots": true, "experimental": true, "elicitation": true, "dup": false, "flag": false, "tasks": false} {
		if got := c.ClientSupports(capability); got != want {
			t.Errorf("ClientSupports(%q) = %v, want %v", capability, got, want)
		}
	}
}

// A session that expired is gone (404): NotifyResourceUpdated must not
// queue for it nor count it.
func TestSessionHostileNotifyExpired(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{Idle: time.Second})
	sid := initSession(t, url, `{}`)
	if resp, _ := do(t, "POST", url, sid, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://watched"}}`); resp.StatusCode != 200 {
		t.Fatalf("subscribe: %d", resp.StatusCode)
	}
	if n := s.NotifyResourceUpdated("test://watched"); n != 1 {
		t.Fatalf("live session: notified %d", n)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := s.NotifyResourceUpdated("test://watched"); n != 0 {
		t.Errorf("expired session: notified %d, want 0", n)
	}
	if resp, _ := do(t, "POST", url, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != 404 {
		t.Errorf("expired session: %d, want 404", resp.StatusCode)
	}
}

// Unknown, foreign-looking, odd and overlong session ids are 404 on
// POST, GET and DELETE (never a panic, never a stream), a notification
// with one too; DELETE twice is 204 then 404.
func TestSessionHostileUnknownIDs(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	sid := initSession(t, url, `{}`)
	for _, id := range []string{"nope", strings.Repeat("A", 4000), sid + "x", strings.ToUpper(sid), "é"} {
		for _, m := range []string{"POST", "GET", "DELETE"} {
			body := ""
			if m == "POST" {
				body = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
			}
			if resp, b := do(t, m, url, id, body); resp.StatusCode != 404 && resp.StatusCode != 400 {
				t.Errorf("%s with id %.20q: %d %s", m, id, resp.StatusCode, b)
			}
		}
		if resp, b := do(t, "POST", url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 404 {
			t.Errorf("notification with id %.20q: %d %s", id, resp.StatusCode, b)
		}
	}
	// Control characters, which net/http will not send.
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	for _, m := range []string{"GET", "DELETE", "POST"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		body := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nAccept: %s\r\nContent-Type: application/json\r\nMcp-Session-Id: \x7f\x01%s\x00\r\nContent-Length: %d\r\n\r\n%s", m, Path, sse, sid, len(body), body)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 404") && !strings.HasPrefix(line, "HTTP/1.1 400") {
			t.Errorf("%s with control characters in the id: %q", m, line)
		}
	}
	if resp, _ := do(t, "DELETE", url, sid, ""); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "DELETE", url, sid, ""); resp.StatusCode != 404 {
		t.Errorf("DELETE twice: %d", resp.StatusCode)
	}
	if s.Sessions() != 0 {
		t.Errorf("%d sessions left", s.Sessions())
	}
	// notifications/initialized as a request is an unknown method.
	if resp, b := do(t, "POST", url, "", `{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`); resp.StatusCode != 404 || !strings.Contains(b, `"code":-32601`) {
		t.Errorf("initialized with an id: %d %s", resp.StatusCode, b)
	}
}

// Concurrent GETs, DELETEs, notifications and initializes on a few
// sessions: no panic, no race, and every stream ends when its session
// does.
func TestSessionHostileConcurrentEnd(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{Queue: 2})
	var wg sync.WaitGroup
	for range 8 {
		sid := initSession(t, url, `{}`)
		do(t, "POST", url, sid, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://watched"}}`)
		wg.Add(3)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set(HeaderSession, sid)
			req.Header.Set("Accept", sse)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body) // ends when the session does
			resp.Body.Close()
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				s.NotifyResourceUpdated("test://watched")
			}
		}()
		go func() {
			defer wg.Done()
			time.Sleep(20 * time.Millisecond)
			req, _ := http.NewRequest("DELETE", url, nil)
			req.Header.Set(HeaderSession, sid)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a GET stream outlived its session")
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

// An HTTP/1.0 request cannot carry a chunked body (RFC 9112 §6.1: no
// Transfer-Encoding in a response to HTTP/1.0), so its GET cannot get
// the session's stream, as fastserver refuses POST streams to it
// (ErrStreamHTTP10): 406, and the session's stream stays free.
func TestSessionHostileGETHTTP10(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	sid := initSession(t, url, `{}`)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.0\r\nHost: x\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", Path, sid)
	b, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasPrefix(string(b), "HTTP/1.1 406") || strings.Contains(string(b), "Transfer-Encoding") {
		t.Errorf("HTTP/1.0 GET: %.200q", b)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set(HeaderSession, sid)
	req.Header.Set("Accept", sse)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HTTP/1.1 GET after it: %d", resp.StatusCode)
	}
}

// A session's subscriptions are bounded (SessionOptions.Subscriptions,
// and 64 KiB of URIs): past either, resources/subscribe of another URI is
// refused -32602 and nothing is kept; subscribing again to a URI held
// costs nothing; unsubscribing makes room. (Each subscribe request of a
// URI matching a template was kept: 200 requests held 13 MB in one
// session.)
func TestSessionHostileSubscriptionsBounded(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{Subscriptions: 5})
	sid := initSession(t, url, `{}`)
	sub := func(method, id string) string {
		_, body := do(t, "POST", url, sid, `{"jsonrpc":"2.0","id":3,"method":"resources/`+method+`","params":{"uri":"test://item/`+id+`"}}`)
		return body
	}
	held := func() (int, int) {
		s.sessions.mu.Lock()
		defer s.sessions.mu.Unlock()
		ss := s.sessions.m[sid]
		ss.mu.Lock()
		defer ss.mu.Unlock()
		return len(ss.subs), ss.subBytes
	}
	for i := range 5 {
		if body := sub("subscribe", "n"+strconv.Itoa(i*7)); strings.Contains(body, `"error"`) {
			t.Fatalf("subscription %d refused: %s", i, body)
		}
	}
	if body := sub("subscribe", "n0"); strings.Contains(body, `"error"`) {
		t.Errorf("a held URI again: %s", body)
	}
	if body := sub("subscribe", "over"); !strings.Contains(body, `"code":-32602`) {
		t.Errorf("a sixth URI: %s, want -32602", body)
	}
	if n, _ := held(); n != 5 {
		t.Errorf("%d subscriptions held, want 5", n)
	}
	sub("unsubscribe", "n7")
	if body := sub("subscribe", "over"); strings.Contains(body, `"error"`) {
		t.Errorf("after an unsubscribe: %s", body)
	}
	// 64 KiB of URIs: a long one past it is refused however few are held.
	for _, id := range []string{"n0", "n14", "n21", "n28", "over"} {
		sub("unsubscribe", id)
	}
	if n, b := held(); n != 0 || b != 0 {
		t.Errorf("after unsubscribing all: %d held, %d bytes", n, b)
	}
	long := strings.Repeat("x", 40<<10)
	if body := sub("subscribe", long); strings.Contains(body, `"error"`) {
		t.Errorf("one 40 KiB URI: %.200s", body)
	}
	if body := sub("subscribe", long+"y"); !strings.Contains(body, `"code":-32602`) {
		t.Errorf("a second 40 KiB URI: %.200s, want -32602", body)
	}
}
