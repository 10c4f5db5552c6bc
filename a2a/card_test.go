package a2a

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestCardEndpointURL(t *testing.T) {
	tests := []struct {
		public, host, want string
	}{
		{"", "example.com", "http://example.com/a2a"},
		{"", "example.com:8080", "http://example.com:8080/a2a"},
		{"", "127.0.0.1:9000", "http://127.0.0.1:9000/a2a"},
		{"", "[::1]:8080", "http://[::1]:8080/a2a"},
		{"", "[2001:db8::1]", "http://[2001:db8::1]/a2a"},
		{"", "Agent-1.Example_x~y", "http://Agent-1.Example_x~y/a2a"},
		// Missing or not a plain host[:port]: the fallback.
		{"", "", "http://localhost/a2a"},
		{"", `evil"host`, "http://localhost/a2a"},
		{"", "a b", "http://localhost/a2a"},
		{"", "user@host", "http://localhost/a2a"},
		{"", "host/path", "http://localhost/a2a"},
		{"", "host:", "http://localhost/a2a"},
		{"", "host:123456", "http://localhost/a2a"},
		{"", "host:80:80", "http://localhost/a2a"},
		{"", "[::1", "http://localhost/a2a"},
		{"", "[]", "http://localhost/a2a"},
		{"", "[::1]x", "http://localhost/a2a"},
		{"", "[fe80::1%25eth0]", "http://localhost/a2a"},
		{"", "caf\xc3\xa9.example", "http://localhost/a2a"},
		{"", "h\\x", "http://localhost/a2a"},
		// A public URL wins over Host.
		{"https://agents.example.com", "ignored:1", "https://agents.example.com/a2a"},
		{"https://example.com/edge/", "", "https://example.com/edge/a2a"},
		{"HTTP://Example.com:8443", "x", "http://Example.com:8443/a2a"},
		{"https://[2001:db8::2]:443", "x", "https://[2001:db8::2]:443/a2a"},
	}
	for _, tt := range tests {
		s := newTestServer(t, func(c *Config) { c.PublicURL = tt.public })
		if got := s.EndpointURL([]byte(tt.host)); got != tt.want {
			t.Errorf("EndpointURL(public %q, host %q) = %q, want %q", tt.public, tt.host, got, tt.want)
		}
		card := parse(t, string(s.AppendCard(nil, []byte(tt.host))))
		if got := get(card, "url"); got != tt.want {
			t.Errorf("public %q host %q: url = %v, want %q", tt.public, tt.host, got, tt.want)
		}
		if got := get(card, "supportedInterfaces", 0, "url"); got != tt.want {
			t.Errorf("public %q host %q: supportedInterfaces[0].url = %v, want %q", tt.public, tt.host, got, tt.want)
		}
	}
}

