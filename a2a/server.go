package a2a

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// DefaultPath is where the endpoint is served unless Config.Path says
// otherwise.
const DefaultPath = "/a2a"

// A2A error codes (JSON-RPC error.code) answered by the server.
const (
	// CodeTaskNotFound answers GetTask, CancelTask and SendMessage
	// naming a task id the store does not hold (never created, or evicted).
	CodeTaskNotFound = -32001
	// CodeTaskNotCancelable answers CancelTask of a task in a final state.
	CodeTaskNotCancelable = -32002
	// CodePushNotificationNotSupported answers the push-notification
	// config methods, and a SendMessage configuration asking for push
	// notifications, when the card declares none.
	CodePushNotificationNotSupported = -32003
	// CodeUnsupportedOperation answers streaming methods when the card
	// declares no streaming, GetExtendedAgentCard when there is no
	// extended card (A2A itself answers -32007 when the capability is
	// declared but no card is configured; rpcedge answers -32004 for
	// both), a params.metadata.skillId naming no skill of the card, and
	// a message sent to a task in a final state.
	CodeUnsupportedOperation = -32004
	// CodeContentTypeNotSupported is A2A's ContentTypeNotSupportedError:
	// the server never answers it by itself; an Agent returns it (as a
	// *fastserver.Error) for a message whose parts, or whose
	// Call.AcceptedOutputModes, it cannot serve.
	CodeContentTypeNotSupported = -32005
)

