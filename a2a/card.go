package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// NOTE: rendering the card.
//
// The card is the same for every request except the endpoint's absolute
// URL, which appears twice (1.0's supportedInterfaces[0].url and 0.3's
// url) and depends on the request's Host when no public URL is configured.
// New renders everything else once into three constant pieces; AppendCard
// splices the URL between them, so serving the card is three appends and
// the URL. The pieces follow the field order of AgentCard, and the tests
// check that the result equals encoding/json's rendering of
// AgentCard.WithEndpoint byte for byte.

// AgentCard is the agent's self-description, served at
// /.well-known/agent-card.json and, when there is one, by
// GetExtendedAgentCard. It carries the members of both protocol
// generations so that 1.0 and 0.3 clients alike find the endpoint.
//
// In a Config, set the descriptive members; the endpoint members
// (SupportedInterfaces, URL, PreferredTransport, ProtocolVersion and
// SupportsAuthenticatedExtendedCard) are ignored there: the server fills
// them in for each request (see WithEndpoint). The JSON tags give the wire
// names, so a served card decodes into an AgentCard with encoding/json.
type AgentCard struct {
	// Name is the agent's name. Required.
	Name string `json:"name"`
	// Description says what the agent does.
	Description string `json:"description"`
	// SupportedInterfaces (1.0) lists where and how the agent is served:
	// one JSON-RPC interface at the endpoint URL, protocol version "1.0".
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	// URL (0.3) is the endpoint's absolute URL.
	URL string `json:"url"`
	// PreferredTransport (0.3) is always "JSONRPC".
	PreferredTransport string `json:"preferredTransport"`
	// ProtocolVersion (0.3) is always "0.3.0".
	ProtocolVersion string `json:"protocolVersion"`
	// Provider optionally names the organization behind the agent.
	Provider *AgentProvider `json:"provider,omitempty"`
	// Version is the agent's own version, such as "1.0.0". Required.
	Version string `json:"version"`
	// DocumentationURL optionally points to documentation.
	DocumentationURL string `json:"documentationUrl,omitempty"`
	// IconURL optionally points to an icon.
	IconURL string `json:"iconUrl,omitempty"`
	// Capabilities declares the optional features. PushNotifications
	// must be false: this server has no webhook delivery (New fails
	// otherwise).
	Capabilities AgentCapabilities `json:"capabilities"`
	// SupportsAuthenticatedExtendedCard (0.3) mirrors
	// Capabilities.ExtendedAgentCard.
	SupportsAuthenticatedExtendedCard bool `json:"supportsAuthenticatedExtendedCard"`
	// SecuritySchemes declares how to authenticate, by scheme name:
	// written in both generations' shapes (see SecurityScheme). Empty
	// for an open agent.
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	// Security (0.3's name) lists the requirements, any one of which
	// authorizes a call; each names schemes of SecuritySchemes.
	Security []SecurityRequirement `json:"security,omitempty"`
	// SecurityRequirements (1.0) mirrors Security in the 1.0 shape; the
	// server fills it in (see WithEndpoint).
	SecurityRequirements SecurityRequirements10 `json:"securityRequirements,omitempty"`
	// DefaultInputModes lists the media types the agent accepts. Nil
	// means ["text/plain"].
	DefaultInputModes []string `json:"defaultInputModes"`
	// DefaultOutputModes lists the media types the agent produces. Nil
	// means ["text/plain"].
	DefaultOutputModes []string `json:"defaultOutputModes"`
	// Skills lists what the agent can do; each ID must be non-empty and
	// unique. A request's params.metadata.skillId must name one of them.
	Skills []AgentSkill `json:"skills"`
}

