package auth_test

// Second hostile review of the token checks (2026-12-06): what an
// unauthenticated caller, a caller holding one valid token, or a hostile
// authorization server can still do after the first review
// (review_hostile_test.go). Each test asserts the correct behaviour.

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// bestOf returns the least time f took in n runs.
func bestOf(n int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range n {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

// TestReview2DeepClaimsBeforeSignature: an unauthenticated caller's
// forged JWT must cost about what any forged JWT costs (the doc's "tens
// to hundreds of µs" for the one expensive step of the row). The claims
// are decoded — and held to claims.UnmarshalJSON's duplicate and spelling
// checks — before the signature is checked, and foldDuplicate recurses
// once per nesting level, each level skipping over everything below it:
// quadratic in the depth. A forged 7 KiB token whose claims hold an
// array nested 2,600 deep costs milliseconds of CPU, a hundred times a
// forged token of the same size.
func TestReview2DeepClaimsBeforeSignature(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	ctx := context.Background()
	good := as.Token(as.Claims(resourceID, ""))
	if _, e := res.Authenticate(ctx, bearer(good), nil); e != nil { // keys fetched
		t.Fatal(e.Message)
	}
	sig := strings.Split(good, ".")[2]
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"` + as.Current().ID + `","typ":"at+jwt"}`))
	forge := func(claims string) []byte {
		return bearer(hdr + "." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + "." + sig)
	}
	const depth = 2600
	deep := forge(`{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
	flat := forge(`{"x":"` + strings.Repeat("a", 2*depth) + `"}`)
	if len(deep) > auth.DefaultMaxTokenBytes || len(flat) < len(deep) {
		t.Fatalf("token sizes %d, %d", len(deep), len(flat))
	}
	run := func(tok []byte) func() {
		return func() {
			if _, e := res.Authenticate(ctx, tok, nil); e == nil || e.Status != 401 {
				t.Fatalf("a forged token: %+v", e)
			}
		}
	}
	tFlat := bestOf(5, run(flat))
	tDeep := bestOf(5, run(deep))
	t.Logf("forged token, flat claims: %v; nested claims: %v", tFlat, tDeep)
	if tDeep > 10*tFlat && tDeep > 2*time.Millisecond {
		t.Errorf("a forged %d-byte token with nested claims costs %v, %.0f times a forged flat one (%v): "+
			"claims are checked for duplicates in quadratic time before the signature", len(deep), tDeep, float64(tDeep)/float64(tFlat), tFlat)
	}
}

// TestReview2IntrospectionDoesNotOverrideLocalRefusal: a JWT the issuer
// signed, refused here for what it says — bound to a DPoP key or a client
// certificate (cnf), a critical extension, a typ that is not an access
// token's — must stay refused when introspection is configured. verify
// falls back to introspection on every reasonInvalid, including a token
// whose signature verified, so the introspection answer (which need not
// repeat cnf, and often omits it) decides instead, and a stolen
// sender-constrained token works here as a bearer token: exactly what
// doc.go says the cnf check prevents.
func TestReview2IntrospectionDoesNotOverrideLocalRefusal(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{
		Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "rs-secret"},
	})
	ctx := context.Background()
	exp := time.Now().Add(5 * time.Minute).Unix()
	bound := as.Claims(resourceID, "")
	bound["cnf"] = map[string]any{"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}
	for name, tok := range map[string]string{
		"cnf jkt (DPoP-bound)": as.Token(bound),
		"crit":                 signWithHeader(as.Current(), as.Claims(resourceID, ""), map[string]any{"crit": []string{"urn:x"}, "urn:x": 1, "typ": "at+jwt"}),
		"typ logout+jwt":       signWithHeader(as.Current(), as.Claims(resourceID, ""), map[string]any{"typ": "logout+jwt"}),
	} {
		// The issuer's introspection endpoint vouches for its own token,
		// without repeating the binding.
		as.Opaque(tok, map[string]any{"active": true, "aud": resourceID, "iss": as.URL, "exp": exp, "sub": "client-1"})
		if tk, e := res.Authenticate(ctx, bearer(tok), nil); e == nil {
			t.Errorf("%s: refused by its own checks, then let through by introspection as %+v", name, tk)
		}
	}
}

// TestReview2NonCanonicalEncoding: one token is one token. golang-jwt
// decodes base64url leniently (non-zero trailing bits allowed), so the
// issuer's signature segment can be re-spelled 16 ways (and the other
// segments 4 or 16) and still verify: each spelling is a cache miss (a
// signature check), a cache entry of its own (one holder of one token
// fills the cache and evicts every other caller's entries), and, for a
// token naming no subject or client, a principal of its own (the digest
// of its bytes). FuzzAuthenticate's own invariant ("let through only if
// it contains the good token") does not hold.
func TestReview2NonCanonicalEncoding(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	ctx := context.Background()
	c := as.Claims(resourceID, "")
	delete(c, "sub")
	delete(c, "client_id")
	good := as.Token(c)
	tk, e := res.Authenticate(ctx, bearer(good), nil)
	if e != nil {
		t.Fatal(e.Message)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, good[len(good)-1])
	if len(strings.Split(good, ".")[2])%4 != 2 || last&15 != 0 {
		t.Fatalf("unexpected signature encoding")
	}
	accepted, principals := 0, map[string]bool{tk.Principal(): true}
	for v := 1; v < 16; v++ {
		respelled := good[:len(good)-1] + string(alphabet[last|v])
		if tk2, e := res.Authenticate(ctx, bearer(respelled), nil); e == nil {
			accepted++
			principals[tk2.Principal()] = true
		}
	}
	if entries, verified := res.CacheStats(); accepted > 0 {
		t.Errorf("%d re-spellings of one token's signature (its last character) were accepted: %d signature checks, %d cache entries and %d principals for one token",
			accepted, verified, entries, len(principals))
	}
}

// TestReview2OfflineAccessNotInChallenge: doc.go promises that
// offline_access never appears in a challenge, and MCP's SEP-2207 says a
// resource server should not name it (in WWW-Authenticate's scope= nor in
// scopes_supported): it is between the client and the authorization
// server. Nothing filters it: configured among the endpoint's scopes, or
// required by a tool, it is in the 401's and the 403's scope= and in the
// metadata. (NewResource or Require refusing it would do as well.)
func TestReview2OfflineAccessNotInChallenge(t *testing.T) {
	as := authtest.New(t)
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: as.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID, Scopes: []string{"mcp", "offline_access"}})
	if err != nil {
		return // refused at configuration: fine
	}
	tool, err := res.Require("tools:write", "offline_access")
	if err != nil {
		return
	}
	_, none := res.Authenticate(context.Background(), nil, nil)
	check := func(where, v string) {
		if strings.Contains(v, "offline_access") {
			t.Errorf("%s names offline_access: %s", where, v)
		}
	}
	check("the 401 challenge", none.Header[0].Value)
	check("the 403 challenge", res.Forbidden(tool).Header[0].Value)
	b, _ := json.Marshal(res.Metadata().ScopesSupported)
	check("scopes_supported", string(b))
}

