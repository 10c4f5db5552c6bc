package auth

import (
	"strings"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// ScopeSet is a set of the scopes a Resource knows, one bit each, in the
// order the Resource numbered them (see Resource.Scopes). The zero value
// is the empty set. Scopes a Resource does not know are not in any
// ScopeSet: they cannot be required, so they never matter.
type ScopeSet uint64

// Has reports whether s holds every scope of want.
func (s ScopeSet) Has(want ScopeSet) bool { return s&want == want }

// Missing returns the scopes of want that s lacks.
func (s ScopeSet) Missing(want ScopeSet) ScopeSet { return want &^ s }

// MaxScopes is the most distinct scopes one Resource can know.
const MaxScopes = 64

// Token is a verified access token: who it was issued to and what it
// allows. The server shares one Token between every request that carries
// the same token while it is cached: a Token must not be modified.
type Token struct {
	// Issuer is the issuer as configured (IssuerConfig.URL), whose
	// metadata and iss claim may spell it with one trailing slash more or
	// less: one spelling for every token of the issuer, JWT or
	// introspected, before and after the metadata is read, so that a
	// principal does not change with it (found by review on 2026-12-06).
	Issuer string
	// Subject is the sub claim: the resource owner, or the client itself
	// in a client-credentials grant.
	Subject string
	// ClientID is the client_id claim (RFC 9068), or azp when there is
	// no client_id; empty when the token names neither.
	ClientID string
	// ID is the jti claim, empty when absent.
	ID string
	// Audience is the aud claim; it holds the Resource's identifier.
	Audience []string
	// Expiry is the exp claim.
	Expiry time.Time
	// ScopeNames are every scope the token carries (scope, or scp), as
	// given, including scopes the Resource does not know.
	ScopeNames []string
	// Scopes are the token's scopes that the Resource knows.
	Scopes ScopeSet
	// Introspected says the token was opaque and RFC 7662 introspection
	// vouched for it.
	Introspected bool

	// nameless is a digest of the token, set when it names neither
	// subject nor client: its principal.
	nameless string
}

// Principal names who the token speaks for, to key what a client owns
// (an A2A task, an MCP session): its issuer and subject, or its client id
// when it names no subject. Tokens of one principal give the same string;
// tokens of two issuers never do. A verified token that names neither
// (RFC 7662 requires neither) is its own principal: no other token
// reaches what it owns, not even a later one of the same client.
func (t *Token) Principal() string {
	switch {
	case t.Subject != "":
		return t.Issuer + " sub " + t.Subject
	case t.ClientID == "" && t.nameless != "":
		return t.Issuer + " token " + t.nameless
	}
	return t.Issuer + " client " + t.ClientID
}

// HasScope reports whether the token carries the named scope.
func (t *Token) HasScope(name string) bool {
	for _, s := range t.ScopeNames {
		if s == name {
			return true
		}
	}
	return false
}

// FromRequest returns the verified token the request was let through
// with, or nil when its endpoint does not authorize (auth off). It
// allocates nothing.
func FromRequest(r *fastserver.Request) *Token {
	t, _ := r.Auth.(*Token)
	return t
}

// scopeTable numbers the scopes a Resource knows.
type scopeTable struct {
	names []string
	index map[string]int
}

func (t *scopeTable) add(name string) (ScopeSet, error) {
	if i, ok := t.index[name]; ok {
		return 1 << i, nil
	}
	if len(t.names) == MaxScopes {
		return 0, errTooManyScopes
	}
	if t.index == nil {
		t.index = make(map[string]int)
	}
	t.index[name] = len(t.names)
	t.names = append(t.names, name)
	return 1 << (len(t.names) - 1), nil
}

// set returns the ScopeSet of the known names among names.
func (t *scopeTable) set(names []string) ScopeSet {
	var s ScopeSet
	for _, n := range names {
		if i, ok := t.index[n]; ok {
			s |= 1 << i
		}
	}
	return s
}

// list returns the names of s, in table order, space-separated.
func (t *scopeTable) list(s ScopeSet) string {
	var b strings.Builder
	for i, n := range t.names {
		if s&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

// validScope reports whether s is a scope-token (RFC 6749 §3.3):
// printable ASCII but space, '"' and '\'.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
