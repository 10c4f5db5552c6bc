package loadgen

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config; a zero field means its default.
const (
	DefaultURL         = "http://127.0.0.1:8080/mcp"
	DefaultConnections = 64
	DefaultDuration    = 10 * time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultMaxExamples = 5
	DefaultDrain       = 2 * time.Second
	DefaultGiveUp      = 10 * time.Second

	// MaxConnections bounds Config.Connections.
	MaxConnections = 10000
	// MaxBodySize bounds the file given to Config.Body.
	MaxBodySize = 1 << 20
	// MaxTextSize bounds Config.TextSize.
	MaxTextSize = 1 << 16
	// SmallTextSize is the length of the text of the small fixture
	// (testdata/bench/small.json): Config.TextSize for requests of its
	// shape and size, as the serving targets are measured with.
	SmallTextSize = 176
	// MaxGiveUp bounds Config.GiveUp.
	MaxGiveUp = 24 * time.Hour
	// SlotTolerance is how late an open-loop request may be sent and still
	// count as on time; later ones are counted in Report.MissedSlots.
	SlotTolerance = time.Millisecond
)

// MCPVersions are the values Config.MCPVersion accepts, newest first: the
// versions served on /mcp (contract §4).
var MCPVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

// stateless2026 is the MCP version whose requests carry _meta and must
// carry Mcp-Method and Mcp-Name.
const stateless2026 = "2026-07-28"

// Config describes one run. The zero value of every field means its
// documented default, so Config{} runs the default closed loop against
// DefaultURL. A Config may be copied; Run does not modify it.
type Config struct {
	// URL is the target, http:// only; default DefaultURL.
	URL string
	// Connections is the number of keep-alive connections, each carrying
	// one request at a time (no pipelining); default DefaultConnections.
	Connections int
	// Duration bounds the run in time. Zero means DefaultDuration, unless
	// Requests is set, in which case the count alone ends the run (each
	// request still bounded by Timeout).
	Duration time.Duration
	// Requests, when above zero, ends the run after that many requests.
	Requests int64
	// Rate, when above zero, makes the run an open loop: requests are
	// scheduled at Rate per second on a fixed timetable, and latency is
	// measured from each request's intended send time. Zero is a closed
	// loop: each connection sends its next request as soon as the answer to
	// the previous one is in.
	Rate float64
	// Mix weighs the built-in request shapes; the zero Mix means DefaultMix.
	// Ignored when Body is set.
	Mix Mix
	// TextSize, when above zero, makes the text of every call (and of a
	// badparams request) exactly TextSize bytes of JSON string contents:
	// the counter and the variant, then plain words (a sentence rotated by
	// the counter, so that no two texts are alike) up to the size, or the
	// counter and the variant alone when they are longer. SmallTextSize
	// gives requests of the small fixture's shape and size. Zero leaves
	// the texts short: the counter and a variant, 4 to about 60 bytes. At
	// most MaxTextSize; not with Body.
	TextSize int
	// Body, when set, is sent instead of the built-in shapes: one JSON-RPC
	// request object whose id is rewritten per request (added if absent),
	// and whose answer is checked as a call's (200, a result, the same id).
	Body []byte
	// BodyName names where Body came from, for the report.
	BodyName string
	// BodyGzip sends Body gzip-compressed, with Content-Encoding: gzip.
	// The parts around the id are compressed once, when the run starts;
	// each request puts its id between them in a stored deflate block and
	// computes the CRC-32, so that a request costs one pass over the body
	// and not a compression. Needs Body.
	BodyGzip bool
	// Events, when above zero, says every answer to Body is streamed: the
	// request is sent with Accept: application/json, text/event-stream
	// and its answer must be 200 text/event-stream carrying exactly Events
	// notifications (JSON-RPC notifications, each checked) and then the
	// response, checked as a call's. Report.Events counts the
	// notifications. Needs Body.
	Events int
	// A2A, with Events, says the stream is an A2A one (SendStreamingMessage
	// or SubscribeToTask, either wire version): its Events events are all
	// JSON-RPC responses to the request, each with a result that is an
	// A2A stream response — a task (or a direct message, alone) first,
	// then status and artifact updates of that task, the last one a
	// status update in a final or interrupted state (0.3: "final": true);
	// there is no separate response after them. Report.Events counts the
	// events, Report.FirstEvent times the first.
	A2A bool
	// Headers are sent with every request, after loadgen's own.
	Headers []Header
	// MCPVersion, when set, sends MCP-Protocol-Version, Mcp-Method and
	// Mcp-Name, and for 2026-07-28 also params._meta with the version
	// (contract §4). One of MCPVersions.
	MCPVersion string
	// Timeout bounds each request from send to complete answer, and each
	// connection attempt; default DefaultTimeout. A request past it is a
	// transport error.
	Timeout time.Duration
	// Drain bounds the end of a run bounded by Duration: once the
	// duration is over no request is sent (but for an open loop's slots
	// due before it, which still go out late as connections come free),
	// and the requests still without a complete answer Drain after it
	// fail as transport errors. Zero means DefaultDrain; more than
	// Timeout acts as Timeout. A run that Requests ends before its
	// duration has no drain of its own: each request is bounded by
	// Timeout.
	Drain time.Duration
	// GiveUp ends a run early when for this long no answer has come in
	// while requests failed in transport (refused or reset connections,
	// timeouts): the server is down or hangs, and a run bounded by
	// Requests would otherwise spend a connection attempt, a failure and
	// a 100 ms back-off on each of them. Run then returns the report so
	// far with Report.Aborted saying why (exit status 1). A run that gets
	// no answers but no failures either (answers slower than GiveUp, within
	// Timeout) goes on. Zero means DefaultGiveUp; at most MaxGiveUp.
	GiveUp time.Duration
	// MaxExamples is how many wrong answers are kept verbatim; default
	// DefaultMaxExamples; negative keeps none.
	MaxExamples int
	// Engine picks the I/O engine by name (see Engines); empty means the
	// fastest one compiled in.
	Engine string
	// SharedProcess says that other goroutines of this process need CPU
	// during the run: an in-process server, as under cmd/loadgen -self, or
	// in tests. By default the epoll engine lets each of its threads block
	// in epoll_wait while holding its P (cheaper per request: no hand-off
	// to the scheduler); when every P runs an engine thread, that starves
	// the rest of the process for up to 10 ms at a time. With SharedProcess
	// set, a thread that must wait hands its P over. Default false.
	SharedProcess bool
	// Spin is how long an epoll loop with nothing ready keeps polling
	// before it sleeps in epoll_wait, in a closed loop, while its recent
	// waits for answers were shorter than Spin (a slower server turns it
	// off by itself); zero, the default, never spins, and neither does a
	// SharedProcess run, an open loop or the netconn engine. The command's
	// -spin defaults to DefaultSpin. Why: over loopback a client's receive
	// path, its wakeup included, runs in the server's write, so a client
	// that sleeps between answers costs the server per answer (~1–2 µs on
	// a virtual machine), more the slower the server is; a client that
	// polls needs no wakeup. At most MaxSpin.
	Spin time.Duration
}