// AgentInterface is one entry of AgentCard.SupportedInterfaces.
type AgentInterface struct {
	// URL is the interface's absolute URL.
	URL string `json:"url"`
	// ProtocolBinding is "JSONRPC".
	ProtocolBinding string `json:"protocolBinding"`
	// ProtocolVersion is "1.0".
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider names the organization that provides an agent.
type AgentProvider struct {
	// Organization is the provider's name.
	Organization string `json:"organization"`
	// URL is the provider's website.
	URL string `json:"url"`
}

// AgentCapabilities declares the optional protocol features of an agent.
// A method that needs a feature the card does not declare is refused
// before its params are read: SendStreamingMessage and SubscribeToTask
// with -32004 without Streaming, the push-notification config methods with
// -32003 without PushNotifications, GetExtendedAgentCard with -32004
// without ExtendedAgentCard (or without a Config.ExtendedCard).
type AgentCapabilities struct {
	// Streaming declares server-sent event streams: SendStreamingMessage
	// and SubscribeToTask are served (else refused with -32004).
	Streaming bool `json:"streaming"`
	// PushNotifications declares webhook delivery. Must be false.
	PushNotifications bool `json:"pushNotifications"`
	// ExtendedAgentCard declares that GetExtendedAgentCard answers.
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// AgentSkill is one thing an agent can do.
type AgentSkill struct {
	// ID identifies the skill (params.metadata.skillId names it).
	ID string `json:"id"`
	// Name is a human-readable name.
	Name string `json:"name"`
	// Description says what the skill does.
	Description string `json:"description"`
	// Tags are keywords; written as [] when nil.
	Tags []string `json:"tags"`
	// Examples are sample requests.
	Examples []string `json:"examples,omitempty"`
	// InputModes overrides the card's DefaultInputModes.
	InputModes []string `json:"inputModes,omitempty"`
	// OutputModes overrides the card's DefaultOutputModes.
	OutputModes []string `json:"outputModes,omitempty"`
}

// The endpoint members' constant values.
const (
	// TransportJSONRPC is the protocol binding / transport name.
	TransportJSONRPC = "JSONRPC"
	// CardProtocolVersion03 is the 0.3 card's protocolVersion.
	CardProtocolVersion03 = "0.3.0"
)

var defaultModes = []string{"text/plain"}

// WithEndpoint returns a copy of c as it is served at endpoint (an
// absolute URL): the endpoint members set, nil mode lists replaced by
// their default and nil skill tags by an empty list. The copy shares c's
// slices except those it replaces.
func (c AgentCard) WithEndpoint(endpoint string) AgentCard {
	c.SupportedInterfaces = []AgentInterface{{URL: endpoint, ProtocolBinding: TransportJSONRPC, ProtocolVersion: Version10.String()}}
	c.URL = endpoint
	c.PreferredTransport = TransportJSONRPC
	c.ProtocolVersion = CardProtocolVersion03
	c.SupportsAuthenticatedExtendedCard = c.Capabilities.ExtendedAgentCard
	if len(c.Security) > 0 {
		sec := make([]SecurityRequirement, len(c.Security))
		for i, r := range c.Security {
			sec[i] = make(SecurityRequirement, len(r))
			for name, scopes := range r {
				if scopes == nil {
					scopes = []string{}
				}
				sec[i][name] = scopes
			}
		}
		c.Security = sec
		c.SecurityRequirements = SecurityRequirements10(sec)
	} else {
		c.Security, c.SecurityRequirements = nil, nil
	}
	if c.DefaultInputModes == nil {
		c.DefaultInputModes = defaultModes
	}
	if c.DefaultOutputModes == nil {
		c.DefaultOutputModes = defaultModes
	}
	if c.Skills == nil {
		c.Skills = []AgentSkill{}
	}
	copied := false
	for i, sk := range c.Skills {
		if sk.Tags == nil {
			if !copied {
				c.Skills = append([]AgentSkill(nil), c.Skills...)
				copied = true
			}
			c.Skills[i].Tags = []string{}
		}
	}
	return c
}

// validate reports a card that cannot be served.
func (c *AgentCard) validate(which string) error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, fmt.Errorf("a2a: %s: Name is empty", which))
	}
	if c.Version == "" {
		errs = append(errs, fmt.Errorf("a2a: %s: Version is empty", which))
	}
	if c.Capabilities.PushNotifications {
		errs = append(errs, fmt.Errorf("a2a: %s: Capabilities.PushNotifications is not supported (no webhook delivery)", which))
	}
	if err := c.validateSecurity(which); err != nil {
		errs = append(errs, err)
	}
	seen := make(map[string]bool, len(c.Skills))
	for i, sk := range c.Skills {
		switch {
		case sk.ID == "":
			errs = append(errs, fmt.Errorf("a2a: %s: skill %d has an empty ID", which, i))
		case seen[sk.ID]:
			errs = append(errs, fmt.Errorf("a2a: %s: skill ID %q appears twice", which, sk.ID))
		}
		seen[sk.ID] = true
	}
	return errors.Join(errs...)
}

