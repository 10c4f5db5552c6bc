package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rpcedge/rpcedge/decode"
)

// NOTE: verifying a token on a cache miss.
//
// A token with two dots is a JWT access token (RFC 9068) and is verified
// with github.com/golang-jwt/jwt/v5: the algorithm on the allow-list
// (never none or HS*), the signature by a key of the issuer's JWKS whose
// kid, alg and type fit, typ absent, "JWT", "at+jwt" or
// "application/at+jwt" (other typs — an ID token's or a logout token's
// purpose — are refused), iss equal to the issuer exactly, aud holding
// the Resource's identifier (or one of its aliases), exp required, nbf
// and iat not in the future, each with the configured leeway. Anything
// else, with IntrospectionConfig set, is introspected (RFC 7662): active,
// iss (when given) the issuer, aud holding the identifier, exp not past.
// The scope claim is read as a space-separated string or an array, and
// scp (Entra ID, Okta) likewise. The claims must be valid JSON (UTF-8, no
// lone surrogate), no name twice in any object case ignored, and the
// claims read spelled exactly (claims.UnmarshalJSON).

// reason says why a token was refused.
type reason uint8

const (
	reasonOK          reason = iota
	reasonInvalid            // not a token this server can verify
	reasonRefused            // this issuer's JWT, refused for what it says: never introspected
	reasonExpired            // exp past (or nbf/iat ahead)
	reasonAudience           // for another resource
	reasonIssuer             // from another issuer
	reasonUnavailable        // keys or introspection unreachable: 503
	reasonTooLong            // over MaxTokenBytes
	numReasons
)

type claims struct {
	jwt.RegisteredClaims
	Scope    json.RawMessage `json:"scope,omitempty"`
	Scp      json.RawMessage `json:"scp,omitempty"`
	ClientID string          `json:"client_id,omitempty"`
	Azp      string          `json:"azp,omitempty"`
	// Cnf is the confirmation claim (RFC 7800) of a sender-constrained
	// token: bound to a DPoP key (RFC 9449, jkt) or a client certificate
	// (RFC 8705, x5t#S256). This server checks neither proof, so such a
	// token is refused: taken as a bearer token, a stolen one would work
	// here, which binding it was meant to prevent.
	Cnf json.RawMessage `json:"cnf,omitempty"`
}

// claimNames are the names of the claims fields, as RFC 7519, RFC 9068
// and RFC 8693 spell them.
var claimNames = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "scope", "scp", "client_id", "azp", "cnf"}

// claimKeys are the foldKeys of claimNames.
var claimKeys = func() []string {
	k := make([]string, len(claimNames))
	for i, n := range claimNames {
		k[i] = foldKey(n)
	}
	return k
}()

// errNotAccessToken refuses a JWT whose header says it is not an access
// token (typ) or needs extensions this verifier does not know (crit).
var errNotAccessToken = errors.New("auth: the JWT is not an access token this server takes (typ, crit)")

var errClaims = errors.New("auth: the claims are not one valid JSON object with each name spelled once and as registered")

// UnmarshalJSON holds the claims to what readJSON holds a fetched
// document to, and more: encoding/json matches a name to a field
// ignoring case (Unicode folding: "ſcope" is scope) and lets the last
// match win, so a name an issuer copied from a client or a user ("Scope",
// "AUD") would otherwise set the scopes, audience or identity.
//
// The dates (exp, nbf, iat) must be JSON numbers (RFC 7519 §2's
// NumericDate: a string holding one is refused, which encoding/json's
// json.Number would take) between years 1 and 9999: golang-jwt turns a
// date into time.Unix(int64(f), …), and past int64 (or near its top,
// where time.Unix's own seconds wrap) an nbf or iat far in the future
// came out billions of years ago and passed (found by review on
// 2026-12-07).
func (c *claims) UnmarshalJSON(b []byte) error {
	if !decode.Valid(b) || foldDuplicate(b) || badClaim(b) {
		return errClaims
	}
	type plain claims // without this method
	return json.Unmarshal(b, (*plain)(c))
}

// The NumericDates accepted: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59Z, what time.Unix and RFC 3339 both hold.
const (
	minDate = -62135596800
	maxDate = 253402300799
)

// badClaim reports whether the object v has a member whose name is one
// of claimNames only when case is ignored, or a date (exp, nbf, iat)
// that is not a JSON number between minDate and maxDate (null is left to
// the claims' decoding, which takes it as absent): one walk for both.
func badClaim(v []byte) bool {
	var it decode.Members
	for it.Reset(v); it.Next(); {
		name := string(it.Name())
		if it.NameEscaped() {
			q := append(append([]byte{'"'}, it.Name()...), '"')
			name = string(decode.AppendUnquoted(nil, q))
		}
		switch name {
		case "exp", "nbf", "iat":
			if badDate(it.Value()) {
				return true
			}
			continue
		}
		key := foldKey(name)
		for i, n := range claimNames {
			if key == claimKeys[i] && name != n {
				return true
			}
		}
	}
	return false
}

