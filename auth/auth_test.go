package auth_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

const resourceID = "https://mcp.example.com/mcp"

func newResource(t *testing.T, as *authtest.Issuer, rc auth.ResourceConfig, ic auth.IssuerConfig) *auth.Resource {
	t.Helper()
	ic.URL = as.URL
	if ic.UnknownKeyInterval == 0 {
		ic.UnknownKeyInterval = time.Hour
	}
	iss, err := auth.NewIssuer(ic)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Resource == "" {
		rc.Resource = resourceID
	}
	res, err := auth.NewResource(iss, rc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func bearer(tok string) []byte { return []byte("Bearer " + tok) }

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestAuthenticate(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	good := as.Token(as.Claims(resourceID, "a b"))

	expired := as.Claims(resourceID, "")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	expired["iat"] = time.Now().Add(-2 * time.Hour).Unix()
	expired["nbf"] = time.Now().Add(-2 * time.Hour).Unix()
	future := as.Claims(resourceID, "")
	future["nbf"] = time.Now().Add(time.Hour).Unix()
	noExp := as.Claims(resourceID, "")
	delete(noExp, "exp")
	wrongIss := as.Claims(resourceID, "")
	wrongIss["iss"] = as.URL + "/other"
	hostIss := as.Claims(resourceID, "")
	hostIss["iss"] = as.URL + "/"

	// alg none, and HS256 keyed with the issuer's public key (PEM and DER).
	claims := as.Claims(resourceID, "")
	none := b64(map[string]string{"alg": "none", "typ": "JWT", "kid": as.Current().ID}) + "." + b64(claims) + "."
	der, _ := x509.MarshalPKIXPublicKey(&as.Current().Key.PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs := func(key []byte) string {
		in := b64(map[string]string{"alg": "HS256", "typ": "JWT", "kid": as.Current().ID}) + "." + b64(claims)
		m := hmac.New(sha256.New, key)
		m.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	idTokenTyp := jwt.NewWithClaims(jwt.SigningMethodRS256, as.Claims(resourceID, ""))
	idTokenTyp.Header["kid"] = as.Current().ID
	idTokenTyp.Header["typ"] = "logout+jwt"
	logout, _ := idTokenTyp.SignedString(as.Current().Key)

	cases := []struct {
		name   string
		authz  []byte
		uri    string
		status int
		www    string // a substring of the challenge
	}{
		{"absent", nil, "/mcp", 401, `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`},
		{"empty", []byte{}, "/mcp", 401, `resource_metadata=`},
		{"basic", []byte("Basic dXNlcjpwYXNz"), "/mcp", 401, `resource_metadata=`},
		{"bearer alone", []byte("Bearer"), "/mcp", 400, `error="invalid_request"`},
		{"bearer space", []byte("Bearer "), "/mcp", 400, `error="invalid_request"`},
		{"two lines", []byte("Bearer " + good + ", Bearer " + good), "/mcp", 400, `error="invalid_request"`},
		{"bearer comma", []byte("Bearer," + good), "/mcp", 400, `error="invalid_request"`},
		{"token with space", []byte("Bearer ab cd"), "/mcp", 400, `error="invalid_request"`},
		{"query token", bearer(good), "/mcp?access_token=" + good, 400, `error="invalid_request"`},
		{"query token only", nil, "/mcp?x=1&ACCESS_TOKEN=abc", 400, `error="invalid_request"`},
		{"query token escaped", nil, "/mcp?%61ccess_token=abc", 400, `error="invalid_request"`},
		{"query token escaped underscore", nil, "/mcp?access%5Ftoken=abc", 400, `error="invalid_request"`},
		{"query token all escaped", nil, "/mcp?a=1&%61%63%63%65%73%73%5f%74%6F%6b%65%6e", 400, `error="invalid_request"`},
		{"query other name", nil, "/mcp?access_token2=abc&%zzaccess_token=x&access+token=y", 401, `resource_metadata=`},
		{"garbage", bearer("abc.def.ghi"), "/mcp", 401, `error="invalid_token"`},
		{"not a jwt", bearer("opaque-token"), "/mcp", 401, `error="invalid_token"`},
		{"expired", bearer(as.Token(expired)), "/mcp", 401, `error="invalid_token", error_description="the access token expired`},
		{"not yet valid", bearer(as.Token(future)), "/mcp", 401, `expired or is not valid yet`},
		{"no exp", bearer(as.Token(noExp)), "/mcp", 401, `error="invalid_token"`},
		{"wrong audience", bearer(as.Token(as.Claims("https://evil.example/mcp", ""))), "/mcp", 401, `for another resource`},
		{"other resource here", bearer(as.Token(as.Claims("https://mcp.example.com/a2a", ""))), "/mcp", 401, `for another resource`},
		{"wrong issuer", bearer(as.Token(wrongIss)), "/mcp", 401, `from another issuer`},
		{"issuer trailing slash", bearer(as.Token(hostIss)), "/mcp", 401, `from another issuer`},
		{"alg none", bearer(none), "/mcp", 401, `error="invalid_token"`},
		{"HS256 with PEM public key", bearer(hs(pemKey)), "/mcp", 401, `error="invalid_token"`},
		{"HS256 with DER public key", bearer(hs(der)), "/mcp", 401, `error="invalid_token"`},
		{"unknown key", bearer(authtest.Sign(as.Unpublished(), claims)), "/mcp", 401, `error="invalid_token"`},
		{"published kid, other key", bearer(authtest.Sign(&authtest.Key{ID: as.Current().ID, Key: as.Unpublished().Key}, claims)), "/mcp", 401, `error="invalid_token"`},
		{"logout typ", bearer(logout), "/mcp", 401, `error="invalid_token"`},
		{"too long", bearer(strings.Repeat("a", 9000)), "/mcp", 401, `too long`},
		{"valid", bearer(good), "/mcp", 0, ""},
		{"valid lower-case scheme", []byte("bearer " + good), "/mcp", 0, ""},
		{"valid, audience with slash", bearer(as.Token(as.Claims(resourceID+"/", ""))), "/mcp", 0, ""},
		{"valid, audience list", bearer(as.Token(func() jwt.MapClaims { c := as.Claims("x", ""); c["aud"] = []string{"other", resourceID}; return c }())), "/mcp", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, e := res.Authenticate(context.Background(), c.authz, []byte(c.uri))
			if c.status == 0 {
				if e != nil {
					t.Fatalf("refused: %d %s %v", e.Status, e.Message, e.Header)
				}
				if tok == nil || tok.Subject != "client-1" {
					t.Fatalf("token %+v", tok)
				}
				return
			}
			if e == nil {
				t.Fatalf("let through, want %d", c.status)
			}
			if e.Status != c.status {
				t.Errorf("status %d, want %d (%s)", e.Status, c.status, e.Message)
			}
			if len(e.Header) != 1 || e.Header[0].Name != "WWW-Authenticate" || !strings.Contains(e.Header[0].Value, c.www) {
				t.Errorf("header %v, want WWW-Authenticate with %s", e.Header, c.www)
			}
			if c.status == 401 && c.authz == nil && strings.Contains(e.Header[0].Value, "error=") {
				t.Errorf("a request without credentials got an error code (RFC 6750 §3.1): %s", e.Header[0].Value)
			}
			wantCode := auth.CodeUnauthorized
			if e.Code != wantCode {
				t.Errorf("code %d, want %d", e.Code, wantCode)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{Scopes: []string{"mcp"}}, auth.IssuerConfig{})
	write, err := res.Require("write", "mcp")
	if err != nil {
		t.Fatal(err)
	}
	_, e := res.Authenticate(context.Background(), nil, nil)
	if e == nil || !strings.Contains(e.Header[0].Value, `scope="mcp"`) {
		t.Fatalf("bare challenge without scope=: %v", e)
	}
	// A token without the endpoint's scope: 403 at the row.
	_, e = res.Authenticate(context.Background(), bearer(as.Token(as.Claims(resourceID, "other"))), nil)
	if e == nil || e.Status != 403 || e.Code != auth.CodeForbidden || !strings.Contains(e.Header[0].Value, `error="insufficient_scope", scope="mcp"`) {
		t.Fatalf("want 403 insufficient_scope scope=mcp, got %+v", e)
	}
	tok, e := res.Authenticate(context.Background(), bearer(as.Token(as.Claims(resourceID, "mcp unknown"))), nil)
	if e != nil {
		t.Fatal(e.Message)
	}
	if tok.Scopes.Has(write) || !tok.HasScope("unknown") {
		t.Fatalf("scopes %b names %v", tok.Scopes, tok.ScopeNames)
	}
	f := res.Forbidden(write)
	if !strings.Contains(f.Header[0].Value, `scope="mcp write"`) {
		t.Fatalf("Forbidden names %s, want every scope needed", f.Header[0].Value)
	}
	// scp as an array (Entra ID, Okta).
	c := as.Claims(resourceID, "")
	c["scp"] = []string{"mcp", "write"}
	tok, e = res.Authenticate(context.Background(), bearer(as.Token(c)), nil)
	if e != nil || !tok.Scopes.Has(write) {
		t.Fatalf("scp array: %v %v", e, tok)
	}
	if _, err := res.Require("late"); err == nil {
		t.Fatal("Require after verification succeeded")
	}
}

func TestCacheAndRotation(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{UnknownKeyInterval: time.Millisecond})
	ctx := context.Background()
	old := as.Token(as.Claims(resourceID, ""))
	if _, e := res.Authenticate(ctx, bearer(old), nil); e != nil {
		t.Fatal(e.Message)
	}
	for range 10 {
		if _, e := res.Authenticate(ctx, bearer(old), nil); e != nil {
			t.Fatal(e.Message)
		}
	}
	if n, verified := res.CacheStats(); n != 1 || verified != 1 {
		t.Fatalf("cache: %d entries, %d verifications for 11 requests; want 1, 1", n, verified)
	}
	fetches := as.JWKSFetches.Load()
	// Rotation: a token under a new kid is verified after one refresh.
	oldKID := as.Current().ID
	as.Rotate()
	time.Sleep(2 * time.Millisecond)
	if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil); e != nil {
		t.Fatalf("token under the new key: %s", e.Message)
	}
	if got := as.JWKSFetches.Load(); got != fetches+1 {
		t.Fatalf("%d JWKS fetches for the rotation, want 1", got-fetches)
	}
	// Dropping the old key revokes the tokens it signed, cached or not.
	as.Drop(oldKID)
	time.Sleep(2 * time.Millisecond)
	as.Rotate()
	time.Sleep(2 * time.Millisecond)
	if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil); e != nil {
		t.Fatalf("token under the third key: %s", e.Message)
	}
	if _, e := res.Authenticate(ctx, bearer(old), nil); e == nil || e.Status != 401 {
		t.Fatalf("a cached token of a dropped key was let through")
	}
}

func TestUnknownKeyRateLimit(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{UnknownKeyInterval: time.Hour})
	ctx := context.Background()
	if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil); e != nil {
		t.Fatal(e.Message)
	}
	before := as.JWKSFetches.Load()
	start := time.Now()
	for i := range 200 {
		c := as.Claims(resourceID, "")
		c["jti"] = strconv.Itoa(i)
		if _, e := res.Authenticate(ctx, bearer(authtest.Sign(as.Unpublished(), c)), nil); e == nil || e.Status != 401 {
			t.Fatal("unknown key let through")
		}
	}
	if n := as.JWKSFetches.Load() - before; n > 1 {
		t.Fatalf("200 unknown kids caused %d JWKS fetches, want at most 1 per interval", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("200 unknown kids took %v: requests waited on the limiter", d)
	}
}

func TestIntrospection(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{
		Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "rs-secret", TTL: time.Hour},
	})
	exp := time.Now().Add(time.Minute).Unix()
	as.Opaque("good-opaque", map[string]any{"active": true, "aud": resourceID, "iss": as.URL, "exp": exp, "scope": "a", "sub": "u", "client_id": "c"})
	as.Opaque("other-aud", map[string]any{"active": true, "aud": "https://other/mcp", "exp": exp})
	as.Opaque("no-aud", map[string]any{"active": true, "exp": exp})
	as.Opaque("inactive", map[string]any{"active": false})
	ctx := context.Background()
	tok, e := res.Authenticate(ctx, bearer("good-opaque"), nil)
	if e != nil || !tok.Introspected || !tok.HasScope("a") || tok.ClientID != "c" {
		t.Fatalf("good opaque: %v %+v", e, tok)
	}
	n := as.Introspections.Load()
	res.Authenticate(ctx, bearer("good-opaque"), nil)
	if as.Introspections.Load() != n {
		t.Fatal("a cached introspection was repeated")
	}
	for _, bad := range []string{"other-aud", "no-aud", "inactive", "unknown"} {
		if _, e := res.Authenticate(ctx, bearer(bad), nil); e == nil || e.Status != 401 {
			t.Errorf("%s: let through", bad)
		}
	}
	// Malformed answers are the server failing, never a token let through
	// (found by review on 2026-12-05: encoding/json stops after the first
	// value and lets the last of two "active" members win).
	good := fmt.Sprintf(`{"active":true,"aud":%q,"iss":%q,"exp":%d}`, resourceID, as.URL, exp)
	malformed := map[string]string{
		"trailing value":   good + ` {"active":false}`,
		"trailing bytes":   good + `x`,
		"two active":       `{"active":false,` + good[1:],
		"two aud":          good[:len(good)-1] + `,"aud":"https://other/mcp"}`,
		"escaped twice":    `{"\u0061ctive":false,` + good[1:],
		"two active cased": `{"active":false,"aud":"` + resourceID + `","iss":"` + as.URL + `","exp":` + fmt.Sprint(exp) + `,"Active":true}`,
		"two aud cased":    good[:len(good)-1] + `,"AUD":"https://other/mcp"}`,
		"kelvin sign":      good[:len(good)-1] + `,"\u212Aid":"x","kid":"y"}`,
		"nested twice":     good[:len(good)-1] + `,"ext":{"a":1,"A":2}}`,
		"invalid UTF-8":    good[:len(good)-1] + ",\"sub\":\"\xff\"}",
		"lone surrogate":   good[:len(good)-1] + `,"sub":"\ud800"}`,
		"not an object":    `[` + good + `]`,
		"nested too deep":  good[:len(good)-1] + `,"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	}
	for name, body := range malformed {
		tok := "raw-" + strings.ReplaceAll(name, " ", "-")
		as.OpaqueRaw(tok, body)
		if tk, e := res.Authenticate(ctx, bearer(tok), nil); e == nil || e.Status == 0 {
			t.Errorf("%s: let through as %+v", name, tk)
		} else if e.Status != 503 {
			t.Errorf("%s: status %d, want 503 (the server's answer is broken)", name, e.Status)
		}
	}
	as.OpaqueRaw("raw-fine", " \n"+good+"\r\n")
	if _, e := res.Authenticate(ctx, bearer("raw-fine"), nil); e != nil {
		t.Errorf("a well-formed raw answer with whitespace around it: %s", e.Message)
	}
}

func TestKeysUnavailable(t *testing.T) {
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: "http://127.0.0.1:1", FetchTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	_, e := res.Authenticate(context.Background(), bearer("a.b.c"), nil)
	if e == nil || e.Status != 503 {
		t.Fatalf("want 503 while the issuer is unreachable, got %+v", e)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []auth.IssuerConfig{
		{},
		{URL: "http://as.example.com"}, // http beyond loopback
		{URL: "https://as.example.com?x=1"},
		{URL: "https://as.example.com", Algorithms: []string{"HS256"}},
		{URL: "https://as.example.com", Algorithms: []string{"none"}},
		{URL: "https://as.example.com", Leeway: time.Hour},
		{URL: "https://as.example.com", Introspection: &auth.IntrospectionConfig{}},
	} {
		if _, err := auth.NewIssuer(c); err == nil {
			t.Errorf("NewIssuer(%+v) succeeded", c)
		}
	}
	iss, _ := auth.NewIssuer(auth.IssuerConfig{URL: "https://as.example.com"})
	for _, c := range []auth.ResourceConfig{
		{},
		{Resource: "mcp"},
		{Resource: "https://h/mcp#x"},
		{Resource: "https://h/mcp?x"},
		{Resource: "https://h/mcp", Scopes: []string{"a b"}},
		{Resource: "https://h/mcp", Scopes: []string{`a"`}},
	} {
		if _, err := auth.NewResource(iss, c); err == nil {
			t.Errorf("NewResource(%+v) succeeded", c)
		}
	}
}

