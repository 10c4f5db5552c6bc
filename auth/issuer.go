package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/rpcedge/rpcedge/decode"
)

// Defaults of IssuerConfig.
const (
	DefaultFetchTimeout       = 5 * time.Second
	DefaultKeyRefresh         = 15 * time.Minute
	DefaultUnknownKeyInterval = 30 * time.Second
	DefaultLeeway             = 30 * time.Second
	// MaxLeeway bounds IssuerConfig.Leeway.
	MaxLeeway                = 5 * time.Minute
	DefaultIntrospectionTTL  = time.Minute
	DefaultMaxIntrospections = 16
	// maxDocument bounds a fetched metadata, JWKS or introspection
	// document.
	maxDocument = 1 << 20
	// fetchBackoff is the least time between a failed fetch of the
	// metadata or keys and the next one a request starts: without it,
	// while the issuer is down or broken, every token not in the cache
	// (an attacker's, made up by the thousand) started one. It matches
	// the Retry-After: 1 of the 503 those requests get.
	fetchBackoff = time.Second
)

// DefaultAlgorithms are the JWS algorithms accepted unless
// IssuerConfig.Algorithms says otherwise: asymmetric ones only. "none" and
// the HMAC algorithms can never be allowed (a resource server that
// accepted HS256 could be handed a token signed with the issuer's public
// key).
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// IssuerConfig configures an Issuer: the authorization server whose
// tokens a Resource accepts. Zero fields take their documented default;
// negative durations are errors.
type IssuerConfig struct {
	// URL is the issuer identifier, as the authorization server's
	// metadata names it (RFC 8414 §2). Required; https, or http on a
	// loopback host (127.0.0.0/8, ::1, localhost) for tests. The
	// metadata's issuer must equal it (one trailing slash of difference
	// is tolerated, then the metadata's spelling is what iss must equal).
	URL string
	// MetadataURL is where the authorization server metadata is read.
	// Default: discovered as MCP's authorization spec lists it, first
	// RFC 8414 (/.well-known/oauth-authorization-server, inserted before
	// the issuer's path), then OpenID Connect Discovery (inserted, then
	// appended).
	MetadataURL string
	// Algorithms are the JWS algorithms accepted. Default
	// DefaultAlgorithms. "none" and HS* are refused.
	Algorithms []string
	// Leeway is the clock skew allowed on exp, nbf and iat. Default 30 s;
	// at most MaxLeeway (5 min).
	Leeway time.Duration
	// FetchTimeout bounds one fetch of metadata, keys or an
	// introspection, and so how long a request can wait on one. Default
	// 5 s.
	FetchTimeout time.Duration
	// KeyRefresh is how old the keys may get before the next request
	// that needs them fetches them again (in the background: it is
	// verified with the keys at hand). Default 15 min.
	KeyRefresh time.Duration
	// UnknownKeyInterval is the least time between two fetches caused by
	// a token whose kid the keys lack (a rotation, or an attack): one
	// request waits for such a fetch, at most FetchTimeout; within the
	// interval the token is refused at once. Default 30 s.
	UnknownKeyInterval time.Duration
	// Introspection, when set, verifies opaque (non-JWT) tokens with RFC
	// 7662 token introspection. Default nil: opaque tokens are refused.
	Introspection *IntrospectionConfig
	// HTTPClient makes the fetches. Default: a client with
	// FetchTimeout as its timeout and no redirects followed.
	HTTPClient *http.Client
	// Logger receives fetch failures. Default slog.Default().
	Logger *slog.Logger
}

// IntrospectionConfig configures RFC 7662 token introspection.
type IntrospectionConfig struct {
	// Endpoint is the introspection endpoint. Default: the metadata's
	// introspection_endpoint.
	Endpoint string
	// ClientID and ClientSecret authenticate this resource server to the
	// endpoint (HTTP Basic, RFC 7662 §2.1). Required.
	ClientID, ClientSecret string
	// TTL bounds how long an active answer is cached (it is never cached
	// past the token's exp): a revoked token is refused at most TTL
	// later. Default 1 min.
	TTL time.Duration
	// MaxConcurrent bounds introspection calls in flight; a token that
	// finds no room within FetchTimeout is answered 503. Default 16.
	MaxConcurrent int
}