// TestReview2IssuerSpellingStable: the issuer's metadata may spell the
// issuer with one trailing slash more than the configuration (tolerated,
// and then its spelling is the issuer). With an explicit introspection
// endpoint the metadata is not read until a JWT comes, so an opaque
// token's Token.Issuer — and so its Principal, which keys MCP sessions
// and A2A tasks — is the configured spelling before and the metadata's
// after: one user is two principals, and loses what they own the moment
// someone sends a JWT. One issuer must give one spelling.
func TestReview2IssuerSpellingStable(t *testing.T) {
	as := authtest.New(t) // keys and signing
	exp := time.Now().Add(5 * time.Minute).Unix()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, srv.URL+"/", as.URL+"/jwks")
		case "/introspect":
			fmt.Fprintf(w, `{"active":true,"aud":%q,"sub":"alice","exp":%d}`, resourceID, exp)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, UnknownKeyInterval: time.Hour,
		Introspection: &auth.IntrospectionConfig{Endpoint: srv.URL + "/introspect", ClientID: "rs", ClientSecret: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, e := res.Authenticate(ctx, bearer("opaque-alice-1"), nil)
	if e != nil {
		t.Fatal(e.Message)
	}
	c := as.Claims(resourceID, "")
	c["iss"] = srv.URL + "/"
	c["sub"] = "alice"
	viaJWT, e := res.Authenticate(ctx, bearer(as.Token(c)), nil)
	if e != nil {
		t.Fatal(e.Message)
	}
	after, e := res.Authenticate(ctx, bearer("opaque-alice-2"), nil)
	if e != nil {
		t.Fatal(e.Message)
	}
	if p := before.Principal(); p != viaJWT.Principal() || p != after.Principal() {
		t.Errorf("one subject of one issuer is several principals: %q (opaque, before a JWT), %q (JWT), %q (opaque, after)",
			p, viaJWT.Principal(), after.Principal())
	}
}

