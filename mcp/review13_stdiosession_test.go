package mcp

// A hostile review of the stdio session (check.go checkStream,
// StreamEndpoint, serveToolsCall's Call.sess, serveSetLevel): what a
// careless or hostile client writes on the stream, and what a careless
// embedder does with the Endpoint.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// r13Stream is one ServeLines run driven line by line.
type r13Stream struct {
	t     *testing.T
	in    io.WriteCloser
	lines <-chan string
	done  <-chan error
}

// r13Serve serves ep with ServeLines over pipes (cfg's Logger discarded).
func r13Serve(t *testing.T, ep *fastserver.Endpoint, cfg fastserver.Config) *r13Stream {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	res := make(chan error, 1)
	go func() {
		res <- fastserver.ServeLines(context.Background(), ep, cfg, inR, outW)
		outW.Close()
	}()
	out := make(chan string, 64)
	go func() {
		br := bufio.NewReaderSize(outR, 1<<16)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(out)
				return
			}
			out <- l
		}
	}()
	return &r13Stream{t: t, in: inW, lines: out, done: res}
}

// close ends the input and waits for ServeLines.
func (st *r13Stream) close() {
	st.t.Helper()
	st.in.Close()
	select {
	case err := <-st.done:
		if err != nil {
			st.t.Errorf("ServeLines: %v", err)
		}
	case <-time.After(5 * time.Second):
		st.t.Error("ServeLines did not return")
	}
}

func (st *r13Stream) send(line string) {
	st.t.Helper()
	if _, err := io.WriteString(st.in, line+"\n"); err != nil {
		st.t.Fatalf("write: %v", err)
	}
}

func (st *r13Stream) next() (string, map[string]json.RawMessage) {
	st.t.Helper()
	return stdioLine(st.t, st.lines)
}

// r13ID is a fresh request id, a string or an integer.
func r13ID(prefix string) string {
	if rand.IntN(2) == 0 {
		return strconv.Itoa(1 + rand.IntN(1e9))
	}
	return strconv.Quote(fmt.Sprintf("%s-%d", prefix, rand.IntN(1e9)))
}

// request sends method with params (raw JSON, "" for none) and returns
// its answer; any other line before it fails the test.
func (st *r13Stream) request(method, params string) (string, map[string]json.RawMessage) {
	st.t.Helper()
	id := r13ID(strings.ReplaceAll(method, "/", "."))
	p := ""
	if params != "" {
		p = `,"params":` + params
	}
	st.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"` + p + `}`)
	l, m := st.next()
	if string(m["id"]) != id {
		st.t.Fatalf("%s: want the answer to %s, got %.300q", method, id, l)
	}
	return l, m
}

// initialize sends an initialize with params and wants a result.
func (st *r13Stream) initialize(params string) string {
	st.t.Helper()
	l, m := st.request("initialize", params)
	if m["result"] == nil {
		st.t.Fatalf("initialize %s: %.300q", params, l)
	}
	return l
}

func r13InitParams(version, caps string) string {
	return `{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"r13-` + strconv.Itoa(rand.IntN(1e6)) + `","version":"1"}}`
}

// probe calls the probe tool (meta: _meta's members, "" for none) and
// returns what it saw: "v=<version> el=<elicitation> sa=<sampling>".
func (st *r13Stream) probe(meta string) string {
	st.t.Helper()
	word := fmt.Sprintf("w%d", rand.IntN(1e6))
	params := `{"name":"probe","arguments":{"word":"` + word + `"}`
	if meta != "" {
		params += `,"_meta":{` + meta + `}`
	}
	l, m := st.request("tools/call", params+"}")
	var res struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) != 1 || !strings.HasSuffix(res.Content[0].Text, " "+word) {
		st.t.Fatalf("probe: %.300q (%v)", l, err)
	}
	return strings.TrimSuffix(res.Content[0].Text, " "+word)
}