// TestConcurrentFirstUse lets many requests be a Resource's first at
// once: none may see a refusal before it is rendered (a nil refusal
// would let it through), under -race too.
func TestConcurrentFirstUse(t *testing.T) {
	as := authtest.New(t)
	for range 20 {
		res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tok, e := res.Authenticate(context.Background(), nil, nil)
				if e == nil || tok != nil || e.Status != 401 {
					t.Errorf("first use: %v %v", tok, e)
				}
			}()
		}
		wg.Wait()
	}
}

// signWithHeader signs claims with k (RS256), its kid in the header, then
// the header fields of hdr set (nil deletes one).
func signWithHeader(k *authtest.Key, claims jwt.MapClaims, hdr map[string]any) string {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = k.ID
	for n, v := range hdr {
		if v == nil {
			delete(t.Header, n)
		} else {
			t.Header[n] = v
		}
	}
	s, err := t.SignedString(k.Key)
	if err != nil {
		panic(err)
	}
	return s
}

// TestRevokeCachedWithoutKID: a token without kid, verified while the
// JWKS holds more than one key that fits (a rotation), is cached with the
// key that verified it, so that dropping that key revokes it like a token
// with a kid. (Found by review on 2026-12-05: it was cached with no key
// and stayed valid until its exp.)
func TestRevokeCachedWithoutKID(t *testing.T) {
	as := authtest.New(t)
	k0 := as.Current()
	k1 := as.Rotate() // the JWKS holds k0 and k1
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{UnknownKeyInterval: time.Millisecond})
	ctx := context.Background()
	noKID := func(k *authtest.Key, jti string) string {
		c := as.Claims(resourceID, "")
		c["jti"] = jti
		return signWithHeader(k, c, map[string]any{"kid": nil})
	}
	old, kept := noKID(k0, "a"), noKID(k1, "b")
	for _, tok := range []string{old, kept} {
		if _, e := res.Authenticate(ctx, bearer(tok), nil); e != nil {
			t.Fatalf("a token without kid: %s", e.Message)
		}
	}
	as.Drop(k0.ID)
	time.Sleep(2 * time.Millisecond)
	as.Rotate() // a token under a new kid makes the resource fetch the JWKS
	time.Sleep(2 * time.Millisecond)
	if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil); e != nil {
		t.Fatalf("token under the new key: %s", e.Message)
	}
	if _, e := res.Authenticate(ctx, bearer(old), nil); e == nil || e.Status != 401 {
		t.Errorf("a cached token without kid, of a dropped key, was let through")
	}
	if _, e := res.Authenticate(ctx, bearer(kept), nil); e != nil {
		t.Errorf("a cached token without kid, of a key still published, was refused: %s", e.Message)
	}
}

