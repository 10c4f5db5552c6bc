package mcp

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Path is where Endpoint serves MCP.
const Path = "/mcp"

// Info identifies the server software: serverInfo in initialize and
// server/discover results, and _meta["io.modelcontextprotocol/serverInfo"]
// in every 2026-07-28 result.
type Info struct {
	// Name identifies the server programmatically. Required.
	Name string
	// Version is the server software's version. Required.
	Version string
	// Title is an optional display name (sent from 2025-06-18 on).
	Title string
}

// CacheScope says who may cache a result: MCP 2026-07-28's cacheScope.
type CacheScope string

// The cache scopes.
const (
	// CachePublic results hold no user-specific data: any client or
	// shared cache may reuse them.
	CachePublic CacheScope = "public"
	// CachePrivate results may be reused only within the same
	// authorization context.
	CachePrivate CacheScope = "private"
)

// CacheHint is the caching hint of a cacheable 2026-07-28 result (list
// results, resources/read and server/discover): ttlMs and cacheScope.
// Earlier versions carry no hint.
type CacheHint struct {
	// TTL is how long the client may consider the result fresh; 0 means
	// immediately stale. It is sent in whole milliseconds.
	TTL time.Duration
	// Scope is the cacheScope; empty means CachePublic.
	Scope CacheScope
}

// defaultCache is the hint used when WithCache is not given: five
// minutes, public. The registries cannot change once the endpoint serves,
// so a list stays correct for as long as the process runs; five minutes
// bounds how long a client keeps a list across a redeployment.
var defaultCache = CacheHint{TTL: 5 * time.Minute, Scope: CachePublic}

func (h CacheHint) validate() error {
	if h.TTL < 0 {
		return errors.New("mcp: a cache TTL must not be negative")
	}
	switch h.Scope {
	case "", CachePublic, CachePrivate:
		return nil
	}
	return fmt.Errorf("mcp: cache scope %q is neither %q nor %q", h.Scope, CachePublic, CachePrivate)
}

// appendJSON appends ,"ttlMs":…,"cacheScope":"…".
func (h CacheHint) appendJSON(dst []byte) []byte {
	dst = append(dst, `,"ttlMs":`...)
	dst = strconv.AppendInt(dst, h.TTL.Milliseconds(), 10)
	dst = append(dst, `,"cacheScope":`...)
	scope := h.Scope
	if scope == "" {
		scope = CachePublic
	}
	return decode.AppendString(dst, scope)
}

// Option configures a Server; New validates every option.
type Option func(*Server) error

// WithInstructions sets the instructions sent in initialize and
// server/discover results: guidance for a model on how to use the server.
// Default: none.
func WithInstructions(text string) Option {
	return func(s *Server) error {
		if !utf8.ValidString(text) {
			return errors.New("mcp: instructions are not valid UTF-8")
		}
		s.instructions = text
		return nil
	}
}

// WithCache sets the caching hint of 2026-07-28 list results,
// server/discover and resources/read (a Resource may set its own). The
// TTL must not be negative; 0 says "immediately stale". Default: five
// minutes, public (the registries cannot change while the endpoint
// serves; five minutes bounds how long a client keeps a list across a
// redeployment).
func WithCache(h CacheHint) Option {
	return func(s *Server) error {
		if err := h.validate(); err != nil {
			return err
		}
		s.cache = h
		return nil
	}
}

// WithAuth makes the endpoint an OAuth 2.1 protected resource (MCP's
// authorization specification): every request to it needs a valid
// access token for res, checked from the headers before the body is read
// (the contract's row 2a: 401 with a WWW-Authenticate challenge naming
// res's metadata, 403 for the endpoint's required scopes), and a tool with
// Scopes needs them too (403 after the tool is found). Serve res's
// metadata (res.ServeMetadata at res.MetadataPath()) beside the endpoint.
// tools/list still lists every tool (see the package doc). Give it before
// the tools. Default: no authorization, as before.
func WithAuth(res *auth.Resource) Option {
	return func(s *Server) error {
		if res == nil {
			return errors.New("mcp: WithAuth(nil)")
		}
		s.auth = res
		return nil
	}
}

// Server holds an MCP server's identity and its tools, resources and
// prompts, and serves them as a fastserver.Endpoint (see Endpoint).
//
// Register everything before calling Endpoint: Endpoint freezes the
// registries, and registration afterwards fails. Registration is not safe
// for concurrent use; serving is, once Endpoint has returned. A Server
// must not be copied.
type Server struct {
	info         Info
	instructions string
	cache        CacheHint
	auth         *auth.Resource

	tools       []*tool
	toolIndex   map[string]*tool
	resources   []*resource
	resIndex    map[string]*resource
	templates   []*resourceTemplate
	tmplIndex   map[string]*resourceTemplate
	completer   Completer
	states      stateCodec
	sessions    *sessionTable // nil: stateless (WithSessions)
	prompts     []*prompt
	promptIdx   map[string]*prompt
	errs        []error
	schemaDocs  []schemaDoc // documents $refs may name (AddSchemaDocument)
	schemaPaths schemaPaths // WithLibraryValidation; pathsRaw in tests
	freezeOnce  sync.Once
	frozen      bool
	taskOpts    TaskOptions // WithTasks
	tasks       *taskStore  // nil: no tasks (no tool with Task)
	listenOpts  ListenOptions
	listen      *listenTable // subscriptions/listen streams
	stdio       stdioStreams // StreamEndpoint's streams being served
	relay       Relay        // WithRelay; nil without

	// Built by freeze.
	routes routes
	lists  [numVersions]lists
	init   [numVersions][]byte // initialize results by negotiated version
	initS  [numVersions][]byte // the same, for a session (WithSessions)
	empty  [numVersions][]byte // the empty result of each version
	disc   []byte              // server/discover result
	meta   []byte              // ,"_meta":{…serverInfo…}} closing 2026-07-28 results
	hint   []byte              // the default ,"ttlMs":…,"cacheScope":… of 2026-07-28 results
}