// Issuer is an authorization server's identity and keys, as a Resource
// needs them: its metadata (fetched once), its JWKS (fetched on first use,
// again when older than KeyRefresh, and when a token names a kid it
// lacks, at most once per UnknownKeyInterval), and its introspection
// endpoint. Fetches never hold a lock that requests take, concurrent
// needs share one fetch, and after a failed one requests start no other
// for a second (they are answered 503 meanwhile). An Issuer is safe for concurrent use and may
// serve several Resources.
type Issuer struct {
	cfg    IssuerConfig
	client *http.Client
	log    *slog.Logger
	algs   []string

	meta        atomic.Pointer[asMetadata]
	keys        atomic.Pointer[keySet]
	lastUnknown atomic.Int64
	lastFailure atomic.Int64 // unix nanoseconds; 0 after a success
	hitLook     atomic.Int64 // unix nanoseconds before which no cache hit looks at the keys' age

	mu       sync.Mutex
	inflight *fetch // the refresh in progress, or nil

	introSem chan struct{}
}

// asMetadata is the part of RFC 8414 metadata a resource server uses.
type asMetadata struct {
	Issuer                string   `json:"issuer"`
	JWKSURI               string   `json:"jwks_uri"`
	TokenEndpoint         string   `json:"token_endpoint"`
	IntrospectionEndpoint string   `json:"introspection_endpoint"`
	ScopesSupported       []string `json:"scopes_supported"`
	source                string
}

type fetch struct {
	done chan struct{}
	err  error
}