// DefaultSpin is cmd/loadgen's -spin: well above the gap between answers
// of a server saturated by one client (~15 µs), far below a slow
// server's.
const DefaultSpin = 50 * time.Microsecond

// MaxSpin bounds Config.Spin.
const MaxSpin = 10 * time.Millisecond

// Header is one extra request header.
type Header struct {
	Name, Value string
}

// String returns the header as "Name: Value".
func (h Header) String() string { return h.Name + ": " + h.Value }

// reservedHeaders are managed by loadgen itself.
var reservedHeaders = []string{"Content-Length", "Transfer-Encoding", "Connection", "Expect", "Upgrade", "TE", "Trailer"}

// ParseHeader parses a -header argument of the form "Name: Value" (the
// space after the colon is optional). Framing headers (Content-Length,
// Transfer-Encoding, Connection, Expect, Upgrade, TE, Trailer) are
// refused: loadgen writes its own. So is Accept-Encoding: loadgen checks
// answers as they come and does not decompress them, so it never asks
// for a compressed one (an answer with a Content-Encoding is wrong).
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return Header{}, fmt.Errorf("loadgen: header %q: want Name:Value", s)
	}
	name = strings.TrimSpace(name)
	value = strings.Trim(value, " \t")
	if name == "" {
		return Header{}, fmt.Errorf("loadgen: header %q: empty name", s)
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return Header{}, fmt.Errorf("loadgen: header %q: %q is not allowed in a header name", s, name[i])
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c == '\r' || c == '\n' || c == 0 {
			return Header{}, fmt.Errorf("loadgen: header %q: control character in the value", s)
		}
	}
	for _, r := range reservedHeaders {
		if strings.EqualFold(name, r) {
			return Header{}, fmt.Errorf("loadgen: header %q: %s is written by loadgen and cannot be set", s, r)
		}
	}
	if strings.EqualFold(name, "Accept-Encoding") {
		return Header{}, fmt.Errorf("loadgen: header %q: Accept-Encoding: loadgen does not decompress answers, so it cannot ask for compressed ones "+
			"(every compressed answer would count as wrong); -gzip compresses the request body, not the answers", s)
	}
	return Header{Name: name, Value: value}, nil
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// Shape is a kind of request loadgen sends, with the answer contract.md
// requires for it.
type Shape uint8