// ask calls the ask tool, declining the elicitation when one is sent,
// and reports whether one was, and what the tool saw.
func (st *r13Stream) ask() (asked bool, result string) {
	st.t.Helper()
	id := r13ID("ask")
	st.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	l, m := st.next()
	if string(m["method"]) == `"elicitation/create"` {
		asked = true
		st.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"action":"decline"}}`)
		l, m = st.next()
	}
	if string(m["id"]) != id {
		st.t.Fatalf("ask: %.300q", l)
	}
	return asked, string(m["result"])
}

// logs calls the logs tool and returns the levels of the log messages
// sent before its answer.
func (st *r13Stream) logs(meta string) []string {
	st.t.Helper()
	id := r13ID("logs")
	params := `{"name":"logs","arguments":{}`
	if meta != "" {
		params += `,"_meta":{` + meta + `}`
	}
	st.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}}`)
	got := []string{}
	for {
		l, m := st.next()
		if string(m["id"]) == id {
			if m["result"] == nil {
				st.t.Fatalf("logs: %.300q", l)
			}
			return got
		}
		if string(m["method"]) != `"notifications/message"` {
			st.t.Fatalf("logs: %.300q", l)
		}
		var p struct{ Level string }
		json.Unmarshal(m["params"], &p)
		got = append(got, p.Level)
	}
}

// r13Server has a probe tool (reports its version and the elicitation
// and sampling capabilities as it sees them), a Streaming ask tool (an
// elicitation), a Streaming logs tool (one message at each of four
// levels), a titled prompt whose Render reports ClientSupports, and a
// titled resource.
func r13Server(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := New(Info{Name: "r13", Version: "1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddTool(Tool{Name: "probe", Title: "Probe Title",
		InputSchema: `{"type":"object","properties":{"word":{"type":"string"}}}`,
		Handler: ToolFunc(func(c *Call) error {
			word, _ := c.ArgString("word")
			c.AddText(fmt.Sprintf("v=%s el=%v sa=%v %s", c.Version(), c.ClientSupports("elicitation"), c.ClientSupports("sampling"), word))
			return nil
		})}))
	must(s.AddTool(Tool{Name: "ask", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		sup := c.ClientSupports("elicitation")
		res, err := c.Elicit("k", []byte(`{"message":"r13?","requestedSchema":{"type":"object","properties":{}}}`))
		if err != nil {
			c.AddText(fmt.Sprintf("supports %v; elicit failed: %v", sup, err))
			return nil
		}
		c.AddText(fmt.Sprintf("supports %v; elicited %s", sup, res))
		return nil
	})}))
	must(s.AddTool(Tool{Name: "logs", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		for _, l := range []LogLevel{LogDebug, LogInfo, LogWarning, LogError} {
			if err := c.LogText(l, "r13", "at "+l.String()); err != nil {
				return err
			}
		}
		c.AddText("logged")
		return nil
	})}))
	must(s.AddPrompt(Prompt{Name: "greet", Title: "Greet Title",
		Render: func(c *Call, _ map[string]string) (*PromptResult, error) {
			return &PromptResult{Messages: []PromptMessage{{Text: fmt.Sprintf("v=%s el=%v", c.Version(), c.ClientSupports("elicitation"))}}}, nil
		}}))
	must(s.AddResource(Resource{URI: "r13://doc", Name: "doc", Title: "Doc Title", MIMEType: "text/plain", Text: "doc text"}))
	return s
}

// r13Stdio serves s's StreamEndpoint.
func r13Stdio(t *testing.T, s *Server) *r13Stream {
	return r13Serve(t, s.StreamEndpoint(), fastserver.Config{})
}

