package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// keyAuthorization is the Authorization field's key, looked up once.
var keyAuthorization = fastserver.NewHeaderKey("Authorization")

// JSON-RPC error codes of the authorization refusals. JSON-RPC leaves
// codes outside -32768..-32000 to applications; these are the ones the
// A2A Go SDK uses, on both endpoints, so that a client can tell a refusal
// for want of credentials from a malformed request by its code alone.
const (
	// CodeUnauthorized (-31401) answers a request without valid
	// credentials: HTTP 401, or 400 for a malformed Authorization field.
	CodeUnauthorized = -31401
	// CodeForbidden (-31403) answers a valid token that lacks a scope the
	// operation needs: HTTP 403 with error="insufficient_scope".
	CodeForbidden = -31403
)

// Defaults of ResourceConfig.
const (
	DefaultCacheSize     = 10000
	DefaultMaxTokenBytes = 8 << 10
)

// ResourceConfig configures a Resource: one protected endpoint.
type ResourceConfig struct {
	// Resource is the resource identifier (RFC 9728 §1.2, RFC 8707): the
	// endpoint's canonical absolute URI, such as "https://host/mcp",
	// without query or fragment; a trailing slash is dropped. Tokens
	// must name it in aud (one trailing slash of difference tolerated).
	// Required.
	Resource string
	// Aliases are other identifiers tokens for this resource may name in
	// aud, such as the origin "https://host" that the root metadata
	// document describes. Default none.
	Aliases []string
	// Scopes are required on every request to the endpoint, and named in
	// the scope= of its challenges. Default none: any valid token for
	// the resource will do.
	Scopes []string
	// ScopesSupported are advertised in the metadata besides Scopes and
	// every scope passed to Require.
	ScopesSupported []string
	// Name is the metadata's resource_name. Optional.
	Name string
	// DocumentationURL is the metadata's resource_documentation.
	// Optional.
	DocumentationURL string
	// CacheSize bounds the verified-token cache, in entries. Each entry
	// holds a copy of its token (about 1 KiB for a typical JWT). Default
	// 10,000.
	CacheSize int
	// MaxTokenBytes bounds a token's length: a longer one is refused
	// before it is parsed. Default 8 KiB.
	MaxTokenBytes int
}

// Resource is one protected endpoint: the token check of its requests
// (Authorize, the contract's row 2a), the scope checks of its operations
// (Require, Forbidden), its protected resource metadata (RFC 9728) and its
// challenges (RFC 6750 §3). It keeps verified tokens in a bounded cache.
// Register scopes with Require before serving; a Resource is then safe
// for concurrent use.
type Resource struct {
	iss       *Issuer
	id        string
	audiences []string
	metaURL   string
	metaPath  string
	name, doc string

	mu        sync.Mutex
	table     scopeTable
	required  ScopeSet
	supported []string
	closed    bool        // registration is over (under mu)
	sealed    atomic.Bool // the refusals are rendered

	cache    *tokenCache
	maxToken int
	verified atomic.Uint64 // tokens verified (cache misses that got that far)

	// Built when sealed.
	once       sync.Once
	errNone    *fastserver.Error
	errRequest *fastserver.Error
	errQuery   *fastserver.Error
	errReason  [numReasons]*fastserver.Error
	forbidden  sync.Map // ScopeSet → *fastserver.Error
}