// The request shapes. Each request carries a fresh id and, for calls, a
// fresh text, so no answer can be memoised.
const (
	// ShapeCall is tools/call of tool echo with {"text": <varying text>}:
	// 200, a result {"content":[{"type":"text","text":<the same text>}]},
	// the same id.
	ShapeCall Shape = iota
	// ShapeNotify is a notification (notifications/cancelled, no id):
	// 202, an empty body, no Content-Type.
	ShapeNotify
	// ShapeUnknown calls a method that does not exist: 404, -32601, same id.
	ShapeUnknown
	// ShapeBadParams is tools/call with params that are not an object (an
	// array): 200, -32602, same id. Under MCP 2026-07-28, where params must
	// carry _meta, it sends echo a number as its text instead, which also
	// answers 200/-32602.
	ShapeBadParams
	// ShapeParse is a body that is not JSON (a trailing comma): 400,
	// -32700, id null.
	ShapeParse
	// ShapeBatch is a JSON-RPC batch of one call: 400, -32600, id null.
	ShapeBatch
	// ShapeCustom is Config.Body: 200, a result, the same id.
	ShapeCustom

	numShapes = iota
	// numMixShapes is the number of shapes a Mix weighs.
	numMixShapes = int(ShapeCustom)
)

var shapeNames = [numShapes]string{"call", "notify", "unknown", "badparams", "parse", "batch", "custom"}

// String returns the shape's name as -mix spells it ("custom" for Body).
func (s Shape) String() string {
	if int(s) < len(shapeNames) {
		return shapeNames[s]
	}
	return "shape(" + strconv.Itoa(int(s)) + ")"
}

// Mix weighs the built-in shapes, indexed by Shape (ShapeCall through
// ShapeBatch). Each request picks its shape at random with probability
// weight/total. The zero Mix means DefaultMix.
type Mix [numMixShapes]int

// DefaultMix sends calls only: every answer must then be a success, which
// is what a throughput figure should measure.
var DefaultMix = Mix{ShapeCall: 100}

// MaxWeight bounds one weight of a Mix.
const MaxWeight = 1_000_000

// ParseMix parses a -mix argument such as
// "call=90,notify=5,unknown=2,badparams=1,parse=1,batch=1". Shapes not
// named weigh 0; at least one weight must be above 0.
func ParseMix(s string) (Mix, error) {
	var m Mix
	var seen [numMixShapes]bool
	if strings.TrimSpace(s) == "" {
		return m, errors.New("loadgen: -mix is empty; want shape=weight[,shape=weight…], shapes: " + mixShapeList())
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, w, ok := strings.Cut(part, "=")
		if !ok {
			return m, fmt.Errorf("loadgen: -mix: %q is not shape=weight", part)
		}
		name = strings.TrimSpace(name)
		sh := -1
		for i := 0; i < numMixShapes; i++ {
			if shapeNames[i] == name {
				sh = i
			}
		}
		if sh < 0 {
			return m, fmt.Errorf("loadgen: -mix: unknown shape %q (shapes: %s)", name, mixShapeList())
		}
		if seen[sh] {
			return m, fmt.Errorf("loadgen: -mix: shape %q given twice", name)
		}
		seen[sh] = true
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 0 || n > MaxWeight {
			return m, fmt.Errorf("loadgen: -mix: weight of %s is %q; want an integer from 0 to %d", name, w, MaxWeight)
		}
		m[sh] = n
	}
	if m.total() == 0 {
		return m, errors.New("loadgen: -mix: every weight is 0; give at least one shape a weight above 0")
	}
	return m, nil
}

func mixShapeList() string { return strings.Join(shapeNames[:numMixShapes], ", ") }

func (m Mix) total() int {
	t := 0
	for _, w := range m {
		t += w
	}
	return t
}

// String returns the mix in ParseMix's syntax, zero weights left out.
func (m Mix) String() string {
	var b strings.Builder
	for i, w := range m {
		if w == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(shapeNames[i])
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(w))
	}
	return b.String()
}

// target is the parsed URL.
type target struct {
	host    string // Host header value
	addr    string // host:port to dial
	path    string // request target (path and query)
	display string
}