// Config configures a Server. Card and Agent are required; every limit
// left at 0 takes its documented default.
type Config struct {
	// Card is the public agent card. Its endpoint members are filled in
	// per request (see AgentCard).
	Card AgentCard
	// ExtendedCard, when not nil and Card.Capabilities.ExtendedAgentCard
	// is true, is what GetExtendedAgentCard answers. With Auth set only
	// authenticated callers reach it (as every method); without Auth
	// there is no authentication in front of it: put only what the
	// public may see.
	ExtendedCard *AgentCard
	// Auth, when set, protects the endpoint: every call needs a valid
	// access token for the resource (the contract's authorization row,
	// decided from the headers before the body is read: 401 with a
	// WWW-Authenticate challenge, 403 for missing scopes). The card must
	// then declare how to authenticate (Card.SecuritySchemes and
	// Card.Security). The agent card at /.well-known/agent-card.json
	// stays public. Default nil: no authentication, as before.
	Auth *auth.Resource
	// Agent handles messages. Required.
	Agent Agent
	// PublicURL is the base URL clients reach the server at, such as
	// "https://agents.example.com" or "https://example.com/edge" (scheme
	// http or https, host, optional path; no query). The card's endpoint
	// URL is PublicURL + Path. Empty means "http://" + the request's Host
	// header + Path; set it whenever the server is behind a proxy that
	// terminates TLS or a cache that does not key on Host.
	PublicURL string
	// Path is the endpoint's path. "" means DefaultPath ("/a2a"). It must
	// start with '/' and hold only letters, digits and "-._~/".
	Path string
	// MaxTasks is the most tasks the store keeps; the oldest is evicted
	// for a new one past it. 0 means DefaultMaxTasks (10,000); at most
	// MaxMaxTasks. The ring that orders tasks costs 16 bytes per slot,
	// growing with the tasks stored up to twice MaxTasks.
	MaxTasks int
	// MaxTaskBytes is the store's budget in estimated bytes (strings, raw
	// bytes and a fixed overhead per object); the oldest tasks are evicted
	// while it is passed, and a change that would make one task alone pass
	// it is refused (-32602, the task unchanged). 0 means
	// DefaultMaxTaskBytes (64 MiB).
	MaxTaskBytes int64
	// MaxOwnerTasks is the most tasks of one owner (with Auth: one
	// token issuer and subject) the store keeps: an owner at it that
	// creates a task evicts its own oldest, never another owner's, so one
	// client cannot flush the others' tasks. At most MaxTasks (which
	// means no share). 0 means MaxTasks / DefaultOwnerShare, at least 1
	// (1,000 by default).
	MaxOwnerTasks int
	// MaxOwnerTaskBytes is one owner's share of MaxTaskBytes: past it
	// the owner's own oldest tasks are evicted, and a change that would
	// make one of its tasks alone pass it is refused (-32602, the task
	// unchanged). At most MaxTaskBytes (which means no share). 0 means
	// MaxTaskBytes / DefaultOwnerShare (6.4 MiB by default).
	MaxOwnerTaskBytes int64
	// Tasks, when not nil, is where tasks are kept instead of the
	// in-memory store that MaxTasks, MaxTaskBytes and the owner shares
	// bound (those are then not used): a store shared by several
	// instances (package fleet) serves every task from each of them.
	Tasks TaskStore

	// Events carries task changes to the streams that follow the task
	// (SendStreamingMessage, SubscribeToTask) when the card declares
	// streaming. nil means an in-process LocalBroker; a fleet whose
	// instances share Tasks shares Events too (package fleet), so that
	// a stream follows its task whatever instance changes it.
	Events Broker
	// StreamQueue is how many task changes a stream may have waiting
	// while its client is slow to read (the writer holds two 16 KiB
	// buffers besides); one more waits up to StreamWait for room, then
	// the stream is cut, so a slow reader never grows memory. 0 means
	// DefaultStreamQueue (64).
	StreamQueue int
	// StreamWait is how long a change waits for room in a stream's full
	// queue, holding up the task's publisher (back-pressure on a fast
	// producer), before the stream is cut. 0 means DefaultStreamWait
	// (1 s).
	StreamWait time.Duration
	// KeepAlive is how often an idle stream sends an SSE comment, so that
	// proxies keep it open and a client gone is noticed. 0 means
	// DefaultKeepAlive (15 s).
	KeepAlive time.Duration
	// MaxStreamDuration bounds one stream: past it the stream ends with
	// the task's current status (the client resubscribes). It replaces
	// the server's handler deadline for streams. 0 means
	// DefaultMaxStreamDuration (1 h).
	MaxStreamDuration time.Duration
	// SendWait bounds how long SendMessage waits for its task to reach a
	// final or interrupted state before it answers, when the client waits:
	// A2A 1.0's default (returnImmediately absent or false: the operation
	// "MUST wait"), and 0.3's blocking, true or absent. The handler's
	// deadline (fastserver's HandlerTimeout, 10 s by default) bounds it
	// too, less a tenth of the time left, in which the answer is written.
	// Past either bound the task is answered as it stands (working, say):
	// the client follows it with GetTask or SubscribeToTask. 0 means
	// DefaultSendWait (1 min); negative, no wait: every SendMessage is
	// answered once the agent's reply is stored, as if each client asked
	// returnImmediately.
	SendWait time.Duration
}

// MaxMaxTasks is the largest Config.MaxTasks: 2^30 tasks (with the
// defaults the byte budget, 64 MiB, binds long before).
const MaxMaxTasks = 1 << 30

// DefaultSendWait is Config.SendWait's default: 1 min (the handler's
// deadline, 10 s by default, comes first).
const DefaultSendWait = time.Minute

// Defaults of the stream settings.
const (
	// DefaultStreamQueue is Config.StreamQueue's default: 64 changes.
	DefaultStreamQueue = 64
	// DefaultStreamWait is Config.StreamWait's default: 1 s.
	DefaultStreamWait = time.Second
	// DefaultKeepAlive is Config.KeepAlive's default: 15 s.
	DefaultKeepAlive = 15 * time.Second
	// DefaultMaxStreamDuration is Config.MaxStreamDuration's default: 1 h.
	DefaultMaxStreamDuration = time.Hour
)

// publishTimeout bounds the publication of one change (a shared broker's
// network call).
const publishTimeout = time.Second

// StoreRetryAfter is the Retry-After, in seconds, of the 503 / -32603
// answered while the task store is unavailable.
const StoreRetryAfter = 1

