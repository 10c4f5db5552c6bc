// Package app is the rpcedge demo server that cmd/rpcedge runs: the MCP
// endpoint at /mcp and the A2A endpoint at /a2a with the demo content of
// the wire contract (§4, §5), the agent card, health and metrics, on
// fastserver. cmd/loadgen's -self mode and the tests start it in-process.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/fleet"
	"github.com/rpcedge/rpcedge/internal/demo"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
)

// Options configures the demo server.
type Options struct {
	// Server is the fastserver configuration (Addr, limits, timeouts).
	Server fastserver.Config
	// PublicURL is the absolute base URL the server is reached at
	// ("https://agents.example.com"): the A2A card's URLs, and the default
	// of Auth.Audience. Empty: the card's URLs come from each request's
	// Host header.
	PublicURL string
	// Stdio serves MCP over standard input and output instead of HTTP.
	Stdio bool
	// Transport is the HTTP server the endpoints are served by: "fasthttp"
	// (the default) or "nethttp" (net/http, HTTP/2 over TLS); both run
	// the same pipeline (fastserver.Server.HTTPHandler).
	Transport string
	// TLSCert and TLSKey, when set, serve HTTPS with this PEM certificate
	// and key, reloaded on SIGHUP.
	TLSCert, TLSKey string
	// Redis, when set ("redis://127.0.0.1:6379/0"), makes this process
	// one instance of a fleet sharing state in Redis (package fleet): the
	// rate limit (Server.RateLimit, RateBurst) holds fleet-wide, A2A
	// tasks are kept in Redis, and their changes reach the A2A streams of
	// every instance (Redis pub/sub).
	Redis string
	// Instance names this process in logs and metrics (and in the fleet's
	// membership). Default: the host name with Redis, none without.
	Instance string
	// Instances is the fleet's size an instance assumes until Redis has
	// counted the instances (fleet.Options.Instances): with it, instances
	// started while Redis is down share the rate limit instead of each
	// allowing all of it. 0 or 1: alone.
	Instances int
	// Tasks bounds the A2A task store; the zero value keeps a2a.Config's
	// defaults.
	Tasks TaskLimits
	// Auth turns OAuth on for /mcp and /a2a; the zero value leaves it off.
	Auth AuthOptions
	// Demo chooses the MCP content: "" or "default" for the contract's
	// demo (§4), "conformance" for the fixtures of the official MCP
	// conformance suite (internal/demo/conformance.go).
	Demo string
	// Sessions turns on MCP sessions for 2025-xx clients (mcp.WithSessions
	// with its defaults): resource subscriptions delivered on a GET
	// stream. Off by default: the server is stateless.
	Sessions bool
}

// Demos names the MCP contents ParseFlags accepts for -demo.
var Demos = []string{"default", "conformance"}

// AuthOptions configures the demo server as an OAuth 2.1 protected
// resource. With Issuer empty, authorization is off and the server
// answers exactly as without it.
type AuthOptions struct {
	// Issuer is the authorization server's issuer identifier.
	Issuer string
	// Audience is /mcp's resource identifier, the aud its tokens must
	// name, such as "https://host/mcp". Default: PublicURL + "/mcp".
	Audience string
	// A2AAudience is /a2a's. Default: Audience's origin + "/a2a".
	A2AAudience string
	// Scopes are required on every /mcp request; A2AScopes on every /a2a
	// request.
	Scopes, A2AScopes []string
	// ToolScopes are per-tool scopes (tool name → scopes).
	ToolScopes map[string][]string
	// MetricsPublic leaves /metrics open while authorization is on. By
	// default it then needs a valid token for /mcp, as Prometheus's
	// oauth2 scrape configuration sends one.
	MetricsPublic bool
	// IntrospectionClientID and IntrospectionSecret turn on RFC 7662
	// introspection of opaque tokens at the issuer's introspection
	// endpoint.
	IntrospectionClientID, IntrospectionSecret string
}

// enabled reports whether authorization is on.
func (o *AuthOptions) enabled() bool { return o.Issuer != "" }

// App is a configured demo server.
type App struct {
	opts    Options
	mcp     *mcp.Server
	a2a     *a2a.Server
	demo    *demo.A2ADemo
	srv     *fastserver.Server
	fleet   *fleet.Fleet
	limiter *fleet.Limiter
	broker  *fleet.Broker
	updates *fleet.ResourceUpdates
	issuer  *auth.Issuer
}

// TaskLimits bounds the A2A tasks kept: a2a.Config's MaxTasks,
// MaxTaskBytes, MaxOwnerTasks and MaxOwnerTaskBytes, 0 for their
// defaults (10,000 tasks and 64 MiB, an owner a tenth of each). With
// Redis the fleet's store applies them as fleet.TaskOptions' MaxTasks,
// MaxBytes, MaxOwnerTasks and MaxOwnerBytes, whose defaults are its own
// (100,000 tasks and 1 GiB, an owner a tenth of each).
type TaskLimits struct {
	MaxTasks          int
	MaxTaskBytes      int64
	MaxOwnerTasks     int
	MaxOwnerTaskBytes int64
}

