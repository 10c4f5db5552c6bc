package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"testing"
)

// TestJWKSSharedKID: however many keys share a kid, none is trusted by
// it (a third key under a kid two keys share was trusted until the review
// of 2026-12-05); a kid of one key is.
func TestJWKSSharedKID(t *testing.T) {
	key := func(kid string) map[string]any {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"kty": "RSA", "kid": kid, "n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())}
	}
	for n := 2; n <= 4; n++ {
		keys := []map[string]any{key("alone")}
		for range n {
			keys = append(keys, key("same"))
		}
		doc, _ := json.Marshal(map[string]any{"keys": keys})
		ks, skipped, err := parseJWKS(doc, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ks.byKID["same"] != nil || skipped != n-1 {
			t.Errorf("%d keys under one kid: trusted by it %v, %d skipped (want none, %d)", n, ks.byKID["same"] != nil, skipped, n-1)
		}
		if ks.byKID["alone"] == nil {
			t.Errorf("%d keys under one kid: the key alone under its kid is not found by it", n)
		}
	}
}