// NewResource returns the Resource for cfg, verifying tokens of iss.
func NewResource(iss *Issuer, cfg ResourceConfig) (*Resource, error) {
	if iss == nil {
		return nil, errors.New("auth: NewResource with a nil Issuer")
	}
	id, err := canonicalResource(cfg.Resource)
	if err != nil {
		return nil, err
	}
	r := &Resource{iss: iss, id: id, name: cfg.Name, doc: cfg.DocumentationURL}
	r.audiences = []string{id, id + "/"}
	for _, a := range cfg.Aliases {
		ca, err := canonicalResource(a)
		if err != nil {
			return nil, err
		}
		r.audiences = append(r.audiences, ca, ca+"/")
	}
	r.metaURL, r.metaPath = metadataLocation(id)
	for _, s := range cfg.Scopes {
		if err := resourceScope(s); err != nil {
			return nil, err
		}
		bit, err := r.table.add(s)
		if err != nil {
			return nil, err
		}
		r.required |= bit
		r.addSupported(s)
	}
	for _, s := range cfg.ScopesSupported {
		if err := resourceScope(s); err != nil {
			return nil, err
		}
		if _, err := r.table.add(s); err != nil {
			return nil, err
		}
		r.addSupported(s)
	}
	if cfg.CacheSize < 0 || cfg.MaxTokenBytes < 0 {
		return nil, errors.New("auth: CacheSize and MaxTokenBytes must not be negative")
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.MaxTokenBytes == 0 {
		cfg.MaxTokenBytes = DefaultMaxTokenBytes
	}
	r.cache = newTokenCache(cfg.CacheSize)
	r.maxToken = cfg.MaxTokenBytes
	return r, nil
}

var errTooManyScopes = fmt.Errorf("auth: a Resource knows at most %d scopes", MaxScopes)

func (r *Resource) addSupported(s string) {
	for _, v := range r.supported {
		if v == s {
			return
		}
	}
	r.supported = append(r.supported, s)
}

// canonicalResource checks and normalizes a resource identifier.
func canonicalResource(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("auth: resource %q: want an absolute http(s) URI without query, fragment or user info", s)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// metadataLocation returns the RFC 9728 §3.1 URL of a resource's
// metadata (the well-known segment inserted between host and path) and
// its path.
func metadataLocation(id string) (string, string) {
	u, _ := url.Parse(id)
	p := "/.well-known/oauth-protected-resource" + u.EscapedPath()
	return u.Scheme + "://" + u.Host + p, p
}

// Identifier returns the resource identifier.
func (r *Resource) Identifier() string { return r.id }

// Issuer returns the issuer whose tokens the Resource accepts.
func (r *Resource) Issuer() *Issuer { return r.iss }

// MetadataURL returns the URL of the resource's metadata: the
// resource_metadata of its challenges.
func (r *Resource) MetadataURL() string { return r.metaURL }

// MetadataPath returns the path to serve ServeMetadata at, such as
// "/.well-known/oauth-protected-resource/mcp".
func (r *Resource) MetadataPath() string { return r.metaPath }

// Required returns the scopes every request needs (ResourceConfig.Scopes).
func (r *Resource) Required() ScopeSet { return r.required }

// Scopes returns the names of s, space-separated, in the Resource's order.
func (r *Resource) Scopes(s ScopeSet) string { return r.table.list(s) }

// resourceScope checks a scope a resource names (ResourceConfig.Scopes,
// ScopesSupported, Require): a scope-token, and not offline_access, which
// asks the authorization server for a refresh token and which a resource
// never needs: MCP has resource servers leave it out of challenges and
// scopes_supported (found by review on 2026-12-06: it went into both).
func resourceScope(s string) error {
	if !validScope(s) {
		return fmt.Errorf("auth: scope %q is not a valid scope-token", s)
	}
	if s == "offline_access" {
		return errors.New("auth: scope offline_access is the client's to ask the authorization server for, never a resource's to require or advertise")
	}
	return nil
}

// ScopesSupported returns the scopes the metadata advertises.
func (r *Resource) ScopesSupported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.supported...)
}

// Require registers scopes an operation needs (a tool's, say) and
// returns their set, for Token.Scopes.Has and Forbidden. It fails for an
// invalid scope-token, past MaxScopes distinct scopes, and once the
// Resource has verified a token (register before serving).
func (r *Resource) Require(scopes ...string) (ScopeSet, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errors.New("auth: Require after the Resource started verifying tokens")
	}
	var set ScopeSet
	for _, s := range scopes {
		if err := resourceScope(s); err != nil {
			return 0, err
		}
		bit, err := r.table.add(s)
		if err != nil {
			return 0, err
		}
		set |= bit
		r.addSupported(s)
	}
	return set, nil
}