// Server serves A2A over JSON-RPC through a fastserver.Endpoint, and the
// agent card. Create it with New. A Server is safe for concurrent use;
// it must not be copied.
type Server struct {
	agent    Agent
	path     string
	endpoint endpointURL
	card     cardTemplate
	extended *cardTemplate // nil when GetExtendedAgentCard is refused
	skills   map[string]bool
	tasks    TaskStore
	events   Broker
	routes   map[string]fastserver.Route
	family   map[string]Version
	labels   []string
	now      func() time.Time

	streamQueue int
	streamWait  time.Duration
	keepAlive   time.Duration
	maxStream   time.Duration
	sendWait    time.Duration // < 0: no wait

	streaming, push, extendedCard bool

	auth *auth.Resource
}

// New returns a Server for cfg, or an error naming every mistake in it.
func New(cfg Config) (*Server, error) {
	var errs []error
	if cfg.Agent == nil {
		errs = append(errs, errors.New("a2a: Config.Agent is nil"))
	}
	if err := cfg.Card.validate("Card"); err != nil {
		errs = append(errs, err)
	}
	if cfg.ExtendedCard != nil {
		if err := cfg.ExtendedCard.validate("ExtendedCard"); err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.Auth != nil && (len(cfg.Card.SecuritySchemes) == 0 || len(cfg.Card.Security) == 0) {
		errs = append(errs, errors.New("a2a: Config.Auth is set but the card declares no SecuritySchemes and Security: clients could not know how to authenticate"))
	}
	if cfg.MaxTasks < 0 || cfg.MaxTasks > MaxMaxTasks {
		errs = append(errs, fmt.Errorf("a2a: MaxTasks %d is out of range (0 to %d)", cfg.MaxTasks, MaxMaxTasks))
	}
	if cfg.MaxTaskBytes < 0 {
		errs = append(errs, fmt.Errorf("a2a: MaxTaskBytes %d is negative", cfg.MaxTaskBytes))
	}
	if cfg.MaxOwnerTasks < 0 {
		errs = append(errs, fmt.Errorf("a2a: MaxOwnerTasks %d is negative", cfg.MaxOwnerTasks))
	} else if m := cmp.Or(cfg.MaxTasks, DefaultMaxTasks); cfg.MaxTasks >= 0 && cfg.MaxOwnerTasks > m {
		errs = append(errs, fmt.Errorf("a2a: MaxOwnerTasks %d is above MaxTasks %d", cfg.MaxOwnerTasks, m))
	}
	if cfg.MaxOwnerTaskBytes < 0 {
		errs = append(errs, fmt.Errorf("a2a: MaxOwnerTaskBytes %d is negative", cfg.MaxOwnerTaskBytes))
	} else if m := cmp.Or(cfg.MaxTaskBytes, DefaultMaxTaskBytes); cfg.MaxTaskBytes >= 0 && cfg.MaxOwnerTaskBytes > m {
		errs = append(errs, fmt.Errorf("a2a: MaxOwnerTaskBytes %d is above MaxTaskBytes %d", cfg.MaxOwnerTaskBytes, m))
	}
	if cfg.StreamQueue < 0 || cfg.StreamWait < 0 || cfg.KeepAlive < 0 || cfg.MaxStreamDuration < 0 {
		errs = append(errs, errors.New("a2a: StreamQueue, StreamWait, KeepAlive and MaxStreamDuration must not be negative"))
	}
	path := cfg.Path
	if path == "" {
		path = DefaultPath
	}
	if !validPath(path) {
		errs = append(errs, fmt.Errorf("a2a: Path %q must start with '/' and hold only letters, digits and \"-._~/\"", path))
	}
	ep, err := newEndpointURL(cfg.PublicURL, path)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	s := &Server{
		agent:        cfg.Agent,
		path:         path,
		endpoint:     ep,
		card:         compileCard(cfg.Card),
		skills:       make(map[string]bool, len(cfg.Card.Skills)),
		tasks:        cfg.Tasks,
		now:          func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
		streaming:    cfg.Card.Capabilities.Streaming,
		push:         cfg.Card.Capabilities.PushNotifications,
		extendedCard: cfg.Card.Capabilities.ExtendedAgentCard && cfg.ExtendedCard != nil,
		auth:         cfg.Auth,
	}
	if s.tasks == nil {
		s.tasks = &MemoryStore{s: newOwnedStore(cmp.Or(cfg.MaxTasks, DefaultMaxTasks), cmp.Or(cfg.MaxTaskBytes, DefaultMaxTaskBytes),
			cfg.MaxOwnerTasks, cfg.MaxOwnerTaskBytes)}
	}
	s.events = cfg.Events
	if s.events == nil {
		s.events = NewLocalBroker()
	}
	s.streamQueue = cmp.Or(cfg.StreamQueue, DefaultStreamQueue)
	s.streamWait = cmp.Or(cfg.StreamWait, DefaultStreamWait)
	s.keepAlive = cmp.Or(cfg.KeepAlive, DefaultKeepAlive)
	s.maxStream = cmp.Or(cfg.MaxStreamDuration, DefaultMaxStreamDuration)
	s.sendWait = cmp.Or(cfg.SendWait, DefaultSendWait)
	for _, sk := range cfg.Card.Skills {
		s.skills[sk.ID] = true
	}
	if s.extendedCard {
		t := compileCard(*cfg.ExtendedCard)
		s.extended = &t
		// Its skills are the caller's to use: every caller that may send
		// a message may read that card (found by review on 2026-12-07:
		// a skill only the extended card lists was refused -32004).
		for _, sk := range cfg.ExtendedCard.Skills {
			s.skills[sk.ID] = true
		}
	}
	s.buildRoutes()
	return s, nil
}

func validPath(p string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
			return false
		}
	}
	return true
}

