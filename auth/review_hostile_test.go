package auth_test

// Hostile review of the token checks (2026-12-06): an attacker's tokens,
// a broken or malicious authorization server.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// forged returns a token under the issuer's current kid that its key did
// not sign: one the cache never holds, so each costs a verification.
func forged(as *authtest.Issuer, i int) string {
	c := as.Claims(resourceID, "")
	c["jti"] = "forged-" + strconv.Itoa(i)
	k := *as.Unpublished()
	k.ID = as.Current().ID
	return authtest.Sign(&k, c)
}

// TestHostileNoFetchStormOnBrokenKeys: while the issuer's JWKS fails,
// an attacker's stream of uncached tokens must not become a stream of
// JWKS fetches (found by this review: every token verified with stale
// keys started a new background fetch as soon as the last one failed,
// and with no keys yet every request started one and waited on it).
func TestHostileNoFetchStormOnBrokenKeys(t *testing.T) {
	ctx := context.Background()
	t.Run("stale keys", func(t *testing.T) {
		as := authtest.New(t)
		res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{KeyRefresh: time.Millisecond})
		good := as.Token(as.Claims(resourceID, ""))
		if _, e := res.Authenticate(ctx, bearer(good), nil); e != nil {
			t.Fatal(e.Message)
		}
		as.JWKSStatus.Store(http.StatusInternalServerError)
		before := as.JWKSFetches.Load()
		for i := range 50 {
			if _, e := res.Authenticate(ctx, bearer(forged(as, i)), nil); e == nil || e.Status != 401 {
				t.Fatalf("forged token %d: %+v", i, e)
			}
			time.Sleep(2 * time.Millisecond) // let a background fetch end
		}
		if n := as.JWKSFetches.Load() - before; n > 3 {
			t.Fatalf("50 forged tokens while the JWKS fails caused %d fetches", n)
		}
		// The keys at hand still verify, and a cached token still passes.
		if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, "x"))), nil); e != nil {
			t.Fatalf("a good token with stale keys: %s", e.Message)
		}
	})
	t.Run("no keys yet", func(t *testing.T) {
		as := authtest.New(t)
		res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{FetchTimeout: time.Second})
		as.JWKSStatus.Store(http.StatusInternalServerError)
		start := time.Now()
		for i := range 30 {
			if _, e := res.Authenticate(ctx, bearer(forged(as, i)), nil); e == nil || e.Status != 503 {
				t.Fatalf("token %d while the keys are unavailable: %+v", i, e)
			}
		}
		if n := as.JWKSFetches.Load(); n > 2 {
			t.Fatalf("30 tokens while the JWKS fails caused %d fetches", n)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("30 refusals took %v", d)
		}
		// It recovers once the issuer does (after the back-off).
		as.JWKSStatus.Store(0)
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil)
			if e == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no recovery: %s", e.Message)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Run("no metadata", func(t *testing.T) {
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		}))
		t.Cleanup(srv.Close)
		iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, FetchTimeout: time.Second,
			Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "s"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			tok := "opaque-" + strconv.Itoa(i)
			if i%2 == 0 {
				tok = "a.b." + strconv.Itoa(i)
			}
			if _, e := res.Authenticate(ctx, bearer(tok), nil); e == nil || e.Status != 503 {
				t.Fatalf("token %d with no metadata: %+v", i, e)
			}
		}
		// Discovery tries two URLs for an issuer without a path.
		if n := hits.Load(); n > 4 {
			t.Fatalf("30 tokens while discovery fails caused %d fetches", n)
		}
	})
}

// TestHostileFarFutureExpCached: a token whose exp lies past 2262 (what
// time.UnixNano can hold) is cached like any other, not verified again
// on every request (found by this review: the cache's expiry wrapped
// negative and the token was never cached).
func TestHostileFarFutureExpCached(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	c := as.Claims(resourceID, "")
	c["exp"] = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	tok := as.Token(c)
	for range 3 {
		if _, e := res.Authenticate(context.Background(), bearer(tok), nil); e != nil {
			t.Fatal(e.Message)
		}
	}
	if _, verified := res.CacheStats(); verified != 1 {
		t.Fatalf("a far-future token was verified %d times in 3 requests", verified)
	}
}