// TestReview13RefusedInitializeKeepsSession: an initialize that is
// answered with an error must not change the stream's session (its
// version nor its capabilities): the client was told it failed. Each
// line below would, if it were taken, make the stream 2025-11-25 with
// elicitation (or without capabilities, for those that name none).
func TestReview13RefusedInitializeKeepsSession(t *testing.T) {
	s := r13Server(t)
	info := `"clientInfo":{"name":"h","version":"1"}`
	caps := `"capabilities":{"elicitation":{}}`
	pv := `"protocolVersion":"2025-11-25"`
	for _, tc := range []struct{ name, line string }{
		{"params an array", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":[{` + pv + `,` + caps + `,` + info + `}]}`},
		{"protocolVersion twice", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + pv + `,` + caps + `,` + info + `}}`},
		{"capabilities twice", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + caps + `,` + info + `}}`},
		{"clientInfo twice", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `,` + info + `}}`},
		{"_meta names an unknown version", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}}}`},
		{"_meta names the version twice", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`},
		{"_meta's version a number", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `,"_meta":{"io.modelcontextprotocol/protocolVersion":20251125}}}`},
		{"_meta twice", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `,"_meta":{},"_meta":{}}}`},
		{"_meta names 2026-07-28", `{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{"id fractional", strings.Replace(`{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{`+pv+`,`+caps+`,`+info+`}}`, "ID", "1.5", 1)},
		{"id null", strings.Replace(`{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{`+pv+`,`+caps+`,`+info+`}}`, "ID", "null", 1)},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":ID,"method":"initialize","params":{` + pv + `,` + caps + `,` + info + `}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := r13Stdio(t, s)
			defer st.close()
			st.initialize(r13InitParams("2025-03-26", `{}`))
			if got := st.probe(""); got != "v=2025-03-26 el=false sa=false" {
				t.Fatalf("after initialize 2025-03-26: %s", got)
			}
			st.send(strings.Replace(tc.line, "ID", r13ID("bad"), 1))
			l, m := st.next()
			if m["error"] == nil {
				t.Fatalf("the initialize was not refused: %.300q", l)
			}
			t.Logf("refused: %.200s", m["error"])
			if got := st.probe(""); got != "v=2025-03-26 el=false sa=false" {
				t.Errorf("a refused initialize changed the stream's session: %s, want v=2025-03-26 el=false sa=false", got)
			}
			if asked, res := st.ask(); asked {
				t.Errorf("a refused initialize declared elicitation: asked (%s)", res)
			}
		})
	}
}

// TestReview13InitializeOddCapabilities: capabilities that are absent,
// not an object, or whose members are not objects or are named twice
// declare nothing (as over HTTP, declaredCapabilities): ClientSupports
// is false and Ask sends no request line; each initialize replaces the
// last one's capabilities; an escaped name is the name.
func TestReview13InitializeOddCapabilities(t *testing.T) {
	s := r13Server(t)
	st := r13Stdio(t, s)
	defer st.close()
	v := []string{"2025-03-26", "2025-06-18", "2025-11-25"}[rand.IntN(3)]
	for i, tc := range []struct {
		caps string // "" for absent
		want bool
	}{
		{`{"elicitation":{}}`, true},
		{"", false},
		{`null`, false},
		{`"elicitation"`, false},
		{`["elicitation"]`, false},
		{`[{"elicitation":{}}]`, false},
		{`{"elicitation":true}`, false},
		{`{"elicitation":null}`, false},
		{`{"elicitation":[]}`, false},
		{`{"elicitation":"{}"}`, false},
		{`{"elicitation":{"form":{}},"elicitation":{}}`, false},
		{`{"x":{"elicitation":{}}}`, false},
		{`{"Elicitation":{}}`, false},
		{`{"elicit\u0061tion":{"form":{}},"sampling":{}}`, true},
		{`{ "elicitation" : { "url" : { } } }`, true},
		{`{}`, false},
	} {
		params := `{"protocolVersion":"` + v + `","clientInfo":{"name":"odd","version":"` + strconv.Itoa(i) + `"}}`
		if tc.caps != "" {
			params = r13InitParams(v, tc.caps)
		}
		st.initialize(params)
		want := fmt.Sprintf("v=%s el=%v", v, tc.want)
		if got := st.probe(""); !strings.HasPrefix(got, want+" ") {
			t.Errorf("capabilities %s: probe %s, want %s", tc.caps, got, want)
		}
		if asked, res := st.ask(); asked != tc.want {
			t.Errorf("capabilities %s: asked %v (%s)", tc.caps, asked, res)
		}
	}
}

// TestReview13InitializeNotification: an initialize without an id is a
// notification: it gets no answer and starts no session.
func TestReview13InitializeNotification(t *testing.T) {
	s := r13Server(t)
	st := r13Stdio(t, s)
	defer st.close()
	st.send(`{"jsonrpc":"2.0","method":"initialize","params":` + r13InitParams("2025-11-25", `{"roots":{}}`) + `}`)
	if got := st.probe(""); got != "v=2025-03-26 el=true sa=true" {
		t.Errorf("after an initialize notification: %s, want the stream as before any initialize", got)
	}
	v := []string{"2025-06-18", "2025-11-25"}[rand.IntN(2)]
	st.initialize(r13InitParams(v, `{"sampling":{}}`))
	st.send(`{"jsonrpc":"2.0","method":"initialize","params":` + r13InitParams("2025-03-26", `{"elicitation":{}}`) + `}`)
	if got, want := st.probe(""), "v="+v+" el=false sa=true"; got != want {
		t.Errorf("an initialize notification after an initialize: %s, want %s", got, want)
	}
}

// TestReview13InitializeVersionsAnswered: whatever protocolVersion the
// client names (a future one, an unknown one, a number, none), the
// version the stream then serves is the one initialize answered with.
func TestReview13InitializeVersionsAnswered(t *testing.T) {
	s := r13Server(t)
	st := r13Stdio(t, s)
	defer st.close()
	for _, pv := range []string{`"2026-07-28"`, `"1999-01-01"`, `20250618`, `""`, `"2025-06-18 "`, `null`, `"2025-06-18"`, `"2025-03-26"`, `"2025-11-25"`, `{"v":"2025-06-18"}`} {
		params := `{"protocolVersion":` + pv + `,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`
		if pv == "" {
			params = `{"capabilities":{}}`
		}
		l := st.initialize(params)
		var a struct {
			Result struct{ ProtocolVersion string }
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil || a.Result.ProtocolVersion == "" {
			t.Fatalf("initialize %s: %.300q", pv, l)
		}
		if got, want := st.probe(""), "v="+a.Result.ProtocolVersion+" el=false sa=false"; got != want {
			t.Errorf("initialize %s answered %s; then %s, want %s", pv, a.Result.ProtocolVersion, got, want)
		}
		if strings.Contains(a.Result.ProtocolVersion, "2026") {
			t.Errorf("initialize %s answered %s", pv, a.Result.ProtocolVersion)
		}
	}
}

// TestReview13StatelessAfterInitialize: after a 2025-xx initialize, a
// request whose _meta names 2026-07-28 follows 2026-07-28's rules: its
// own clientCapabilities (not the stream's), its own log level (not the
// stream's logging/setLevel); the next request without _meta is back on
// the stream's session.
func TestReview13StatelessAfterInitialize(t *testing.T) {
	s := r13Server(t)
	st := r13Stdio(t, s)
	defer st.close()
	v := []string{"2025-06-18", "2025-11-25"}[rand.IntN(2)]
	st.initialize(r13InitParams(v, `{"sampling":{}}`))
	if _, m := st.request("logging/setLevel", `{"level":"error"}`); m["error"] != nil {
		t.Fatalf("setLevel: %s", m["error"])
	}
	v26 := `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	if got, want := st.probe(v26+`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`), "v=2026-07-28 el=true sa=false"; got != want {
		t.Errorf("2026-07-28 with its own capabilities: %s, want %s", got, want)
	}
	if got, want := st.probe(v26+`,"io.modelcontextprotocol/clientCapabilities":{}`), "v=2026-07-28 el=false sa=false"; got != want {
		t.Errorf("2026-07-28 declaring nothing: %s, want %s", got, want)
	}
	if got, want := st.probe(""), "v="+v+" el=false sa=true"; got != want {
		t.Errorf("back on the stream: %s, want %s", got, want)
	}
	if got, want := st.probe(`"io.modelcontextprotocol/protocolVersion":"2025-03-26"`), "v=2025-03-26 el=false sa=true"; got != want {
		t.Errorf("naming 2025-03-26 in _meta: %s, want %s", got, want)
	}
	// 2026-07-28's log level is the request's own.
	if got := st.logs(v26 + `,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"`); fmt.Sprint(got) != "[debug info warning error]" {
		t.Errorf("2026-07-28 logs at debug: %v", got)
	}
	if got := st.logs(""); fmt.Sprint(got) != "[error]" {
		t.Errorf("the stream's logs after setLevel error: %v", got)
	}
	// initialize and logging/setLevel do not exist under 2026-07-28: the
	// stream's session stays.
	if _, m := st.request("logging/setLevel", `{"level":"debug","_meta":{`+v26+`}}`); m["error"] == nil {
		t.Errorf("logging/setLevel under 2026-07-28 answered")
	}
	if got := st.logs(""); fmt.Sprint(got) != "[error]" {
		t.Errorf("after a 2026-07-28 logging/setLevel: %v", got)
	}
}

// TestReview13SetLevelHostile: a logging/setLevel that is refused
// changes nothing; one before any initialize has nothing to set; a new
// initialize is a new session, at every level again.
func TestReview13SetLevelHostile(t *testing.T) {
	s := r13Server(t)
	st := r13Stdio(t, s)
	defer st.close()
	if _, m := st.request("logging/setLevel", `{"level":"error"}`); m["error"] != nil {
		t.Fatalf("setLevel before initialize: %s", m["error"])
	}
	if got := st.logs(""); fmt.Sprint(got) != "[debug info warning error]" {
		t.Errorf("setLevel before initialize took effect: %v", got)
	}
	st.initialize(r13InitParams([]string{"2025-03-26", "2025-06-18", "2025-11-25"}[rand.IntN(3)], `{}`))
	if _, m := st.request("logging/setLevel", `{"level":"warning"}`); m["error"] != nil {
		t.Fatalf("setLevel warning: %s", m["error"])
	}
	for _, p := range []string{`{"level":"verbose"}`, `{"level":"DEBUG"}`, `{"level":7}`, `{"level":null}`, `{}`, `["debug"]`,
		`{"level":"debug","level":"debug"}`, `{"level":"debug ","x":1}`, `{"level":["debug"]}`, `{"level":"deb\u0000ug"}`} {
		if l, m := st.request("logging/setLevel", p); m["error"] == nil {
			t.Errorf("setLevel %s: %.200q", p, l)
		}
		if got := st.logs(""); fmt.Sprint(got) != "[warning error]" {
			t.Errorf("after a refused setLevel %s: %v", p, got)
		}
	}
	// An escaped level is the level.
	if _, m := st.request("logging/setLevel", `{"level":"\u0065rror"}`); m["error"] != nil {
		t.Errorf("setLevel escaped error: %s", m["error"])
	}
	if got := st.logs(""); fmt.Sprint(got) != "[error]" {
		t.Errorf("after setLevel escaped error: %v", got)
	}
	st.initialize(r13InitParams("2025-11-25", `{}`))
	if got := st.logs(""); fmt.Sprint(got) != "[debug info warning error]" {
		t.Errorf("a new initialize kept the old session's level: %v", got)
	}
}

// TestReview13CancelledInitialize: an initialize the client cancels
// while it waits behind a running call is never served: it starts no
// session.
func TestReview13CancelledInitialize(t *testing.T) {
	s := r13Server(t)
	release := make(chan struct{})
	if err := s.AddTool(Tool{Name: "block", Handler: ToolFunc(func(c *Call) error {
		select {
		case <-release:
		case <-c.Context().Done():
		}
		c.AddText("unblocked")
		return nil
	})}); err != nil {
		t.Fatal(err)
	}
	st := r13Stdio(t, s)
	defer st.close()
	st.initialize(r13InitParams("2025-03-26", `{}`))
	bid, iid := r13ID("block"), r13ID("init")
	st.send(`{"jsonrpc":"2.0","id":` + bid + `,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	st.send(`{"jsonrpc":"2.0","id":` + iid + `,"method":"initialize","params":` + r13InitParams("2025-11-25", `{"elicitation":{}}`) + `}`)
	st.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + iid + `,"reason":"changed my mind"}}`)
	time.Sleep(50 * time.Millisecond) // the cancellation is read while block runs
	close(release)
	if l, m := st.next(); string(m["id"]) != bid {
		t.Fatalf("block: %.200q", l)
	}
	if got := st.probe(""); got != "v=2025-03-26 el=false sa=false" {
		t.Errorf("a cancelled initialize changed the session: %s", got)
	}
}

// TestReview13SharedStreamEndpoint: one StreamEndpoint served by two
// ServeLines at once (documented as one per stream: a misuse). The
// streams then share one session, but nothing may crash, race or go
// unanswered.
func TestReview13SharedStreamEndpoint(t *testing.T) {
	s := r13Server(t)
	ep := s.StreamEndpoint()
	var wg sync.WaitGroup
	for k := range 3 {
		st := r13Serve(t, ep, fastserver.Config{})
		wg.Go(func() {
			defer st.close()
			for i := range 25 {
				switch (i + k) % 5 {
				case 0:
					st.initialize(r13InitParams([]string{"2025-03-26", "2025-06-18", "2025-11-25"}[rand.IntN(3)], []string{`{}`, `{"elicitation":{}}`, `{"sampling":{}}`}[rand.IntN(3)]))
				case 1:
					got := st.probe("")
					if !strings.HasPrefix(got, "v=2025-") {
						t.Errorf("stream %d: probe %s", k, got)
					}
				case 2:
					if _, m := st.request("logging/setLevel", `{"level":"`+[]string{"debug", "info", "warning", "error"}[rand.IntN(4)]+`"}`); m["error"] != nil {
						t.Errorf("stream %d: setLevel %s", k, m["error"])
					}
				case 3:
					st.logs("")
				case 4:
					st.ask()
				}
			}
		})
	}
	wg.Wait()
}

// TestReview13PlainEndpointOverStdio: a careless embedder serves
// Endpoint (the HTTP one) with ServeLines, with and without sessions:
// every request is answered, none with an internal error, nothing
// panics.
func TestReview13PlainEndpointOverStdio(t *testing.T) {
	for _, opts := range [][]Option{nil, {WithSessions(SessionOptions{})}} {
		s := r13Server(t, opts...)
		st := r13Serve(t, s.Endpoint(), fastserver.Config{})
		lines := []struct{ method, params string }{
			{"initialize", r13InitParams("2025-11-25", `{"roots":{}}`)},
			{"tools/list", ""},
			{"tools/call", `{"name":"probe","arguments":{"word":"plain"}}`},
			{"logging/setLevel", `{"level":"info"}`},
			{"resources/subscribe", `{"uri":"r13://doc"}`},
			{"resources/read", `{"uri":"r13://doc"}`},
			{"prompts/get", `{"name":"greet"}`},
			{"resources/unsubscribe", `{"uri":"r13://doc"}`},
			{"ping", ""},
		}
		for _, r := range lines {
			l, m := st.request(r.method, r.params)
			if strings.Contains(string(m["error"]), "-32603") {
				t.Errorf("sessions %v: %s: %.300q", opts != nil, r.method, l)
			}
		}
		id := r13ID("ask")
		st.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
		l, m := st.next()
		if string(m["method"]) == `"elicitation/create"` {
			st.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"action":"decline"}}`)
			l, m = st.next()
		}
		if string(m["id"]) != id || strings.Contains(string(m["error"]), "-32603") {
			t.Errorf("sessions %v: ask: %.300q", opts != nil, l)
		}
		st.close()
	}
}

