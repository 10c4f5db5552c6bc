package app

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

const (
	mcpAud = "https://agents.test/mcp"
	a2aAud = "https://agents.test/a2a"
)

// startAuth starts the demo server with authorization on, trusting a test
// issuer; "add" needs the scope "math".
func startAuth(t *testing.T) (base string, as *authtest.Issuer) {
	t.Helper()
	as = authtest.New(t)
	url, stop, err := Start(Options{
		Server: fastserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Auth:   AuthOptions{Issuer: as.URL, Audience: mcpAud, ToolScopes: map[string][]string{"add": {"math"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
	return url, as
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func do(t *testing.T, method, url string, hdr map[string]string, body string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	json.Unmarshal(raw, &a.body)
	return a
}

func errCode(a answer) float64 {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

const echoCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
const addCall = `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`

func TestAuthMCP(t *testing.T) {
	base, as := startAuth(t)
	tok := as.Token(as.Claims(mcpAud, ""))
	math := as.Token(as.Claims(mcpAud, "math"))
	meta := `resource_metadata="https://agents.test/.well-known/oauth-protected-resource/mcp"`

	a := do(t, "POST", base+"/mcp", nil, echoCall)
	if a.status != 401 || a.header.Get("WWW-Authenticate") != "Bearer "+meta || errCode(a) != -31401 ||
		a.body["id"] != nil || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("no token: %d %v %s", a.status, a.header, a.raw)
	}
	if _, ok := a.body["id"]; !ok {
		t.Fatalf("no token: the answer has no id member: %s", a.raw)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + tok}, echoCall)
	if a.status != 200 || !strings.Contains(a.raw, `"text":"hi"`) {
		t.Fatalf("valid token: %d %s", a.status, a.raw)
	}
	// Row 16a: the tool needs a scope the token lacks.
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + tok}, addCall)
	if a.status != 403 || errCode(a) != -31403 || a.body["id"] != "x" ||
		a.header.Get("WWW-Authenticate") != `Bearer `+meta+`, error="insufficient_scope", scope="math", error_description="the access token lacks a required scope"` {
		t.Fatalf("missing tool scope: %d %v %s", a.status, a.header, a.raw)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + math}, addCall)
	if a.status != 200 || !strings.Contains(a.raw, `"text":"3"`) {
		t.Fatalf("with the scope: %d %s", a.status, a.raw)
	}
	// An unknown tool stays -32601 (row 16 before 16a), whatever the scopes.
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + tok}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`)
	if a.status != 200 || errCode(a) != -32601 {
		t.Fatalf("unknown tool: %d %s", a.status, a.raw)
	}
	// tools/list shows every tool, whatever the token may call.
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + tok}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if !strings.Contains(a.raw, `"name":"add"`) || !strings.Contains(a.raw, `"name":"echo"`) {
		t.Fatalf("tools/list: %s", a.raw)
	}
	// Order: row 1 before the token; the token before row 3; with a valid
	// token every later row answers as without authorization.
	a = do(t, "POST", base+"/mcp", map[string]string{"Origin": "https://evil.example"}, echoCall)
	if a.status != 403 || errCode(a) != -32600 {
		t.Fatalf("bad origin, no token: %d %s", a.status, a.raw)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Content-Type": "text/plain"}, echoCall)
	if a.status != 401 {
		t.Fatalf("bad Content-Type, no token: %d %s, want 401", a.status, a.raw)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer " + tok}, echoCall)
	if a.status != 415 {
		t.Fatalf("bad Content-Type, token: %d %s, want 415", a.status, a.raw)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + tok}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if a.status != 202 {
		t.Fatalf("notification with a token: %d", a.status)
	}
	a = do(t, "POST", base+"/mcp", nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if a.status != 401 {
		t.Fatalf("notification without a token: %d, want 401", a.status)
	}
	a = do(t, "POST", base+"/mcp?access_token="+tok, nil, echoCall)
	if a.status != 400 || !strings.Contains(a.header.Get("WWW-Authenticate"), `error="invalid_request"`) {
		t.Fatalf("token in the query: %d %v", a.status, a.header)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + as.Token(as.Claims(a2aAud, ""))}, echoCall)
	if a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), "another resource") {
		t.Fatalf("a token for /a2a at /mcp: %d %v", a.status, a.header)
	}
	a = do(t, "POST", base+"/mcp", map[string]string{"Authorization": "Bearer " + as.Token(as.Claims("https://agents.test", ""))}, echoCall)
	if a.status != 200 {
		t.Fatalf("a token for the origin (the root metadata's resource): %d %s", a.status, a.raw)
	}
}

// rawAnswer sends raw bytes and reads one answer.
func rawAnswer(t *testing.T, base, req string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestAuthRepeatedLines(t *testing.T) {
	base, as := startAuth(t)
	tok := as.Token(as.Claims(mcpAud, ""))
	req := "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer " + tok +
		"\r\nAuthorization: Bearer " + tok + "\r\nContent-Length: " + strconv.Itoa(len(echoCall)) + "\r\n\r\n" + echoCall
	resp, body := rawAnswer(t, base, req)
	if resp.StatusCode != 400 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_request"`) || !strings.Contains(body, `"id":null`) {
		t.Fatalf("two identical Authorization lines: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// A chunked body whose trailer carries the token: trailers never count.
	req = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(echoCall)), 16) + "\r\n" + echoCall + "\r\n0\r\nAuthorization: Bearer " + tok + "\r\n\r\n"
	resp, _ = rawAnswer(t, base, req)
	if resp.StatusCode != 401 {
		t.Fatalf("token in a trailer: %d, want 401", resp.StatusCode)
	}
}