// TestHostileTokens: forged, misdirected and malformed tokens are
// refused; the spellings the RFCs allow pass.
func TestHostileTokens(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{Aliases: []string{"https://mcp.example.com"}}, auth.IssuerConfig{})
	a2a := newResourceOf(t, res.Issuer(), "https://mcp.example.com/a2a")
	ctx := context.Background()
	cur := as.Current()
	with := func(f func(jwt.MapClaims)) string {
		c := as.Claims(resourceID, "")
		f(c)
		return as.Token(c)
	}
	hdr := func(h map[string]any) string { return signWithHeader(cur, as.Claims(resourceID, ""), h) }
	now := time.Now()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	esTok := jwt.NewWithClaims(jwt.SigningMethodES256, as.Claims(resourceID, ""))
	esTok.Header["kid"] = cur.ID // an RSA key's kid, an EC signature
	es, _ := esTok.SignedString(ec)
	psTok := jwt.NewWithClaims(jwt.SigningMethodPS256, as.Claims(resourceID, ""))
	psTok.Header["kid"] = cur.ID // the JWK says RS256
	ps, _ := psTok.SignedString(cur.Key)
	good := as.Token(as.Claims(resourceID, ""))
	parts := strings.Split(good, ".")

	refused := map[string]string{
		"aud other resource":      with(func(c jwt.MapClaims) { c["aud"] = "https://mcp.example.com/a2a" }),
		"aud upper-case host":     with(func(c jwt.MapClaims) { c["aud"] = "https://MCP.example.com/mcp" }),
		"aud explicit port":       with(func(c jwt.MapClaims) { c["aud"] = "https://mcp.example.com:443/mcp" }),
		"aud path prefix":         with(func(c jwt.MapClaims) { c["aud"] = "https://mcp.example.com/mc" }),
		"aud path longer":         with(func(c jwt.MapClaims) { c["aud"] = "https://mcp.example.com/mcp/x" }),
		"aud empty":               with(func(c jwt.MapClaims) { c["aud"] = "" }),
		"aud empty array":         with(func(c jwt.MapClaims) { c["aud"] = []string{} }),
		"aud absent":              with(func(c jwt.MapClaims) { delete(c, "aud") }),
		"aud a number":            with(func(c jwt.MapClaims) { c["aud"] = 5 }),
		"iss absent":              with(func(c jwt.MapClaims) { delete(c, "iss") }),
		"iss other case":          with(func(c jwt.MapClaims) { c["iss"] = strings.ToUpper(as.URL) }),
		"iss array":               with(func(c jwt.MapClaims) { c["iss"] = []string{as.URL} }),
		"exp beyond leeway":       with(func(c jwt.MapClaims) { c["exp"] = now.Add(-40 * time.Second).Unix() }),
		"exp overflowing int64":   with(func(c jwt.MapClaims) { c["exp"] = 1e300 }),
		"nbf beyond leeway":       with(func(c jwt.MapClaims) { c["nbf"] = now.Add(40 * time.Second).Unix() }),
		"iat beyond leeway":       with(func(c jwt.MapClaims) { c["iat"] = now.Add(40 * time.Second).Unix() }),
		"ES256 under an RSA kid":  es,
		"PS256, the JWK RS256":    ps,
		"embedded jwk":            signWithHeader(as.Unpublished(), as.Claims(resourceID, ""), map[string]any{"kid": nil, "jwk": authtest.JWK("x", &as.Unpublished().Key.PublicKey)}),
		"jku to the attacker":     signWithHeader(as.Unpublished(), as.Claims(resourceID, ""), map[string]any{"kid": nil, "jku": as.URL + "/jwks"}),
		"kid a path":              hdr(map[string]any{"kid": "../../" + cur.ID}),
		"kid with a NUL":          hdr(map[string]any{"kid": cur.ID + "\x00"}),
		"kid huge":                hdr(map[string]any{"kid": strings.Repeat("k", 6000)}),
		"typ id_token-ish":        hdr(map[string]any{"typ": "id_token+jwt"}),
		"signature swapped":       parts[0] + "." + parts[1] + "." + strings.Split(as.Token(as.Claims(resourceID, "other")), ".")[2],
		"signature empty":         parts[0] + "." + parts[1] + ".",
		"four segments":           good + ".x",
		"header padded":           parts[0] + "==." + parts[1] + "." + parts[2],
		"100 KB":                  good + strings.Repeat("A", 100<<10),
		"unsigned claims in body": parts[0] + "." + b64(as.Claims(resourceID, "admin")) + "." + parts[2],
	}
	for name, tok := range refused {
		if _, e := res.Authenticate(ctx, bearer(tok), nil); e == nil || e.Status < 400 || e.Status == 503 {
			t.Errorf("%s: %+v, want a refusal", name, e)
		}
	}
	accepted := map[string]string{
		"aud among others":       with(func(c jwt.MapClaims) { c["aud"] = []string{"https://x.example", resourceID} }),
		"aud trailing slash":     with(func(c jwt.MapClaims) { c["aud"] = resourceID + "/" }),
		"aud the origin alias":   with(func(c jwt.MapClaims) { c["aud"] = "https://mcp.example.com" }),
		"exp within leeway":      with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() }),
		"nbf within leeway":      with(func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Second).Unix() }),
		"typ application/at+jwt": hdr(map[string]any{"typ": "application/at+jwt"}),
		"no kid, one key":        hdr(map[string]any{"kid": nil}),
	}
	for name, tok := range accepted {
		if _, e := res.Authenticate(ctx, bearer(tok), nil); e != nil {
			t.Errorf("%s: %s", name, e.Message)
		}
	}
	// Scopes come from the signed claims only.
	if tk, e := res.Authenticate(ctx, bearer(hdr(map[string]any{"scope": "admin", "scp": "admin"})), nil); e != nil || tk.HasScope("admin") {
		t.Errorf("a scope in the JWS header was granted: %v", e)
	}

	// A token for /a2a is refused on /mcp and the reverse, cached or not.
	forA2A := as.Token(as.Claims("https://mcp.example.com/a2a", ""))
	if _, e := a2a.Authenticate(ctx, bearer(forA2A), nil); e != nil {
		t.Fatalf("a2a token on a2a: %s", e.Message)
	}
	if _, e := res.Authenticate(ctx, bearer(forA2A), nil); e == nil || e.Status != 401 {
		t.Errorf("a2a token on mcp: %+v", e)
	}
	if _, e := res.Authenticate(ctx, bearer(good), nil); e != nil {
		t.Fatal(e.Message)
	}
	if _, e := a2a.Authenticate(ctx, bearer(good), nil); e == nil || e.Status != 401 {
		t.Errorf("mcp token on a2a: %+v", e)
	}

	// The Authorization field, as the server's snapshot combines it.
	fields := map[string]int{
		"Bearer " + good + ", Bearer " + good:   400, // two lines that agree
		"Bearer " + good + ", Basic eA==":       400,
		"Basic eA==, Bearer " + good:            401,
		"Bearer\t" + good:                       401, // not SP: not this scheme
		"Bearer " + good + " ":                  400,
		"Bearer " + good + "\x00":               400,
		"Bearer " + good[:20] + " " + good[20:]: 400,
		"Bearer " + good + "%3D":                400,
	}
	for f, want := range fields {
		if _, e := res.Authenticate(ctx, []byte(f), nil); e == nil || e.Status != want {
			t.Errorf("field %.40q…: %+v, want %d", f, e, want)
		}
	}
	for _, f := range []string{"bearer " + good, "BEARER " + good, "Bearer    " + good} {
		if _, e := res.Authenticate(ctx, []byte(f), nil); e != nil {
			t.Errorf("field %.12q…: %s", f, e.Message)
		}
	}
}