func TestCardBothGenerations(t *testing.T) {
	s := newTestServer(t, nil)
	raw := s.AppendCard(nil, []byte("agent.test:8080"))
	card := parse(t, string(raw))
	const u = "http://agent.test:8080/a2a"

	// 1.0
	ifs, _ := get(card, "supportedInterfaces").([]any)
	if len(ifs) != 1 {
		t.Fatalf("supportedInterfaces = %v, want one entry", get(card, "supportedInterfaces"))
	}
	want10 := map[string]any{"url": u, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
	if got := ifs[0].(map[string]any); !equalJSON(got, want10) {
		t.Errorf("supportedInterfaces[0] = %v, want %v", got, want10)
	}
	// 0.3
	for k, want := range map[string]any{
		"url": u, "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
		"supportsAuthenticatedExtendedCard": false,
	} {
		if got := card[k]; got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	// Both.
	for k, want := range map[string]any{"name": "test agent", "description": "echoes", "version": "1.2.3"} {
		if got := card[k]; got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	caps := map[string]any{"streaming": false, "pushNotifications": false, "extendedAgentCard": false}
	if got, _ := card["capabilities"].(map[string]any); !equalJSON(got, caps) {
		t.Errorf("capabilities = %v, want %v", got, caps)
	}
	for _, k := range []string{"defaultInputModes", "defaultOutputModes"} {
		if got := get(card, k, 0); got != "text/plain" {
			t.Errorf("%s = %v, want [text/plain]", k, card[k])
		}
	}
	if got := get(card, "skills", 0, "id"); got != "echo" {
		t.Errorf("skills[0].id = %v", got)
	}
	if got := get(card, "skills", 0, "tags", 0); got != "demo" {
		t.Errorf("skills[0].tags = %v", get(card, "skills", 0, "tags"))
	}

	// The card decodes into AgentCard, and is exactly what encoding/json
	// writes for AgentCard.WithEndpoint.
	var back AgentCard
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.URL != u || back.SupportedInterfaces[0].ProtocolVersion != "1.0" || back.Skills[0].Name != "Echo" {
		t.Errorf("decoded card = %+v", back)
	}
	if want := stdJSON(t, testCard().WithEndpoint(u)); !bytes.Equal(raw, want) {
		t.Errorf("card:\n got %s\nwant %s", raw, want)
	}
}

// TestCardMatchesEncodingJSON pins the hand-written renderer to
// encoding/json (SetEscapeHTML(false)) for every member, optional ones and
// awkward strings included.
func TestCardMatchesEncodingJSON(t *testing.T) {
	odd := "a\"b\\c</script>&\u2028\u2029\x01\xff é"
	cards := []AgentCard{
		testCard(),
		{Name: "n", Version: "v"}, // nil slices everywhere
		{
			Name: odd, Description: odd, Version: odd,
			Provider:         &AgentProvider{Organization: odd, URL: "https://example.com"},
			DocumentationURL: "https://docs.example.com", IconURL: "https://example.com/i.png",
			Capabilities:      AgentCapabilities{ExtendedAgentCard: true},
			DefaultInputModes: []string{"text/plain", odd}, DefaultOutputModes: []string{},
			Skills: []AgentSkill{
				{ID: "a", Name: odd, Description: odd, Tags: nil, Examples: []string{odd}, InputModes: []string{"x/y"}, OutputModes: []string{"z/w"}},
				{ID: "b"},
			},
			SecuritySchemes: map[string]SecurityScheme{
				"oauth": {OAuth2: &OAuth2SecurityScheme{Description: odd, MetadataURL: "https://as.example/.well-known/oauth-authorization-server",
					Flows: OAuthFlows{ClientCredentials: &ClientCredentialsFlow{TokenURL: "https://as.example/token", Scopes: map[string]string{"b": odd, "a": "x"}},
						AuthorizationCode: &AuthorizationCodeFlow{AuthorizationURL: "https://as.example/authorize", TokenURL: "https://as.example/token", PKCERequired: true}}}},
				"bearer": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT", Description: odd}},
				"oidc":   {OpenIDConnect: &OpenIDConnectSecurityScheme{URL: "https://as.example/.well-known/openid-configuration"}},
			},
			Security: []SecurityRequirement{{"oauth": {"a", "b"}, "bearer": nil}, {"oidc": {}}},
			// Endpoint members set here are ignored.
			URL: "ignored", PreferredTransport: "GRPC", ProtocolVersion: "9",
			SupportedInterfaces: []AgentInterface{{URL: "x"}},
		},
	}
	for i, c := range cards {
		s, err := New(Config{Card: c, Agent: echo, PublicURL: "https://x.example"})
		if err != nil {
			t.Fatal(err)
		}
		got := s.AppendCard(nil, nil)
		want := stdJSON(t, c.WithEndpoint("https://x.example/a2a"))
		if !bytes.Equal(got, want) {
			t.Errorf("card %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func stdJSON(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestCardPath(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.Path = "/agents/echo" })
	if got := s.EndpointURL([]byte("h:1")); got != "http://h:1/agents/echo" {
		t.Errorf("EndpointURL = %q", got)
	}
	if got := s.Endpoint().Path; got != "/agents/echo" {
		t.Errorf("Endpoint().Path = %q", got)
	}
}

func TestAppendCardAppends(t *testing.T) {
	s := newTestServer(t, nil)
	dst := []byte("prefix")
	out := s.AppendCard(dst, []byte("h"))
	if !strings.HasPrefix(string(out), "prefix{") {
		t.Fatalf("AppendCard did not append: %q", out)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*Config)
		want string
	}{
		{"no agent", func(c *Config) { c.Agent = nil }, "Agent is nil"},
		{"no name", func(c *Config) { c.Card.Name = "" }, "Name is empty"},
		{"no version", func(c *Config) { c.Card.Version = "" }, "Version is empty"},
		{"stream settings", func(c *Config) { c.StreamQueue = -1 }, "StreamQueue"},
		{"push", func(c *Config) { c.Card.Capabilities.PushNotifications = true }, "PushNotifications"},
		{"empty skill id", func(c *Config) { c.Card.Skills = append(c.Card.Skills, AgentSkill{}) }, "empty ID"},
		{"duplicate skill", func(c *Config) { c.Card.Skills = append(c.Card.Skills, AgentSkill{ID: "echo"}) }, "appears twice"},
		{"bad extended card", func(c *Config) { c.ExtendedCard = &AgentCard{} }, "ExtendedCard"},
		{"negative tasks", func(c *Config) { c.MaxTasks = -1 }, "MaxTasks"},
		{"negative bytes", func(c *Config) { c.MaxTaskBytes = -1 }, "MaxTaskBytes"},
		{"path", func(c *Config) { c.Path = "a2a" }, "Path"},
		{"path chars", func(c *Config) { c.Path = `/a"b` }, "Path"},
		{"public scheme", func(c *Config) { c.PublicURL = "ftp://example.com" }, "scheme"},
		{"public host", func(c *Config) { c.PublicURL = "https://" }, "host"},
		{"public relative", func(c *Config) { c.PublicURL = "example.com" }, "scheme"},
		{"public query", func(c *Config) { c.PublicURL = "https://example.com/?a=1" }, "only"},
		{"public user", func(c *Config) { c.PublicURL = "https://u@example.com" }, "only"},
		{"public bad host", func(c *Config) { c.PublicURL = "https://exa%20mple.com" }, "PublicURL"},
	}
	for _, tt := range tests {
		cfg := Config{Card: testCard(), Agent: echo}
		tt.mut(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New error = %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestServeCard(t *testing.T) {
	s := newTestServer(t, nil)
	for range 3 { // the buffer pool is reused
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/.well-known/agent-card.json")
		ctx.Request.Header.SetHost("[::1]:9999")
		s.ServeCard(&ctx)
		if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.ContentType()) != "application/json" {
			t.Fatalf("status %d, type %q", ctx.Response.StatusCode(), ctx.Response.Header.ContentType())
		}
		body := ctx.Response.Body()
		if want := s.AppendCard(nil, []byte("[::1]:9999")); !bytes.Equal(body, want) {
			t.Fatalf("body %s", body)
		}
		if get(parse(t, string(body)), "url") != "http://[::1]:9999/a2a" {
			t.Fatalf("url in %s", body)
		}
	}
}

// TestCardSecurityShapes reads the security members of a card the way a
// 0.3 reader and a 1.0 (ProtoJSON) reader do.
func TestCardSecurityShapes(t *testing.T) {
	c := testCard()
	c.SecuritySchemes = map[string]SecurityScheme{
		"oauth":  {OAuth2: &OAuth2SecurityScheme{MetadataURL: "https://as.example/m", Flows: OAuthFlows{ClientCredentials: &ClientCredentialsFlow{TokenURL: "https://as.example/token", Scopes: map[string]string{"a2a:invoke": "call"}}}}},
		"bearer": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
	}
	c.Security = []SecurityRequirement{{"oauth": {"a2a:invoke"}}, {"bearer": nil}}
	s, err := New(Config{Card: c, Agent: echo, PublicURL: "https://x.example"})
	if err != nil {
		t.Fatal(err)
	}
	raw := s.AppendCard(nil, nil)
	var v03 struct {
		SecuritySchemes map[string]struct {
			Type, Scheme, BearerFormat, Oauth2MetadataURL string
			Flows                                         struct {
				ClientCredentials struct {
					TokenURL string
					Scopes   map[string]string
				}
			}
		}
		Security []map[string][]string
	}
	var v10 struct {
		SecuritySchemes map[string]struct {
			HTTPAuthSecurityScheme *struct{ Scheme, BearerFormat string }
			OAuth2SecurityScheme   *struct {
				Flows struct {
					ClientCredentials *struct {
						TokenURL string
						Scopes   map[string]string
					}
				}
				Oauth2MetadataURL string
			}
		}
		SecurityRequirements []struct {
			Schemes map[string]struct{ List []string }
		}
	}
	if err := json.Unmarshal(raw, &v03); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v10); err != nil {
		t.Fatal(err)
	}
	o3, b3 := v03.SecuritySchemes["oauth"], v03.SecuritySchemes["bearer"]
	if o3.Type != "oauth2" || o3.Flows.ClientCredentials.TokenURL != "https://as.example/token" || o3.Oauth2MetadataURL != "https://as.example/m" ||
		b3.Type != "http" || b3.Scheme != "Bearer" || len(v03.Security) != 2 || v03.Security[0]["oauth"][0] != "a2a:invoke" || v03.Security[1]["bearer"] == nil {
		t.Errorf("0.3 reading: %+v\n%s", v03, raw)
	}
	o1, b1 := v10.SecuritySchemes["oauth"].OAuth2SecurityScheme, v10.SecuritySchemes["bearer"].HTTPAuthSecurityScheme
	if o1 == nil || o1.Flows.ClientCredentials == nil || o1.Flows.ClientCredentials.Scopes["a2a:invoke"] != "call" || b1 == nil || b1.BearerFormat != "JWT" ||
		len(v10.SecurityRequirements) != 2 || v10.SecurityRequirements[0].Schemes["oauth"].List[0] != "a2a:invoke" {
		t.Errorf("1.0 reading: %+v\n%s", v10, raw)
	}
	// A requirement naming an undeclared scheme, and a scheme with two
	// members, are refused.
	c.Security = []SecurityRequirement{{"nope": nil}}
	if _, err := New(Config{Card: c, Agent: echo}); err == nil || !strings.Contains(err.Error(), "does not declare") {
		t.Errorf("undeclared scheme: %v", err)
	}
	c.Security = nil
	c.SecuritySchemes["x"] = SecurityScheme{HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer"}, OpenIDConnect: &OpenIDConnectSecurityScheme{URL: "u"}}
	if _, err := New(Config{Card: c, Agent: echo}); err == nil || !strings.Contains(err.Error(), "exactly one") {
		t.Errorf("two members: %v", err)
	}
}