// TestReview2FetchesLeaveNoGoroutines: an issuer that never answers
// (metadata, JWKS, introspection) costs each request at most its waits,
// and leaves nothing running once the fetch timeouts have passed.
func TestReview2FetchesLeaveNoGoroutines(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, FetchTimeout: 200 * time.Millisecond,
		Introspection: &auth.IntrospectionConfig{Endpoint: srv.URL + "/introspect", ClientID: "rs", ClientSecret: "x", MaxConcurrent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var slow atomic.Int64
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := fmt.Sprintf("opaque-%d", i)
			if i%2 == 0 {
				tok = fmt.Sprintf("a.b.%d", i)
			}
			start := time.Now()
			if _, e := res.Authenticate(context.Background(), bearer(tok), nil); e == nil || e.Status != 503 {
				t.Errorf("token %d with the issuer hanging: %+v", i, e)
			}
			if time.Since(start) > 2*time.Second {
				slow.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := slow.Load(); n > 0 {
		t.Errorf("%d requests waited over 2s on an issuer whose fetch timeout is 200ms", n)
	}
	// Goroutines of the package itself (the test server's handlers,
	// blocked on a request body nobody reads, are not its).
	ours := func() (int, string) {
		buf := make([]byte, 1<<20)
		n := 0
		var keep []string
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "rpcedge/rpcedge/auth.") {
				n++
				keep = append(keep, g)
			}
		}
		return n, strings.Join(keep, "\n\n")
	}
	deadline := time.Now().Add(3 * time.Second)
	for n, _ := ours(); n > 0 && time.Now().Before(deadline); n, _ = ours() {
		time.Sleep(20 * time.Millisecond)
	}
	if n, stacks := ours(); n > 0 {
		t.Errorf("%d goroutines of package auth left after the fetches timed out:\n%s", n, stacks)
	}
}