func newResourceOf(t *testing.T, iss *auth.Issuer, id string) *auth.Resource {
	t.Helper()
	r, err := auth.NewResource(iss, auth.ResourceConfig{Resource: id})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHostileIntrospection: a broken, huge or slow introspection
// endpoint never lets a token through and never holds a request past
// the fetch timeout.
func TestHostileIntrospection(t *testing.T) {
	as := authtest.New(t)
	var mode atomic.Value
	mode.Store("")
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch mode.Load().(string) {
		case "huge":
			fmt.Fprintf(w, `{"active":true,"aud":%q,"x":"`, resourceID)
			pad := strings.Repeat("a", 64<<10)
			for range 20 {
				if _, err := fmt.Fprint(w, pad); err != nil {
					return
				}
			}
			fmt.Fprint(w, `"}`)
		case "slow":
			select {
			case <-release:
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		case "redirect":
			http.Redirect(w, r, as.URL+"/introspect", http.StatusTemporaryRedirect)
		default:
			fmt.Fprint(w, mode.Load())
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{FetchTimeout: 300 * time.Millisecond,
		Introspection: &auth.IntrospectionConfig{Endpoint: srv.URL, ClientID: "rs", ClientSecret: "rs-secret"}})
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Unix()
	for i, m := range []string{
		`{"active":"true","aud":"` + resourceID + `"}`,
		`{"active":1,"aud":"` + resourceID + `"}`,
		`{"aud":"` + resourceID + `"}`,
		`null`, `true`, `"active"`, ``,
		`{"active":true,"aud":"` + resourceID + `","token_type":"Refresh_Token"}`,
		`{"active":true,"aud":"` + resourceID + `","iss":"` + as.URL + `/x"}`,
		fmt.Sprintf(`{"active":true,"aud":%q,"exp":%d.5}`, resourceID, exp),
		fmt.Sprintf(`{"active":true,"aud":[%q],"nbf":%d}`, resourceID, exp),
		"huge", "redirect",
	} {
		mode.Store(m)
		if tok, e := res.Authenticate(ctx, bearer("opaque-"+strconv.Itoa(i)), nil); e == nil {
			t.Errorf("introspection answer %.60q let %+v through", m, tok)
		}
	}
	mode.Store("slow")
	start := time.Now()
	if _, e := res.Authenticate(ctx, bearer("opaque-slow"), nil); e == nil || e.Status != 503 {
		t.Errorf("slow introspection: %+v", e)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a slow introspection held the request %v", d)
	}
}

// TestHostileDiscovery: a malicious or broken issuer's metadata is
// refused, bounded in size and time, and never redirects the fetches.
func TestHostileDiscovery(t *testing.T) {
	other := authtest.New(t)
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := body.Load().(func(string) string)(r.Host)
		switch b {
		case "redirect":
			http.Redirect(w, r, other.URL+"/.well-known/oauth-authorization-server", http.StatusFound)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, b)
		}
	}))
	t.Cleanup(srv.Close)
	jwks := other.URL + "/jwks"
	for name, f := range map[string]func(string) string{
		"redirect to another host": func(string) string { return "redirect" },
		"slow":                     func(string) string { return "slow" },
		"issuer of another":        func(string) string { return `{"issuer":"` + other.URL + `","jwks_uri":"` + jwks + `"}` },
		"issuer a prefix":          func(string) string { return `{"issuer":"` + srv.URL + `/x","jwks_uri":"` + jwks + `"}` },
		"jwks_uri plain http":      func(string) string { return `{"issuer":"` + srv.URL + `","jwks_uri":"http://as.example.com/jwks"}` },
		"jwks_uri a file":          func(string) string { return `{"issuer":"` + srv.URL + `","jwks_uri":"file:///etc/passwd"}` },
		"huge": func(string) string {
			return `{"issuer":"` + srv.URL + `","jwks_uri":"` + jwks + `","x":"` + strings.Repeat("a", 2<<20) + `"}`
		},
	} {
		body.Store(f)
		iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, FetchTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = iss.Refresh(ctx)
		cancel()
		if err == nil {
			t.Errorf("%s: metadata accepted", name)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		res, _ := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
		tok := other.Token(other.Claims(resourceID, ""))
		if _, e := res.Authenticate(context.Background(), bearer(tok), nil); e == nil {
			t.Errorf("%s: another issuer's token let through", name)
		}
	}
}