// NewIssuer returns an Issuer for cfg. It fetches nothing: call Refresh
// to fetch the metadata and keys at once (to fail early at start-up), or
// let the first request do it.
func NewIssuer(cfg IssuerConfig) (*Issuer, error) {
	var errs []error
	u, err := url.Parse(cfg.URL)
	if cfg.URL == "" || err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || !secureURL(u) {
		errs = append(errs, fmt.Errorf("auth: issuer %q: want an https URL (http only on a loopback host), without query or fragment", cfg.URL))
	}
	if cfg.MetadataURL != "" {
		if m, err := url.Parse(cfg.MetadataURL); err != nil || !secureURL(m) {
			errs = append(errs, fmt.Errorf("auth: metadata URL %q: want an https URL (http only on a loopback host)", cfg.MetadataURL))
		}
	}
	if cfg.Algorithms == nil {
		cfg.Algorithms = DefaultAlgorithms
	}
	for _, a := range cfg.Algorithms {
		if !slices.Contains(DefaultAlgorithms, a) {
			errs = append(errs, fmt.Errorf("auth: algorithm %q is not allowed (only %s)", a, strings.Join(DefaultAlgorithms, ", ")))
		}
	}
	dur := func(name string, p *time.Duration, def time.Duration) {
		if *p < 0 {
			errs = append(errs, fmt.Errorf("auth: %s %v is negative", name, *p))
		} else if *p == 0 {
			*p = def
		}
	}
	dur("Leeway", &cfg.Leeway, DefaultLeeway)
	dur("FetchTimeout", &cfg.FetchTimeout, DefaultFetchTimeout)
	dur("KeyRefresh", &cfg.KeyRefresh, DefaultKeyRefresh)
	dur("UnknownKeyInterval", &cfg.UnknownKeyInterval, DefaultUnknownKeyInterval)
	if cfg.Leeway > MaxLeeway {
		errs = append(errs, fmt.Errorf("auth: Leeway %v is over %v", cfg.Leeway, MaxLeeway))
	}
	if in := cfg.Introspection; in != nil {
		c := *in
		if c.ClientID == "" {
			errs = append(errs, errors.New("auth: Introspection needs a ClientID"))
		}
		if c.Endpoint != "" {
			if e, err := url.Parse(c.Endpoint); err != nil || !secureURL(e) {
				errs = append(errs, fmt.Errorf("auth: introspection endpoint %q: want an https URL (http only on a loopback host)", c.Endpoint))
			}
		}
		dur("Introspection.TTL", &c.TTL, DefaultIntrospectionTTL)
		if c.MaxConcurrent < 0 {
			errs = append(errs, errors.New("auth: Introspection.MaxConcurrent is negative"))
		} else if c.MaxConcurrent == 0 {
			c.MaxConcurrent = DefaultMaxIntrospections
		}
		cfg.Introspection = &c
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	iss := &Issuer{cfg: cfg, client: cfg.HTTPClient, log: cfg.Logger, algs: slices.Clone(cfg.Algorithms)}
	if iss.client == nil {
		iss.client = &http.Client{
			Timeout:       cfg.FetchTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if iss.log == nil {
		iss.log = slog.Default()
	}
	if cfg.Introspection != nil {
		iss.introSem = make(chan struct{}, cfg.Introspection.MaxConcurrent)
	}
	return iss, nil
}

// URL returns the issuer identifier: the metadata's spelling once
// fetched, else the configured one.
func (iss *Issuer) URL() string {
	if m := iss.meta.Load(); m != nil {
		return m.Issuer
	}
	return iss.cfg.URL
}

// TokenEndpoint returns the metadata's token_endpoint, "" before the
// metadata was fetched.
func (iss *Issuer) TokenEndpoint() string {
	if m := iss.meta.Load(); m != nil {
		return m.TokenEndpoint
	}
	return ""
}

// MetadataURL returns where the metadata was read, "" before it was.
func (iss *Issuer) MetadataURL() string {
	if m := iss.meta.Load(); m != nil {
		return m.source
	}
	return iss.cfg.MetadataURL
}

// Refresh fetches the metadata (the first time) and the keys now, and
// waits for them, at most until ctx ends.
func (iss *Issuer) Refresh(ctx context.Context) error {
	f := iss.startFetch()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startFetch starts a refresh, or joins the one in progress.
func (iss *Issuer) startFetch() *fetch {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	if f := iss.inflight; f != nil {
		return f
	}
	return iss.startLocked()
}

// retryFetch is startFetch for a request: it joins the refresh in
// progress, but starts none while the last one failed less than
// fetchBackoff ago, and returns nil then.
func (iss *Issuer) retryFetch() *fetch {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	if f := iss.inflight; f != nil {
		return f
	}
	if t := iss.lastFailure.Load(); t != 0 && time.Now().UnixNano()-t < int64(fetchBackoff) {
		return nil
	}
	return iss.startLocked()
}

// startLocked starts a refresh; iss.mu is held and none is in progress.
func (iss *Issuer) startLocked() *fetch {
	f := &fetch{done: make(chan struct{})}
	iss.inflight = f
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), iss.cfg.FetchTimeout)
		defer cancel()
		f.err = iss.fetchAll(ctx)
		if f.err != nil {
			iss.log.Warn("auth: fetching the issuer's metadata or keys failed", "issuer", iss.cfg.URL, "error", f.err)
			iss.lastFailure.Store(time.Now().UnixNano())
		} else {
			iss.lastFailure.Store(0)
		}
		iss.mu.Lock()
		iss.inflight = nil
		iss.mu.Unlock()
		close(f.done)
	}()
	return f
}

func (iss *Issuer) fetchAll(ctx context.Context) error {
	m := iss.meta.Load()
	if m == nil {
		var err error
		if m, err = iss.discover(ctx); err != nil {
			return err
		}
		iss.meta.Store(m)
	}
	if m.JWKSURI == "" {
		if iss.cfg.Introspection != nil {
			return nil // opaque tokens only
		}
		return errors.New("auth: the issuer's metadata names no jwks_uri")
	}
	doc, err := iss.get(ctx, m.JWKSURI)
	if err != nil {
		return err
	}
	ks, skipped, err := parseJWKS(doc, iss.keys.Load(), time.Now().UnixNano())
	if err != nil {
		return err
	}
	if skipped > 0 {
		iss.log.Info("auth: JWKS keys skipped (unsupported type, weak, encryption or duplicate kid)", "skipped", skipped)
	}
	iss.keys.Store(ks)
	return nil
}

// discover reads the authorization server metadata.
func (iss *Issuer) discover(ctx context.Context) (*asMetadata, error) {
	var errs []error
	for _, u := range iss.metadataURLs() {
		doc, err := iss.get(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var m asMetadata
		if err := json.Unmarshal(doc, &m); err != nil {
			errs = append(errs, fmt.Errorf("auth: %s: %w", u, err))
			continue
		}
		want := iss.cfg.URL
		if m.Issuer != want && strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(want, "/") {
			return nil, fmt.Errorf("auth: %s names issuer %q, not %q (RFC 8414 §3.3)", u, m.Issuer, want)
		}
		for _, e := range []string{m.JWKSURI, m.IntrospectionEndpoint} {
			if e == "" {
				continue
			}
			if p, err := url.Parse(e); err != nil || !secureURL(p) {
				return nil, fmt.Errorf("auth: %s: endpoint %q is not https", u, e)
			}
		}
		m.source = u
		return &m, nil
	}
	return nil, fmt.Errorf("auth: no authorization server metadata for %s: %w", iss.cfg.URL, errors.Join(errs...))
}

// metadataURLs lists where the metadata may be, in MCP's order.
func (iss *Issuer) metadataURLs() []string {
	if iss.cfg.MetadataURL != "" {
		return []string{iss.cfg.MetadataURL}
	}
	u, _ := url.Parse(iss.cfg.URL)
	base := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + p,
		base + "/.well-known/openid-configuration" + p,
		base + p + "/.well-known/openid-configuration",
	}
}

// get fetches a JSON document.
func (iss *Issuer) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := iss.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readJSON(resp, u)
}