// New builds the demo server.
func New(opts Options) (*App, error) { return newApp(context.Background(), opts) }

// newApp builds the demo server; ctx's end cuts short the wait for the
// authorization server at start.
func newApp(ctx context.Context, opts Options) (*App, error) {
	base := opts.Server.Logger
	if base == nil {
		base = slog.Default()
	}
	if opts.Instance != "" {
		if opts.Server.Logger == nil {
			opts.Server.Logger = slog.Default()
		}
		opts.Server.Logger = opts.Server.Logger.With("instance", opts.Instance)
	}
	app := &App{opts: opts}
	var (
		mcpRes, a2aRes *auth.Resource
		mopts          []mcp.Option
		err            error
	)
	if opts.Auth.enabled() {
		if app.issuer, mcpRes, a2aRes, err = newAuth(&opts); err != nil {
			return nil, err
		}
		// Fetch the issuer's metadata and keys before serving, so that the
		// card names the real token endpoint and a misconfiguration shows
		// at once; if the issuer is down, requests fetch them later.
		fetch, cancel := context.WithTimeout(ctx, startFetch)
		if err := app.issuer.Refresh(fetch); err != nil && ctx.Err() == nil {
			base.Warn("authorization server not reachable at start; tokens are verified once it is", "issuer", opts.Auth.Issuer, "error", err)
		}
		cancel()
		mopts = append(mopts, mcp.WithAuth(mcpRes))
	}
	if opts.Sessions {
		mopts = append(mopts, mcp.WithSessions(mcp.SessionOptions{}))
	}
	if p := taskIDPrefix(opts.Instance, opts.Redis != ""); p != "" {
		// MCP tasks live in the instance that runs them: their ids name
		// it, for a balancer to route tasks/* by Mcp-Name (README, fleet).
		mopts = append(mopts, mcp.WithTasks(mcp.TaskOptions{IDPrefix: p}))
	}
	var tasks a2a.TaskStore
	var events a2a.Broker
	if opts.Redis != "" && !opts.Stdio {
		if err := app.joinFleet(&tasks, base); err != nil {
			return nil, err
		}
		events = app.broker
		// MCP resource updates noticed on one instance reach the listen
		// streams of all.
		mopts = append(mopts, mcp.WithRelay(app.updates))
	}
	var m *mcp.Server
	switch opts.Demo {
	case "", "default":
		m, err = demo.MCPScoped(opts.Auth.ToolScopes, mopts...)
	case "conformance":
		if opts.Auth.ToolScopes != nil {
			return nil, errors.New("per-tool scopes apply to the default demo's tools, not to -demo conformance")
		}
		m, err = demo.Conformance(mopts...)
	default:
		err = fmt.Errorf("unknown demo %q (want one of %s)", opts.Demo, strings.Join(Demos, ", "))
	}
	if err != nil {
		app.closeFleet()
		return nil, fmt.Errorf("mcp demo: %w", err)
	}
	app.mcp = m
	more := app.opts.Server.MoreMetrics
	app.opts.Server.MoreMetrics = func(w io.Writer) { // and the MCP task store's
		if more != nil {
			more(w)
		}
		m.WritePrometheus(w)
	}
	ao := demo.A2AOptions{PublicURL: opts.PublicURL, Tasks: tasks, Events: events,
		MaxTasks: opts.Tasks.MaxTasks, MaxTaskBytes: opts.Tasks.MaxTaskBytes,
		MaxOwnerTasks: opts.Tasks.MaxOwnerTasks, MaxOwnerTaskBytes: opts.Tasks.MaxOwnerTaskBytes}
	if a2aRes != nil {
		ao.Auth = &demo.A2AAuth{Resource: a2aRes, TokenURL: tokenURL(app.issuer), MetadataURL: metadataURL(app.issuer), Scopes: opts.Auth.A2AScopes}
	}
	d, err := demo.NewA2A(ao)
	if err != nil {
		app.closeFleet()
		return nil, fmt.Errorf("a2a demo: %w", err)
	}
	app.a2a, app.demo = d.Server, d
	if opts.Stdio {
		return app, nil
	}
	if mcpRes != nil && !opts.Auth.MetricsPublic {
		app.opts.Server.MetricsGuard = mcpRes.Guard(0)
	}
	srv, err := fastserver.New(app.opts.Server, m.Endpoint(), app.a2a.Endpoint())
	if err == nil {
		err = srv.HandleGET("/.well-known/agent-card.json", app.a2a.ServeCard)
	}
	if err == nil && mcpRes != nil {
		err = mountMetadata(srv, mcpRes, a2aRes)
	}
	if err != nil {
		app.closeFleet()
		d.Close()
		return nil, err
	}
	app.srv = srv
	return app, nil
}