// TestHostileNamelessPrincipals: tokens that name neither a subject nor
// a client (RFC 7662 requires neither in an introspection answer) do not
// share one principal, which keys MCP sessions and A2A tasks (found by
// this review: every such token of an issuer was "<iss> client ", so
// one caller listed and read another's A2A tasks). One token keeps one
// principal wherever it is verified.
func TestHostileNamelessPrincipals(t *testing.T) {
	as := authtest.New(t)
	ic := auth.IssuerConfig{Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "rs-secret"}}
	res := newResource(t, as, auth.ResourceConfig{}, ic)
	res2 := newResource(t, as, auth.ResourceConfig{}, ic)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Unix()
	as.Opaque("nameless-1", map[string]any{"active": true, "aud": resourceID, "exp": exp})
	as.Opaque("nameless-2", map[string]any{"active": true, "aud": resourceID, "exp": exp})
	jwt1 := as.Claims(resourceID, "")
	delete(jwt1, "sub")
	delete(jwt1, "client_id")
	jwt2 := as.Claims(resourceID, "")
	delete(jwt2, "sub")
	delete(jwt2, "client_id")
	jwt2["jti"] = "other"
	toks := []string{"nameless-1", "nameless-2", as.Token(jwt1), as.Token(jwt2)}
	seen := map[string]int{}
	for i, raw := range toks {
		tk, e := res.Authenticate(ctx, bearer(raw), nil)
		if e != nil {
			t.Fatalf("token %d: %s", i, e.Message)
		}
		p := tk.Principal()
		if j, dup := seen[p]; dup {
			t.Errorf("tokens %d and %d, naming no one, share the principal %q", j, i, p)
		}
		seen[p] = i
		tk2, e := res2.Authenticate(ctx, bearer(raw), nil)
		if e != nil || tk2.Principal() != p {
			t.Errorf("token %d verified again: principal %q, want %q", i, tk2.Principal(), p)
		}
	}
}