// readJSON reads an authorization server's JSON answer (metadata, JWKS,
// introspection) from u: status 200, at most maxDocument bytes, one valid
// JSON text with no member name twice in any object, case ignored.
func readJSON(resp *http.Response, u string) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("auth: %s: %w", u, err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("auth: %s: status %d", u, resp.StatusCode)
	case len(body) > maxDocument:
		return nil, fmt.Errorf("auth: %s: over %d bytes", u, maxDocument)
	case !decode.Valid(body):
		// encoding/json reads the first value and ignores what follows,
		// and takes invalid UTF-8 and lone surrogates as U+FFFD.
		return nil, fmt.Errorf("auth: %s: not one valid JSON text (RFC 8259, UTF-8)", u)
	case foldDuplicate(body):
		// encoding/json matches names to fields ignoring case and lets
		// the last match win, which need not be what the server meant
		// ("active":false,"Active":true).
		return nil, fmt.Errorf("auth: %s: a member name appears twice (case ignored), or nesting deeper than %d", u, maxNesting)
	}
	return body, nil
}

// foldDuplicate reports whether an object anywhere in the valid JSON
// value v holds two names that are equal under Unicode simple case
// folding once unescaped — the names encoding/json takes for one field —
// or whether v nests deeper than maxNesting (refused too: no document or
// claims set an issuer sends needs it). One pass, linear in len(v): a
// walk that recursed per level re-read every level below, and a forged
// token's claims nested 2,600 deep cost 30-100 times a flat one before
// any signature was checked; a fetched document 48 Ki deep, seconds
// (found by review on 2026-12-06).
func foldDuplicate(v []byte) bool {
	type level struct {
		obj  bool
		seen map[string]struct{}
	}
	var stack []level
	name := false // the next string is a member name
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '{', '[':
			if len(stack) == maxNesting {
				return true
			}
			stack = append(stack, level{obj: v[i] == '{'})
			name = v[i] == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			name = false
		case ',':
			name = len(stack) > 0 && stack[len(stack)-1].obj
		case '"':
			j, esc := i+1, false
			for ; j < len(v) && v[j] != '"'; j++ {
				if v[j] == '\\' {
					j++
					esc = true
				}
			}
			if j >= len(v) {
				return true // not valid JSON: callers check it first
			}
			if name {
				n := string(v[i+1 : j])
				if esc {
					n = string(decode.AppendUnquoted(nil, v[i:j+1]))
				}
				top := &stack[len(stack)-1]
				if top.seen == nil {
					top.seen = make(map[string]struct{})
				}
				key := foldKey(n)
				if _, dup := top.seen[key]; dup {
					return true
				}
				top.seen[key] = struct{}{}
				name = false
			}
			i = j
		}
	}
	return false
}