// seal ends registration and renders the metadata and challenges.
func (r *Resource) seal() {
	r.once.Do(func() {
		r.mu.Lock()
		r.closed = true // no more Require
		r.mu.Unlock()
		// sealed is set last: a request that sees it finds every refusal
		// rendered (one that does not waits in once.Do).
		defer r.sealed.Store(true)
		meta := `Bearer resource_metadata="` + r.metaURL + `"`
		none := meta
		if r.required != 0 {
			none += `, scope="` + r.table.list(r.required) + `"`
		}
		r.errNone = challenge(401, CodeUnauthorized, "unauthorized: an access token is required (Authorization: Bearer)", none)
		r.errRequest = challenge(400, CodeUnauthorized, "unauthorized: the Authorization field is malformed",
			meta+`, error="invalid_request", error_description="malformed Authorization field"`)
		r.errQuery = challenge(400, CodeUnauthorized, "unauthorized: access tokens are accepted only in the Authorization header",
			meta+`, error="invalid_request", error_description="access tokens in the URI are not accepted"`)
		// A token refused names the endpoint's scopes too (MCP: servers
		// SHOULD name them; a client re-authorizing after its token
		// expired asks for them, else for every scope the metadata
		// lists: found by review on 2026-12-07).
		invalid := func(desc string) *fastserver.Error {
			return challenge(401, CodeUnauthorized, "unauthorized: "+desc,
				none+`, error="invalid_token", error_description="`+desc+`"`)
		}
		r.errReason[reasonInvalid] = invalid("the access token is not valid")
		r.errReason[reasonRefused] = r.errReason[reasonInvalid]
		r.errReason[reasonExpired] = invalid("the access token expired or is not valid yet")
		r.errReason[reasonAudience] = invalid("the access token is for another resource")
		r.errReason[reasonIssuer] = invalid("the access token is from another issuer")
		r.errReason[reasonTooLong] = invalid("the access token is too long")
		r.errReason[reasonUnavailable] = &fastserver.Error{Status: 503, Code: -32603, RetryAfter: 1,
			Message: "the authorization server cannot be reached to verify the access token"}
	})
}

func challenge(status, code int, msg, wwwAuthenticate string) *fastserver.Error {
	return &fastserver.Error{Status: status, Code: code, Message: msg,
		Header: []fastserver.HeaderField{{Name: "WWW-Authenticate", Value: wwwAuthenticate}}}
}

// Authorize is the endpoint hook (fastserver.Endpoint.Authorize): it
// reads the Authorization field (all its lines combined) and the
// request-target, and lets the request through with its *Token in r.Auth,
// or refuses it. It allocates nothing for a token in the cache.
func (r *Resource) Authorize(req *fastserver.Request) *fastserver.Error {
	tok, e := r.authenticate(req.Context(), req.HeaderOf(keyAuthorization), req.RequestURI(), req.Time())
	if e != nil {
		return e
	}
	if tok == nil { // cannot happen; never let a request through without a token
		return r.errReason[reasonInvalid]
	}
	req.Auth = tok
	return nil
}

// Authenticate decides the authorization row for an Authorization field
// value (nil when absent) and a request-target: the verified token, or
// the refusal to answer:
//
//   - an access_token query parameter (RFC 6750 §2.3, which MCP forbids):
//     400 error="invalid_request", whatever else the request carries;
//   - no Authorization, or another scheme than Bearer: 401 with a bare
//     challenge (resource_metadata, and scope= when the endpoint
//     requires scopes), RFC 6750 §3.1;
//   - Bearer without exactly one token68 (two lines, say): 400
//     error="invalid_request";
//   - a token that fails verification: 401 error="invalid_token";
//   - keys or introspection unreachable: 503, Retry-After: 1;
//   - a valid token without the endpoint's scopes: 403
//     error="insufficient_scope" naming every required scope.
func (r *Resource) Authenticate(ctx context.Context, authorization, requestURI []byte) (*Token, *fastserver.Error) {
	return r.authenticate(ctx, authorization, requestURI, time.Now())
}

