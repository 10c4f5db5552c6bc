// Package authtest is a small authorization server for the tests of the
// auth package and of the servers built on it: RFC 8414 metadata, a JWKS
// that can be rotated, RS256 access tokens, and RFC 7662 introspection of
// opaque tokens, on a loopback httptest server. It mints whatever claims a
// test asks for, which is what unit tests of a verifier need; the proof
// against a real authorization server lives in auth/interop.
package authtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Key is a signing key of the issuer.
type Key struct {
	ID  string
	Key *rsa.PrivateKey
}

// Issuer is a running test authorization server.
type Issuer struct {
	URL string
	srv *httptest.Server

	mu      sync.Mutex
	keys    []*Key // published in the JWKS
	current *Key
	opaque  map[string]map[string]any // introspection answers by token
	raw     map[string]string         // introspection answers written as they are
	n       int

	// JWKSFetches counts fetches of the JWKS.
	JWKSFetches atomic.Int64
	// Introspections counts introspection calls.
	Introspections atomic.Int64
	// MetadataFetches counts fetches of the metadata.
	MetadataFetches atomic.Int64
	// JWKSStatus, when not zero, is the status the JWKS is answered with,
	// without a body: an issuer whose keys are broken.
	JWKSStatus atomic.Int32
}

var keyPool struct {
	sync.Mutex
	keys []*rsa.PrivateKey
}

// rsaKey returns a 2048-bit key, reusing keys across tests (generating
// one costs tens of milliseconds).
func rsaKey(i int) *rsa.PrivateKey {
	keyPool.Lock()
	defer keyPool.Unlock()
	for len(keyPool.keys) <= i {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPool.keys = append(keyPool.keys, k)
	}
	return keyPool.keys[i]
}

// New starts an issuer; t.Cleanup stops it.
func New(t testing.TB) *Issuer {
	i := Start()
	t.Cleanup(i.Close)
	return i
}

// Close stops the issuer.
func (i *Issuer) Close() { i.srv.Close() }

// Start starts an issuer on a loopback port; Close stops it.
func Start() *Issuer {
	i := &Issuer{opaque: map[string]map[string]any{}, raw: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		i.MetadataFetches.Add(1)
		writeJSON(w, map[string]any{
			"issuer":                 i.URL,
			"jwks_uri":               i.URL + "/jwks",
			"token_endpoint":         i.URL + "/token",
			"introspection_endpoint": i.URL + "/introspect",
			"grant_types_supported":  []string{"client_credentials"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		i.JWKSFetches.Add(1)
		if st := i.JWKSStatus.Load(); st != 0 {
			w.WriteHeader(int(st))
			return
		}
		i.mu.Lock()
		var keys []map[string]any
		for _, k := range i.keys {
			keys = append(keys, JWK(k.ID, &k.Key.PublicKey))
		}
		i.mu.Unlock()
		writeJSON(w, map[string]any{"keys": keys})
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		i.Introspections.Add(1)
		if id, secret, ok := r.BasicAuth(); !ok || id != "rs" || secret != "rs-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.ParseForm()
		i.mu.Lock()
		ans, ok := i.opaque[r.PostForm.Get("token")]
		raw, isRaw := i.raw[r.PostForm.Get("token")]
		i.mu.Unlock()
		if isRaw {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, raw)
			return
		}
		if !ok {
			ans = map[string]any{"active": false}
		}
		writeJSON(w, ans)
	})
	i.srv = httptest.NewServer(mux)
	i.URL = i.srv.URL
	i.Rotate()
	return i
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// JWK renders an RSA public key as a JWK.
func JWK(kid string, k *rsa.PublicKey) map[string]any {
	return map[string]any{
		"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
	}
}

// Rotate adds a new key to the JWKS and signs with it from now on.
func (i *Issuer) Rotate() *Key {
	i.mu.Lock()
	defer i.mu.Unlock()
	k := &Key{ID: "k" + strconv.Itoa(i.n), Key: rsaKey(i.n)}
	i.n++
	i.keys = append(i.keys, k)
	i.current = k
	return k
}

// Unpublished returns a key the JWKS does not hold (and never held).
func (i *Issuer) Unpublished() *Key {
	return &Key{ID: "unpublished", Key: rsaKey(7)}
}

// Drop removes a key from the JWKS.
func (i *Issuer) Drop(kid string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for j, k := range i.keys {
		if k.ID == kid {
			i.keys = append(i.keys[:j], i.keys[j+1:]...)
			return
		}
	}
}

// Current returns the signing key.
func (i *Issuer) Current() *Key {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.current
}

// Claims returns the claims of a valid token for audience: iss, sub,
// aud, client_id, iat, nbf, exp in 5 minutes, jti, and scope when given.
func (i *Issuer) Claims(audience string, scope string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": i.URL, "sub": "client-1", "aud": []string{audience}, "client_id": "client-1",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": strconv.FormatInt(now.UnixNano(), 36),
	}
	if scope != "" {
		c["scope"] = scope
	}
	return c
}

// Token signs claims with the current key, RS256, typ at+jwt.
func (i *Issuer) Token(claims jwt.MapClaims) string {
	return Sign(i.Current(), claims)
}

// Sign signs claims with k, RS256, kid k.ID, typ at+jwt.
func Sign(k *Key, claims jwt.MapClaims) string {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = k.ID
	t.Header["typ"] = "at+jwt"
	s, err := t.SignedString(k.Key)
	if err != nil {
		panic(err)
	}
	return s
}

// OpaqueRaw registers an opaque token whose introspection answers body,
// byte for byte, as a malformed or hostile authorization server would.
func (i *Issuer) OpaqueRaw(token, body string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.raw[token] = body
}

// Opaque registers an opaque token whose introspection answers ans.
func (i *Issuer) Opaque(token string, ans map[string]any) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.opaque[token] = ans
}