func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("loadgen: -url %q: %v", raw, err)
	}
	if u.Scheme != "http" {
		return target{}, fmt.Errorf("loadgen: -url %q: only http:// URLs are supported", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return target{}, fmt.Errorf("loadgen: -url %q: no host", raw)
	}
	if u.User != nil || u.Fragment != "" {
		return target{}, fmt.Errorf("loadgen: -url %q: user info and fragments are not supported", raw)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return target{
		host:    u.Host,
		addr:    hostPort(u.Hostname(), port),
		path:    p,
		display: raw,
	}, nil
}

func hostPort(h, p string) string {
	if strings.IndexByte(h, ':') >= 0 {
		return "[" + h + "]:" + p
	}
	return h + ":" + p
}

// normalized returns c with defaults filled in, or an error naming the
// first bad field in the words of the command's flags.
func (c Config) normalized() (Config, error) {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if c.Connections < 0 || c.Connections > MaxConnections {
		return c, fmt.Errorf("loadgen: -c %d: want 1 to %d connections", c.Connections, MaxConnections)
	}
	if c.Requests < 0 {
		return c, fmt.Errorf("loadgen: -n %d: want a count above 0 (or 0 for none)", c.Requests)
	}
	if c.Duration < 0 {
		return c, fmt.Errorf("loadgen: -d %v: want a positive duration", c.Duration)
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Duration = DefaultDuration
	}
	if c.Rate < 0 || c.Rate > 10_000_000 || c.Rate != c.Rate {
		return c, fmt.Errorf("loadgen: -rate %v: want 0 (closed loop) or a rate up to 10000000 requests/s", c.Rate)
	}
	if c.Timeout < 0 {
		return c, fmt.Errorf("loadgen: -timeout %v: want a positive duration", c.Timeout)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.GiveUp < 0 || c.GiveUp > MaxGiveUp {
		return c, fmt.Errorf("loadgen: -give-up %v: want a positive duration up to %v", c.GiveUp, MaxGiveUp)
	}
	if c.GiveUp == 0 {
		c.GiveUp = DefaultGiveUp
	}
	if c.Drain < 0 {
		return c, fmt.Errorf("loadgen: -drain %v: want a positive duration", c.Drain)
	}
	if c.Drain == 0 {
		c.Drain = DefaultDrain
	}
	c.Drain = min(c.Drain, c.Timeout)
	if c.Spin < 0 || c.Spin > MaxSpin {
		return c, fmt.Errorf("loadgen: -spin %v: want 0 (never) to %v", c.Spin, MaxSpin)
	}
	if c.MaxExamples == 0 {
		c.MaxExamples = DefaultMaxExamples
	}
	if c.MaxExamples < 0 {
		c.MaxExamples = 0
	}
	if c.Mix == (Mix{}) {
		c.Mix = DefaultMix
	}
	for i, w := range c.Mix {
		if w < 0 || w > MaxWeight {
			return c, fmt.Errorf("loadgen: -mix: weight of %s is %d; want 0 to %d", shapeNames[i], w, MaxWeight)
		}
	}
	if c.MCPVersion != "" {
		ok := false
		for _, v := range MCPVersions {
			ok = ok || v == c.MCPVersion
		}
		if !ok {
			return c, fmt.Errorf("loadgen: -mcp-version %q: want one of %s", c.MCPVersion, strings.Join(MCPVersions, ", "))
		}
	}
	if c.Events < 0 || c.Events > 0 && c.Body == nil {
		return c, errors.New("loadgen: -events needs -body (the request whose answer streams) and a count above 0")
	}
	if c.A2A && c.Events == 0 {
		return c, errors.New("loadgen: -a2a needs -events (the number of events of each A2A stream) and -body")
	}
	if c.TextSize < 0 || c.TextSize > MaxTextSize {
		return c, fmt.Errorf("loadgen: -text-size %d: want 0 (short texts) to %d bytes", c.TextSize, MaxTextSize)
	}
	if c.TextSize > 0 && c.Body != nil {
		return c, errors.New("loadgen: -text-size sizes the built-in calls' texts; -body sends its own")
	}
	if c.BodyGzip && c.Body == nil {
		return c, errors.New("loadgen: -gzip needs -body (the request to send compressed)")
	}
	if len(c.Body) > MaxBodySize {
		return c, fmt.Errorf("loadgen: -body %s: %d bytes; at most %d", c.BodyName, len(c.Body), MaxBodySize)
	}
	if c.Engine != "" && engineByName(c.Engine) == nil {
		return c, fmt.Errorf("loadgen: -engine %q: want one of %s", c.Engine, strings.Join(Engines(), ", "))
	}
	if _, err := parseTarget(c.URL); err != nil {
		return c, err
	}
	for _, h := range c.Headers {
		if _, err := ParseHeader(h.String()); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Validate reports the first problem with c that would make Run refuse it,
// in the words of cmd/loadgen's flags. A nil error means Run accepts c.
func (c Config) Validate() error {
	c, err := c.normalized()
	if err != nil {
		return err
	}
	_, err = newPlan(c)
	return err
}
