package interop

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2/clientcredentials"
)

var binary string // cmd/rpcedge, built once by TestMain

func TestMain(m *testing.M) {
	// The example provider logs every request through slog's default.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	dir, err := os.MkdirTemp("", "rpcedge-auth-interop")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "rpcedge")
	build := exec.Command("go", "build", "-o", binary, "./cmd/rpcedge")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cmd/rpcedge: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freeAddr returns a loopback address that was free a moment ago: the
// resource identifier must name the port before the server starts.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startRPCEdge runs cmd/rpcedge on addr; t.Cleanup stops it by its pid
// with SIGTERM and checks it exits 0.
func startRPCEdge(t *testing.T, addr string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"-addr", addr, "-grace", "5s"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	found := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if !sent && strings.HasPrefix(sc.Text(), "listening on ") {
				close(found)
				sent = true
			}
			if log.Len() < 64<<10 {
				log.WriteString(sc.Text() + "\n")
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case <-found:
	case err := <-done:
		t.Fatalf("cmd/rpcedge exited before listening: %v\n%s", err, log.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("cmd/rpcedge did not listen within 30 s")
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("cmd/rpcedge exited with %v after SIGTERM\n%s", err, log.String())
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Error("cmd/rpcedge did not exit within 15 s of SIGTERM")
		}
	})
}

// token gets a client-credentials token from p with extra form values.
func token(t *testing.T, p *provider, scopes []string, params url.Values) string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: clientSecret, TokenURL: p.issuer + "/oauth/token", Scopes: scopes, EndpointParams: params}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok, err := cfg.Token(ctx)
	if err != nil {
		t.Fatalf("token from %s: %v", p.issuer, err)
	}
	return tok.AccessToken
}