// startFetch bounds how long New waits for the issuer's metadata and keys.
const startFetch = 10 * time.Second

// newAuth builds the issuer and the two resources: /mcp's and /a2a's,
// each answering also to the origin, which the root metadata document
// describes.
func newAuth(opts *Options) (*auth.Issuer, *auth.Resource, *auth.Resource, error) {
	o := &opts.Auth
	var in *auth.IntrospectionConfig
	if o.IntrospectionClientID != "" {
		in = &auth.IntrospectionConfig{ClientID: o.IntrospectionClientID, ClientSecret: o.IntrospectionSecret}
	}
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: o.Issuer, Introspection: in, Logger: opts.Server.Logger})
	if err != nil {
		return nil, nil, nil, err
	}
	aud := o.Audience
	if aud == "" {
		if opts.PublicURL == "" {
			return nil, nil, nil, errors.New("auth: -auth-audience (or -public-url) is required with -auth-issuer")
		}
		aud = strings.TrimRight(opts.PublicURL, "/") + mcp.Path
	}
	u, err := url.Parse(aud)
	if err != nil || u.Host == "" {
		return nil, nil, nil, fmt.Errorf("auth: audience %q is not an absolute URL", aud)
	}
	origin := u.Scheme + "://" + u.Host
	a2aAud := o.A2AAudience
	if a2aAud == "" {
		a2aAud = origin + a2a.DefaultPath
	}
	mcpRes, err := auth.NewResource(iss, auth.ResourceConfig{Resource: aud, Aliases: []string{origin}, Scopes: o.Scopes, Name: "rpcedge MCP"})
	if err != nil {
		return nil, nil, nil, err
	}
	a2aRes, err := auth.NewResource(iss, auth.ResourceConfig{Resource: a2aAud, Aliases: []string{origin}, Scopes: o.A2AScopes, Name: "rpcedge A2A"})
	if err != nil {
		return nil, nil, nil, err
	}
	for name := range o.ToolScopes {
		if name != "echo" && name != "add" {
			return nil, nil, nil, fmt.Errorf("auth: -auth-tool-scope names tool %q; the demo has echo and add", name)
		}
	}
	return iss, mcpRes, a2aRes, nil
}

// tokenURL is the token endpoint the A2A card names: the metadata's once
// fetched, else the issuer's conventional /token.
func tokenURL(iss *auth.Issuer) string {
	if t := iss.TokenEndpoint(); t != "" {
		return t
	}
	return strings.TrimRight(iss.URL(), "/") + "/token"
}

// metadataURL is the authorization server metadata URL the card names.
func metadataURL(iss *auth.Issuer) string {
	if m := iss.MetadataURL(); m != "" {
		return m
	}
	u, _ := url.Parse(iss.URL())
	return u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.EscapedPath(), "/")
}

// mountMetadata serves the RFC 9728 documents: each resource's at its
// path-inserted URL, and the root document describing the origin.
func mountMetadata(srv *fastserver.Server, res ...*auth.Resource) error {
	var scopes []string
	for _, r := range res {
		if err := srv.HandleGET(r.MetadataPath(), r.ServeMetadata); err != nil {
			return err
		}
		scopes = append(scopes, r.ScopesSupported()...)
	}
	first := res[0]
	u, _ := url.Parse(first.Identifier())
	if u.EscapedPath() == "" {
		return nil // the resource is the origin: its document is the root one
	}
	root := func(ctx *fasthttp.RequestCtx) {
		auth.ServeMetadata(ctx, auth.Metadata{
			Resource:               u.Scheme + "://" + u.Host,
			AuthorizationServers:   []string{first.Issuer().URL()},
			ScopesSupported:        scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "rpcedge",
		})
	}
	return srv.HandleGET("/.well-known/oauth-protected-resource", root)
}

// Issuer returns the authorization server the demo trusts, nil with
// authorization off.
func (a *App) Issuer() *auth.Issuer { return a.issuer }

// joinFleet connects to Redis: the fleet-wide limiter (when a rate is
// set), the task store and the fleet's metrics.
func (a *App) joinFleet(tasks *a2a.TaskStore, logger *slog.Logger) error {
	c := &a.opts.Server
	f, err := fleet.New(fleet.Options{URL: a.opts.Redis, Instance: a.opts.Instance, Instances: a.opts.Instances, Logger: logger})
	if err != nil {
		return err
	}
	a.fleet = f
	if c.RateLimit > 0 {
		l, err := f.Limiter(fleet.LimiterOptions{Rate: c.RateLimit, Burst: c.RateBurst, Clients: c.RateClients})
		if err != nil {
			f.Close()
			return err
		}
		a.limiter = l
		c.RateLimiter = l
	}
	tl := a.opts.Tasks
	ts, err := f.TaskStore(fleet.TaskOptions{MaxTasks: tl.MaxTasks, MaxOwnerTasks: tl.MaxOwnerTasks,
		MaxBytes: tl.MaxTaskBytes, MaxOwnerBytes: tl.MaxOwnerTaskBytes})
	if err != nil {
		a.closeFleet()
		return err
	}
	*tasks = ts
	a.broker = f.Broker()
	a.updates = f.ResourceUpdates()
	more := c.MoreMetrics
	c.MoreMetrics = func(w io.Writer) {
		if more != nil {
			more(w)
		}
		f.WritePrometheus(w)
	}
	return nil
}

