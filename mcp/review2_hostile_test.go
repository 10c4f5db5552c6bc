package mcp

// A second hostile review of the 2025-xx session machinery: who may reach
// a session's GET stream and DELETE (Origin, the version header), who may
// answer a request the server sent on a call's stream (the session and
// the token holder it was sent to), what a browser client on an allowed
// origin is told (CORS), and what Last-Event-ID does (nothing: no event
// ids are issued). Every server is on loopback and stopped at the test's
// end; every wait is bounded.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// MCP 2025-03-26/06-18/11-25 transports, Security Warning: "Servers MUST
// validate the Origin header on all incoming connections ... If the
// Origin header is present and invalid, servers MUST respond with HTTP
// 403 Forbidden"; contract §2 row 1 refuses such a POST 403. A session's
// GET stream and its DELETE are connections to the same endpoint: a
// foreign Origin must get 403 there too, and must neither open nor end
// anything. An allowed (loopback) Origin still works.
func TestReview2OriginOnSessionGETAndDELETE(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	sid := initSession(t, url, `{}`)
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1.evil.example:8080"} {
		r := dialStream(t, addr, sid, "Origin", origin)
		if st := r.read(t); st != 403 {
			t.Errorf("GET of the session stream with Origin %q: %d, want 403", origin, st)
		}
		r.c.Close()
		if st, _, body := rawDo(t, addr, "DELETE", sid, "", "Origin", origin); st != 403 {
			t.Errorf("DELETE of the session with Origin %q: %d %q, want 403", origin, st, body)
		}
		if s.Sessions() != 1 {
			t.Errorf("a DELETE with Origin %q ended the session", origin)
			sid = initSession(t, url, `{}`)
		}
	}
	r := dialStream(t, addr, sid, "Origin", "http://localhost:5173")
	if st := r.read(t); st != 200 {
		t.Errorf("GET with a loopback Origin: %d, want 200", st)
	}
	r.c.Close()
	if st, _, _ := rawDo(t, addr, "DELETE", sid, "", "Origin", "http://localhost:5173"); st != 204 {
		t.Errorf("DELETE with a loopback Origin: %d, want 204", st)
	}
}

// MCP 2025-06-18/11-25 transports, Protocol Version Header: "If the
// server receives a request with an invalid or unsupported
// MCP-Protocol-Version, it MUST respond with 400 Bad Request" (contract
// §2 row 11 for POST). GET and DELETE carry the header too (the client
// MUST send it on all requests): an unserved version is 400 and must
// not open the stream nor end the session. Under 2026-07-28 there are
// no sessions and the package doc says the header is ignored under it:
// a GET then has no session, which is 405 as for any GET without one.
func TestReview2ProtocolVersionOnSessionGETAndDELETE(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	sid := initSession(t, url, `{}`)
	// versions are the MCP-Protocol-Version lines of each request: an
	// unserved value, or two lines (judged together, as on a POST).
	for _, versions := range [][]string{{"1999-01-01"}, {"2025-11-25x"}, {"latest"}, {"2025-11-25", "2025-06-18"}} {
		for _, method := range []string{"GET", "DELETE"} {
			if st := sessionRequest(t, addr, method, sid, versions...); st != 400 {
				t.Errorf("%s with %s %q: %d, want 400", method, HeaderProtocolVersion, versions, st)
			}
		}
		if s.Sessions() != 1 {
			t.Errorf("a DELETE under %q ended the session", versions)
			sid = initSession(t, url, `{}`)
		}
	}
	for _, method := range []string{"GET", "DELETE"} {
		if st := sessionRequest(t, addr, method, sid, "2026-07-28"); st != 405 {
			t.Errorf("%s under 2026-07-28 (no sessions; the header is ignored): %d, want 405", method, st)
		}
	}
	if s.Sessions() != 1 {
		t.Error("a DELETE under 2026-07-28 ended the session")
	}
	// The served versions still reach the session.
	if st := sessionRequest(t, addr, "DELETE", sid, "2025-06-18"); st != 204 {
		t.Errorf("DELETE under 2025-06-18: %d, want 204", st)
	}
}

