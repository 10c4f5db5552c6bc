package auth_test

// Third hostile review of the token checks: what the first two reviews
// (review_hostile_test.go, review2_hostile_test.go), cnf_test.go and
// rotation_test.go leave open. Each test asserts the correct behaviour:
// it fails on the bug it names.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// signRaw signs header and claims, written byte for byte as given, with
// k (RS256): a token an issuer really signed, whatever its JSON holds.
func signRaw(k *authtest.Key, header, claims string) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	sig, err := jwt.SigningMethodRS256.Sign(in, k.Key)
	if err != nil {
		panic(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// rawHeader is the header authtest.Sign writes, for signRaw.
func rawHeader(k *authtest.Key) string {
	return `{"alg":"RS256","kid":"` + k.ID + `","typ":"at+jwt"}`
}

// jwksResource is the Resource (resourceID) of the issuer srv serves,
// which fetches its keys again for an unknown kid at most once an hour.
func jwksResource(t *testing.T, srv *httptest.Server) *auth.Resource {
	t.Helper()
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: srv.URL, UnknownKeyInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// jwksIssuer serves RFC 8414 metadata and the JWKS keys() returns on a
// loopback server: an issuer whose keys are not authtest's RSA ones.
func jwksIssuer(t *testing.T, keys func() []any) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, srv.URL, srv.URL+"/jwks")
		case "/jwks":
			json.NewEncoder(w).Encode(map[string]any{"keys": keys()})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func ecJWK(kid string, pub *ecdsa.PublicKey, crv string) map[string]any {
	point, err := pub.Bytes() // 0x04, then x and y, each of the curve's size
	if err != nil {
		panic(err)
	}
	size := (len(point) - 1) / 2
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]any{"kty": "EC", "kid": kid, "crv": crv, "use": "sig",
		"x": enc(point[1 : 1+size]), "y": enc(point[1+size:])}
}

// TestReview3NotBeforeBeyondInt64: RFC 7519 §4.1.5: a JWT "MUST NOT be
// accepted for processing" before its nbf; doc.go: "nbf and iat not in
// the future". golang-jwt makes a NumericDate time.Unix(int64(f), …):
// past int64, Go's float-to-int conversion is implementation-defined
// (math.MinInt64 on amd64, saturated on arm64), and time.Unix's own
// seconds (plus 62,135,596,800 to year 1) wrap past math.MaxInt64. Either
// way a token "not valid before" 1e19 or 9.2233720e18 seconds, or issued
// then, comes out dated billions of years ago, and is accepted. (exp
// overflows to the past too, which refuses it: the controls below.) A
// NumericDate outside what time can hold must refuse the token.
func TestReview3NotBeforeBeyondInt64(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	ctx := context.Background()
	for name, f := range map[string]func(jwt.MapClaims){
		"nbf 1e19":         func(c jwt.MapClaims) { c["nbf"] = 1e19 },
		"nbf 1e300":        func(c jwt.MapClaims) { c["nbf"] = 1e300 },
		"nbf 9.2233720e18": func(c jwt.MapClaims) { c["nbf"] = json.Number("9223372000000000000") },
		"iat 1e19":         func(c jwt.MapClaims) { c["iat"] = 1e19 },
		"iat MaxInt64":     func(c jwt.MapClaims) { c["iat"] = json.Number("9223372036854775807") },
		"exp 1e300":        func(c jwt.MapClaims) { c["exp"] = 1e300 },
		"exp -1e300":       func(c jwt.MapClaims) { c["exp"] = -1e300 },
	} {
		c := as.Claims(resourceID, "")
		f(c)
		if tok, e := res.Authenticate(ctx, bearer(as.Token(c)), nil); e == nil {
			t.Errorf("%s: accepted (expiry %v)", name, tok.Expiry)
		} else if e.Status != 401 {
			t.Errorf("%s: status %d, want 401", name, e.Status)
		}
	}
}

// TestReview3NumericDateIsANumber: RFC 7519 §2 defines NumericDate as "A
// JSON numeric value", and §7.2 has the claims set validated as such.
// golang-jwt reads it through json.Number, which encoding/json also
// fills from a JSON string holding a number: "exp":"4102444800" — a
// string an issuer may have copied from a user attribute or a template —
// is taken as an expiry. A claim of the wrong type must refuse the token
// (as "aud": 5 and "iss": [..] already do).
func TestReview3NumericDateIsANumber(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	ctx := context.Background()
	future := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	past := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	for name, f := range map[string]func(jwt.MapClaims){
		"exp a string": func(c jwt.MapClaims) { c["exp"] = future },
		"nbf a string": func(c jwt.MapClaims) { c["nbf"] = past },
		"iat a string": func(c jwt.MapClaims) { c["iat"] = past },
	} {
		c := as.Claims(resourceID, "")
		f(c)
		if _, e := res.Authenticate(ctx, bearer(as.Token(c)), nil); e == nil || e.Status != 401 {
			t.Errorf("%s: %+v, want 401", name, e)
		}
	}
}

// TestReview3ClaimsTrailingData (passes): RFC 7519 §7.2 step 10:
// "Verify that the resulting octet sequence is a UTF-8-encoded
// representation of a completely valid JSON object". A signed claims set
// followed by a second object (`{…}{"aud":"https://other…"}`) or by
// other bytes is refused: golang-jwt reads claims with json.Unmarshal,
// which refuses trailing data. It would not with its WithJSONNumber
// option (a json.Decoder reads the first value and ignores the rest, and
// claims.UnmarshalJSON's checks then see the first object alone), so
// the option must stay off; the introspection answers are held to the
// same ("trailing value", "trailing bytes" in TestIntrospection).
func TestReview3ClaimsTrailingData(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{})
	ctx := context.Background()
	b, _ := json.Marshal(as.Claims(resourceID, ""))
	good := string(b)
	if _, e := res.Authenticate(ctx, bearer(signRaw(as.Current(), rawHeader(as.Current()), good)), nil); e != nil {
		t.Fatalf("the claims alone: %s", e.Message)
	}
	for name, claims := range map[string]string{
		"a second object": good + `{"aud":"https://other.example/mcp","sub":"admin"}`,
		"trailing bytes":  good + ` x`,
		"trailing brace":  good + `}`,
	} {
		if tok, e := res.Authenticate(ctx, bearer(signRaw(as.Current(), rawHeader(as.Current()), claims)), nil); e == nil {
			t.Errorf("%s: accepted as %+v", name, tok)
		}
	}
}