// close releases what New started, for an App that never served: the
// demo's background work and the fleet (its membership and lease tokens,
// which the other instances would otherwise count until they expire).
func (a *App) close() {
	a.demo.Close()
	a.closeFleet()
}

// closeFleet gives back unspent lease tokens and leaves the fleet.
func (a *App) closeFleet() {
	if a.updates != nil {
		a.updates.Close()
	}
	if a.broker != nil {
		a.broker.Close()
	}
	if a.limiter != nil {
		a.limiter.Close()
	}
	if a.fleet != nil {
		a.fleet.Close()
	}
}

// Fleet returns the fleet connection (nil without Options.Redis).
func (a *App) Fleet() *fleet.Fleet { return a.fleet }

// A2A returns the A2A server.
func (a *App) A2A() *a2a.Server { return a.a2a }

// Server returns the HTTP server (nil in stdio mode).
func (a *App) Server() *fastserver.Server { return a.srv }

// Serve serves HTTP on ln until Shutdown.
func (a *App) Serve(ln net.Listener) error {
	if a.srv == nil {
		return errors.New("app: Serve in stdio mode")
	}
	if a.opts.Transport == "nethttp" {
		return a.srv.ServeNetHTTP(ln)
	}
	return a.srv.Serve(ln)
}

// Shutdown stops the HTTP server gracefully (see fastserver.Server.Shutdown),
// then the MCP tasks still running, the demo's background work and the
// fleet connection.
func (a *App) Shutdown(ctx context.Context) error {
	var err error
	if a.srv != nil {
		err = a.srv.Shutdown(ctx)
	}
	a.mcp.Close()
	a.demo.Close()
	a.closeFleet()
	return err
}

// ServeStdio serves MCP over r and w, one message per line (contract §6).
func (a *App) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return fastserver.ServeLines(ctx, a.mcp.StreamEndpoint(), a.opts.Server, r, w)
}

// Start listens on opts.Server.Addr (use "127.0.0.1:0" for a free port)
// and serves in the background. It returns the base URL
// ("http://127.0.0.1:PORT") and a stop function that shuts the server
// down and waits for it.
func Start(opts Options) (url string, stop func() error, err error) {
	a, err := New(opts)
	if err != nil {
		return "", nil, err
	}
	if a.srv == nil {
		a.close()
		return "", nil, errors.New("app: Start in stdio mode")
	}
	ln, err := net.Listen("tcp", a.srv.Config().Addr)
	if err != nil {
		a.close()
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ln) }()
	stop = func() error {
		err := a.Shutdown(context.Background())
		if serr := <-done; err == nil {
			err = serr
		}
		return err
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// Main runs the rpcedge command: it parses args, serves until SIGINT or
// SIGTERM (or the end of standard input with -stdio), and returns the
// exit code: 0 after a clean shutdown, 1 on a failure, 2 on bad flags.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := ParseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	// Listen for SIGINT and SIGTERM before anything slow (the issuer's
	// metadata, Redis): a signal during start-up would otherwise kill the
	// process with the signal's default action, half-joined to a fleet
	// and with a non-zero status, where the contract says exit 0.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	// SIGHUP reloads the certificate; without one there is nothing to
	// reload, but its default action would still kill the server
	// mid-request, so it is caught in every HTTP run, from the start.
	hup := make(chan os.Signal, 1)
	if !opts.Stdio {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	opts.Server.Logger = logger
	var kp *fastserver.KeyPair
	if opts.TLSCert != "" {
		if kp, err = fastserver.LoadKeyPair(opts.TLSCert, opts.TLSKey); err != nil {
			fmt.Fprintln(stderr, "rpcedge:", err)
			return 2
		}
		opts.Server.TLS = kp.TLSConfig()
		warnCert(logger, kp, opts.PublicURL)
		if fi, err := os.Stat(opts.TLSKey); err == nil && fi.Mode().Perm()&0o077 != 0 {
			// Not refused: mounted secrets are often group-readable on
			// purpose. Said once, at start, where the operator looks.
			logger.Warn("the TLS private key is readable by users other than its owner", "key", opts.TLSKey, "mode", fi.Mode().Perm().String())
		}
	}
	if opts.Auth.enabled() && opts.Auth.IntrospectionSecret == "" {
		opts.Auth.IntrospectionSecret = os.Getenv("RPCEDGE_INTROSPECTION_SECRET")
	}
	a, err := newApp(ctx, opts)
	if a != nil {
		logger = a.opts.Server.Logger
	}
	if err != nil {
		fmt.Fprintln(stderr, "rpcedge:", err)
		return 2
	}
	if ctx.Err() != nil {
		// Nothing was accepted: leave the fleet and stop.
		a.close()
		logger.Info("stopped during start-up")
		return 0
	}
	if opts.Stdio {
		// SIGINT or SIGTERM stops it even while it waits for input; the
		// message being handled is answered within the grace period
		// (contract §6), after which the process exits anyway.
		defer a.Shutdown(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.ServeStdio(ctx, stdin, stdout) }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			g := a.opts.Server.ShutdownGrace
			if g <= 0 {
				g = fastserver.DefaultShutdownGrace
			}
			grace := time.NewTimer(g)
			defer grace.Stop()
			select {
			case err = <-done:
			case <-grace.C:
				logger.Warn("stdio: the grace period passed with a message still being handled", "grace", g)
				return 0
			}
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "rpcedge:", err)
			return 1
		}
		return 0
	}
	ln, err := net.Listen("tcp", a.srv.Config().Addr)
	if err != nil {
		a.close()
		fmt.Fprintln(stderr, "rpcedge:", err)
		return 1
	}
	scheme := "http"
	if kp != nil {
		scheme = "https"
	}
	fmt.Fprintf(stderr, "listening on %s://%s\n", scheme, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ln) }()
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(stderr, "rpcedge:", err)
				return 1
			}
			return 0
		case <-hup:
			// New connections get the reloaded certificate; open ones
			// keep theirs. A failed reload keeps the old one.
			if kp == nil {
				logger.Info("SIGHUP: nothing to reload without -tls-cert")
			} else if err := kp.Reload(); err != nil {
				logger.Error("TLS certificate not reloaded; serving the previous one", "error", err)
			} else {
				logger.Info("TLS certificate reloaded", "cert", opts.TLSCert)
				warnCert(logger, kp, opts.PublicURL)
			}
		case <-ctx.Done():
			break wait
		}
	}
	logger.Info("shutting down", "grace", a.srv.Config().ShutdownGrace)
	serr := a.Shutdown(context.Background())
	<-done
	st := a.srv.Stats()
	logger.Info("stopped", "entered", st.Entered, "answered", st.Answered)
	if serr != nil {
		fmt.Fprintln(stderr, "rpcedge: shutdown:", serr)
		return 1
	}
	return 0
}

