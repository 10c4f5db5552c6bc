package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// sessionServer serves a server with sessions on, on loopback.
func sessionServer(t testing.TB, o SessionOptions) (*Server, string) {
	t.Helper()
	s, err := New(Info{Name: "sess", Version: "1"}, WithSessions(o))
	if err != nil {
		t.Fatal(err)
	}
	s.AddResource(Resource{URI: "test://watched", Text: "v1"})
	s.AddTool(Tool{Name: "logs", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		for _, l := range []LogLevel{LogDebug, LogInfo, LogError} {
			if err := c.LogText(l, "", l.String()); err != nil {
				return err
			}
		}
		c.AddText("logged")
		return nil
	})})
	_, url := serveLoopback(t, s, fastserver.Config{})
	return s, url
}

// serveLoopback serves s's endpoint on loopback with cfg (its Logger
// discarding when nil) until the test ends; it returns the server and the
// endpoint's URL.
func serveLoopback(t testing.TB, s *Server, cfg fastserver.Config) (*fastserver.Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := fastserver.New(cfg, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, "http://" + ln.Addr().String() + "/mcp"
}

func do(t testing.TB, method, url, session, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse)
	req.Header.Set(HeaderProtocolVersion, "2025-11-25")
	if session != "" {
		req.Header.Set(HeaderSession, session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`

func TestSessions(t *testing.T) {
	s, url := sessionServer(t, SessionOptions{})
	resp, body := do(t, "POST", url, "", initialize)
	id := resp.Header.Get(HeaderSession)
	if len(id) != 22 || !strings.Contains(body, `"resources":{"subscribe":true}`) || s.Sessions() != 1 {
		t.Fatalf("initialize: id %q, %s", id, body)
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("id %q is not visible ASCII", id)
		}
	}
	// The session's log level applies to later calls; without the header a
	// call is stateless (every level).
	if resp, body := do(t, "POST", url, id, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("setLevel: %d %s", resp.StatusCode, body)
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"logs"}}`
	if _, body := do(t, "POST", url, id, call); strings.Count(body, "notifications/message") != 2 || strings.Contains(body, `"debug"`) {
		t.Errorf("session logs: %s", body)
	}
	if _, body := do(t, "POST", url, "", call); strings.Count(body, "notifications/message") != 3 {
		t.Errorf("stateless logs: %s", body)
	}

	// The GET stream carries notifications/resources/updated for the
	// session's subscriptions.
	if resp, _ := do(t, "POST", url, id, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://watched"}}`); resp.StatusCode != 200 {
		t.Fatalf("subscribe: %d", resp.StatusCode)
	}
	// An Accept that does not allow the stream (RFC 9110: q=0 on the most
	// specific range) is 406, and leaves the stream free.
	for _, accept := range []string{"application/json", "*/*, text/event-stream;q=0", "text/*;q=0"} {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Accept", accept)
		req.Header.Set(HeaderSession, id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 406 {
			t.Errorf("GET with Accept %q: %d, want 406", accept, resp.StatusCode)
		}
	}
	// Two Accept lines are one list: the second allows the stream.
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Add("Accept", "application/json")
	req.Header.Add("Accept", "text/*")
	req.Header.Set(HeaderSession, id)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != 200 || stream.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", stream.StatusCode, stream.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(stream.Body)
	if line, _ := br.ReadString('\n'); line != ": stream open\n" {
		t.Fatalf("first line %q", line)
	}
	br.ReadString('\n')
	// A second GET takes the stream over (a client reconnecting after its
	// connection dropped silently; MCP allows only a stream or 405, not
	// 409): the first stream ends, the second gets the notifications.
	stream2, err := http.DefaultClient.Do(req.Clone(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	defer stream2.Body.Close()
	if stream2.StatusCode != 200 {
		t.Fatalf("second GET: %d, want 200", stream2.StatusCode)
	}
	ended := make(chan error, 1)
	go func(old *bufio.Reader) {
		rest, err := io.ReadAll(old)
		if err == nil && len(rest) != 0 {
			err = fmt.Errorf("sent %q", rest)
		}
		ended <- err
	}(br)
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the stream taken over: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream taken over is still open after 10 s")
	}
	br = bufio.NewReader(stream2.Body)
	if line, _ := br.ReadString('\n'); line != ": stream open\n" {
		t.Fatalf("second stream's first line %q", line)
	}
	br.ReadString('\n')
	if n := s.NotifyResourceUpdated("test://watched"); n != 1 {
		t.Errorf("notified %d sessions", n)
	}
	s.NotifyResourceUpdated("test://other")
	if line, _ := br.ReadString('\n'); line != `data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched"}}`+"\n" {
		t.Errorf("event %q", line)
	}
	br.ReadString('\n')
	// Unsubscribed: nothing more.
	do(t, "POST", url, id, `{"jsonrpc":"2.0","id":5,"method":"resources/unsubscribe","params":{"uri":"test://watched"}}`)
	if n := s.NotifyResourceUpdated("test://watched"); n != 0 {
		t.Errorf("notified %d sessions after unsubscribe", n)
	}

	// DELETE ends the session and its stream; the id is then unknown.
	if resp, _ := do(t, "DELETE", url, id, ""); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("after DELETE the stream sent %q", rest)
	}
	for _, m := range []string{"POST", "GET", "DELETE"} {
		body := ""
		if m == "POST" {
			body = call
		}
		if resp, b := do(t, m, url, id, body); resp.StatusCode != 404 {
			t.Errorf("%s after DELETE: %d %s", m, resp.StatusCode, b)
		}
	}
	if resp, _ := do(t, "DELETE", url, "", ""); resp.StatusCode != 400 {
		t.Errorf("DELETE without a session: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", url, "", ""); resp.StatusCode != 405 {
		t.Errorf("GET without a session: %d", resp.StatusCode)
	}
	// 2026-07-28 has no sessions: the header is ignored.
	resp, body = do(t, "POST", url, "nope", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		HeaderProtocolVersion, "2026-07-28", HeaderMethod, "tools/list")
	if resp.StatusCode != 200 {
		t.Errorf("2026 with a session header: %d %s", resp.StatusCode, body)
	}
}

func TestSessionBounds(t *testing.T) {
	s, url := sessionServer(t, SessionOptions{Max: 2, Idle: 200 * time.Millisecond, Queue: 1})
	ids := []string{}
	for range 2 {
		resp, _ := do(t, "POST", url, "", initialize)
		ids = append(ids, resp.Header.Get(HeaderSession))
	}
	if resp, body := do(t, "POST", url, "", initialize); resp.StatusCode != 503 || resp.Header.Get(HeaderSession) != "" {
		t.Errorf("past Max: %d %s", resp.StatusCode, body)
	}
	do(t, "POST", url, ids[0], `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://watched"}}`)
	s.NotifyResourceUpdated("test://watched")
	s.NotifyResourceUpdated("test://watched") // the queue holds one
	if s.DroppedNotifications() != 1 {
		t.Errorf("dropped %d", s.DroppedNotifications())
	}
	time.Sleep(300 * time.Millisecond)
	if resp, _ := do(t, "POST", url, ids[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != 404 {
		t.Errorf("idle session: %d, want 404", resp.StatusCode)
	}
	// Expired sessions make room.
	if resp, _ := do(t, "POST", url, "", initialize); resp.StatusCode != 200 || s.Sessions() != 1 {
		t.Errorf("after expiry: %d, %d sessions", resp.StatusCode, s.Sessions())
	}
	if _, err := New(Info{Name: "x", Version: "1"}, WithSessions(SessionOptions{Max: -1})); err == nil {
		t.Error("negative Max accepted")
	}
}

// With WithAuth, a session's GET stream and DELETE need the token its
// POSTs need.
func TestSessionsWithAuth(t *testing.T) {
	_, url, as := authSessionServer(t)
	token := "Bearer " + as.Token(as.Claims(authResourceID, ""))
	resp, body := do(t, "POST", url, "", initialize, "Authorization", token)
	id := resp.Header.Get(HeaderSession)
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if resp, _ := do(t, m, url, id, ""); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s without a token: %d %q", m, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp, _ := do(t, "DELETE", url, id, "", "Authorization", token); resp.StatusCode != 204 {
		t.Errorf("DELETE with the token: %d", resp.StatusCode)
	}
}

// TestSessionsOtherMethods: with sessions, /mcp answers GET (the stream)
// and DELETE besides POST, and says so (Endpoint.OtherMethods), so that
// PUT with Expect: 100-continue gets 405 before its body is sent rather
// than 100 Continue; without sessions the endpoint offers no other method.
func TestSessionsOtherMethods(t *testing.T) {
	plain, err := New(Info{Name: "plain", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if ep := plain.Endpoint(); ep.Other != nil || ep.OtherMethods != nil {
		t.Errorf("without sessions: Other %v, OtherMethods %v; want none", ep.Other != nil, ep.OtherMethods)
	}
	s, url := sessionServer(t, SessionOptions{})
	if ep := s.Endpoint(); ep.Other == nil || !slices.Equal(ep.OtherMethods, []string{"GET", "DELETE"}) {
		t.Errorf("with sessions: Other %v, OtherMethods %v", ep.Other != nil, ep.OtherMethods)
	}
	addr := strings.TrimPrefix(strings.TrimSuffix(url, Path), "http://")
	for method, want := range map[string]string{"PUT": "HTTP/1.1 405 ", "PATCH": "HTTP/1.1 405 ", "DELETE": "HTTP/1.1 100 "} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nMcp-Session-Id: nope\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n", method, Path)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, want) {
			t.Errorf("%s with Expect: %q, want %q", method, line, want)
		}
	}
}

// authResourceID is the resource authSessionServer's tokens are for.
const authResourceID = "http://127.0.0.1/mcp"

// testResource returns a protected resource (authResourceID) trusting a
// new test issuer, and the issuer that mints its tokens.
func testResource(t testing.TB) (*auth.Resource, *authtest.Issuer) {
	t.Helper()
	as := authtest.New(t)
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: as.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: authResourceID})
	if err != nil {
		t.Fatal(err)
	}
	return res, as
}

// authSessionServer serves, on loopback, a server with sessions and
// WithAuth trusting a test issuer; it returns the server, the endpoint's
// URL and the issuer that mints its tokens (for authResourceID).
func authSessionServer(t testing.TB) (*Server, string, *authtest.Issuer) {
	t.Helper()
	res, as := testResource(t)
	s, err := New(Info{Name: "sess", Version: "1"}, WithSessions(SessionOptions{}), WithAuth(res))
	if err != nil {
		t.Fatal(err)
	}
	_, url := serveLoopback(t, s, fastserver.Config{})
	return s, url, as
}