// TestJWSHeaderChecks: a token whose header lists critical extensions
// (RFC 7515 §4.1.11: none is understood here), or whose typ or kid is
// not a string, is refused, however well it is signed.
func TestJWSHeaderChecks(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	ctx := context.Background()
	for name, hdr := range map[string]map[string]any{
		"crit, an unknown extension": {"crit": []string{"urn:x:unknown"}, "urn:x:unknown": true},
		"crit, b64 false":            {"crit": []string{"b64"}, "b64": false},
		"crit, empty":                {"crit": []string{}},
		"typ a number":               {"typ": 123},
		"typ null":                   {"typ": json.RawMessage("null")},
		"kid a number":               {"kid": 5},
	} {
		tok := signWithHeader(as.Current(), as.Claims(resourceID, ""), hdr)
		if _, e := res.Authenticate(ctx, bearer(tok), nil); e == nil || e.Status != 401 {
			t.Errorf("%s: accepted", name)
		}
	}
	// The same token without those fields is fine.
	if _, e := res.Authenticate(ctx, bearer(signWithHeader(as.Current(), as.Claims(resourceID, ""), nil)), nil); e != nil {
		t.Fatalf("a plain token: %s", e.Message)
	}
}

// TestPrincipal: tokens of one subject and issuer name one principal,
// whatever else differs; another subject, another issuer or a token
// without subject (its client id) name others.
func TestPrincipal(t *testing.T) {
	a := auth.Token{Issuer: "https://as.example", Subject: "alice", ClientID: "app1", ID: "j1"}
	for _, tc := range []struct {
		tok  auth.Token
		same bool
	}{
		{auth.Token{Issuer: "https://as.example", Subject: "alice", ClientID: "app2", ID: "j2"}, true},
		{auth.Token{Issuer: "https://as.example", Subject: "bob", ClientID: "app1"}, false},
		{auth.Token{Issuer: "https://other.example", Subject: "alice", ClientID: "app1"}, false},
		{auth.Token{Issuer: "https://as.example", ClientID: "alice"}, false},
		{auth.Token{Issuer: "https://as.example sub alice"}, false},
	} {
		if got := tc.tok.Principal() == a.Principal(); got != tc.same {
			t.Errorf("%+v: same principal as %+v: %v, want %v", tc.tok, a, got, tc.same)
		}
	}
}

