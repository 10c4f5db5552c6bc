package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync/atomic"
)

// NOTE: the issuer's keys (RFC 7517, RFC 7518 §6).
//
// A JWKS is parsed into public keys the verifier can use: RSA (at least
// 2048 bits, RFC 7518 §3.3), EC on P-256, P-384 and P-521, and Ed25519.
// Keys marked for encryption ("use": "enc", or key_ops naming neither
// verify nor sign), private keys, symmetric keys ("kty": "oct") and keys
// of other types are skipped, never used. A key's "alg", when present,
// must equal the token's; the key type must fit the algorithm's family.
// Keys are compared by their material: a refresh that keeps a key keeps
// the same *jwk (so tokens it verified stay cached), and one that drops
// it revokes it, and with it every cached token it signed.

type jwk struct {
	kid     string
	alg     string // "" when the JWK names none
	kty     string
	crv     string
	key     crypto.PublicKey
	id      string // the key material, for comparing keys across refreshes
	revoked atomic.Bool
}

// fits reports whether the key may verify a token signed with alg.
func (k *jwk) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch {
	case strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS"):
		return k.kty == "RSA"
	case alg == "ES256":
		return k.kty == "EC" && k.crv == "P-256"
	case alg == "ES384":
		return k.kty == "EC" && k.crv == "P-384"
	case alg == "ES512":
		return k.kty == "EC" && k.crv == "P-521"
	case alg == "EdDSA":
		return k.kty == "OKP" && k.crv == "Ed25519"
	}
	return false
}

// keySet is one fetched JWKS, immutable once published.
type keySet struct {
	byKID map[string]*jwk
	all   []*jwk
	at    int64 // unix nanoseconds of the fetch
}

type rawJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	// KeyOps is nil when absent, empty when "key_ops": [].
	KeyOps []string `json:"key_ops"`
	Alg    string   `json:"alg"`
	Crv    string   `json:"crv"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
	D      string   `json:"d"`
}

// parseJWKS parses a JWK Set, reusing the keys of prev that it still
// holds and revoking those it no longer does. It fails when the document
// is not a JWK Set; keys it cannot use are skipped (skipped counts them).
func parseJWKS(doc []byte, prev *keySet, at int64) (ks *keySet, skipped int, err error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, 0, fmt.Errorf("auth: the JWKS is not valid JSON: %w", err)
	}
	if set.Keys == nil {
		return nil, 0, errors.New("auth: the JWKS has no \"keys\" member")
	}
	ks = &keySet{byKID: make(map[string]*jwk), at: at}
	ambiguous := map[string]bool{} // kids of more than one key
	old := map[string]*jwk{}
	if prev != nil {
		for _, k := range prev.all {
			old[k.id] = k
		}
	}
	for _, raw := range set.Keys {
		var r rawJWK
		if json.Unmarshal(raw, &r) != nil {
			skipped++
			continue
		}
		k, err := parseJWK(&r)
		if err != nil {
			skipped++
			continue
		}
		if o := old[k.id]; o != nil && o.kid == k.kid && o.alg == k.alg {
			k = o
		}
		if k.kid != "" {
			if _, dup := ks.byKID[k.kid]; dup || ambiguous[k.kid] {
				// Two or more keys under one kid: none is trusted by kid.
				skipped++
				delete(ks.byKID, k.kid)
				ambiguous[k.kid] = true
				continue
			}
			ks.byKID[k.kid] = k
		}
		ks.all = append(ks.all, k)
	}
	if prev != nil {
		kept := map[*jwk]bool{}
		for _, k := range ks.all {
			kept[k] = true
		}
		for _, k := range prev.all {
			if !kept[k] {
				k.revoked.Store(true)
			}
		}
	}
	return ks, skipped, nil
}

var b64 = base64.RawURLEncoding

func parseJWK(r *rawJWK) (*jwk, error) {
	if r.Use != "" && r.Use != "sig" {
		return nil, errors.New("not a signing key")
	}
	if r.KeyOps != nil && !slices.Contains(r.KeyOps, "verify") && !slices.Contains(r.KeyOps, "sign") {
		// RFC 7517 §4.3. "sign" is let through: a key pair's purpose,
		// as issuers loosely publish it on the public half.
		return nil, errors.New("key_ops allow no signatures")
	}
	if r.D != "" {
		return nil, errors.New("a private key in a JWKS")
	}
	k := &jwk{kid: r.Kid, alg: r.Alg, kty: r.Kty, crv: r.Crv}
	switch r.Kty {
	case "RSA":
		n, err1 := b64.DecodeString(r.N)
		e, err2 := b64.DecodeString(r.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("bad RSA key")
		}
		N := new(big.Int).SetBytes(n)
		E := int(new(big.Int).SetBytes(e).Int64())
		if N.BitLen() < 2048 || E < 3 || E%2 == 0 {
			return nil, errors.New("RSA key too weak")
		}
		k.key = &rsa.PublicKey{N: N, E: E}
		k.id = "RSA|" + r.N + "|" + r.E
	case "EC":
		var c elliptic.Curve
		switch r.Crv {
		case "P-256":
			c = elliptic.P256()
		case "P-384":
			c = elliptic.P384()
		case "P-521":
			c = elliptic.P521()
		default:
			return nil, errors.New("unsupported curve")
		}
		x, err1 := b64.DecodeString(r.X)
		y, err2 := b64.DecodeString(r.Y)
		size := (c.Params().BitSize + 7) / 8
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, errors.New("bad EC key")
		}
		point := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(c, point)
		if err != nil {
			return nil, err
		}
		k.key = pub
		k.id = "EC|" + r.Crv + "|" + r.X + "|" + r.Y
	case "OKP":
		x, err := b64.DecodeString(r.X)
		if r.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("unsupported OKP key")
		}
		k.key = ed25519.PublicKey(x)
		k.id = "OKP|" + r.Crv + "|" + r.X
	default:
		return nil, errors.New("unsupported key type")
	}
	return k, nil
}