// badDate reports whether the claim value val is neither null nor a JSON
// number between minDate and maxDate.
func badDate(val []byte) bool {
	if string(val) == "null" {
		return false
	}
	if val[0] != '-' && (val[0] < '0' || val[0] > '9') {
		return true
	}
	f, err := strconv.ParseFloat(string(val), 64)
	return err != nil || f < minDate || f > maxDate
}

// verifyJWT verifies a JWT access token for a resource answering to
// audiences.
func (iss *Issuer) verifyJWT(ctx context.Context, token string, audiences []string) (*Token, *jwk, reason) {
	ks, err := iss.keySet(ctx)
	if err != nil {
		return nil, nil, reasonUnavailable
	}
	var (
		used       *jwk
		candidates []*jwk // the keys a token without kid may be signed by
	)
	keyfunc := func(t *jwt.Token) (any, error) {
		typ, ok := t.Header["typ"].(string)
		if _, present := t.Header["typ"]; present && !ok {
			return nil, errors.New("auth: typ is not a string")
		}
		switch strings.ToLower(typ) {
		case "", "jwt", "at+jwt", "application/at+jwt":
		default:
			return nil, errNotAccessToken
		}
		if _, present := t.Header["crit"]; present {
			// RFC 7515 §4.1.11: a recipient must refuse a token whose
			// crit lists an extension it does not understand, and this
			// verifier understands none.
			return nil, errNotAccessToken
		}
		alg := t.Method.Alg()
		kid, hasKID := t.Header["kid"].(string)
		if _, present := t.Header["kid"]; present && !hasKID {
			return nil, errors.New("auth: kid is not a string")
		}
		if !hasKID {
			var set jwt.VerificationKeySet
			for _, k := range ks.all {
				if k.fits(alg) && !k.revoked.Load() {
					set.Keys = append(set.Keys, k.key)
					candidates = append(candidates, k)
				}
			}
			if len(set.Keys) == 0 {
				return nil, errors.New("auth: no key fits")
			}
			if len(candidates) == 1 {
				used = candidates[0]
			}
			return set, nil
		}
		k := ks.byKID[kid]
		if k == nil {
			if fresh := iss.unknownKey(ctx, ks); fresh != nil {
				k = fresh.byKID[kid]
			}
		}
		if k == nil || !k.fits(alg) || k.revoked.Load() {
			return nil, errors.New("auth: no key for this kid and alg")
		}
		used = k
		return k.key, nil
	}
	var c claims
	p := jwt.NewParser(
		// Base64url exactly as RFC 7515 writes it: without it, the
		// unused bits of a segment's last character were ignored, and one
		// token had 16 spellings that all verified (found by review on
		// 2026-12-06), each a cache entry and, for a token naming no
		// subject nor client, a principal of its own.
		jwt.WithStrictDecoding(),
		jwt.WithValidMethods(iss.algs),
		jwt.WithIssuer(iss.URL()),
		jwt.WithAudience(audiences...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(iss.cfg.Leeway),
	)
	parsed, err := p.ParseWithClaims(token, &c, keyfunc)
	if err == nil && c.Cnf != nil && string(c.Cnf) != "null" {
		// Sender-constrained (see claims.Cnf): refused, and never
		// introspected, since an introspection answer that leaves cnf
		// out would let it through as a bearer token (found by review
		// on 2026-12-06).
		return nil, nil, reasonRefused
	}
	if errors.Is(err, errNotAccessToken) {
		return nil, nil, reasonRefused
	}
	if err == nil && used == nil && len(candidates) > 1 {
		// A token without kid, while more than one key fits (a rotation):
		// the key that verified it is the one whose removal from the JWKS
		// revokes it in the cache.
		used = signedBy(token, parsed, candidates)
	}
	if err != nil {
		switch {
		case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
			return nil, nil, reasonExpired
		case errors.Is(err, jwt.ErrTokenInvalidAudience):
			return nil, nil, reasonAudience
		case errors.Is(err, jwt.ErrTokenInvalidIssuer):
			return nil, nil, reasonIssuer
		}
		return nil, nil, reasonInvalid
	}
	tok := &Token{
		Issuer:   iss.cfg.URL,
		Subject:  c.Subject,
		ClientID: c.ClientID,
		ID:       c.ID,
		Audience: c.Audience,
		Expiry:   c.ExpiresAt.Time,
	}
	if tok.ClientID == "" {
		tok.ClientID = c.Azp
	}
	tok.ScopeNames = append(scopeNames(c.Scope), scopeNames(c.Scp)...)
	return tok, used, reasonOK
}

// signedBy returns the key among candidates whose signature t carries.
func signedBy(raw string, t *jwt.Token, candidates []*jwk) *jwk {
	i := strings.LastIndexByte(raw, '.')
	if i < 0 {
		return nil
	}
	for _, k := range candidates {
		if t.Method.Verify(raw[:i], t.Signature, k.key) == nil {
			return k
		}
	}
	return nil
}

// scopeNames reads a scope claim: a space-separated string or an array
// of strings; anything else holds no scope.
func scopeNames(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return splitScope(nil, s)
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		var out []string // not list[:0]: one element may hold several scopes
		for _, v := range list {
			out = splitScope(out, v)
		}
		return out
	}
	return nil
}