// TestReview3ECDSAMalleableSignature: an ECDSA signature (r, s) has a
// twin (r, n-s) that verifies the same message (SEC 1 §4.1.4 checks
// neither; RFC 7518 §3.4 fixes only the encoding). Review 2 made each
// token have one spelling (WithStrictDecoding: "one token had 16
// spellings that all verified […] each a cache entry and, for a token
// naming no subject nor client, a principal of its own"): with ES256,
// ES384 or ES512 anyone holding one token can still write its twin,
// which verifies, is a cache entry of its own and, for a token naming no
// one, is a principal of its own (Token.Principal: a digest of the raw
// bytes). One signed token must be one principal: the twin refused, or
// the nameless principal derived from the signed content (header and
// claims) rather than from the signature's spelling.
func TestReview3ECDSAMalleableSignature(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := jwksIssuer(t, func() []any { return []any{ecJWK("ec", &key.PublicKey, "P-256")} })
	res := jwksResource(t, srv)
	// Naming neither subject nor client: its principal is its own.
	tk := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": srv.URL, "aud": resourceID,
		"exp": time.Now().Add(time.Hour).Unix(), "jti": "one"})
	tk.Header["kid"] = "ec"
	tk.Header["typ"] = "at+jwt"
	good, err := tk.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, e := res.Authenticate(ctx, bearer(good), nil)
	if e != nil {
		t.Fatal(e.Message)
	}
	i := strings.LastIndexByte(good, '.')
	sig, err := base64.RawURLEncoding.DecodeString(good[i+1:])
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %d bytes: %v", len(sig), err)
	}
	s := new(big.Int).SetBytes(sig[32:])
	s.Sub(elliptic.P256().Params().N, s)
	twin := append(append([]byte{}, sig[:32]...), s.FillBytes(make([]byte, 32))...)
	respelled := good[:i+1] + base64.RawURLEncoding.EncodeToString(twin)
	second, e := res.Authenticate(ctx, bearer(respelled), nil)
	if e != nil {
		return // the twin refused: fine
	}
	if p1, p2 := first.Principal(), second.Principal(); p1 != p2 {
		entries, verified := res.CacheStats()
		t.Errorf("the ECDSA twin of one signed token was accepted as another principal (%q, %q): %d cache entries, %d verifications",
			p1, p2, entries, verified)
	}
}