// TestReview13WithSessionsOverStdio: with WithSessions on, the stdio
// stream is still its own session: its capabilities and its level, not
// an HTTP session's (there is no Mcp-Session-Id on a stream);
// resources/subscribe, resources/read, prompts/get and a cancellation
// work and nothing panics.
func TestReview13WithSessionsOverStdio(t *testing.T) {
	s := r13Server(t, WithSessions(SessionOptions{Max: 50}))
	release := make(chan struct{})
	if err := s.AddTool(Tool{Name: "wait", Handler: ToolFunc(func(c *Call) error {
		select {
		case <-release:
			c.AddText("released")
		case <-c.Context().Done():
			c.AddText("cancelled")
		}
		return nil
	})}); err != nil {
		t.Fatal(err)
	}
	st := r13Stdio(t, s)
	defer st.close()
	v := []string{"2025-06-18", "2025-11-25"}[rand.IntN(2)]
	st.initialize(r13InitParams(v, `{"roots":{}}`))
	if got, want := st.probe(""), "v="+v+" el=false sa=false"; got != want {
		t.Errorf("probe: %s, want %s", got, want)
	}
	if asked, res := st.ask(); asked {
		t.Errorf("asked without elicitation: %s", res)
	}
	if _, m := st.request("logging/setLevel", `{"level":"warning"}`); m["error"] != nil {
		t.Fatalf("setLevel: %s", m["error"])
	}
	if got := st.logs(""); fmt.Sprint(got) != "[warning error]" {
		t.Errorf("logs after setLevel warning: %v", got)
	}
	for _, r := range []struct{ method, params string }{
		{"resources/subscribe", `{"uri":"r13://doc"}`},
		{"resources/subscribe", `{"uri":"r13://doc"}`},
		{"resources/read", `{"uri":"r13://doc"}`},
		{"prompts/get", `{"name":"greet"}`},
		{"resources/unsubscribe", `{"uri":"r13://doc"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"x","value":"y"}}`},
	} {
		if l, m := st.request(r.method, r.params); m["result"] == nil {
			t.Errorf("%s: %.300q", r.method, l)
		}
	}
	s.NotifyResourceUpdated("r13://doc") // nothing to deliver to over stdio; must not block or panic
	// A cancellation still reaches a running tool (Endpoint.Cancel, not
	// the session table's inflight list).
	wid := r13ID("wait")
	st.send(`{"jsonrpc":"2.0","id":` + wid + `,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	time.Sleep(20 * time.Millisecond)
	st.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + wid + `}}`)
	if got := st.probe(""); !strings.HasPrefix(got, "v="+v) {
		t.Errorf("after the cancellation: %s", got)
	}
	close(release)
}

// TestReview13FullTableRefusalKeepsSession: with WithSessions on, an
// initialize over stdio that is refused because the HTTP session table
// is full must not change the stream's session either (the client was
// told it failed).
func TestReview13FullTableRefusalKeepsSession(t *testing.T) {
	s := r13Server(t, WithSessions(SessionOptions{Max: 1}))
	st := r13Stdio(t, s)
	defer st.close()
	st.initialize(r13InitParams("2025-03-26", `{}`))
	for i := range 3 {
		caps := []string{`{"elicitation":{}}`, `{"sampling":{}}`}[i%2]
		l, m := st.request("initialize", r13InitParams("2025-11-25", caps))
		got := st.probe("")
		want := "v=2025-03-26 el=false sa=false" // refused: unchanged
		if m["result"] != nil {
			want = fmt.Sprintf("v=2025-11-25 el=%v sa=%v", i%2 == 0, i%2 == 1)
		}
		if got != want {
			t.Errorf("initialize %d answered %.200q; then %s, want %s", i, l, got, want)
		}
	}
}

// TestReview13StdioInitializeTakesNoHTTPSession: with WithSessions on,
// an initialize over stdio is the stream's session: it must not also
// take a place in the HTTP session table (one no request can ever name,
// since a stream has no Mcp-Session-Id), nor be refused because that
// table is full.
func TestReview13StdioInitializeTakesNoHTTPSession(t *testing.T) {
	s := r13Server(t, WithSessions(SessionOptions{Max: 3}))
	st := r13Stdio(t, s)
	defer st.close()
	for i := range 2 {
		if l, m := st.request("initialize", r13InitParams("2025-11-25", `{}`)); m["result"] == nil {
			t.Errorf("initialize %d over stdio refused: %.200q", i, l)
		}
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d HTTP sessions after two initializes over stdio", n)
	}
}

// TestReview13PromptsAndResourcesFollowTheStream: prompts/list,
// resources/list and prompts/get over stdio are served under the
// stream's version (titles from 2025-06-18 on), and a prompt's Render
// sees the stream's capabilities (ClientSupports, as tools/call).
func TestReview13PromptsAndResourcesFollowTheStream(t *testing.T) {
	s := r13Server(t)
	st := r13Stdio(t, s)
	defer st.close()
	titles := func() (prompt, resource bool) {
		t.Helper()
		l, m := st.request("prompts/list", "")
		if m["result"] == nil {
			t.Fatalf("prompts/list: %.200q", l)
		}
		prompt = strings.Contains(l, "Greet Title")
		l, m = st.request("resources/list", "")
		if m["result"] == nil {
			t.Fatalf("resources/list: %.200q", l)
		}
		return prompt, strings.Contains(l, "Doc Title")
	}
	render := func() string {
		t.Helper()
		l, m := st.request("prompts/get", `{"name":"greet"}`)
		if m["result"] == nil {
			t.Fatalf("prompts/get: %.200q", l)
		}
		var res struct {
			Messages []struct{ Content struct{ Text string } }
		}
		if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Messages) != 1 {
			t.Fatalf("prompts/get: %.200q", l)
		}
		return res.Messages[0].Content.Text
	}
	if p, r := titles(); p || r {
		t.Errorf("before initialize (2025-03-26): titles %v %v", p, r)
	}
	v := []string{"2025-06-18", "2025-11-25"}[rand.IntN(2)]
	st.initialize(r13InitParams(v, `{"sampling":{}}`))
	if p, r := titles(); !p || !r {
		t.Errorf("after initialize %s: titles %v %v", v, p, r)
	}
	if got, want := render(), "v="+v+" el=false"; got != want {
		t.Errorf("prompt Render after initialize without elicitation: %s, want %s (tools/call's probe: %s)", got, want, st.probe(""))
	}
	st.initialize(r13InitParams("2025-03-26", `{"elicitation":{}}`))
	if p, r := titles(); p || r {
		t.Errorf("after initialize 2025-03-26: titles %v %v", p, r)
	}
	if got, want := render(), "v=2025-03-26 el=true"; got != want {
		t.Errorf("prompt Render after initialize 2025-03-26 with elicitation: %s, want %s", got, want)
	}
}

// r13Heap is the live heap after two collections.
func r13Heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestReview13CapabilitiesMemory: the stream's session keeps what
// ClientSupports needs of initialize's capabilities, not the client's
// whole object (an HTTP session keeps at most maxSessionCaps, 4 KiB:
// declaredCapabilities), and each initialize releases the last one's.
// Measured against a line of the same size that is not an initialize.
func TestReview13CapabilitiesMemory(t *testing.T) {
	s := r13Server(t)
	const size = 3 << 20
	st := r13Serve(t, s.StreamEndpoint(), fastserver.Config{MaxBodyBytes: 4 << 20})
	defer st.close()
	pad := func() string { return strings.Repeat(string(rune('a'+rand.IntN(26))), size) }
	st.initialize(r13InitParams("2025-11-25", `{}`))
	st.probe("")
	h0 := r13Heap()
	// The control: as large a line, not an initialize.
	if l, m := st.request("tools/list", `{"_meta":{"pad":"`+pad()+`"}}`); m["result"] == nil {
		t.Fatalf("tools/list: %.200q", l)
	}
	st.probe("")
	h1 := r13Heap()
	st.initialize(r13InitParams("2025-11-25", `{"elicitation":{},"experimental":{"pad":"`+pad()+`"}}`))
	if got := st.probe(""); got != "v=2025-11-25 el=true sa=false" {
		t.Fatalf("probe: %s", got)
	}
	h2 := r13Heap()
	for range 8 {
		st.initialize(r13InitParams("2025-11-25", `{"elicitation":{},"experimental":{"pad":"`+pad()+`"}}`))
	}
	st.probe("")
	h3 := r13Heap()
	d := func(a, b uint64) int64 { return int64(b) - int64(a) }
	t.Logf("heap: control %+d, one large initialize %+d, eight more %+d", d(h0, h1), d(h1, h2), d(h2, h3))
	if d(h2, h3) > 2<<20 {
		t.Errorf("eight more initializes of 3 MiB capabilities grew the heap by %d bytes: old sessions kept", d(h2, h3))
	}
	if d(h1, h2) > 1<<20 {
		t.Errorf("the stream's session keeps %d bytes after an initialize with 3 MiB capabilities (HTTP keeps at most %d)", d(h1, h2), maxSessionCaps)
	}
}