// TestHostileClaimSpelling: encoding/json matches member names to the
// claims ignoring case (Unicode folding, so "ſcope" too) and lets the
// last of two matches win. An issuer that copies a client- or
// user-chosen name into a token ("AUD", "Scope": a custom claim, an
// attribute mapper) must not thereby choose the audience or the scopes
// (found by this review; the introspection answers were already held to
// this). Claims are read as RFC 7519 spells them, or the token refused.
func TestHostileClaimSpelling(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{ScopesSupported: []string{"admin"}}, auth.IssuerConfig{})
	ctx := context.Background()
	for name, f := range map[string]func(jwt.MapClaims){
		"AUD after aud":     func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp"; c["AUD"] = resourceID },
		"Aud alone":         func(c jwt.MapClaims) { delete(c, "aud"); c["Aud"] = resourceID },
		"Scope after scope": func(c jwt.MapClaims) { c["scope"] = "read"; c["Scope"] = "admin" },
		"Scope alone":       func(c jwt.MapClaims) { c["Scope"] = "admin" },
		"long s":            func(c jwt.MapClaims) { c["\u017fcope"] = "admin" },
		"SCP":               func(c jwt.MapClaims) { c["SCP"] = []string{"admin"} },
		"EXP":               func(c jwt.MapClaims) { c["EXP"] = time.Now().Add(24 * time.Hour).Unix() },
		"Sub after sub":     func(c jwt.MapClaims) { c["Sub"] = "admin-user" },
		"Client_ID":         func(c jwt.MapClaims) { delete(c, "client_id"); delete(c, "sub"); c["Client_ID"] = "victim" },
	} {
		c := as.Claims(resourceID, "")
		f(c)
		tok, e := res.Authenticate(ctx, bearer(as.Token(c)), nil)
		if e == nil {
			t.Errorf("%s: accepted as %+v", name, tok)
		} else if e.Status != 401 {
			t.Errorf("%s: status %d, want 401", name, e.Status)
		}
	}
	// Other claims in any case, and claims spelled right, are fine.
	c := as.Claims(resourceID, "admin")
	c["Groups"] = []string{"x"}
	c["ext"] = map[string]any{"Scope": "y"}
	if tok, e := res.Authenticate(ctx, bearer(as.Token(c)), nil); e != nil || !tok.HasScope("admin") {
		t.Errorf("a plain token with other claims: %v", e)
	}
}