// New returns a Server identified by info. It fails when info lacks a
// name or version, or when an option is invalid.
func New(info Info, opts ...Option) (*Server, error) {
	switch {
	case info.Name == "":
		return nil, errors.New("mcp: Info.Name is required")
	case info.Version == "":
		return nil, errors.New("mcp: Info.Version is required")
	case !utf8.ValidString(info.Name) || !utf8.ValidString(info.Version) || !utf8.ValidString(info.Title):
		return nil, errors.New("mcp: Info fields must be valid UTF-8")
	}
	s := &Server{
		info:      info,
		cache:     defaultCache,
		toolIndex: make(map[string]*tool),
		resIndex:  make(map[string]*resource),
		tmplIndex: make(map[string]*resourceTemplate),
		promptIdx: make(map[string]*prompt),
		states:    stateCodec{ttl: defaultStateTTL, max: defaultStateMax},
	}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.states.key == nil {
		if err := s.states.generateKey(); err != nil {
			return nil, err
		}
	}
	s.listen = newListenTable(s.listenOpts)
	if s.relay != nil {
		s.relay.Receive(func(uri string) { s.notifyLocal(uri) })
	}
	return s, nil
}

// Err returns every registration mistake so far, joined, or nil. The
// Endpoint carries the same error, so the server's New refuses to start.
func (s *Server) Err() error { return errors.Join(s.errs...) }

// fail records a registration mistake and returns it.
func (s *Server) fail(err error) error {
	s.errs = append(s.errs, err)
	return err
}

// register runs the checks common to every registration.
func (s *Server) register(kind, key string) error {
	switch {
	case s.frozen:
		return fmt.Errorf("mcp: %s %q registered after Endpoint", kind, key)
	case key == "":
		return fmt.Errorf("mcp: a %s registered with an empty name", kind)
	case !utf8.ValidString(key):
		return fmt.Errorf("mcp: %s %q: the name is not valid UTF-8", kind, key)
	}
	return nil
}

// Endpoint freezes the registries and returns the MCP endpoint, to be
// served at Path ("/mcp") with MCP's id policy (a string or an integer).
// Its Check applies the header rules, its Route the method table by
// version; Labels lists every method name. Registration mistakes are in
// its Err. Endpoint may be called more than once.
func (s *Server) Endpoint() *fastserver.Endpoint {
	s.freezeOnce.Do(s.freeze)
	ep := &fastserver.Endpoint{
		Path:   Path,
		IDs:    decode.IDsMCP,
		Check:  s.check,
		Route:  s.route,
		Labels: Methods(),
		Err:    s.Err(),
	}
	if s.sessions != nil {
		// A session's GET stream and its DELETE; every other method gets
		// 405, with Expect: 100-continue before the body is sent.
		ep.Other, ep.OtherMethods = s.serveOther, []string{"GET", "DELETE"}
		// A browser client reads its session id from initialize's answer.
		ep.ExposeHeaders = append(ep.ExposeHeaders, HeaderSession)
	}
	if s.auth != nil {
		ep.Authorize = s.auth.Authorize
		ep.ExposeHeaders = append(ep.ExposeHeaders, "WWW-Authenticate")
	}
	if s.sessions != nil || s.auth != nil {
		ep.ResponseScope = s.responseScope
	}
	return ep
}

// check is the endpoint's Check: the header rules, then, with sessions
// on, the session a 2025-xx request names.
func (s *Server) check(r *fastserver.Request) *fastserver.Error {
	reclaim(r)
	if e := checkHeaders(r, s); e != nil {
		return e
	}
	if s.sessions != nil {
		if e := s.checkSession(r); e != nil {
			if c, ok := r.Memo.(*Call); ok {
				r.Memo = nil
				c.release()
			}
			return e
		}
		if r.Msg.Kind == decode.KindNotification {
			s.cancelInSession(r)
		}
	}
	return nil
}