// op is an A2A operation, whatever its name.
type op uint8

const (
	opSend op = iota
	opStream
	opGet
	opList
	opCancel
	opSubscribe
	opExtendedCard
	opPushCreate
	opPushGet
	opPushList
	opPushDelete
)

// methodNames lists every method name served: the 1.0 name and the 0.3
// alias of each operation. The family of a name decides the shapes of a
// request that has no A2A-Version header.
var methodNames = [...]struct {
	name   string
	op     op
	family Version
}{
	{"SendMessage", opSend, Version10},
	{"SendStreamingMessage", opStream, Version10},
	{"GetTask", opGet, Version10},
	{"ListTasks", opList, Version10},
	{"CancelTask", opCancel, Version10},
	{"SubscribeToTask", opSubscribe, Version10},
	{"GetExtendedAgentCard", opExtendedCard, Version10},
	{"CreateTaskPushNotificationConfig", opPushCreate, Version10},
	{"GetTaskPushNotificationConfig", opPushGet, Version10},
	{"ListTaskPushNotificationConfigs", opPushList, Version10},
	{"DeleteTaskPushNotificationConfig", opPushDelete, Version10},

	{"message/send", opSend, Version03},
	{"message/stream", opStream, Version03},
	{"tasks/get", opGet, Version03},
	{"tasks/cancel", opCancel, Version03},
	{"tasks/resubscribe", opSubscribe, Version03},
	{"agent/getAuthenticatedExtendedCard", opExtendedCard, Version03},
	{"tasks/pushNotificationConfig/set", opPushCreate, Version03},
	{"tasks/pushNotificationConfig/get", opPushGet, Version03},
	{"tasks/pushNotificationConfig/list", opPushList, Version03},
	{"tasks/pushNotificationConfig/delete", opPushDelete, Version03},
}

var (
	errNoStreaming = &fastserver.Error{Code: CodeUnsupportedOperation, Message: "streaming is not supported: the agent card declares streaming: false"}
	errNoExtended  = &fastserver.Error{Code: CodeUnsupportedOperation, Message: "there is no extended agent card"}
	errNoPush      = &fastserver.Error{Code: CodePushNotificationNotSupported, Message: "push notifications are not supported: the agent card declares pushNotifications: false"}
	errFinalTask   = &fastserver.Error{Code: CodeUnsupportedOperation, Message: "the task is in a final state and takes no more messages"}
)

// Events returns the server's broker of task changes (Config.Events).
func (s *Server) Events() Broker { return s.events }