// TestReview3DroppedKeyCachedTokenRefreshed: doc.go: "A key that
// disappears from the JWKS revokes every cached token it signed", and the
// keys are fetched "again in the background when older than KeyRefresh".
// But the refresh is started only on a cache miss (Issuer.keySet is
// called from verifyJWT): a cached token never asks how old the keys
// are. The issuer drops a leaked key; the attacker's token signed with it
// (exp of the attacker's choosing: TestHostileFarFutureExpCached makes
// even exp 2300 cached) stays accepted as long as the requests the server
// sees are cache hits, KeyRefresh or not — on a quiet server, until the
// token's exp. A hit on keys older than KeyRefresh must start the
// refresh (one atomic load and a compare of the request time it already
// holds), so that the token is refused soon after.
func TestReview3DroppedKeyCachedTokenRefreshed(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{KeyRefresh: 50 * time.Millisecond})
	ctx := context.Background()
	leaked := as.Current()
	c := as.Claims(resourceID, "")
	c["exp"] = time.Now().Add(time.Hour).Unix()
	tok := bearer(authtest.Sign(leaked, c))
	if _, e := res.Authenticate(ctx, tok, nil); e != nil {
		t.Fatal(e.Message)
	}
	as.Rotate()
	as.Drop(leaked.ID)
	fetches := as.JWKSFetches.Load()
	deadline := time.Now().Add(time.Second) // 20 times KeyRefresh
	for time.Now().Before(deadline) {
		if _, e := res.Authenticate(ctx, tok, nil); e != nil {
			if e.Status != 401 {
				t.Fatalf("status %d, want 401", e.Status)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("a cached token of a key dropped from the JWKS was still accepted 1s later (KeyRefresh 50ms): %d JWKS fetches meanwhile",
		as.JWKSFetches.Load()-fetches)
}

// TestReview3InvalidTokenChallengeNamesScope: MCP authorization
// (2025-11-25, Protected Resource Metadata Discovery Requirements): "MCP
// servers SHOULD include a scope parameter in the WWW-Authenticate header
// as defined in RFC 6750 Section 3 to indicate the scopes required for
// accessing the resource", and its client's scope selection takes "the
// scope parameter from the initial WWW-Authenticate header in the 401
// response, if provided", else every scope of scopes_supported. The bare
// 401 names the endpoint's scopes, but the 401 a client gets when its
// token expired (or was for another resource) does not: the client
// re-authorizes for every scope in scopes_supported — each tool's too —
// rather than the least it needs (RFC 9700 §2.3, least privilege).
func TestReview3InvalidTokenChallengeNamesScope(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{Scopes: []string{"mcp"}, ScopesSupported: []string{"admin"}}, auth.IssuerConfig{})
	ctx := context.Background()
	expired := as.Claims(resourceID, "mcp")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	expired["iat"] = time.Now().Add(-2 * time.Hour).Unix()
	expired["nbf"] = time.Now().Add(-2 * time.Hour).Unix()
	for name, tok := range map[string]string{
		"expired":          as.Token(expired),
		"another resource": as.Token(as.Claims("https://other.example/mcp", "mcp")),
	} {
		_, e := res.Authenticate(ctx, bearer(tok), nil)
		if e == nil || e.Status != 401 || len(e.Header) != 1 {
			t.Fatalf("%s: %+v", name, e)
		}
		if v := e.Header[0].Value; !strings.Contains(v, `error="invalid_token"`) || !strings.Contains(v, `scope="mcp"`) {
			t.Errorf("%s: challenge %s names no scope= (the endpoint requires mcp)", name, v)
		}
	}
}

// TestReview3WeakAndOffCurveKeys (passes): RFC 7518 §3.3 ("A key of
// size 2048 bits or larger MUST be used") and the invalid-curve attack
// (RFC 8725 §3.4, "validate that all points are on the curve"): a JWKS
// offering an RSA key under 2048 bits, an EC point off its curve, or one
// whose x is the field prime itself, has those keys
// skipped — a token under their kid, or with no kid, is refused, nothing
// panics — while a sound key beside them still verifies.
func TestReview3WeakAndOffCurveKeys(t *testing.T) {
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	off := ecJWK("offcurve", &ec.PublicKey, "P-256")
	y := new(big.Int).Add(ec.Y, big.NewInt(1))
	off["y"] = base64.RawURLEncoding.EncodeToString(y.FillBytes(make([]byte, 32)))
	bigX := ecJWK("bigx", &ec.PublicKey, "P-256")
	bigX["x"] = base64.RawURLEncoding.EncodeToString(elliptic.P256().Params().P.FillBytes(make([]byte, 32)))
	weakJWK := authtest.JWK("weak", &weak.PublicKey)
	srv := jwksIssuer(t, func() []any { return []any{weakJWK, off, bigX, ecJWK("good", &good.PublicKey, "P-256")} })
	res := jwksResource(t, srv)
	sign := func(m jwt.SigningMethod, key any, kid string) string {
		tk := jwt.NewWithClaims(m, jwt.MapClaims{"iss": srv.URL, "sub": "u", "aud": resourceID, "exp": time.Now().Add(time.Minute).Unix()})
		if kid == "" {
			delete(tk.Header, "kid")
		} else {
			tk.Header["kid"] = kid
		}
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := context.Background()
	for name, tok := range map[string]string{
		"RSA 1024 under its kid":       sign(jwt.SigningMethodRS256, weak, "weak"),
		"RSA 1024 without kid":         sign(jwt.SigningMethodRS256, weak, ""),
		"ES256 under an off-curve kid": sign(jwt.SigningMethodES256, ec, "offcurve"),
		"ES256 under an x = p kid":     sign(jwt.SigningMethodES256, ec, "bigx"),
		"ES256 of that key, no kid":    sign(jwt.SigningMethodES256, ec, ""),
	} {
		if _, e := res.Authenticate(ctx, bearer(tok), nil); e == nil || e.Status != 401 {
			t.Errorf("%s: %+v, want 401", name, e)
		}
	}
	if _, e := res.Authenticate(ctx, bearer(sign(jwt.SigningMethodES256, good, "good")), nil); e != nil {
		t.Errorf("the sound key beside them: %s", e.Message)
	}
}

// TestReview3OddJSONNoPanic (passes): the claims and the header of a
// JWT are decoded before its signature is checked, by golang-jwt and by
// claims.UnmarshalJSON: an unauthenticated caller's header or claims
// that are JSON but no object (null, an array, a number), or an object
// whose registered claims have the wrong types, is refused 401 and
// nothing panics — forged, and also signed by the issuer (RFC 7519 §7.2:
// the claims set must be a JSON object).
func TestReview3OddJSONNoPanic(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{
		Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "rs-secret"},
	})
	ctx := context.Background()
	k := as.Current()
	exp := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	base := `"iss":"` + as.URL + `","aud":"` + resourceID + `","sub":"u","exp":` + exp
	iss, aud := `"iss":"`+as.URL+`"`, `"aud":"`+resourceID+`"`
	claims := []string{
		`null`, `[]`, `[{` + base + `}]`, `1`, `"x"`, `true`, `{}`,
		`{` + iss + `,"aud":[null],"exp":` + exp + `}`,
		`{` + iss + `,"aud":[1],"exp":` + exp + `}`,
		`{` + iss + `,"aud":{"a":1},"exp":` + exp + `}`,
		`{` + iss + `,` + aud + `,"exp":{}}`,
		`{` + iss + `,` + aud + `,"exp":[` + exp + `]}`,
		`{` + iss + `,` + aud + `,"exp":1e999}`,
		`{` + iss + `,` + aud + `,"exp":-0}`,
		`{` + iss + `,` + aud + `,"sub":1,"exp":` + exp + `}`,
		`{"iss":1,` + aud + `,"exp":` + exp + `}`,
	}
	headers := []string{
		rawHeader(k), `null`, `[]`, `{"alg":null,"kid":"` + k.ID + `"}`, `{"alg":["RS256"],"kid":"` + k.ID + `"}`,
		`{"alg":"RS256","kid":"` + k.ID + `","crit":null}`,
	}
	for _, h := range headers {
		for _, c := range claims {
			for _, signed := range []bool{false, true} {
				tok := signRaw(k, h, c)
				if !signed {
					tok = tok[:strings.LastIndexByte(tok, '.')+1] + strings.Repeat("A", 342)
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("header %s, claims %s, signed %v: panic %v", h, c, signed, p)
						}
					}()
					if tk, e := res.Authenticate(ctx, bearer(tok), nil); e == nil || e.Status != 401 {
						t.Errorf("header %s, claims %s, signed %v: %+v %+v, want 401", h, c, signed, tk, e)
					}
				}()
			}
		}
	}
}

