package interop

// The JWT/JWKS libraries measured side by side for package auth: each
// verifies the same RS256 access token with the same checks (signature
// by the JWKS key its kid names, RS256 only, iss, aud, exp required,
// nbf and iat, 30 s leeway), and each must refuse alg none and an HS256
// token keyed with the RSA public key. Run:
//
//	go test -run JWTLibraries -bench JWTLibraries -count 6 ./auth/interop

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	josejwt "github.com/go-jose/go-jose/v4"
	josejwtjwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/golang-jwt/jwt/v5"
	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjwt "github.com/lestrrat-go/jwx/v3/jwt"
)

const (
	libIssuer   = "https://as.example.com"
	libAudience = "https://mcp.example.com/mcp"
	libKID      = "k1"
)

type libFixture struct {
	key         *rsa.PrivateKey
	jwks        []byte
	token       string
	none, hs256 string
}

func newLibFixture(t testing.TB) *libFixture {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &libFixture{key: key}
	f.jwks, _ = json.Marshal(map[string]any{"keys": []map[string]any{{
		"kty": "RSA", "kid": libKID, "use": "sig", "alg": "RS256",
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}})
	now := time.Now()
	claims := jwt.MapClaims{"iss": libIssuer, "sub": "client-1", "aud": []string{libAudience}, "client_id": "client-1",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "abc", "scope": "mcp:tools"}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = libKID
	tok.Header["typ"] = "at+jwt"
	f.token, _ = tok.SignedString(key)
	payload := strings.Split(f.token, ".")[1]
	seg := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	f.none = seg(map[string]string{"alg": "none", "kid": libKID}) + "." + payload + "."
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	in := seg(map[string]string{"alg": "HS256", "kid": libKID}) + "." + payload
	m := hmac.New(sha256.New, pemKey)
	m.Write([]byte(in))
	f.hs256 = in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	return f
}

// verifier verifies one token; it is built once per library.
type verifier func(token string) error

func libraries(t testing.TB, f *libFixture) map[string]verifier {
	// golang-jwt v5 with keyfunc v3 (JWKS from JSON here; over HTTP it is
	// the same storage).
	kf, err := keyfunc.NewJWKSetJSON(f.jwks)
	if err != nil {
		t.Fatal(err)
	}
	gj := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(libIssuer), jwt.WithAudience(libAudience),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(30*time.Second))
	// jwx v3.
	set, err := jwk.Parse(f.jwks)
	if err != nil {
		t.Fatal(err)
	}
	// go-jose v4.
	var jset josejwt.JSONWebKeySet
	if err := json.Unmarshal(f.jwks, &jset); err != nil {
		t.Fatal(err)
	}
	return map[string]verifier{
		"golang-jwt-v5+keyfunc-v3": func(tok string) error {
			var c jwt.RegisteredClaims
			_, err := gj.ParseWithClaims(tok, &c, kf.Keyfunc)
			return err
		},
		"jwx-v3": func(tok string) error {
			_, err := jwxjwt.Parse([]byte(tok), jwxjwt.WithKeySet(set),
				jwxjwt.WithIssuer(libIssuer), jwxjwt.WithAudience(libAudience), jwxjwt.WithAcceptableSkew(30*time.Second),
				jwxjwt.WithRequiredClaim("exp"), jwxjwt.WithValidate(true))
			return err
		},
		"go-jose-v4": func(tok string) error {
			p, err := josejwtjwt.ParseSigned(tok, []josejwt.SignatureAlgorithm{josejwt.RS256})
			if err != nil {
				return err
			}
			if len(p.Headers) != 1 {
				return errSkip
			}
			keys := jset.Key(p.Headers[0].KeyID)
			if len(keys) != 1 {
				return errSkip
			}
			var c josejwtjwt.Claims
			if err := p.Claims(keys[0].Key, &c); err != nil {
				return err
			}
			if c.Expiry == nil {
				return errSkip
			}
			return c.ValidateWithLeeway(josejwtjwt.Expected{Issuer: libIssuer, AnyAudience: []string{libAudience}, Time: time.Now()}, 30*time.Second)
		},
	}
}

var errSkip = context.Canceled // any error: the token is refused

func TestJWTLibraries(t *testing.T) {
	f := newLibFixture(t)
	for name, v := range libraries(t, f) {
		if err := v(f.token); err != nil {
			t.Errorf("%s refused the valid token: %v", name, err)
		}
		if v(f.none) == nil {
			t.Errorf("%s accepted alg none", name)
		}
		if v(f.hs256) == nil {
			t.Errorf("%s accepted HS256 keyed with the public key", name)
		}
	}
}

func BenchmarkJWTLibraries(b *testing.B) {
	f := newLibFixture(b)
	for _, name := range []string{"golang-jwt-v5+keyfunc-v3", "jwx-v3", "go-jose-v4"} {
		v := libraries(b, f)[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v(f.token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