// authenticate is Authenticate at the time at: the request's own, which
// the server read anyway (a clock read is a fifth of a cached check).
func (r *Resource) authenticate(ctx context.Context, authorization, requestURI []byte, at time.Time) (*Token, *fastserver.Error) {
	if !r.sealed.Load() {
		r.seal()
	}
	if queryToken(requestURI) {
		return nil, r.errQuery
	}
	raw, cred := bearerToken(authorization)
	switch cred {
	case credNone:
		return nil, r.errNone
	case credMalformed:
		return nil, r.errRequest
	}
	if len(raw) > r.maxToken {
		return nil, r.errReason[reasonTooLong]
	}
	now := at.UnixNano()
	tok := r.cache.get(raw, now)
	if tok != nil {
		r.iss.refreshIfStale(now)
	} else {
		if !isToken68(raw) {
			return nil, r.errRequest
		}
		var why reason
		if tok, why = r.verify(ctx, raw, now); why != reasonOK {
			return nil, r.errReason[why]
		}
	}
	if !tok.Scopes.Has(r.required) {
		return nil, r.Forbidden(0)
	}
	return tok, nil
}

// verify verifies a token the cache does not hold, and caches it.
func (r *Resource) verify(ctx context.Context, raw []byte, now int64) (*Token, reason) {
	r.verified.Add(1)
	s := string(raw)
	var (
		tok   *Token
		key   *jwk
		why   reason
		until time.Time
	)
	isJWT := strings.Count(s, ".") == 2
	signed := raw // what the principal of a token naming no one is a digest of
	if isJWT {
		tok, key, why = r.iss.verifyJWT(ctx, s, r.audiences)
		if why == reasonOK {
			until = tok.Expiry
			// Its header and claims, not its signature's spelling: an
			// ECDSA signature (r, s) has a twin, (r, n−s), that verifies
			// too (found by review on 2026-12-07: the twin was another
			// principal), and an issuer may sign the same claims twice.
			signed = raw[:bytes.LastIndexByte(raw, '.')]
		}
	}
	if !isJWT || (why == reasonInvalid || why == reasonUnavailable) && r.iss.cfg.Introspection != nil {
		// Not a JWT this issuer's keys verify (an opaque token may hold
		// two dots, as PASETO's do; an issuer may publish no keys at
		// all): its introspection endpoint, when there is one, decides.
		tok, until, why = r.iss.introspect(ctx, s, r.audiences)
		key, signed = nil, raw
	}
	if why != reasonOK {
		return nil, why
	}
	tok.Scopes = r.table.set(tok.ScopeNames)
	if tok.Subject == "" && tok.ClientID == "" {
		// Else every such token of the issuer would share one principal,
		// and so one another's sessions and tasks.
		sum := sha256.Sum256(signed)
		tok.nameless = hex.EncodeToString(sum[:16])
	}
	exp := until.UnixNano()
	if until.Unix() >= math.MaxInt64/int64(time.Second) {
		// Past 2262 UnixNano wraps, often below now: never cached.
		exp = math.MaxInt64
	}
	r.cache.put(raw, exp, now, tok, key)
	return tok, reasonOK
}

// Forbidden returns the 403 refusal for an operation that needs need
// (besides the endpoint's required scopes): error="insufficient_scope"
// with scope= naming every scope the operation needs, as MCP's step-up
// authorization reads it. The refusal is built once per set.
func (r *Resource) Forbidden(need ScopeSet) *fastserver.Error {
	need |= r.required
	if e, ok := r.forbidden.Load(need); ok {
		return e.(*fastserver.Error)
	}
	names := r.table.list(need)
	e := challenge(403, CodeForbidden, "forbidden: the access token lacks a scope this needs: "+names,
		`Bearer resource_metadata="`+r.metaURL+`", error="insufficient_scope", scope="`+names+`", error_description="the access token lacks a required scope"`)
	v, _ := r.forbidden.LoadOrStore(need, e)
	return v.(*fastserver.Error)
}

// CacheStats returns the number of tokens in the verified-token cache,
// and how many tokens were verified (signature or introspection) rather
// than found in it.
func (r *Resource) CacheStats() (entries int, verified uint64) {
	return r.cache.len(), r.verified.Load()
}