// maxNesting is the deepest nesting of objects and arrays foldDuplicate
// lets through.
const maxNesting = 64

// foldKey maps s to one representative of its case-folding class: each
// rune becomes the smallest rune of its simple folding orbit (K, k and
// the Kelvin sign all become K), so two names are equal ignoring case
// exactly when their keys are equal.
func foldKey(s string) string {
	b := make([]rune, 0, len(s))
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b = append(b, low)
	}
	return string(b)
}

var errKeysUnavailable = errors.New("auth: the issuer's keys are unavailable")

// keySet returns the keys, fetching them when there are none yet
// (waiting at most FetchTimeout) and starting a background refresh when
// they are older than KeyRefresh.
func (iss *Issuer) keySet(ctx context.Context) (*keySet, error) {
	ks := iss.keys.Load()
	if ks == nil {
		if err := iss.wait(ctx, iss.retryFetch()); err != nil {
			return nil, errKeysUnavailable
		}
		if ks = iss.keys.Load(); ks == nil {
			return nil, errKeysUnavailable
		}
		return ks, nil
	}
	if time.Now().UnixNano()-ks.at > int64(iss.cfg.KeyRefresh) {
		iss.retryFetch()
	}
	return ks, nil
}

// hitLookEvery is how often at most a cache hit looks at the keys' age.
const hitLookEvery = time.Second

// refreshIfStale is keySet's refresh for a request the token cache
// answered, at its time now (unix nanoseconds): when the keys are older
// than KeyRefresh it starts a refresh in the background (or joins the one
// in progress), so that a key dropped from the JWKS revokes the tokens it
// signed within about KeyRefresh even while every request is a cache hit
// (found by review on 2026-12-07: only a miss looked, and a leaked key's
// token stayed accepted until its exp). At most one hit a second takes
// the lock to look; the others pay an atomic load and a compare.
func (iss *Issuer) refreshIfStale(now int64) {
	ks := iss.keys.Load()
	if ks == nil || now-ks.at <= int64(iss.cfg.KeyRefresh) {
		return
	}
	next := iss.hitLook.Load()
	if now < next || !iss.hitLook.CompareAndSwap(next, now+int64(hitLookEvery)) {
		return
	}
	iss.retryFetch()
}

// wait waits for f, at most FetchTimeout or until ctx ends. A nil f is
// a fetch not started (retryFetch): it fails at once.
func (iss *Issuer) wait(ctx context.Context, f *fetch) error {
	if f == nil {
		return errKeysUnavailable
	}
	t := time.NewTimer(iss.cfg.FetchTimeout)
	defer t.Stop()
	select {
	case <-f.done:
		return f.err
	case <-t.C:
		return context.DeadlineExceeded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unknownKey is called for a kid that seen, the keys a request looked
// in, lacks. It returns the keys to look in again, or nil: the current
// keys when they were refreshed since seen was read; else, once a
// refresh is in flight (another request's, or a periodic one), the keys
// it brings, waiting for it at most FetchTimeout; else, at most once per
// UnknownKeyInterval, those of a refresh it starts. Every request with a
// new kid during a key rotation thus waits for the one refresh, rather
// than get 401 while it runs (found by review on 2026-12-06: MCP clients
// take a 401 for a bad token and authorize again).
func (iss *Issuer) unknownKey(ctx context.Context, seen *keySet) *keySet {
	iss.mu.Lock()
	if cur := iss.keys.Load(); cur != seen {
		iss.mu.Unlock()
		return cur
	}
	f := iss.inflight
	if f == nil {
		now := time.Now().UnixNano()
		if now-iss.lastUnknown.Load() < int64(iss.cfg.UnknownKeyInterval) {
			iss.mu.Unlock()
			return nil
		}
		iss.lastUnknown.Store(now)
		f = iss.startLocked()
	}
	iss.mu.Unlock()
	if iss.wait(ctx, f) != nil {
		return nil
	}
	return iss.keys.Load()
}

// secureURL reports whether u is https, or http on a loopback host.
func secureURL(u *url.URL) bool {
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}