// sessionRequest sends method (GET or DELETE) for session sid with one
// MCP-Protocol-Version line per version, and returns the answer's status.
func sessionRequest(t *testing.T, addr, method, sid string, versions ...string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n%s: %s\r\n", method, Path, HeaderSession, sid)
	for _, v := range versions {
		fmt.Fprintf(&b, "%s: %s\r\n", HeaderProtocolVersion, v)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A request the server sends on a call's stream belongs to that call's
// session: the client's response must come in that session. A response
// POSTed with another live session's id is a response to a request that
// session was never sent (row 10, as for an id never asked: 400 / -32600,
// or 404), and one POSTed after the session ended is a request on an
// ended session, which MCP says MUST get 404. Neither may reach the tool.
func TestReview2ClientResponseOnOtherOrEndedSession(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{ClientResponseTimeout: 700 * time.Millisecond}, SessionOptions{})
	a := initSession(t, url, `{"elicitation":{}}`)
	b := initSession(t, url, `{"elicitation":{}}`)

	p := startAsk(t, url, a, "elicit")
	answer := `{"jsonrpc":"2.0","id":` + p.id + `,"result":{"action":"accept","content":{"who":"b"}}}`
	if resp, body := do(t, "POST", url, b, answer); resp.StatusCode == 202 {
		t.Errorf("a response to session A's request POSTed in session B: 202, want 400 or 404 (%q)", body)
	}
	// The owner's own answer, in its own session, is what must count.
	own := `{"jsonrpc":"2.0","id":` + p.id + `,"result":{"action":"accept","content":{"who":"a"}}}`
	do(t, "POST", url, a, own)
	if rest := p.rest(); strings.Contains(rest, `\"who\":\"b\"`) {
		t.Errorf("session B's response reached session A's tool: %s", rest)
	}

	p = startAsk(t, url, a, "elicit")
	if resp, _ := do(t, "DELETE", url, a, ""); resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	answer = `{"jsonrpc":"2.0","id":` + p.id + `,"result":{"action":"accept","content":{}}}`
	if resp, body := do(t, "POST", url, a, answer); resp.StatusCode != 404 {
		t.Errorf("a response POSTed on the ended session: %d %q, want 404", resp.StatusCode, body)
	}
	if rest := p.rest(); strings.Contains(rest, "client said") {
		t.Errorf("a response POSTed on an ended session reached the tool: %s", rest)
	}
}

// With WithAuth, a request the server sent on a call's stream was sent to
// the token's holder: only that holder may answer it (MCP security best
// practices bind what a client can act on to its user; the package binds
// sessions and requestState to the holder the same way). A response
// POSTed with another user's valid token must not be accepted nor reach
// the tool, whatever the id.
func TestReview2ClientResponseOfAnotherPrincipal(t *testing.T) {
	res, as := testResource(t)
	s, err := New(Info{Name: "rev2", Version: "1"}, WithAuth(res))
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "elicit", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		r, err := c.Elicit("q", []byte(`{"message":"approve the transfer?","requestedSchema":{"type":"object"}}`))
		if err != nil {
			return err
		}
		c.AddText("client said " + string(r))
		return nil
	})})
	_, url := serveLoopback(t, s, fastserver.Config{ClientResponseTimeout: 2 * time.Second})
	alice := "Bearer " + as.Token(as.Claims(authResourceID, ""))
	mallory := as.Claims(authResourceID, "")
	mallory["sub"], mallory["client_id"] = "mallory", "mallory"
	malloryTok := "Bearer " + as.Token(mallory)

	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"elicit"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse)
	req.Header.Set(HeaderProtocolVersion, "2025-11-25")
	req.Header.Set("Authorization", alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, _ := br.ReadString('\n')
	br.ReadString('\n')
	_, rest, _ := strings.Cut(line, `"id":`)
	id, _, _ := strings.Cut(rest, `,`)
	if resp.StatusCode != 200 || !strings.HasPrefix(id, `"rpcedge-`) {
		t.Fatalf("tools/call: %d, first event %q", resp.StatusCode, line)
	}
	answer := `{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{}}}`
	if r, body := do(t, "POST", url, "", answer, "Authorization", malloryTok); r.StatusCode == 202 {
		t.Errorf("another user's response to alice's elicitation: 202, want 400 (%q)", body)
	}
	do(t, "POST", url, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{"action":"decline"}}`, "Authorization", alice)
	all, _ := io.ReadAll(br)
	if strings.Contains(string(all), `accept`) {
		t.Errorf("another user's answer reached alice's tool: %s", all)
	}
}

// A browser client on an allowed origin (contract §1: loopback origins
// and a configured list) can use sessions only if CORS lets it: the
// preflight of a DELETE or of a GET carrying Mcp-Session-Id must allow
// those methods, and the initialize answer must expose Mcp-Session-Id
// (a browser hides response headers not listed in
// Access-Control-Expose-Headers), and the stream must carry
// Access-Control-Allow-Origin like every POST answer does.
func TestReview2CORSForSessions(t *testing.T) {
	_, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	const origin = "http://localhost:5173"
	for _, m := range []string{"DELETE", "GET"} {
		req, _ := http.NewRequest("OPTIONS", url, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", m)
		req.Header.Set("Access-Control-Request-Headers", "mcp-session-id, mcp-protocol-version")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if allow := resp.Header.Get("Access-Control-Allow-Methods"); resp.StatusCode != 204 || !strings.Contains(allow, m) {
			t.Errorf("preflight of %s from %s: %d, Allow-Methods %q, want it to list %s", m, origin, resp.StatusCode, allow, m)
		}
	}
	resp, _ := do(t, "POST", url, "", initialize, "Origin", origin)
	sid := resp.Header.Get(HeaderSession)
	if sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	if exp := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(strings.ToLower(exp), "mcp-session-id") {
		t.Errorf("initialize from %s: Access-Control-Expose-Headers %q does not expose %s", origin, exp, HeaderSession)
	}
	st, h, _ := rawDo(t, addr, "DELETE", sid, "", "Origin", origin)
	if st != 204 || h.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("DELETE from %s: %d, Access-Control-Allow-Origin %q", origin, st, h.Get("Access-Control-Allow-Origin"))
	}
}

// Last-Event-ID: the server issues no event ids, so no value of it (huge,
// negative, not a number, a session id, another session's anything) may
// replay, select or move anything: a GET with it is a plain GET of its
// own session, and gets that session's notifications only — never those
// queued for another session.
func TestReview2LastEventIDNeverCrossesSessions(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	a := newSeqSession(t, s, addr, 4)
	b := newSeqSession(t, s, addr, 0)
	queued := notifySeq(s, 0, 3) // queued for A, whose stream is not open
	if len(queued) != 3 {
		t.Fatalf("queued %v", queued)
	}
	for _, last := range []string{"99999999999999999999999999", "-1", "0", "abc", "", a, a + ":0", "1/" + a} {
		r := dialStream(t, addr, b, "Last-Event-ID", last)
		if st := r.read(t); st != 200 {
			t.Errorf("GET of B with Last-Event-ID %q: %d, want 200", last, st)
		}
		time.Sleep(30 * time.Millisecond)
		r.c.Close()
		if got := r.got(); len(got) != 0 {
			t.Errorf("B's stream with Last-Event-ID %q carried A's notifications %v", last, got)
		}
	}
	if n := queueLen(s, a); n != 3 {
		t.Errorf("A's queue holds %d after B's GETs, want 3", n)
	}
	r := dialStream(t, addr, a, "Last-Event-ID", "-5")
	if st := r.read(t); st != 200 {
		t.Fatalf("GET of A: %d", st)
	}
	waitFor(t, 5*time.Second, "A's stream gets its own queue", func() bool { return len(r.got()) == 3 })
	r.c.Close()
}

// Mcp-Session-Id given on two lines names no session: POST answers such a
// request 404 (its lines are read as one list, "A, B", which is no id).
// GET and DELETE must read the field the same way, never by its first
// line alone (contract §2, "Header fields ... judged as all its lines
// combined"): a DELETE carrying [A, x] must not end A, and a GET carrying
// [A, x] must not take A's stream over.
func TestReview2RepeatedSessionHeader(t *testing.T) {
	s, _, url := reviewServer(t, fastserver.Config{}, SessionOptions{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	a := initSession(t, url, `{}`)
	send := func(method string) int {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		body := ""
		if method == "POST" {
			body = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		}
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nAccept: %s\r\nContent-Type: application/json\r\n%s: 2025-11-25\r\n%s: %s\r\n%s: other\r\nContent-Length: %d\r\n\r\n%s",
			method, Path, sse, HeaderProtocolVersion, HeaderSession, a, HeaderSession, len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return resp.StatusCode // the body is left: a stream would not end
	}
	if st := send("POST"); st != 404 {
		t.Fatalf("POST with two %s lines: %d, want 404", HeaderSession, st)
	}
	if st := send("GET"); st != 404 {
		t.Errorf("GET with two %s lines: %d, want 404 as for POST", HeaderSession, st)
	}
	if st := send("DELETE"); st != 404 || s.Sessions() != 1 {
		t.Errorf("DELETE with two %s lines: %d, %d sessions left; want 404 and the session alive", HeaderSession, st, s.Sessions())
	}
}

// A requestState is bound to its token's holder by Token.Principal: a
// token naming neither a subject nor a client is its own principal (each
// such token a holder of its own), but the binding hashed the issuer,
// subject and client, the same for every such token of the issuer, so
// one caller's state (a user's consent) served another's (found by
// review on 2026-12-06).
func TestReview2StateOfNamelessToken(t *testing.T) {
	_, ep := inputServer(t)
	res, as := testResource(t)
	nameless := func() *auth.Token {
		c := as.Claims(authResourceID, "")
		delete(c, "sub")
		delete(c, "client_id")
		tok, e := res.Authenticate(context.Background(), []byte("Bearer "+as.Token(c)), nil)
		if e != nil {
			t.Fatal(e.Message)
		}
		return tok
	}
	first, second := nameless(), nameless()
	if first.Principal() == second.Principal() {
		t.Fatalf("two nameless tokens share the principal %q", first.Principal())
	}
	call := func(tok *auth.Token, extra string) answer {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + allCaps + `}`
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two","arguments":{},` + meta + extra + `}}`
		return exchangeAs(t, ep, tok, v26("tools/call", HeaderName, "two"), body)
	}
	r1 := parseIR(t, call(first, ""))
	if r1.ResultType != "input_required" || r1.RequestState == "" {
		t.Fatalf("round 1: %+v", r1)
	}
	next := `,"inputResponses":{"first":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + string(decode.AppendString(nil, r1.RequestState))
	if a := call(second, next); a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "requestState" {
		t.Errorf("one nameless token's state used with another's: %+v, want -32602 on requestState", a)
	}
	if r2 := parseIR(t, call(first, next)); r2.ResultType != "input_required" || r2.InputRequests["second"] == nil {
		t.Errorf("the holder's own next round: %+v", r2)
	}
}