func (s *Server) buildRoutes() {
	s.routes = make(map[string]fastserver.Route, len(methodNames))
	s.family = make(map[string]Version, len(methodNames))
	for _, mn := range methodNames {
		rt := fastserver.Route{Label: mn.name, OwnParams: true}
		fam := mn.family
		switch mn.op {
		case opSend:
			rt.Handler = s.versioned(fam, s.sendMessage)
		case opGet:
			rt.Handler = s.versioned(fam, s.getTask)
		case opList:
			rt.Handler = s.versioned(fam, s.listTasks)
		case opCancel:
			rt.Handler = s.versioned(fam, s.cancelTask)
		case opStream:
			if s.streaming {
				rt.Handler = s.versioned(fam, s.streamMessage)
			} else {
				rt.Refuse = errNoStreaming
			}
		case opSubscribe:
			if s.streaming {
				rt.Handler = s.versioned(fam, s.subscribeToTask)
			} else {
				rt.Refuse = errNoStreaming
			}
		case opExtendedCard:
			if s.extendedCard {
				rt.Handler = s.versioned(fam, s.extendedAgentCard)
			} else {
				rt.Refuse = errNoExtended
			}
		default: // push-notification configs; s.push is always false (New)
			rt.Refuse = errNoPush
		}
		if rt.Refuse != nil {
			// Refused at row 16 whatever the params; a handler too, so
			// that the route is never mistaken for an unknown method.
			refusal := rt.Refuse
			rt.Handler = fastserver.HandlerFunc(func(_ *fastserver.Request, dst []byte) ([]byte, error) { return dst, refusal })
		}
		s.routes[mn.name] = rt
		s.family[mn.name] = fam
		s.labels = append(s.labels, mn.name)
	}
	sort.Strings(s.labels)
}

type versionedFunc func(r *fastserver.Request, dst []byte, v Version) ([]byte, error)

// versioned adapts f to a Handler that passes the request's version, or
// the method's family when Check and Route have set none.
func (s *Server) versioned(family Version, f versionedFunc) fastserver.Handler {
	return fastserver.HandlerFunc(func(r *fastserver.Request, dst []byte) ([]byte, error) {
		v := Version(r.Version)
		if v != Version10 && v != Version03 {
			v = family
		}
		return f(r, dst, v)
	})
}

// route is Endpoint.Route: rows 14 and 16. A known method sets r.Version
// from its family when the A2A-Version header did not.
func (s *Server) route(r *fastserver.Request) fastserver.Route {
	rt, ok := s.routes[string(r.Msg.Method)]
	if !ok {
		return fastserver.Route{}
	}
	if r.Version == 0 {
		r.Version = int(s.family[string(r.Msg.Method)])
	}
	return rt
}

// Endpoint returns the fastserver.Endpoint that serves A2A at the
// configured path: ids of any JSON-RPC type (string, number, null),
// the A2A-Version check (row 11), the method routes and their labels.
// Every route owns its params (fastserver.Route.OwnParams), so that rows
// 15 to 17 run in the order of contract §5.
func (s *Server) Endpoint() *fastserver.Endpoint {
	ep := &fastserver.Endpoint{
		Path:   s.path,
		IDs:    decode.IDsJSONRPC,
		Check:  checkVersion,
		Route:  s.route,
		Labels: append([]string(nil), s.labels...),
	}
	if s.auth != nil {
		ep.Authorize = s.auth.Authorize
	}
	return ep
}

// Task returns the stored task with the given id (false when there is
// none, or the store cannot be reached). The Task must not be modified; it
// stays valid (as a snapshot) after later updates.
func (s *Server) Task(id string) (*Task, bool) {
	t, err := s.tasks.Get(context.Background(), id)
	return t, err == nil
}

// Tasks returns the server's task store.
func (s *Server) Tasks() TaskStore { return s.tasks }

// taskNotFound returns -32001 with data {"taskId":id}.
func taskNotFound(id string) *fastserver.Error {
	return &fastserver.Error{Code: CodeTaskNotFound, Message: "task not found", Data: taskData(id)}
}

func taskData(id string) []byte {
	d := append([]byte(`{"taskId":`), decode.AppendString(nil, id)...)
	return append(d, '}')
}