// TestReview3RandomKIDStormConcurrent (passes): a refetch storm from
// invented kids (RFC 7515 §4.1.4 leaves kid's use to the verifier);
// doc.go: "a stream of invented kids costs the
// issuer one fetch per interval and holds a worker no longer than a
// fetch". The existing test sends its invented kids one after the other;
// here 32 callers send them at once, with empty and 2,000-byte kids
// among them, over several intervals: the issuer
// sees at most one fetch per interval (plus the first), and no request
// waits longer than a fetch.
func TestReview3RandomKIDStormConcurrent(t *testing.T) {
	as := authtest.New(t)
	const interval = 150 * time.Millisecond
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{UnknownKeyInterval: interval, FetchTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil); e != nil {
		t.Fatal(e.Message)
	}
	before := as.JWKSFetches.Load()
	start := time.Now()
	const runFor = 600 * time.Millisecond
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200 && time.Since(start) < runFor; i++ {
				kid := fmt.Sprintf("rnd-%d-%d", g, i)
				switch i % 4 {
				case 1:
					kid = ""
				case 2:
					kid = strings.Repeat("k", 2000)
				}
				tok := signWithHeader(as.Unpublished(), as.Claims(resourceID, ""), map[string]any{"kid": kid, "typ": "at+jwt"})
				t0 := time.Now()
				_, e := res.Authenticate(ctx, bearer(tok), nil)
				d := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
				if e == nil || e.Status != 401 {
					t.Errorf("an invented kid: %+v", e)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	fetches := as.JWKSFetches.Load() - before
	if limit := int64(elapsed/interval) + 1; fetches > limit {
		t.Errorf("invented kids from 32 callers over %v caused %d JWKS fetches, want at most %d (one per %v)", elapsed, fetches, limit, interval)
	}
	if slowest > 3*time.Second { // six fetches: room for a loaded -race run
		t.Errorf("a request with an invented kid waited %v (FetchTimeout 500ms)", slowest)
	}
}