// TestReview2KeyTypeConfusion: with EC and Ed25519 keys in the JWKS (the
// other tests publish RSA keys only), a token is verified only by the key
// its kid names when that key's type and curve fit its alg: ES384 under
// a P-256 key's kid, ES256 under an Ed25519 key's kid, EdDSA under an EC
// key's kid are refused, as is a kid two keys of different types share;
// without kid, only keys that fit are tried.
func TestReview2KeyTypeConfusion(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	enc := base64.RawURLEncoding.EncodeToString
	ecJWK := func(kid string, k *ecdsa.PrivateKey, crv string) map[string]any {
		size := (k.Curve.Params().BitSize + 7) / 8
		return map[string]any{"kty": "EC", "kid": kid, "crv": crv,
			"x": enc(k.X.FillBytes(make([]byte, size))), "y": enc(k.Y.FillBytes(make([]byte, size)))}
	}
	edJWK := func(kid string) map[string]any {
		return map[string]any{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": enc(edPub)}
	}
	keys := []any{ecJWK("p256", p256, "P-256"), ecJWK("p384", p384, "P-384"), edJWK("ed"),
		ecJWK("dup", p256, "P-256"), edJWK("dup")}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, srv.URL, srv.URL+"/jwks")
		case "/jwks":
			json.NewEncoder(w).Encode(map[string]any{"keys": keys})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	res := jwksResource(t, srv)
	sign := func(m jwt.SigningMethod, key any, kid string) string {
		c := jwt.MapClaims{"iss": srv.URL, "sub": "u", "aud": resourceID, "exp": time.Now().Add(time.Minute).Unix()}
		tk := jwt.NewWithClaims(m, c)
		if kid != "" {
			tk.Header["kid"] = kid
		} else {
			delete(tk.Header, "kid")
		}
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, tc := range map[string]struct {
		tok string
		ok  bool
	}{
		"ES256, P-256 kid":          {sign(jwt.SigningMethodES256, p256, "p256"), true},
		"ES384, P-384 kid":          {sign(jwt.SigningMethodES384, p384, "p384"), true},
		"EdDSA, Ed25519 kid":        {sign(jwt.SigningMethodEdDSA, edPriv, "ed"), true},
		"ES384 under the P-256 kid": {sign(jwt.SigningMethodES384, p384, "p256"), false},
		"ES256 under the P-384 kid": {sign(jwt.SigningMethodES256, p256, "p384"), false},
		"ES256 under an OKP kid":    {sign(jwt.SigningMethodES256, p256, "ed"), false},
		"EdDSA under an EC kid":     {sign(jwt.SigningMethodEdDSA, edPriv, "p256"), false},
		"EdDSA under a shared kid":  {sign(jwt.SigningMethodEdDSA, edPriv, "dup"), false},
		"ES256 under a shared kid":  {sign(jwt.SigningMethodES256, p256, "dup"), false},
		"ES384 without kid":         {sign(jwt.SigningMethodES384, p384, ""), true},
		"EdDSA without kid":         {sign(jwt.SigningMethodEdDSA, edPriv, ""), true},
	} {
		_, e := res.Authenticate(context.Background(), bearer(tc.tok), nil)
		if (e == nil) != tc.ok {
			t.Errorf("%s: refusal %+v, want accepted %v", name, e, tc.ok)
		}
	}
}

// TestReview2DeepIssuerDocument (last in the file: when it fails, the
// fetch it starts walks the document for seconds after it returns): a JWKS (or metadata, or introspection
// answer) nested deep is refused in about the time it takes to read: the
// 1 MiB bound on fetched documents is meant to bound what a broken or
// hostile issuer costs. foldDuplicate's quadratic walk makes a 96 KiB
// document cost seconds of CPU (a 1 MiB one minutes), in the fetch that
// every request then waits on: Refresh cannot finish, and every token
// not in the cache waits FetchTimeout and gets 503 meanwhile.
func TestReview2DeepIssuerDocument(t *testing.T) {
	const depth = 48 << 10
	deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, srv.URL, srv.URL+"/jwks")
		case "/jwks":
			fmt.Fprint(w, `{"keys":[],"x":`+deep+`}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, FetchTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err = iss.Refresh(ctx)
	d := time.Since(start)
	if err == nil {
		t.Fatal("a JWKS with a member nested 48 Ki deep was accepted")
	}
	if ctx.Err() != nil {
		// The fetch goroutine is still walking the document; it ends on
		// its own (seconds later) and holds no test resource.
		t.Errorf("refusing a %d KiB JWKS nested deep did not end within %v (the fetch's timeout is 300ms): %v", (2*depth)>>10, d, err)
	}
}