// cardTemplate is a card rendered but for its endpoint URL:
// pre URL mid URL post.
type cardTemplate struct {
	pre, mid, post []byte
}

func compileCard(c AgentCard) cardTemplate {
	c = c.WithEndpoint("")
	var t cardTemplate
	b := []byte(`{"name":`)
	b = decode.AppendString(b, c.Name)
	b = append(b, `,"description":`...)
	b = decode.AppendString(b, c.Description)
	b = append(b, `,"supportedInterfaces":[{"url":`...)
	t.pre = b

	b = []byte(`,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"url":`)
	t.mid = b

	b = []byte(`,"preferredTransport":"JSONRPC","protocolVersion":"0.3.0"`)
	if p := c.Provider; p != nil {
		b = append(b, `,"provider":{"organization":`...)
		b = decode.AppendString(b, p.Organization)
		b = append(b, `,"url":`...)
		b = decode.AppendString(b, p.URL)
		b = append(b, '}')
	}
	b = append(b, `,"version":`...)
	b = decode.AppendString(b, c.Version)
	if c.DocumentationURL != "" {
		b = append(b, `,"documentationUrl":`...)
		b = decode.AppendString(b, c.DocumentationURL)
	}
	if c.IconURL != "" {
		b = append(b, `,"iconUrl":`...)
		b = decode.AppendString(b, c.IconURL)
	}
	b = append(b, `,"capabilities":{"streaming":`...)
	b = appendBool(b, c.Capabilities.Streaming)
	b = append(b, `,"pushNotifications":`...)
	b = appendBool(b, c.Capabilities.PushNotifications)
	b = append(b, `,"extendedAgentCard":`...)
	b = appendBool(b, c.Capabilities.ExtendedAgentCard)
	b = append(b, `},"supportsAuthenticatedExtendedCard":`...)
	b = appendBool(b, c.SupportsAuthenticatedExtendedCard)
	if len(c.SecuritySchemes) > 0 {
		b = append(b, `,"securitySchemes":`...)
		b = appendJSON(b, c.SecuritySchemes) // validated: cannot fail
	}
	if len(c.Security) > 0 {
		b = append(b, `,"security":`...)
		b = appendJSON(b, c.Security)
		b = append(b, `,"securityRequirements":`...)
		b = appendJSON(b, c.SecurityRequirements)
	}
	b = append(b, `,"defaultInputModes":`...)
	b = appendStrings(b, c.DefaultInputModes)
	b = append(b, `,"defaultOutputModes":`...)
	b = appendStrings(b, c.DefaultOutputModes)
	b = append(b, `,"skills":[`...)
	for i, sk := range c.Skills {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = decode.AppendString(b, sk.ID)
		b = append(b, `,"name":`...)
		b = decode.AppendString(b, sk.Name)
		b = append(b, `,"description":`...)
		b = decode.AppendString(b, sk.Description)
		b = append(b, `,"tags":`...)
		b = appendStrings(b, sk.Tags)
		if len(sk.Examples) > 0 {
			b = append(b, `,"examples":`...)
			b = appendStrings(b, sk.Examples)
		}
		if len(sk.InputModes) > 0 {
			b = append(b, `,"inputModes":`...)
			b = appendStrings(b, sk.InputModes)
		}
		if len(sk.OutputModes) > 0 {
			b = append(b, `,"outputModes":`...)
			b = appendStrings(b, sk.OutputModes)
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	t.post = b
	return t
}

func (t *cardTemplate) append(dst []byte, e *endpointURL, host []byte) []byte {
	dst = append(dst, t.pre...)
	dst = e.appendQuoted(dst, host)
	dst = append(dst, t.mid...)
	dst = e.appendQuoted(dst, host)
	return append(dst, t.post...)
}

// appendJSON appends v as encoding/json writes it without HTML escaping,
// as decode.AppendString writes strings.
func appendJSON(dst []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // validated by New
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		dst = ensure(dst, len(s)+8)
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = decode.AppendString(dst, s)
	}
	return append(dst, ']')
}

// endpointURL makes the endpoint's absolute URL: the public one when
// configured, else http:// + the request's Host + the path.
type endpointURL struct {
	public []byte // the quoted public endpoint URL, or nil
	path   string
}

// FallbackHost is the host the card names when the request's Host header
// is missing or is not a valid host[:port] (and no public URL is
// configured).
const FallbackHost = "localhost"

func newEndpointURL(publicURL, path string) (endpointURL, error) {
	e := endpointURL{path: path}
	if publicURL == "" {
		return e, nil
	}
	u, err := url.Parse(publicURL)
	if err != nil {
		return e, fmt.Errorf("a2a: PublicURL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return e, fmt.Errorf("a2a: PublicURL %q: the scheme must be http or https", publicURL)
	case u.Host == "" || !validHost([]byte(u.Host)):
		return e, fmt.Errorf("a2a: PublicURL %q: no valid host", publicURL)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || u.Opaque != "":
		return e, fmt.Errorf("a2a: PublicURL %q: must be scheme://host[:port][/path] only", publicURL)
	}
	full := scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/") + path
	e.public = decode.AppendString(nil, full)
	return e, nil
}

// appendQuoted appends the endpoint URL as a JSON string.
func (e *endpointURL) appendQuoted(dst, host []byte) []byte {
	if e.public != nil {
		return append(dst, e.public...)
	}
	dst = append(dst, `"http://`...)
	if validHost(host) {
		dst = append(dst, host...) // validHost admits no byte that needs escaping
	} else {
		dst = append(dst, FallbackHost...)
	}
	dst = append(dst, e.path...)
	return append(dst, '"')
}

// validHost reports whether h is host[:port] as RFC 3986 allows it in an
// http URL, narrowed to what a Host header sensibly holds: a registered
// name or IPv4 address of letters, digits and "-._~", or an IPv6 literal in
// brackets (hex digits, ':' and '.'), then optionally ':' and one to five
// digits. Percent-encoding, sub-delimiters and zone identifiers are
// refused, so the result is always safe to write into a JSON string.
func validHost(h []byte) bool {
	if len(h) == 0 || len(h) > 262 {
		return false
	}
	i := 0
	if h[0] == '[' {
		i = 1
		for i < len(h) && h[i] != ']' {
			c := h[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.') {
				return false
			}
			i++
		}
		if i == len(h) || i < 3 { // no ']', or "[]" / "[x]"
			return false
		}
		i++
	} else {
		for i < len(h) && h[i] != ':' {
			c := h[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '.' || c == '_' || c == '~') {
				return false
			}
			i++
		}
		if i == 0 || i > 253 {
			return false
		}
	}
	if i == len(h) {
		return true
	}
	if h[i] != ':' {
		return false
	}
	port := h[i+1:]
	if len(port) == 0 || len(port) > 5 {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// AppendCard appends the public agent card as JSON to dst and returns the
// extended dst; dst may be nil. host is the request's Host header (nil or
// empty when absent): when no PublicURL is configured the endpoint URL in
// the card is http://<host><path>, with FallbackHost when host is not a
// valid host[:port]. With a PublicURL, host is ignored.
//
// AppendCard allocates nothing when dst has room. It is safe for
// concurrent use. It does not depend on fasthttp; ServeCard wraps it for a
// fasthttp route.
func (s *Server) AppendCard(dst, host []byte) []byte {
	return s.card.append(dst, &s.endpoint, host)
}

// EndpointURL returns the endpoint's absolute URL as the card names it for
// a request with the given Host header.
func (s *Server) EndpointURL(host []byte) string {
	q := s.endpoint.appendQuoted(nil, host)
	return string(decode.AppendUnquoted(nil, q))
}

var cardBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// ServeCard answers a request for the agent card: status 200,
// Content-Type application/json, the body of AppendCard for the request's
// Host. It does not look at the method or path: mount it at
// GET /.well-known/agent-card.json.
func (s *Server) ServeCard(ctx *fasthttp.RequestCtx) {
	bp := cardBufs.Get().(*[]byte)
	b := s.AppendCard((*bp)[:0], ctx.Host())
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBody(b) // copies
	*bp = b
	cardBufs.Put(bp)
}