// rawToken posts a client-credentials request itself: for an expired
// token the provider answers a negative expires_in (as an unsigned
// overflow), which golang.org/x/oauth2 cannot parse.
func rawToken(t *testing.T, p *provider, params url.Values) string {
	t.Helper()
	params.Set("grant_type", "client_credentials")
	req, _ := http.NewRequest("POST", p.issuer+"/oauth/token", strings.NewReader(params.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, clientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %s", resp.StatusCode, b)
	}
	return tok.AccessToken
}

func TestAuthorizationInterop(t *testing.T) {
	addr := freeAddr(t)
	base := "http://" + addr
	resource := base + "/mcp"
	p := startProvider(t, resource)
	foreign := startProvider(t, resource) // another authorization server
	startRPCEdge(t, addr, []string{"RPCEDGE_INTROSPECTION_SECRET=" + introspectorPW},
		"-auth-issuer", p.issuer, "-auth-audience", resource, "-auth-tool-scope", "add=math",
		"-auth-introspection-client", introspectorID)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	calls := 0 // tools/call answered 200 that the test made on purpose

	t.Run("go-sdk", func(t *testing.T) {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: clientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: clientSecret}},
		})
		if err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "rpcedge-auth-interop", Version: "1.0.0"}, nil)
		sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: resource, OAuthHandler: h}, nil)
		if err != nil {
			t.Fatalf("connect through OAuth: %v", err)
		}
		defer sess.Close()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello from the Go SDK"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hello from the Go SDK" {
			t.Fatalf("echo: %v %+v", err, res)
		}
		// add needs "math", which the metadata advertises and the handler
		// asked for.
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "42" {
			t.Fatalf("add: %v %+v", err, res)
		}
		calls += 2
		t.Logf("Go SDK %s: echo and add through client credentials", "v1.8.0")
	})

	t.Run("typescript-sdk", func(t *testing.T) {
		dir := "ts"
		node, err := exec.LookPath("node")
		npm, err2 := exec.LookPath("npm")
		if err != nil || err2 != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("node and npm are needed (CI=true)")
			}
			t.Skip("node or npm not installed")
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
			install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
			install.Dir = dir
			if out, err := install.CombinedOutput(); err != nil {
				t.Fatalf("npm ci: %v\n%s", err, out)
			}
		}
		run := exec.CommandContext(ctx, node, "client.mjs", resource, clientID, clientSecret, "math")
		run.Dir = dir
		out, err := run.CombinedOutput()
		if err != nil {
			t.Fatalf("the TypeScript client: %v\n%s", err, out)
		}
		var got struct {
			Echo, Add string
			Tools     []string
			Token     int
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
			t.Fatalf("output %s: %v", out, err)
		}
		if got.Echo != "hello from the TypeScript SDK" || got.Add != "42" || strings.Join(got.Tools, ",") != "add,echo" || got.Token != 3 {
			t.Fatalf("TypeScript client: %+v", got)
		}
		calls += 2
		t.Logf("TypeScript SDK 1.32.2: echo and add through ClientCredentialsProvider with a JWT")
	})

	t.Run("a2a-card", func(t *testing.T) {
		// The card names the provider's real token endpoint, found by
		// discovery, in both generations' shapes.
		card := get(t, base+"/.well-known/agent-card.json", "")
		for _, want := range []string{
			`"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"` + p.issuer + `/oauth/token"`,
			`"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"` + p.issuer + `/oauth/token"`,
			`"security":[`, `"securityRequirements":[{"schemes":`, `"extendedAgentCard":true`,
		} {
			if !strings.Contains(card, want) {
				t.Errorf("card lacks %s:\n%s", want, card)
			}
		}
	})

	t.Run("attacks", func(t *testing.T) {
		calls += attacks(t, p, foreign, base, resource)
	})

	// No attack reached a tool: the server counted exactly the calls
	// made on purpose.
	metrics := get(t, base+"/metrics", "Bearer "+token(t, p, nil, url.Values{"resource": {resource}}))
	re := regexp.MustCompile(`rpcedge_requests_total\{[^}]*endpoint="/mcp"[^}]*method="tools/call"[^}]*status="200"[^}]*\} (\d+)`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(metrics, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	if n != calls {
		t.Errorf("the server answered %d tools/call with 200; the test made %d on purpose", n, calls)
	}
}

func get(t *testing.T, u, authz string) string {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", authz)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	return string(b)
}

// raw sends one request on a fresh connection and reads the answer.
func raw(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func segment(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// attacks sends every attack of issue #14 as a tools/call echo whose text
// names the attack, and checks each answer; it returns the calls that
// were meant to succeed.
func attacks(t *testing.T, p, foreign *provider, base, resource string) int {
	addr := strings.TrimPrefix(base, "http://")
	valid := token(t, p, nil, url.Values{"resource": {resource}})
	parts := strings.Split(valid, ".")
	var header map[string]any
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	json.Unmarshal(hb, &header)
	var claims map[string]any
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(cb, &claims)

	// The issuer's public key, as an attacker would fetch it.
	var jwks struct {
		Keys []struct{ N, E, Kid string }
	}
	json.Unmarshal([]byte(get(t, p.issuer+"/keys", "")), &jwks)
	if len(jwks.Keys) == 0 {
		t.Fatal("the provider publishes no keys")
	}
	n, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].N)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs256 := func() string {
		in := segment(map[string]any{"alg": "HS256", "typ": "JWT", "kid": header["kid"]}) + "." + parts[1]
		m := hmac.New(sha256.New, pemKey)
		m.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}()
	none := segment(map[string]any{"alg": "none", "typ": "JWT", "kid": header["kid"]}) + "." + parts[1] + "."
	rogue, _ := rsa.GenerateKey(rand.Reader, 2048)
	unknownKey := func(kid any) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(claims))
		tok.Header["kid"] = kid
		s, _ := tok.SignedString(rogue)
		return s
	}

	type attack struct {
		name    string
		authz   []string // Authorization lines
		query   string
		status  int
		errCode string // error= in the challenge ("" for none)
	}
	huge := strings.Repeat("A", 16<<10)
	list := []attack{
		{"no token", nil, "", 401, ""},
		{"another scheme (Basic)", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(clientID+":"+clientSecret))}, "", 401, ""},
		{"malformed: not a token68", []string{"Bearer <script>"}, "", 400, "invalid_request"},
		{"malformed: three dots of garbage", []string{"Bearer abc.def.ghi"}, "", 401, "invalid_token"},
		{"expired (signed by the provider)", []string{"Bearer " + rawToken(t, p, url.Values{"resource": {resource}, "token_format": {"expired"}})}, "", 401, "invalid_token"},
		{"wrong audience (https://evil.example/mcp)", []string{"Bearer " + token(t, p, nil, url.Values{"resource": {"https://evil.example/mcp"}})}, "", 401, "invalid_token"},
		{"token for another resource (/a2a here)", []string{"Bearer " + token(t, p, nil, url.Values{"resource": {base + "/a2a"}})}, "", 401, "invalid_token"},
		{"opaque token for another resource", []string{"Bearer " + token(t, p, nil, url.Values{"resource": {base + "/a2a"}, "token_format": {"opaque"}})}, "", 401, "invalid_token"},
		{"wrong issuer (another real provider)", []string{"Bearer " + token(t, foreign, nil, url.Values{"resource": {resource}})}, "", 401, "invalid_token"},
		{"alg none", []string{"Bearer " + none}, "", 401, "invalid_token"},
		{"HS256 signed with the issuer's public key", []string{"Bearer " + hs256}, "", 401, "invalid_token"},
		{"a key not in the JWKS (unknown kid)", []string{"Bearer " + unknownKey("attacker-key")}, "", 401, "invalid_token"},
		{"a key not in the JWKS (the published kid)", []string{"Bearer " + unknownKey(header["kid"])}, "", 401, "invalid_token"},
		{"huge Authorization header (16 KiB)", []string{"Bearer " + huge}, "", 431, "-"},
		{"token in the query string", nil, "?access_token=" + valid, 400, "invalid_request"},
		{"token in the query and the header", []string{"Bearer " + valid}, "?access_token=" + valid, 400, "invalid_request"},
		{"two Authorization lines (the same valid token)", []string{"Bearer " + valid, "Bearer " + valid}, "", 400, "invalid_request"},
		{"valid JWT (control)", []string{"Bearer " + valid}, "", 200, "-"},
		{"valid opaque token, introspected (control)", []string{"Bearer " + token(t, p, nil, url.Values{"resource": {resource}, "token_format": {"opaque"}})}, "", 200, "-"},
	}
	meta := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	errRe := regexp.MustCompile(`error="([^"]*)"`)
	ok := 0
	var table strings.Builder
	for i, a := range list {
		text := "ATTACK-" + strconv.Itoa(i)
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(100+i) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
		req := "POST /mcp" + a.query + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n"
		for _, l := range a.authz {
			req += "Authorization: " + l + "\r\n"
		}
		req += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		resp, got := raw(t, addr, req)
		www := resp.Header.Get("WWW-Authenticate")
		ec := ""
		if m := errRe.FindStringSubmatch(www); m != nil {
			ec = m[1]
		}
		var ans struct {
			ID    json.RawMessage
			Error *struct{ Code int }
		}
		json.Unmarshal([]byte(got), &ans)
		code := "-"
		if ans.Error != nil {
			code = strconv.Itoa(ans.Error.Code)
		}
		if a.status == 200 {
			if resp.StatusCode != 200 || !strings.Contains(got, text) {
				t.Errorf("%s: %d %s", a.name, resp.StatusCode, got)
			}
			ok++
		} else {
			if resp.StatusCode != a.status {
				t.Errorf("%s: status %d, want %d (%s %s)", a.name, resp.StatusCode, a.status, www, got)
			}
			if strings.Contains(got, text) {
				t.Errorf("%s: the tool ran: %s", a.name, got)
			}
			if a.errCode != "-" {
				if !strings.HasPrefix(www, "Bearer "+meta) || ec != a.errCode {
					t.Errorf("%s: WWW-Authenticate %q, want %s and error=%q", a.name, www, meta, a.errCode)
				}
				if string(ans.ID) != "null" || code != "-31401" {
					t.Errorf("%s: body %s, want id null and code -31401", a.name, got)
				}
			}
		}
		if ec == "" {
			ec = "—"
		}
		fmt.Fprintf(&table, "| %s | %d | %s | %s |\n", a.name, resp.StatusCode, ec, code)
	}
	t.Logf("measured answers:\n| attack | HTTP | error= | JSON-RPC code |\n|---|---|---|---|\n%s", table.String())
	return ok
}