func TestAuthPublicRoutes(t *testing.T) {
	base, as := startAuth(t)
	if a := do(t, "GET", base+"/healthz", nil, ""); a.status != 200 {
		t.Fatalf("/healthz: %d", a.status)
	}
	a := do(t, "GET", base+"/.well-known/oauth-protected-resource/mcp", nil, "")
	if a.status != 200 || a.body["resource"] != mcpAud || a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("metadata: %d %s", a.status, a.raw)
	}
	if as0, _ := a.body["authorization_servers"].([]any); len(as0) != 1 || as0[0] != as.URL {
		t.Fatalf("authorization_servers: %s", a.raw)
	}
	if !strings.Contains(a.raw, `"bearer_methods_supported":["header"]`) || !strings.Contains(a.raw, `"math"`) {
		t.Fatalf("metadata: %s", a.raw)
	}
	a = do(t, "GET", base+"/.well-known/oauth-protected-resource", nil, "")
	if a.status != 200 || a.body["resource"] != "https://agents.test" {
		t.Fatalf("root metadata: %d %s", a.status, a.raw)
	}
	a = do(t, "GET", base+"/.well-known/oauth-protected-resource/a2a", nil, "")
	if a.status != 200 || a.body["resource"] != a2aAud {
		t.Fatalf("a2a metadata: %d %s", a.status, a.raw)
	}
	a = do(t, "GET", base+"/.well-known/agent-card.json", nil, "")
	if a.status != 200 || !strings.Contains(a.raw, `"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"`+as.URL+`/token"`) ||
		!strings.Contains(a.raw, `"type":"oauth2"`) || !strings.Contains(a.raw, `"securityRequirements":[`) || !strings.Contains(a.raw, `"security":[`) {
		t.Fatalf("card: %d %s", a.status, a.raw)
	}
	a = do(t, "GET", base+"/metrics", nil, "")
	if a.status != 401 || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer resource_metadata=") {
		t.Fatalf("/metrics without a token: %d %v", a.status, a.header)
	}
	a = do(t, "GET", base+"/metrics", map[string]string{"Authorization": "Bearer " + as.Token(as.Claims(mcpAud, ""))}, "")
	if a.status != 200 || !strings.Contains(a.raw, "rpcedge_requests_in_flight") {
		t.Fatalf("/metrics with a token: %d", a.status)
	}
}

func TestAuthA2A(t *testing.T) {
	base, as := startAuth(t)
	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
	ext := `{"jsonrpc":"2.0","id":2,"method":"GetExtendedAgentCard"}`
	if a := do(t, "POST", base+"/a2a", nil, send); a.status != 401 || errCode(a) != -31401 ||
		a.header.Get("WWW-Authenticate") != `Bearer resource_metadata="https://agents.test/.well-known/oauth-protected-resource/a2a"` {
		t.Fatalf("no token: %d %v %s", a.status, a.header, a.raw)
	}
	if a := do(t, "POST", base+"/a2a", map[string]string{"Authorization": "Bearer " + as.Token(as.Claims(mcpAud, ""))}, send); a.status != 401 {
		t.Fatalf("a token for /mcp at /a2a: %d", a.status)
	}
	h := map[string]string{"Authorization": "Bearer " + as.Token(as.Claims(a2aAud, ""))}
	if a := do(t, "POST", base+"/a2a", h, send); a.status != 200 || !strings.Contains(a.raw, "hello") {
		t.Fatalf("SendMessage: %d %s", a.status, a.raw)
	}
	a := do(t, "POST", base+"/a2a", h, ext)
	if a.status != 200 || !strings.Contains(a.raw, `"provider":{"organization":"rpcedge demo"`) || !strings.Contains(a.raw, "Authenticated callers") {
		t.Fatalf("GetExtendedAgentCard: %d %s", a.status, a.raw)
	}
	if a := do(t, "POST", base+"/a2a", nil, ext); a.status != 401 {
		t.Fatalf("GetExtendedAgentCard without a token: %d", a.status)
	}
}