// StreamEndpoint is Endpoint for newline-delimited streams (MCP's stdio
// transport, fastserver.ServeLines), where there are no headers: a
// request's version is the one its params._meta names
// ("io.modelcontextprotocol/protocolVersion"), as MCP 2026-07-28 defines
// it for stdio; when it names none, the version the stream's initialize
// negotiated (2025-xx: the version holds for the connection), and
// 2025-03-26 before an initialize. Under 2025-xx the stream is the
// session its initialize began: the capabilities the client declared
// there are what Call.ClientSupports and Ask go by, and logging/setLevel
// sets the level of the log messages sent on it. Each stream needs an
// Endpoint of its own: call StreamEndpoint once per ServeLines. A
// version that is not served is refused with -32022; a _meta or version
// key given twice, or a version that is not a string, with -32602.
// Notifications carry no version: they are accepted. Routing and results
// are those of Endpoint, but initialize makes no HTTP session
// (WithSessions): the stream is the session.
//
// A notifications/cancelled cancels the request its requestId names, as
// soon as it is read (fastserver.Endpoint.Cancel): a request still
// waiting behind others is never served, a running handler's context is
// cancelled, and neither is answered (MCP: "Not send a response for the
// cancelled request"). A tool that watches its context (Call.Context)
// stops at once.
func (s *Server) StreamEndpoint() *fastserver.Endpoint {
	ep := s.Endpoint()
	st := new(stdioStream) // one Endpoint per stream
	cur := &st.cur
	ep.Check = func(r *fastserver.Request) *fastserver.Error { return checkStream(r, cur) }
	ep.Lines = st.lines(s)
	initialize := route("initialize", false, func(r *fastserver.Request, dst []byte) ([]byte, error) {
		return s.serveStreamInitialize(r, dst, cur)
	})
	ep.Route = func(r *fastserver.Request) fastserver.Route {
		if rt := s.route(r); rt.Label != "initialize" {
			return rt
		}
		return initialize
	}
	ep.Cancel = cancelTarget
	ep.Authorize = nil // a local process's own stream: no OAuth (MCP authorization §1.2)
	return ep
}

// Methods returns every method name the endpoint knows, under some
// version: the metrics labels.
func Methods() []string {
	return []string{
		"completion/complete",
		"initialize",
		"logging/setLevel",
		"notifications/initialized",
		"ping",
		"prompts/get",
		"prompts/list",
		"resources/list",
		"resources/read",
		"resources/subscribe",
		"resources/templates/list",
		"resources/unsubscribe",
		"server/discover",
		"subscriptions/listen",
		"tasks/cancel",
		"tasks/get",
		"tasks/update",
		"tools/call",
		"tools/list",
	}
}

// routes holds the Route of each method, built once.
type routes struct {
	initialize, ping, discover   fastserver.Route
	toolsList, toolsCall         fastserver.Route
	resourcesList, resourcesRead fastserver.Route
	templatesList                fastserver.Route
	subscribe, unsubscribe       fastserver.Route
	promptsList, promptsGet      fastserver.Route
	complete, setLevel           fastserver.Route
	tasksGet, tasksUpdate        fastserver.Route
	tasksCancel, listen          fastserver.Route
}

func route(label string, own bool, f func(*fastserver.Request, []byte) ([]byte, error)) fastserver.Route {
	return fastserver.Route{Handler: fastserver.HandlerFunc(f), Label: label, OwnParams: own}
}

// route resolves a request's method for the version Check stored (row
// 14: a zero Route is 404 / -32601). It allocates nothing.
func (s *Server) route(r *fastserver.Request) fastserver.Route {
	legacy := !RequestVersion(r).Stateless()
	rt := &s.routes
	switch string(r.Msg.Method) {
	case "tools/call":
		return rt.toolsCall
	case "tools/list":
		return rt.toolsList
	case "resources/read":
		return rt.resourcesRead
	case "resources/list":
		return rt.resourcesList
	case "prompts/get":
		return rt.promptsGet
	case "prompts/list":
		return rt.promptsList
	case "server/discover":
		return rt.discover
	case "resources/templates/list":
		return rt.templatesList
	case "completion/complete":
		return rt.complete
	case "initialize":
		if legacy {
			return rt.initialize
		}
	case "ping":
		if legacy {
			return rt.ping
		}
	case "logging/setLevel":
		if legacy {
			return rt.setLevel
		}
	case "resources/subscribe":
		if legacy {
			return rt.subscribe
		}
	case "resources/unsubscribe":
		if legacy {
			return rt.unsubscribe
		}
	case "subscriptions/listen":
		if !legacy {
			return rt.listen
		}
	case "tasks/get":
		if !legacy && s.tasks != nil {
			return rt.tasksGet
		}
	case "tasks/update":
		if !legacy && s.tasks != nil {
			return rt.tasksUpdate
		}
	case "tasks/cancel":
		if !legacy && s.tasks != nil {
			return rt.tasksCancel
		}
	}
	return fastserver.Route{}
}

// openResult starts a result object; under 2026-07-28 with its
// resultType. Something must follow before closeResult.
func (s *Server) openResult(dst []byte, v Version) []byte {
	if v.Stateless() {
		return append(dst, `{"resultType":"complete",`...)
	}
	return append(dst, '{')
}

// closeResult ends a result object; under 2026-07-28 after its _meta.
func (s *Server) closeResult(dst []byte, v Version) []byte {
	if v.Stateless() {
		return append(dst, s.meta...)
	}
	return append(dst, '}')
}