// splitScope appends the scope-tokens of s to dst. They are separated by
// SP alone (RFC 6749 §3.3): strings.Fields would also split at a tab or
// a U+00A0 inside one scope an issuer granted, and read scopes it did
// not grant.
func splitScope(dst []string, s string) []string {
	for _, f := range strings.Split(s, " ") {
		if f != "" {
			dst = append(dst, f)
		}
	}
	return dst
}

// introspection is the part of an RFC 7662 answer used here.
type introspection struct {
	Active   bool             `json:"active"`
	Scope    json.RawMessage  `json:"scope"`
	ClientID string           `json:"client_id"`
	Sub      string           `json:"sub"`
	Exp      *json.Number     `json:"exp"`
	Nbf      *json.Number     `json:"nbf"`
	Aud      jwt.ClaimStrings `json:"aud"`
	Iss      string           `json:"iss"`
	Jti      string           `json:"jti"`
	// TokenType is RFC 7662's token_type: a refresh token is never one
	// a resource server accepts (RFC 6749 §1.5), and the endpoint looks
	// a token up among every type whatever the hint (RFC 7662 §2.1).
	TokenType string `json:"token_type"`
	// Cnf: a sender-constrained token (claims.Cnf), refused.
	Cnf json.RawMessage `json:"cnf"`
}

// introspect asks the introspection endpoint about an opaque token. It
// returns the token and until when its answer may be cached.
func (iss *Issuer) introspect(ctx context.Context, token string, audiences []string) (*Token, time.Time, reason) {
	in := iss.cfg.Introspection
	if in == nil {
		return nil, time.Time{}, reasonInvalid
	}
	endpoint := in.Endpoint
	if endpoint == "" {
		if iss.meta.Load() == nil {
			if err := iss.wait(ctx, iss.retryFetch()); err != nil && iss.meta.Load() == nil {
				return nil, time.Time{}, reasonUnavailable
			}
		}
		if m := iss.meta.Load(); m != nil {
			endpoint = m.IntrospectionEndpoint
		}
		if endpoint == "" {
			return nil, time.Time{}, reasonUnavailable
		}
	}
	t := time.NewTimer(iss.cfg.FetchTimeout)
	defer t.Stop()
	select {
	case iss.introSem <- struct{}{}:
		defer func() { <-iss.introSem }()
	case <-t.C:
		return nil, time.Time{}, reasonUnavailable
	case <-ctx.Done():
		return nil, time.Time{}, reasonUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, iss.cfg.FetchTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, time.Time{}, reasonUnavailable
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	resp, err := iss.client.Do(req)
	if err != nil {
		return nil, time.Time{}, reasonUnavailable
	}
	defer resp.Body.Close()
	doc, err := readJSON(resp, endpoint)
	if err != nil {
		return nil, time.Time{}, reasonUnavailable
	}
	var r introspection
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if dec.Decode(&r) != nil {
		return nil, time.Time{}, reasonUnavailable
	}
	now := time.Now()
	switch {
	case !r.Active:
		return nil, time.Time{}, reasonInvalid
	case strings.EqualFold(r.TokenType, "refresh_token"), strings.EqualFold(r.TokenType, "refresh"):
		return nil, time.Time{}, reasonInvalid
	case r.Cnf != nil && string(r.Cnf) != "null", strings.EqualFold(r.TokenType, "DPoP"):
		// Sender-constrained (claims.Cnf; RFC 9449 §6.2 names DPoP-bound
		// tokens' type "DPoP").
		return nil, time.Time{}, reasonInvalid
	case r.Iss != "" && r.Iss != iss.URL() && strings.TrimSuffix(r.Iss, "/") != strings.TrimSuffix(iss.cfg.URL, "/"):
		// The metadata's spelling, or the configured one with or
		// without its trailing slash, as the metadata's is tolerated
		// (before the metadata is read its spelling is unknown).
		return nil, time.Time{}, reasonIssuer
	case !holdsAny(r.Aud, audiences):
		return nil, time.Time{}, reasonAudience
	}
	tok := &Token{Issuer: iss.cfg.URL, Subject: r.Sub, ClientID: r.ClientID, ID: r.Jti, Audience: r.Aud, Introspected: true}
	until := now.Add(in.TTL)
	if r.Exp != nil {
		sec, err := r.Exp.Int64()
		if err != nil {
			return nil, time.Time{}, reasonInvalid
		}
		tok.Expiry = time.Unix(sec, 0)
		if !tok.Expiry.Add(iss.cfg.Leeway).After(now) {
			return nil, time.Time{}, reasonExpired
		}
		if tok.Expiry.Before(until) {
			until = tok.Expiry
		}
	}
	if r.Nbf != nil {
		if sec, err := r.Nbf.Int64(); err != nil || time.Unix(sec, 0).After(now.Add(iss.cfg.Leeway)) {
			return nil, time.Time{}, reasonExpired
		}
	}
	tok.ScopeNames = scopeNames(r.Scope)
	return tok, until, reasonOK
}

func holdsAny(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}