// TestIntrospectionDecides: with introspection configured, a token with
// two dots that the issuer's keys do not verify (an opaque token such as
// PASETO's v4.local.…, or an issuer that publishes no keys at all) is
// introspected rather than refused 503 (the review of 2026-12-05 found
// "authorization server cannot be reached" for an issuer that was up);
// and an introspected refresh token is refused, since a resource server
// never accepts one (RFC 6749 §1.5).
func TestIntrospectionDecides(t *testing.T) {
	var srv *httptest.Server
	var intros atomic.Int32
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "introspection_endpoint": srv.URL + "/introspect", "token_endpoint": srv.URL + "/token"})
		case "/introspect":
			intros.Add(1)
			r.ParseForm()
			tok := r.PostForm.Get("token")
			answer := map[string]any{"active": strings.HasPrefix(tok, "v4.") || strings.HasPrefix(tok, "rt-"), "aud": resourceID, "sub": "s", "exp": time.Now().Add(time.Minute).Unix()}
			if strings.HasPrefix(tok, "rt-") {
				answer["token_type"] = "refresh_token"
			}
			json.NewEncoder(w).Encode(answer)
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tok    string
		status int // 0: accepted
	}{
		{"v4.local.abcdef", 0},
		{"opaque-but-inactive", 401},
		{"a.b.c", 401},
		{"rt-refresh-token", 401},
	} {
		before := intros.Load()
		_, e := res.Authenticate(context.Background(), bearer(tc.tok), nil)
		switch {
		case tc.status == 0 && e != nil:
			t.Errorf("%s: %d %s, want accepted", tc.tok, e.Status, e.Message)
		case tc.status != 0 && (e == nil || e.Status != tc.status):
			t.Errorf("%s: %v, want %d", tc.tok, e, tc.status)
		}
		if intros.Load() != before+1 {
			t.Errorf("%s: %d introspections, want 1", tc.tok, intros.Load()-before)
		}
	}
}