// TestHostileScopeClaim: the scope claim is split on SP alone (RFC 6749
// §3.3: scope-token *( SP scope-token )), so one scope the issuer
// granted, whose name holds another white space ("read\u00a0admin", a
// name a client or tenant chose), is not read as two, one of them
// "admin"; and an array whose elements hold several scopes loses none
// (found by this review: it was split in place, over elements not read
// yet, and ["a b", "c"] came out as a, b, b).
func TestHostileScopeClaim(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{ScopesSupported: []string{"read", "admin", "a", "b", "c"}}, auth.IssuerConfig{})
	ctx := context.Background()
	for name, tc := range map[string]struct {
		scope     any
		want, not []string
	}{
		"nbsp":          {"read\u00a0admin", nil, []string{"read", "admin"}},
		"tab":           {"read\tadmin", nil, []string{"read", "admin"}},
		"newline":       {"read\nadmin", nil, []string{"read", "admin"}},
		"NEL":           {"read\u0085admin", nil, []string{"read", "admin"}},
		"array, nbsp":   {[]string{"read\u00a0admin"}, nil, []string{"read", "admin"}},
		"array split":   {[]string{"a b", "c"}, []string{"a", "b", "c"}, nil},
		"array split 2": {[]string{"a", "b c", "read", "admin"}, []string{"a", "b", "c", "read", "admin"}, nil},
		"spaces around": {"  a  b ", []string{"a", "b"}, []string{"c"}},
		"duplicates":    {"a a a", []string{"a"}, []string{"b"}},
		"not strings":   {[]any{"a", 1}, nil, []string{"a"}},
	} {
		c := as.Claims(resourceID, "")
		c["scope"] = tc.scope
		tok, e := res.Authenticate(ctx, bearer(as.Token(c)), nil)
		if e != nil {
			t.Errorf("%s: %s", name, e.Message)
			continue
		}
		for _, s := range tc.want {
			if !tok.HasScope(s) {
				t.Errorf("%s: lacks %q: %q", name, s, tok.ScopeNames)
			}
		}
		for _, s := range tc.not {
			if tok.HasScope(s) {
				t.Errorf("%s: holds %q: %q", name, s, tok.ScopeNames)
			}
		}
	}
}

// TestHostileKeyOps: a JWK whose key_ops name neither "verify" nor
// "sign" (RFC 7517 §4.3: an encryption or wrapping key) never verifies a
// token, as a key with "use": "enc" does not (found by this review:
// key_ops was not read at all). Keys that allow verify, or say nothing,
// still do.
func TestHostileKeyOps(t *testing.T) {
	as := authtest.New(t) // for its keys and claims
	var ops atomic.Value
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, srv.URL, srv.URL+"/jwks")
		case "/jwks":
			k := authtest.JWK(as.Current().ID, &as.Current().Key.PublicKey)
			if v := ops.Load().([]string); v != nil {
				k["key_ops"] = v
			}
			delete(k, "use")
			b, _ := json.Marshal(map[string]any{"keys": []any{k}})
			w.Write(b)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		ops []string
		ok  bool
	}{
		{[]string{"encrypt", "wrapKey"}, false},
		{[]string{"sign"}, true}, // the key pair's purpose, loosely
		{[]string{"deriveKey", "decrypt"}, false},
		{[]string{}, false},
		{[]string{"verify"}, true},
		{[]string{"sign", "verify"}, true},
		{nil, true},
	} {
		ops.Store(tc.ops)
		iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
		c := as.Claims(resourceID, "")
		c["iss"] = srv.URL
		_, e := res.Authenticate(context.Background(), bearer(as.Token(c)), nil)
		if (e == nil) != tc.ok {
			t.Errorf("key_ops %q: refusal %+v, want accepted %v", tc.ops, e, tc.ok)
		}
	}
}
