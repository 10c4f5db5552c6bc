package app

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

func TestParseFlags(t *testing.T) {
	o, err := ParseFlags([]string{"-addr", "127.0.0.1:0", "-max-body", "2MiB", "-max-depth", "64",
		"-rate", "5", "-burst", "10", "-trusted-proxies", "10.0.0.0/8, 127.0.0.1", "-allow-origin", "https://a.example,https://b.example",
		"-handler-timeout", "3s", "-grace", "2s", "-max-conns", "7", "-public-url", "https://agents.example"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Server
	if c.MaxBodyBytes != 2<<20 || c.MaxDepth != 64 || c.RateLimit != 5 || c.RateBurst != 10 || len(c.TrustedProxies) != 2 ||
		len(c.AllowedOrigins) != 2 || c.HandlerTimeout != 3*time.Second || c.ShutdownGrace != 2*time.Second || c.MaxConns != 7 ||
		o.PublicURL != "https://agents.example" || o.Stdio {
		t.Errorf("parsed %+v", c)
	}
	if c.TrustedProxies[1].Bits() != 32 {
		t.Errorf("a bare IP is a /32: %v", c.TrustedProxies[1])
	}
	o, err = ParseFlags([]string{"-auth-issuer", "https://as.example.com", "-auth-audience", "https://h/mcp", "-auth-scopes", "a, b",
		"-auth-tool-scope", "add=x+y", "-auth-a2a-scopes", "c", "-metrics-public", "-auth-introspection-client", "rs"}, io.Discard)
	if au := o.Auth; err != nil || au.Issuer != "https://as.example.com" || au.Audience != "https://h/mcp" || strings.Join(au.Scopes, " ") != "a b" ||
		strings.Join(au.ToolScopes["add"], " ") != "x y" || strings.Join(au.A2AScopes, " ") != "c" || !au.MetricsPublic || au.IntrospectionClientID != "rs" {
		t.Errorf("auth flags: %+v %v", o.Auth, err)
	}
	o, err = ParseFlags(nil, io.Discard)
	if err != nil || o.Server.Addr != "127.0.0.1:8080" || o.Server.MaxDepth != 1000 || o.Demo != "default" || o.Sessions {
		t.Errorf("defaults: %+v %v", o, err)
	}
	o, err = ParseFlags([]string{"-demo", "conformance", "-sessions"}, io.Discard)
	if err != nil || o.Demo != "conformance" || !o.Sessions {
		t.Errorf("-demo conformance -sessions: %+v %v", o, err)
	}
	for _, demo := range Demos {
		if _, err := New(Options{Demo: demo, Sessions: true}); err != nil {
			t.Errorf("demo %s: %v", demo, err)
		}
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-max-body", "lots"}, `"lots" is not a positive size`},
		{[]string{"-max-body", "0"}, "not a positive size"},
		{[]string{"-max-depth", "0"}, "-max-depth must be positive"},
		{[]string{"-burst", "3"}, "-burst needs -rate"},
		{[]string{"-rate", "-1"}, "must not be negative"},
		{[]string{"-trusted-proxies", "nope"}, "neither an IP nor a CIDR"},
		{[]string{"-grace", "0s"}, "-grace must be positive"},
		{[]string{"-max-conns", "0"}, "-max-conns must be positive"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-demo", "everything"}, `-demo "everything": want one of default, conformance`},
		{[]string{"-no-such-flag"}, "flag provided but not defined"},
		{[]string{"-auth-audience", "https://h/mcp"}, "need -auth-issuer"},
		{[]string{"-metrics-public"}, "need -auth-issuer"},
		{[]string{"-auth-tool-scope", "echo"}, "want TOOL=SCOPE"},
		{[]string{"-auth-issuer", "https://as.example.com"}, "-auth-audience (or -public-url) is required"},
		{[]string{"-auth-issuer", "http://as.example.com", "-auth-audience", "https://h/mcp"}, "want an https URL"},
		{[]string{"-auth-issuer", "https://as.example.com", "-auth-audience", "https://h/mcp", "-auth-tool-scope", "nope=x"}, `names tool "nope"`},
	} {
		var stderr bytes.Buffer
		if code := Main(tc.args, strings.NewReader(""), io.Discard, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%v: stderr %q, want %q", tc.args, stderr.String(), tc.msg)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "512K": 512 << 10, "1KiB": 1024, "3M": 3 << 20, "2MiB": 2 << 20, "1G": 1 << 30, "10B": 10} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5M", "M", "99999999999999G"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// TestStart serves the demo over loopback: both endpoints, the card,
// health; stop shuts it down cleanly.
func TestStart(t *testing.T) {
	url, stop, err := Start(Options{Server: fastserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string, hdr ...string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	st, out := post("/mcp", `{"jsonrpc":"2.0","id":"q1","method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo"}}}`)
	if st != 200 || out["id"] != "q1" || !strings.Contains(toJSON(out["result"]), `"text":"héllo"`) {
		t.Errorf("echo: %d %v", st, out)
	}
	st, out = post("/a2a", `{"jsonrpc":"2.0","id":5,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"ping"}]}}}`, "A2A-Version", "1.0")
	if st != 200 || !strings.Contains(toJSON(out["result"]), "TASK_STATE_COMPLETED") || !strings.Contains(toJSON(out["result"]), "ping") {
		t.Errorf("SendMessage: %d %v", st, out)
	}
	resp, err := http.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if card["url"] != url+"/a2a" {
		t.Errorf("card url %v, want %s/a2a", card["url"], url)
	}
	resp, err = http.Get(url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v %v", resp, err)
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// TestMainStdio runs the command's -stdio mode: answers one per line, in
// order; notifications unanswered; bad and over-long lines answered and
// skipped.
func TestMainStdio(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call"`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 3000) + `"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"two"}}}`,
	}, "\n") + "\n"
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-stdio", "-max-body", "2K"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	want := []string{`"id":1,"result"`, `"id":2,"result"`, `"id":null,"error":{"code":-32700`, `"id":null,"error":{"code":-32600`, `"id":5,"result"`}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), stdout.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %s, want %s", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[1], `"text":"one"`) || !strings.Contains(lines[4], `"text":"two"`) {
		t.Errorf("echo texts: %s / %s", lines[1], lines[4])
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPublicURL: -public-url names the card's endpoint, and one that is
// not an absolute http(s) base URL is refused at start.
func TestPublicURL(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, bad := range []string{"ftp://agents.example", "agents.example", "https://agents.example/?q=1"} {
		if _, err := New(Options{Server: fastserver.Config{Addr: "127.0.0.1:0", Logger: quiet}, PublicURL: bad}); err == nil || !strings.Contains(err.Error(), "PublicURL") {
			t.Errorf("PublicURL %q: %v, want a refusal naming PublicURL", bad, err)
		}
	}
	url, stop, err := Start(Options{Server: fastserver.Config{Addr: "127.0.0.1:0", Logger: quiet}, PublicURL: "https://agents.example/base/"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"https://agents.example/base/a2a"`) {
		t.Errorf("card without the public URL: %s", b)
	}
}