// With Expect: 100-continue the authorization row is not decided in the
// expectation (fasthttp's hook cannot carry a WWW-Authenticate field):
// the client gets 100 Continue, sends the body, and gets the 401 with its
// challenge.
func TestAuthExpectContinue(t *testing.T) {
	base, _ := startAuth(t)
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: "+
		strconv.Itoa(len(echoCall))+"\r\n\r\n")
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("want 100 Continue, got %q", line)
	}
	br.ReadString('\n')
	io.WriteString(c, echoCall)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer resource_metadata=") {
		t.Fatalf("after the body: %d %v", resp.StatusCode, resp.Header)
	}
}

// Over stdio there is no OAuth: a tool's scopes are not checked.
func TestAuthStdio(t *testing.T) {
	as := authtest.New(t)
	a, err := New(Options{Stdio: true, Server: fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Auth: AuthOptions{Issuer: as.URL, Audience: mcpAud, ToolScopes: map[string][]string{"add": {"math"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := a.ServeStdio(t.Context(), strings.NewReader(addCall+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"text":"3"`) {
		t.Fatalf("stdio add: %s", out.String())
	}
}

// TestA2ATasksOwnedByTheirClient: with authorization on, a task is its
// creator's (A2A §3.1.4: ListTasks "MUST return only tasks visible to the
// authenticated client"): another client of the same issuer, with a valid
// token of its own, lists none of them, and GetTask, CancelTask,
// SubscribeToTask and a SendMessage continuing the task answer it -32001
// as for an id that does not exist. (Found by review on 2026-12-05: any
// client listed and read every task.)
func TestA2ATasksOwnedByTheirClient(t *testing.T) {
	base, as := startAuth(t)
	token := func(sub string) map[string]string {
		c := as.Claims(a2aAud, "")
		c["sub"], c["client_id"] = sub, "app-"+sub
		return map[string]string{"Authorization": "Bearer " + as.Token(c)}
	}
	alice, bob := token("alice"), token("bob")
	secret := "alice-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	a := do(t, "POST", base+"/a2a", alice, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"`+secret+`"}]}}}`)
	res, _ := a.body["result"].(map[string]any)
	task, _ := res["task"].(map[string]any)
	id, _ := task["id"].(string)
	if a.status != 200 || id == "" {
		t.Fatalf("alice's SendMessage: %d %.300s", a.status, a.raw)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"historyLength":10,"includeArtifacts":true}}`
	if l := do(t, "POST", base+"/a2a", alice, list); !strings.Contains(l.raw, id) || !strings.Contains(l.raw, `"totalSize":1`) {
		t.Errorf("alice's ListTasks: %.300s", l.raw)
	}
	if l := do(t, "POST", base+"/a2a", bob, list); l.status != 200 || strings.Contains(l.raw, id) || strings.Contains(l.raw, secret) || !strings.Contains(l.raw, `"totalSize":0`) {
		t.Errorf("bob's ListTasks: %d %.300s", l.status, l.raw)
	}
	for _, call := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"` + id + `"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"` + id + `"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":"` + id + `"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"SendMessage","params":{"message":{"messageId":"m2","taskId":"` + id + `","role":"ROLE_USER","parts":[{"text":"more"}]}}}`,
	} {
		b := do(t, "POST", base+"/a2a", bob, call)
		if errCode(b) != -32001 || strings.Contains(b.raw, secret) {
			t.Errorf("bob: %.60s…: %d %.200s, want -32001", call, b.status, b.raw)
		}
	}
	if g := do(t, "POST", base+"/a2a", alice, `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"`+id+`","historyLength":5}}`); g.status != 200 || !strings.Contains(g.raw, secret) {
		t.Errorf("alice's GetTask: %d %.300s", g.status, g.raw)
	}
}

// TestExpectAuthorizationFirst: with Expect: 100-continue, a request
// without credentials gets 100 Continue and then the 401, whatever its
// Content-Type, Content-Length or Content-Encoding: rows 3 to 6 come
// after authorization there as without Expect, so a client without a
// token learns nothing from them (the review of 2026-12-05 found 417 for
// each). With a token, rows 3 to 6 refuse before the body: 417.
func TestExpectAuthorizationFirst(t *testing.T) {
	base, as := startAuth(t)
	addr := strings.TrimPrefix(base, "http://")
	token := "Authorization: Bearer " + as.Token(as.Claims(mcpAud, "")) + "\r\n"
	for _, tc := range []struct {
		hdr, auth string
		first     string
	}{
		{"Content-Type: application/json\r\nContent-Length: 2", "", "100"},
		{"Content-Type: text/plain\r\nContent-Length: 2", "", "100"},
		{"Content-Type: application/json\r\nContent-Length: 999999999", "", "100"},
		{"Content-Type: application/json\r\nContent-Encoding: br\r\nContent-Length: 2", "", "100"},
		{"Content-Type: text/plain\r\nContent-Length: 2", token, "417"},
		{"Content-Type: application/json\r\nContent-Length: 999999999", token, "417"},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"+tc.auth+tc.hdr+"\r\n\r\n")
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		if !strings.HasPrefix(line, "HTTP/1.1 "+tc.first+" ") {
			t.Errorf("%q, token %v: %q, want %s", tc.hdr, tc.auth != "", line, tc.first)
		} else if tc.first == "100" {
			for l, _ := br.ReadString('\n'); l != "\r\n" && l != ""; l, _ = br.ReadString('\n') {
			}
			io.WriteString(c, "{}")
			if final, _ := br.ReadString('\n'); !strings.HasPrefix(final, "HTTP/1.1 401 ") {
				t.Errorf("%q without a token, after the body: %q, want 401", tc.hdr, final)
			}
		}
		c.Close()
	}
}

// TestSessionsOwnedByTheirClient: with authorization and sessions on, a
// session belongs to the client whose token initialized it (MCP's
// security best practices: bind session ids to the user): another client
// of the same issuer, with a valid token and the session's id, finds no
// session for its POST, its GET stream or its DELETE (404), and the
// session lives on for its owner. (Found by review on 2026-12-05: any
// valid token could use or end any session whose id it held.)
func TestSessionsOwnedByTheirClient(t *testing.T) {
	as := authtest.New(t)
	url, stop, err := Start(Options{
		Server:   fastserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Auth:     AuthOptions{Issuer: as.URL, Audience: mcpAud},
		Sessions: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	token := func(sub string) string {
		c := as.Claims(mcpAud, "")
		c["sub"] = sub
		return "Bearer " + as.Token(c)
	}
	alice, bob := token("alice"), token("bob")
	hdr := func(tok, sid string) map[string]string {
		return map[string]string{"Authorization": tok, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18", "Accept": "application/json, text/event-stream"}
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	a := do(t, "POST", url+"/mcp", map[string]string{"Authorization": alice, "Accept": "application/json, text/event-stream"}, init)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || sid == "" {
		t.Fatalf("alice's initialize: %d, session %q", a.status, sid)
	}
	setLevel := `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`
	if b := do(t, "POST", url+"/mcp", hdr(bob, sid), setLevel); b.status != 404 {
		t.Errorf("bob's POST in alice's session: %d %.200s, want 404", b.status, b.raw)
	}
	if b := do(t, "DELETE", url+"/mcp", hdr(bob, sid), ""); b.status != 404 {
		t.Errorf("bob's DELETE of alice's session: %d, want 404", b.status)
	}
	if b := do(t, "GET", url+"/mcp", hdr(bob, sid), ""); b.status != 404 {
		t.Errorf("bob's GET stream of alice's session: %d, want 404", b.status)
	}
	if a := do(t, "POST", url+"/mcp", hdr(alice, sid), setLevel); a.status != 200 {
		t.Errorf("alice's POST in her session: %d %.200s", a.status, a.raw)
	}
	if a := do(t, "DELETE", url+"/mcp", hdr(alice, sid), ""); a.status != 204 {
		t.Errorf("alice's DELETE of her session: %d, want 204", a.status)
	}
}