// warnCert warns of a certificate that clients will refuse although it
// loaded: one not valid yet, or one that does not name -public-url's host
// (the name the A2A card sends clients to).
func warnCert(logger *slog.Logger, kp *fastserver.KeyPair, publicURL string) {
	c, err := kp.GetCertificate(nil)
	if err != nil || c.Leaf == nil {
		return
	}
	if now := time.Now(); now.Before(c.Leaf.NotBefore) {
		logger.Warn("the TLS certificate is not valid yet", "not_before", c.Leaf.NotBefore.UTC())
	}
	if u, err := url.Parse(publicURL); err == nil && u.Scheme == "https" && u.Hostname() != "" {
		if err := c.Leaf.VerifyHostname(u.Hostname()); err != nil {
			logger.Warn("the TLS certificate does not name -public-url's host", "host", u.Hostname(), "error", err)
		}
	}
}

// ParseFlags parses the command line of cmd/rpcedge. On a bad flag it
// prints the error and usage to stderr.
func ParseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	c := &o.Server
	fs := flag.NewFlagSet("rpcedge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", fastserver.DefaultAddr, "listen address; binds beyond loopback only when this says so")
	fs.StringVar(&o.PublicURL, "public-url", "", "absolute base URL the server is reached at (for the A2A card); default: from each request's Host")
	fs.Func("max-body", "body ceiling, wire and decoded, in bytes or with a K/M/KiB/MiB suffix (default 1MiB, at most 128MiB)", func(v string) (err error) {
		c.MaxBodyBytes, err = parseSize(v)
		return err
	})
	fs.IntVar(&c.MaxDepth, "max-depth", fastserver.DefaultMaxDepth, "nesting limit; the top-level value is level 1")
	fs.Float64Var(&c.RateLimit, "rate", 0, "requests per second allowed per client; 0 turns rate limiting off")
	fs.IntVar(&c.RateBurst, "burst", 0, "token bucket size of the rate limit (default: the rate rounded up)")
	fs.Func("trusted-proxies", "comma-separated IPs or CIDRs whose forwarding header (-proxy-header) keys the rate limit and -max-client-streams", func(v string) error {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			p, err := netip.ParsePrefix(part)
			if err != nil {
				a, aerr := netip.ParseAddr(part)
				if aerr != nil {
					return fmt.Errorf("%q is neither an IP nor a CIDR", part)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			c.TrustedProxies = append(c.TrustedProxies, p)
		}
		return nil
	})
	fs.StringVar(&c.ProxyHeader, "proxy-header", fastserver.ProxyHeaderXForwardedFor, "the header the trusted proxies name the client in: X-Forwarded-For or Forwarded (RFC 7239)")
	fs.Int64Var(&c.MinBodyRate, "min-body-rate", fastserver.DefaultMinBodyRate, "slowest a request body may arrive, bytes per second since the request began; slower is cut off (408)")
	fs.DurationVar(&c.MinBodyRateGrace, "min-body-rate-grace", fastserver.DefaultMinBodyRateGrace, "how long a body may take before -min-body-rate applies")
	fs.Func("allow-origin", "an origin allowed besides loopback ones (scheme://host[:port], or *); repeatable, or comma-separated", func(v string) error {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				o, err := fastserver.CanonicalOrigin(part)
				if err != nil {
					return err
				}
				c.AllowedOrigins = append(c.AllowedOrigins, o)
			}
		}
		return nil
	})
	fs.DurationVar(&c.ReadTimeout, "read-timeout", fastserver.DefaultReadTimeout, "read timeout of a connection")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", fastserver.DefaultWriteTimeout, "write timeout of a connection")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", fastserver.DefaultIdleTimeout, "how long an idle keep-alive connection is kept")
	fs.DurationVar(&c.HandlerTimeout, "handler-timeout", fastserver.DefaultHandlerTimeout, "handler deadline")
	fs.IntVar(&c.MaxConns, "max-conns", fastserver.DefaultMaxConns, "concurrent connections; past it the connection idle longest (1 s between requests, or 5 s silent since accepted) is closed to admit a new one, else a plain 503")
	fs.DurationVar(&c.ShutdownGrace, "grace", fastserver.DefaultShutdownGrace, "how long shutdown waits for requests in flight")
	fs.IntVar(&c.MaxStreams, "max-streams", fastserver.DefaultMaxStreams, "event streams open at once (A2A SendStreamingMessage/SubscribeToTask, MCP); past it 503")
	fs.IntVar(&c.MaxClientStreams, "max-client-streams", 0, "event streams one client (its address, IPv6 by /64; behind -trusted-proxies the forwarded one) may hold at once; past it 503; 0: no bound per client")
	fs.StringVar(&c.HealthPath, "health-path", "/healthz", "path of the health check")
	fs.StringVar(&c.MetricsPath, "metrics-path", "/metrics", "path of the Prometheus exposition")
	fs.BoolVar(&c.NoMetrics, "no-metrics", false, "serve no metrics route")
	fs.StringVar(&o.Transport, "transport", "fasthttp", "HTTP server: fasthttp, or nethttp (net/http; HTTP/2 with -tls-cert)")
	fs.BoolVar(&o.Stdio, "stdio", false, "serve MCP over standard input and output, one message per line")
	fs.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); reloaded with -tls-key on SIGHUP")
	fs.StringVar(&o.TLSKey, "tls-key", "", "the PEM private key of -tls-cert")
	fs.BoolVar(&o.Sessions, "sessions", false, "MCP sessions for 2025-xx clients (Mcp-Session-Id, resource subscriptions on a GET stream, DELETE); default stateless")
	fs.StringVar(&o.Demo, "demo", "default", "MCP content to serve: default (the contract's demo) or conformance (the fixtures of the official MCP conformance suite)")
	fs.BoolVar(&c.AccessLog, "access-log", false, "log one line per request (costs allocations)")
	au := &o.Auth
	fs.StringVar(&au.Issuer, "auth-issuer", "", "OAuth authorization server (issuer URL) whose access tokens /mcp and /a2a require; empty: no authorization")
	fs.StringVar(&au.Audience, "auth-audience", "", "resource identifier of /mcp, the aud its tokens must name (default: -public-url + /mcp)")
	fs.StringVar(&au.A2AAudience, "auth-a2a-audience", "", "resource identifier of /a2a (default: -auth-audience's origin + /a2a)")
	fs.Func("auth-scopes", "comma-separated scopes every /mcp request needs", func(v string) error {
		au.Scopes = append(au.Scopes, splitList(v)...)
		return nil
	})
	fs.Func("auth-a2a-scopes", "comma-separated scopes every /a2a request needs", func(v string) error {
		au.A2AScopes = append(au.A2AScopes, splitList(v)...)
		return nil
	})
	fs.Func("auth-tool-scope", "TOOL=SCOPE[+SCOPE…]: scopes a tool needs besides -auth-scopes; repeatable", func(v string) error {
		name, list, ok := strings.Cut(v, "=")
		if !ok || name == "" || list == "" {
			return fmt.Errorf("%q: want TOOL=SCOPE[+SCOPE…]", v)
		}
		if au.ToolScopes == nil {
			au.ToolScopes = map[string][]string{}
		}
		au.ToolScopes[name] = append(au.ToolScopes[name], strings.Split(list, "+")...)
		return nil
	})
	fs.BoolVar(&au.MetricsPublic, "metrics-public", false, "with -auth-issuer, leave /metrics open (default: it needs a valid token for /mcp)")
	fs.StringVar(&au.IntrospectionClientID, "auth-introspection-client", "", "client id for RFC 7662 introspection of opaque tokens (secret from $RPCEDGE_INTROSPECTION_SECRET)")
	fs.StringVar(&o.Redis, "redis", "", "Redis `URL` (redis://127.0.0.1:6379/0) shared by a fleet of instances: -rate holds fleet-wide, A2A tasks live in Redis")
	fs.StringVar(&o.Instance, "instance", "", "`name` of this instance in logs and metrics and at the start of its MCP task ids (default with -redis: the host name)")
	fs.IntVar(&o.Instances, "instances", 0, "with -redis, the fleet's `size` assumed until Redis has counted the instances: the rate limit's share of an instance started while Redis is down (default 1: alone)")
	tl := &o.Tasks
	fs.IntVar(&tl.MaxTasks, "a2a-max-tasks", 0, "A2A tasks kept, the oldest evicted past it (default 10000; with -redis, fleet-wide)")
	fs.IntVar(&tl.MaxOwnerTasks, "a2a-owner-tasks", 0, "A2A tasks kept for one client (with -auth-issuer: one token subject), its own oldest evicted past it (default a tenth of -a2a-max-tasks)")
	fs.Func("a2a-max-task-bytes", "A2A task store budget in bytes or with a K/M/KiB/MiB suffix (default 64MiB; with -redis, fleet-wide, default 1GiB)", func(v string) (err error) {
		n, err := parseSize(v)
		tl.MaxTaskBytes = int64(n)
		return err
	})
	fs.Func("a2a-owner-task-bytes", "one client's share of -a2a-max-task-bytes (default a tenth; with -redis, fleet-wide, at least the fleet's 1MiB bound on one task)", func(v string) (err error) {
		n, err := parseSize(v)
		tl.MaxOwnerTaskBytes = int64(n)
		return err
	})
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments: %q", fs.Args())
		fmt.Fprintln(stderr, "rpcedge:", err)
		fs.Usage()
		return o, err
	}
	if !slices.Contains(Demos, o.Demo) {
		err := fmt.Errorf("-demo %q: want one of %s", o.Demo, strings.Join(Demos, ", "))
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if au.Issuer == "" && (au.Audience != "" || au.A2AAudience != "" || au.Scopes != nil || au.A2AScopes != nil || au.ToolScopes != nil || au.IntrospectionClientID != "" || au.MetricsPublic) {
		err := errors.New("the -auth-* flags and -metrics-public need -auth-issuer")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if u, err := url.Parse(au.Issuer); err == nil && u.User != nil {
		// The issuer URL is logged whenever its metadata cannot be
		// fetched: a password in it would end up in the logs.
		err := errors.New("-auth-issuer: an issuer URL carries no user or password")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if o.Transport != "fasthttp" && o.Transport != "nethttp" {
		err := fmt.Errorf("-transport %q: want fasthttp or nethttp", o.Transport)
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		err := errors.New("-tls-cert and -tls-key go together")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if o.Stdio && (o.TLSCert != "" || o.Transport != "fasthttp") {
		// Accepted and then ignored, they would promise an HTTPS or
		// net/http server that is never started.
		err := errors.New("-tls-cert and -transport configure the HTTP server: not with -stdio")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if o.Redis != "" && o.Stdio {
		err := errors.New("-redis serves HTTP instances: not with -stdio")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if tl.MaxTasks < 0 || tl.MaxOwnerTasks < 0 || tl.MaxTasks > a2a.MaxMaxTasks || tl.MaxOwnerTasks > a2a.MaxMaxTasks {
		err := fmt.Errorf("-a2a-max-tasks and -a2a-owner-tasks are counts: 0 (the default) to %d", a2a.MaxMaxTasks)
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if o.Stdio && au.Issuer != "" {
		// Over stdio there is no OAuth: a tool scoped with
		// -auth-tool-scope would answer anyone (found by review on
		// 2026-12-07: accepted, with a log saying tokens are verified).
		err := errors.New("-auth-issuer and the -auth-* flags protect the HTTP endpoints: not with -stdio, which has no tokens")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if err := checkServeFlags(c, o, *au); err != nil {
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	if o.Instances < 0 || o.Instances > 0 && o.Redis == "" {
		err := errors.New("-instances is the size of a fleet: a positive count, with -redis")
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	for _, p := range []struct{ flag, v string }{{"-health-path", c.HealthPath}, {"-metrics-path", c.MetricsPath}} {
		if err := fastserver.CheckPath(p.v); err != nil {
			err = fmt.Errorf("%s %q: %w", p.flag, p.v, err)
			fmt.Fprintln(stderr, "rpcedge:", err)
			return o, err
		}
	}
	if err := validateFlags(c); err != nil {
		fmt.Fprintln(stderr, "rpcedge:", err)
		return o, err
	}
	return o, nil
}

// checkServeFlags refuses, naming the flag, values the server, the fleet
// or the authorization would refuse only once started (exit 1, naming a
// Config field or none; found by review on 2026-12-07), and empty values
// that would silently take a default nobody gave.
func checkServeFlags(c *fastserver.Config, o Options, au AuthOptions) error {
	if !o.Stdio {
		_, port, err := net.SplitHostPort(c.Addr)
		if c.Addr == "" || err != nil {
			return fmt.Errorf("-addr %q: want host:port (127.0.0.1:8080, [::1]:8080, :8080 for every interface)", c.Addr)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("-addr %q: the port %q is not 0 to 65535", c.Addr, port)
		}
	}
	if c.ProxyHeader != fastserver.ProxyHeaderXForwardedFor && c.ProxyHeader != fastserver.ProxyHeaderForwarded {
		return fmt.Errorf("-proxy-header %q: want %s or %s", c.ProxyHeader, fastserver.ProxyHeaderXForwardedFor, fastserver.ProxyHeaderForwarded)
	}
	own := []string{mcp.Path, a2a.DefaultPath, "/.well-known/agent-card.json"}
	for _, p := range []struct{ flag, v string }{{"-health-path", c.HealthPath}, {"-metrics-path", c.MetricsPath}} {
		if slices.Contains(own, p.v) {
			return fmt.Errorf("%s %q: the path of an endpoint (%s)", p.flag, p.v, strings.Join(own, ", "))
		}
	}
	if c.MetricsPath == c.HealthPath {
		return fmt.Errorf("-metrics-path %q: the same path as -health-path", c.MetricsPath)
	}
	if o.Redis != "" {
		// (The URL itself is not repeated: it may hold a password.)
		if u, err := url.Parse(o.Redis); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
			return errors.New("-redis: want a redis://, rediss:// or unix:// URL")
		}
		if c.RateLimit > 0 {
			if err := fleet.CheckRate(c.RateLimit); err != nil {
				return fmt.Errorf("-rate with -redis: %w", err)
			}
		}
	}
	if au.Audience != "" && au.A2AAudience == au.Audience {
		return errors.New("-auth-a2a-audience: the same resource as -auth-audience (each endpoint is a resource of its own)")
	}
	return nil
}

// maxRate bounds -rate: far beyond any one client's rate, and a burst
// that an int holds.
const maxRate = 1 << 30

func validateFlags(c *fastserver.Config) error {
	switch {
	case c.MaxDepth <= 0:
		return errors.New("-max-depth must be positive")
	case c.RateLimit < 0 || c.RateBurst < 0:
		return errors.New("-rate and -burst must not be negative")
	case !(c.RateLimit <= maxRate):
		// NaN and Inf parse as floats; the default burst is the rate
		// converted to an int, which for these is undefined.
		return fmt.Errorf("-rate %v: want a finite rate of at most %d per second", c.RateLimit, maxRate)
	case c.MaxBodyBytes > fastserver.DefaultInflightBodyBytes/2:
		// The in-flight body budget (no flag: the contract's 256 MiB)
		// must hold two bodies of the ceiling.
		return fmt.Errorf("-max-body %d: at most %d (half the in-flight body budget of %d bytes)", c.MaxBodyBytes, fastserver.DefaultInflightBodyBytes/2, fastserver.DefaultInflightBodyBytes)
	case c.RateBurst > 0 && c.RateLimit == 0:
		return errors.New("-burst needs -rate")
	case c.MaxConns <= 0:
		return errors.New("-max-conns must be positive")
	case c.MaxStreams <= 0:
		return errors.New("-max-streams must be positive")
	case c.MaxClientStreams < 0:
		return errors.New("-max-client-streams must be 0 (no bound per client) or positive")
	case c.MinBodyRate <= 0 || c.MinBodyRateGrace <= 0:
		return errors.New("-min-body-rate and -min-body-rate-grace must be positive")
	case c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 || c.HandlerTimeout <= 0 || c.ShutdownGrace <= 0:
		return errors.New("timeouts and -grace must be positive")
	}
	return nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseSize parses "1048576", "512K", "1M", "1KiB", "2MiB" (K and KiB
// both mean 1024).
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(s, suf.s) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, suf.s)), suf.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a positive size", v)
	}
	return n * mult, nil
}

// taskIDPrefix is what MCP task ids start with on this instance: its name
// (with -redis and no -instance, the host name, as the fleet's default),
// at most 63 bytes of it, bytes outside letters, digits, '-' and '_'
// turned into '-', and a dot; "" for a process that is not named.
func taskIDPrefix(instance string, fleet bool) string {
	if instance == "" && fleet {
		if instance, _ = os.Hostname(); instance == "" {
			instance = "rpcedge" // the fleet's name for it then too
		}
	}
	if instance == "" {
		return ""
	}
	b := []byte(instance[:min(len(instance), 63)])
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	return string(b) + "."
}
