package mcp

// Review 11 (hostile review) of cancellation within a session over HTTP
// (sessioncancel.go, fastserver.Request.Cancel): a cancellation must reach
// only the running requests of its own session with the id it names, never
// another session's, never one that starts after it, never a later request
// served by the same pooled call.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// r11End is how one gated handler run ended: nil when released, else its
// context's error.
type r11End struct {
	id  string
	err error
}

// r11Gate holds handlers until their context ends or the test releases
// them, and reports their start and end.
type r11Gate struct {
	started chan string
	evented chan string // a streaming run sent its first event
	ended   chan r11End
	release chan struct{} // closed: every run is released
	one     chan struct{} // each token releases one run
	once    sync.Once
}

func newR11Gate() *r11Gate {
	return &r11Gate{started: make(chan string, 256), evented: make(chan string, 256),
		ended: make(chan r11End, 256), release: make(chan struct{}), one: make(chan struct{}, 256)}
}

func (g *r11Gate) open() { g.once.Do(func() { close(g.release) }) }

// wait is a gated run: started, then ended by ctx or by the release.
func (g *r11Gate) wait(ctx context.Context, id string) error {
	g.started <- id
	return g.hold(ctx, id)
}

func (g *r11Gate) hold(ctx context.Context, id string) error {
	select {
	case <-ctx.Done():
		g.ended <- r11End{id, ctx.Err()}
		return ctx.Err()
	case <-g.release:
		g.ended <- r11End{id, nil}
		return nil
	case <-g.one:
		g.ended <- r11End{id, nil}
		return nil
	case <-time.After(10 * time.Second):
		err := errors.New("neither cancelled nor released in 10 s")
		g.ended <- r11End{id, err}
		return err
	}
}

// awaitStart waits (5 s at most) for n runs to start and returns their ids.
func (g *r11Gate) awaitStart(t *testing.T, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		select {
		case id := <-g.started:
			ids = append(ids, id)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d runs started", len(ids), n)
		}
	}
	return ids
}

// awaitEnd waits (5 s at most) for one run to end.
func (g *r11Gate) awaitEnd(t *testing.T, what string) r11End {
	t.Helper()
	select {
	case e := <-g.ended:
		return e
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no run ended within 5 s", what)
	}
	return r11End{}
}

// awaitCancelled waits for one run to end and wants it cancelled.
func (g *r11Gate) awaitCancelled(t *testing.T, what string) r11End {
	t.Helper()
	e := g.awaitEnd(t, what)
	if !errors.Is(e.err, context.Canceled) {
		t.Fatalf("%s: run %s ended with %v, want context.Canceled", what, e.id, e.err)
	}
	return e
}

// quiet fails if any run ends within d.
func (g *r11Gate) quiet(t *testing.T, d time.Duration, what string) {
	t.Helper()
	select {
	case e := <-g.ended:
		t.Fatalf("%s ended run %s: %v", what, e.id, e.err)
	case <-time.After(d):
	}
}

// r11Env is a server with sessions on loopback, with gated handlers on
// every wrapped route.
type r11Env struct {
	s      *Server
	url    string
	g      *r11Gate
	cl     *http.Client // keep-alive client, bounded
	misuse atomic.Int64 // a run that must not be cancelled saw its context end
}

// newR11Env serves a server with sessions (o) and opts; more adds tools
// before the endpoint is frozen.
func newR11Env(t *testing.T, o SessionOptions, more func(*Server, *r11Gate), opts ...Option) *r11Env {
	t.Helper()
	s, err := New(Info{Name: "r11", Version: "1"}, append([]Option{WithSessions(o)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	env := &r11Env{s: s, g: newR11Gate()}
	g := env.g
	idOf := func(r *fastserver.Request) string { return string(r.Msg.ID) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddTool(Tool{Name: "wait", Handler: ToolFunc(func(c *Call) error {
		if err := g.wait(c.Context(), idOf(c.Request())); err != nil {
			return err
		}
		c.AddText("released")
		return nil
	})}))
	// quick spins for arguments.spin microseconds; an id starting "y or "b
	// must never see its context end.
	must(s.AddTool(Tool{Name: "quick", Handler: ToolFunc(func(c *Call) error {
		spin, _ := c.ArgInt("spin")
		ctx := c.Context()
		start := time.Now()
		for time.Since(start) < time.Duration(spin)*time.Microsecond && ctx.Err() == nil {
			runtime.Gosched()
		}
		id := idOf(c.Request())
		if ctx.Err() != nil {
			if strings.HasPrefix(id, `"y`) || strings.HasPrefix(id, `"b`) || strings.HasPrefix(id, `"k`) {
				env.misuse.Add(1)
			}
			return ctx.Err()
		}
		c.AddText("done " + id)
		return nil
	})}))
	// swait streams: with arguments.event it sends a log message first.
	must(s.AddTool(Tool{Name: "swait", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		id := idOf(c.Request())
		g.started <- id
		if ev, _ := c.ArgBool("event"); ev {
			if err := c.LogText(LogInfo, "", "first event"); err != nil {
				return err
			}
			g.evented <- id
		}
		if err := g.hold(c.Context(), id); err != nil {
			return err
		}
		c.AddText("released")
		return nil
	})}))
	must(s.AddTool(Tool{Name: "boom", Handler: ToolFunc(func(c *Call) error {
		panic("boom")
	})}))
	must(s.AddTool(Tool{Name: "sboom", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		if ev, _ := c.ArgBool("event"); ev {
			if err := c.LogText(LogInfo, "", "first event"); err != nil {
				return err
			}
		}
		panic("sboom")
	})}))
	must(s.AddResource(Resource{URI: "test://slow", Read: func(r *fastserver.Request) ([]ResourceContents, error) {
		return nil, g.wait(r.Context(), idOf(r))
	}}))
	must(s.AddPrompt(Prompt{Name: "slowp", Arguments: []PromptArgument{{Name: "x"}}, Get: func(r *fastserver.Request, _ map[string]string) (*PromptResult, error) {
		if err := g.wait(r.Context(), idOf(r)); err != nil {
			return nil, err
		}
		return &PromptResult{Messages: []PromptMessage{{Text: "hi"}}}, nil
	}}))
	if more != nil {
		more(s, g)
	}
	_, env.url = serveLoopback(t, s, fastserver.Config{HandlerTimeout: time.Minute})
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	env.cl = &http.Client{Transport: tr, Timeout: 8 * time.Second}
	t.Cleanup(g.open)
	return env
}

// post POSTs body with the session id (if any) and extra header pairs;
// safe from any goroutine.
func (env *r11Env) post(cl *http.Client, session, body string, hdr ...string) (int, string, error) {
	if cl == nil {
		cl = env.cl
	}
	req, err := http.NewRequest("POST", env.url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse)
	req.Header.Set(HeaderProtocolVersion, "2025-11-25")
	if session != "" {
		req.Header.Set(HeaderSession, session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), err
}

// mustPost is post on the test goroutine.
func (env *r11Env) mustPost(t *testing.T, session, body string, hdr ...string) (int, string) {
	t.Helper()
	st, b, err := env.post(nil, session, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return st, b
}

// session initializes one (with extra header pairs) and returns its id.
func (env *r11Env) session(t *testing.T, hdr ...string) string {
	t.Helper()
	resp, body := do(t, "POST", env.url, "", initialize, hdr...)
	id := resp.Header.Get(HeaderSession)
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	return id
}

// async POSTs in the background; the answer comes on the channel.
type r11Answer struct {
	status int
	body   string
	err    error
}

func (env *r11Env) async(cl *http.Client, session, body string, hdr ...string) chan r11Answer {
	ch := make(chan r11Answer, 1)
	go func() {
		st, b, err := env.post(cl, session, body, hdr...)
		ch <- r11Answer{st, b, err}
	}()
	return ch
}

func r11Await(t *testing.T, ch chan r11Answer, what string) r11Answer {
	t.Helper()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		return a
	case <-time.After(8 * time.Second):
		t.Fatalf("%s: not answered within 8 s", what)
	}
	return r11Answer{}
}

// wantCancelled wants a's body to be id's -32603 "request cancelled".
func wantCancelled(t *testing.T, a r11Answer, id, what string) {
	t.Helper()
	if !strings.Contains(a.body, `"id":`+id) || !strings.Contains(a.body, `"code":-32603`) || !strings.Contains(a.body, "request cancelled") {
		t.Fatalf("%s: answer %d %s, want id %s cancelled", what, a.status, a.body, id)
	}
}

func r11Call(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func r11Cancel(requestID string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + requestID + `,"reason":"r11"}}`
}

// sess returns the live session id names (any owner), or nil.
func (env *r11Env) sess(id string) *session {
	t := env.s.sessions
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

func inflightOf(ss *session) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.inflight)
}

// awaitUntracked waits (5 s at most) until ss tracks no request.
func awaitUntracked(t *testing.T, ss *session, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for inflightOf(ss) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the session still tracks %d requests after 5 s", what, inflightOf(ss))
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReview11OtherSessionSameID: two sessions run requests with the same
// id; a cancellation in one ends only its own, and a request of that
// session that starts after the cancellation runs to its end.
func TestReview11OtherSessionSameID(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a, b := env.session(t), env.session(t)
	const id = `"same"`
	ansA := env.async(nil, a, r11Call(id, "wait", `{}`))
	ansB := env.async(nil, b, r11Call(id, "wait", `{}`))
	env.g.awaitStart(t, 2)
	if st, body := env.mustPost(t, a, r11Cancel(id)); st != 202 {
		t.Fatalf("cancel in a: %d %s", st, body)
	}
	env.g.awaitCancelled(t, "a's cancellation")
	wantCancelled(t, r11Await(t, ansA, "a's call"), id, "a's call")
	env.g.quiet(t, 200*time.Millisecond, "a's cancellation (b's request)")

	// After the cancellation, a new request of a with the same id runs.
	ansA2 := env.async(nil, a, r11Call(id, "wait", `{}`))
	env.g.awaitStart(t, 1)
	env.g.quiet(t, 200*time.Millisecond, "a cancellation sent before the request")
	env.g.open()
	for range 2 {
		if e := env.g.awaitEnd(t, "release"); e.err != nil {
			t.Fatalf("run %s: %v", e.id, e.err)
		}
	}
	for _, ch := range []chan r11Answer{ansA2, ansB} {
		if a := r11Await(t, ch, "released call"); !strings.Contains(a.body, `"released"`) {
			t.Fatalf("released call: %d %s", a.status, a.body)
		}
	}
	awaitUntracked(t, env.sess(a), "a")
	awaitUntracked(t, env.sess(b), "b")
}

// TestReview11DuplicateInflightIDs: two running requests of one session
// with one id (the client broke MCP's uniqueness): one cancellation ends
// both, as cancelInSession promises, and nothing else.
func TestReview11DuplicateInflightIDs(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a, b := env.session(t), env.session(t)
	const id = `7`
	ans1 := env.async(nil, a, r11Call(id, "wait", `{}`))
	ans2 := env.async(nil, a, r11Call(id, "wait", `{}`))
	ansOther := env.async(nil, a, r11Call(`"7"`, "wait", `{}`)) // a string 7 is another id
	ansB := env.async(nil, b, r11Call(id, "wait", `{}`))
	env.g.awaitStart(t, 4)
	if n := inflightOf(env.sess(a)); n != 3 {
		t.Fatalf("session a tracks %d requests, want 3", n)
	}
	if st, _ := env.mustPost(t, a, r11Cancel(id)); st != 202 {
		t.Fatalf("cancel: %d", st)
	}
	env.g.awaitCancelled(t, "the first duplicate")
	env.g.awaitCancelled(t, "the second duplicate")
	wantCancelled(t, r11Await(t, ans1, "first"), id, "first duplicate")
	wantCancelled(t, r11Await(t, ans2, "second"), id, "second duplicate")
	env.g.quiet(t, 200*time.Millisecond, "cancelling 7 (the string \"7\" in a, and 7 in b)")
	env.g.open()
	for _, ch := range []chan r11Answer{ansOther, ansB} {
		if a := r11Await(t, ch, "released"); !strings.Contains(a.body, `"released"`) {
			t.Fatalf("released call: %s", a.body)
		}
	}
	awaitUntracked(t, env.sess(a), "a")
}

// TestReview11BadRequestIDs: requestIds that are null, objects, arrays,
// booleans, given twice, missing, of another type or spelling, or a
// cancellation with array params, cancel nothing; the valid ones then do.
func TestReview11BadRequestIDs(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a := env.session(t)
	ansS := env.async(nil, a, r11Call(`"f"`, "wait", `{}`))
	ansN := env.async(nil, a, r11Call(`1`, "wait", `{}`))
	env.g.awaitStart(t, 2)
	bad := []string{
		r11Cancel(`null`),
		r11Cancel(`{"id":"f"}`),
		r11Cancel(`["f"]`),
		r11Cancel(`true`),
		r11Cancel(`"1"`),
		r11Cancel(`1.0`),
		r11Cancel(`1e0`),
		r11Cancel(`-1`),
		r11Cancel(`"F"`),
		r11Cancel(`"f "`),
		r11Cancel(`""`),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"f","requestId":"f"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"f","requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"no id"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"requestId":"f"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":["f"]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","method":"notifications/Cancelled","params":{"requestId":"f"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":"f","progressToken":"f","progress":1}}`,
		// A request, not a notification: it cancels nothing (and is
		// answered as an unknown method or an error, not 202).
		`{"jsonrpc":"2.0","id":99,"method":"notifications/cancelled","params":{"requestId":"f"}}`,
	}
	for _, body := range bad {
		st, ans := env.mustPost(t, a, body)
		if st >= 500 {
			t.Errorf("%s: %d %s", body, st, ans)
		}
	}
	env.g.quiet(t, 300*time.Millisecond, "an invalid cancellation")
	if n := inflightOf(env.sess(a)); n != 2 {
		t.Fatalf("session a tracks %d requests, want 2", n)
	}
	// The method's name escaped is the same name (as over stdio).
	env.mustPost(t, a, `{"jsonrpc":"2.0","method":"notifications/cancel\u006ced","params":{"requestId":"\u0066"}}`)
	if e := env.g.awaitCancelled(t, `"f"`); e.id != `"f"` {
		t.Fatalf("cancelling \"f\" ended %s", e.id)
	}
	wantCancelled(t, r11Await(t, ansS, `"f"`), `"f"`, `"f"`)
	env.mustPost(t, a, r11Cancel(`1`))
	if e := env.g.awaitCancelled(t, "1"); e.id != `1` {
		t.Fatalf("cancelling 1 ended %s", e.id)
	}
	wantCancelled(t, r11Await(t, ansN, "1"), "1", "1")
	awaitUntracked(t, env.sess(a), "a")
}

// TestReview11WrappedRoutes: resources/read, prompts/get and
// completion/complete are cancelled as tools/call is; a stateless
// (sessionless) request of each is not tracked and not cancelled.
func TestReview11WrappedRoutes(t *testing.T) {
	var g *r11Gate
	env := newR11Env(t, SessionOptions{}, func(_ *Server, gg *r11Gate) { g = gg },
		WithCompleter(func(r *fastserver.Request, _ CompletionRequest) (Completion, error) {
			return Completion{}, g.wait(r.Context(), string(r.Msg.ID))
		}))
	a := env.session(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"rr","method":"resources/read","params":{"uri":"test://slow"}}`,
		`{"jsonrpc":"2.0","id":"pg","method":"prompts/get","params":{"name":"slowp","arguments":{"x":"1"}}}`,
		`{"jsonrpc":"2.0","id":"cc","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"slowp"},"argument":{"name":"x","value":"a"}}}`,
	} {
		id := body[strings.Index(body, `"id":`)+5 : strings.Index(body, `,"method"`)]
		// The same id without a session runs alongside, untouched.
		stateless := env.async(nil, "", body)
		ans := env.async(nil, a, body)
		env.g.awaitStart(t, 2)
		if n := inflightOf(env.sess(a)); n != 1 {
			t.Fatalf("%s: session tracks %d, want 1", body, n)
		}
		env.mustPost(t, a, r11Cancel(id))
		env.g.awaitCancelled(t, body)
		wantCancelled(t, r11Await(t, ans, body), id, body)
		env.g.quiet(t, 150*time.Millisecond, "a session's cancellation (the stateless request)")
		// The stateless request cannot be cancelled: its POST without a
		// session names no scope.
		env.mustPost(t, "", r11Cancel(id))
		env.g.quiet(t, 150*time.Millisecond, "a stateless cancellation")
		env.g.one <- struct{}{}
		if e := env.g.awaitEnd(t, "stateless"); e.err != nil {
			t.Fatalf("stateless %s: %v", body, e.err)
		}
		if a := r11Await(t, stateless, "stateless"); a.status != 200 || strings.Contains(a.body, "request cancelled") {
			t.Fatalf("stateless %s: %d %s", body, a.status, a.body)
		}
	}
	awaitUntracked(t, env.sess(a), "a")
}

// TestReview11StreamingTool: a Streaming tool is cancelled before its
// first event; after it, it is untracked, a cancellation does nothing, and
// its stream ends with its result; the session then serves on.
func TestReview11StreamingTool(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a := env.session(t)
	ss := env.sess(a)

	ans := env.async(nil, a, r11Call(`"s1"`, "swait", `{}`))
	env.g.awaitStart(t, 1)
	env.mustPost(t, a, r11Cancel(`"s1"`))
	env.g.awaitCancelled(t, "streaming tool before its first event")
	wantCancelled(t, r11Await(t, ans, "s1"), `"s1"`, "s1")
	awaitUntracked(t, ss, "after s1")

	ans = env.async(nil, a, r11Call(`"s2"`, "swait", `{"event":true}`))
	env.g.awaitStart(t, 1)
	select {
	case <-env.g.evented:
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was not sent")
	}
	awaitUntracked(t, ss, "after s2's first event")
	for range 5 {
		if st, _ := env.mustPost(t, a, r11Cancel(`"s2"`)); st != 202 {
			t.Fatalf("cancel: %d", st)
		}
	}
	env.g.quiet(t, 200*time.Millisecond, "a cancellation after the first event")
	env.g.open()
	if e := env.g.awaitEnd(t, "s2 release"); e.err != nil {
		t.Fatalf("s2: %v", e.err)
	}
	got := r11Await(t, ans, "s2")
	if !strings.Contains(got.body, "first event") || !strings.Contains(got.body, `"released"`) || strings.Contains(got.body, "request cancelled") {
		t.Fatalf("s2's stream: %s", got.body)
	}
	// The session and its calls serve on.
	for i := range 20 {
		id := fmt.Sprintf(`"k%d"`, i)
		if st, body := env.mustPost(t, a, r11Call(id, "quick", `{"spin":0}`)); st != 200 || !strings.Contains(body, "done") {
			t.Fatalf("call %s after the stream: %d %s", id, st, body)
		}
	}
	if env.misuse.Load() != 0 {
		t.Fatal("a later call saw its context cancelled")
	}
	awaitUntracked(t, ss, "end")
}

// TestReview11PanicUntracks: a tool that panics while tracked (plain, or
// streaming before or after its first event) is untracked, and a
// cancellation of its id then reaches nothing.
func TestReview11PanicUntracks(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a := env.session(t)
	ss := env.sess(a)
	for _, c := range []struct{ tool, args string }{{"boom", `{}`}, {"sboom", `{}`}, {"sboom", `{"event":true}`}} {
		st, body := env.mustPost(t, a, r11Call(`"p"`, c.tool, c.args))
		if st == 200 && !strings.Contains(body, "internal error") {
			t.Fatalf("%s %s: %d %s", c.tool, c.args, st, body)
		}
		awaitUntracked(t, ss, c.tool+" "+c.args)
	}
	// The pooled calls the panics used serve on, uncancelled.
	ans := env.async(nil, a, r11Call(`"p"`, "wait", `{}`))
	env.g.awaitStart(t, 1)
	env.g.quiet(t, 150*time.Millisecond, "a panic's leftovers")
	env.mustPost(t, a, r11Cancel(`"p"`))
	env.g.awaitCancelled(t, "p after the panics")
	wantCancelled(t, r11Await(t, ans, "p"), `"p"`, "p")
	awaitUntracked(t, ss, "end")
}

// TestReview11WithAuthOtherToken: with WithAuth, a cancellation naming
// another token holder's session is 404 and cancels nothing; without a
// token it is 401; with the session's own token it cancels.
func TestReview11WithAuthOtherToken(t *testing.T) {
	res, as := testResource(t)
	env := newR11Env(t, SessionOptions{}, nil, WithAuth(res))
	tok1 := "Bearer " + as.Token(as.Claims(authResourceID, ""))
	c2 := as.Claims(authResourceID, "")
	c2["sub"], c2["client_id"] = "client-2", "client-2"
	tok2 := "Bearer " + as.Token(c2)
	a := env.session(t, "Authorization", tok1)
	b := env.session(t, "Authorization", tok2)
	const id = `"w"`
	ans := env.async(nil, a, r11Call(id, "wait", `{}`), "Authorization", tok1)
	ansB := env.async(nil, b, r11Call(id, "wait", `{}`), "Authorization", tok2)
	env.g.awaitStart(t, 2)
	if st, body := env.mustPost(t, a, r11Cancel(id), "Authorization", tok2); st != 404 {
		t.Errorf("cancel in another holder's session: %d %s, want 404", st, body)
	}
	if st, body := env.mustPost(t, a, r11Cancel(id)); st != 401 {
		t.Errorf("cancel without a token: %d %s, want 401", st, body)
	}
	// Holder 2 in its own session b: cancels b's, not a's.
	env.g.quiet(t, 200*time.Millisecond, "another holder's cancellation")
	env.mustPost(t, b, r11Cancel(id), "Authorization", tok2)
	env.g.awaitCancelled(t, "b's own cancellation")
	wantCancelled(t, r11Await(t, ansB, "b"), id, "b")
	env.g.quiet(t, 150*time.Millisecond, "b's cancellation (a's request)")
	if st, _ := env.mustPost(t, a, r11Cancel(id), "Authorization", tok1); st != 202 {
		t.Fatalf("cancel with the session's token: %d", st)
	}
	env.g.awaitCancelled(t, "a's own cancellation")
	wantCancelled(t, r11Await(t, ans, "a"), id, "a")
}

// TestReview11DeletedSession: a session DELETEd while its request runs:
// the request is cancelled as a notifications/cancelled would cancel it
// (its client is done with the session), answered "request cancelled",
// and untracked; a cancellation naming the session after is 404.
func TestReview11DeletedSession(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a, b := env.session(t), env.session(t)
	ss := env.sess(a)
	ansB := env.async(nil, b, r11Call(`"d"`, "wait", `{}`))
	env.g.awaitStart(t, 1)
	ans := env.async(nil, a, r11Call(`"d"`, "wait", `{}`))
	env.g.awaitStart(t, 1)
	if resp, _ := do(t, "DELETE", env.url, a, ""); resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	env.g.awaitCancelled(t, "DELETE of its session")
	wantCancelled(t, r11Await(t, ans, "d"), `"d"`, "a")
	awaitUntracked(t, ss, "deleted session")
	if st, body := env.mustPost(t, a, r11Cancel(`"d"`)); st != 404 {
		t.Errorf("cancel in a deleted session: %d %s, want 404", st, body)
	}
	// The other session's request with the same id runs on.
	env.g.quiet(t, 200*time.Millisecond, "another session's DELETE")
	env.g.open()
	if e := env.g.awaitEnd(t, "release"); e.err != nil {
		t.Fatalf("b's d: %v", e.err)
	}
	if got := r11Await(t, ansB, "b"); strings.Contains(got.body, "request cancelled") || !strings.Contains(got.body, `"id":"d"`) {
		t.Fatalf("b's answer: %d %s", got.status, got.body)
	}
}

// TestReview11IdleSessionRunningRequest: a session whose only activity is
// one request running longer than Idle can still cancel that request. A
// session with a request in flight is not idle: were it expired, its
// client could no longer cancel (404) and the handler would run on to
// HandlerTimeout.
func TestReview11IdleSessionRunningRequest(t *testing.T) {
	env := newR11Env(t, SessionOptions{Idle: 300 * time.Millisecond}, nil)
	a := env.session(t)
	ans := env.async(nil, a, r11Call(`"idle"`, "wait", `{}`))
	env.g.awaitStart(t, 1)
	time.Sleep(700 * time.Millisecond)
	st, body := env.mustPost(t, a, r11Cancel(`"idle"`))
	if st != 202 {
		t.Errorf("cancel after Idle with the request running: %d %s, want 202 (the session expired under its running request)", st, body)
	}
	select {
	case e := <-env.g.ended:
		if !errors.Is(e.err, context.Canceled) {
			t.Errorf("run ended with %v", e.err)
		}
	case <-time.After(time.Second):
		t.Errorf("the cancellation did not reach the request running past Idle")
		env.g.open()
		env.g.awaitEnd(t, "release")
	}
	r11Await(t, ans, "idle")
}

// TestReview11Flood: a flood of cancellations (of other ids, from another
// session, and many of the right one at once) ends exactly the right
// request, once; the session serves on.
func TestReview11Flood(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a, b := env.session(t), env.session(t)
	ans := env.async(nil, a, r11Call(`"f"`, "wait", `{}`))
	ansKeep := env.async(nil, a, r11Call(`"keep"`, "wait", `{}`))
	env.g.awaitStart(t, 2)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for i := range 60 {
				var body, sess string
				switch i % 3 {
				case 0:
					sess, body = a, r11Cancel(fmt.Sprintf(`"f%d-%d"`, w, i))
				case 1:
					sess, body = a, r11Cancel(fmt.Sprint(w*1000+i))
				default:
					sess, body = b, r11Cancel(`"f"`)
				}
				if st, _, err := env.post(nil, sess, body); err != nil || st != 202 {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d flood POSTs not 202", bad.Load())
	}
	env.g.quiet(t, 200*time.Millisecond, "the flood of wrong cancellations")
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if st, _, err := env.post(nil, a, r11Cancel(`"f"`)); err != nil || st != 202 {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d cancellations of f not 202", bad.Load())
	}
	if e := env.g.awaitCancelled(t, "f"); e.id != `"f"` {
		t.Fatalf("ended %s", e.id)
	}
	wantCancelled(t, r11Await(t, ans, "f"), `"f"`, "f")
	env.g.quiet(t, 200*time.Millisecond, "the flood of f's cancellations (keep)")
	if n := inflightOf(env.sess(a)); n != 1 {
		t.Fatalf("session tracks %d, want 1 (keep)", n)
	}
	env.g.open()
	if a := r11Await(t, ansKeep, "keep"); !strings.Contains(a.body, `"released"`) {
		t.Fatalf("keep: %s", a.body)
	}
	env.g.awaitEnd(t, "keep")
	awaitUntracked(t, env.sess(a), "a")
}

// TestReview11KeepAliveAfterCancel: after a request is cancelled, many
// requests on the same keep-alive connection (the same fasthttp worker,
// most likely the same pooled call) all succeed, their contexts never
// cancelled: the call's cancelled flag does not outlive its request.
func TestReview11KeepAliveAfterCancel(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a := env.session(t)
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	one := &http.Client{Transport: tr, Timeout: 8 * time.Second}
	var fresh atomic.Int64
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			fresh.Add(1)
		}
	}}
	postOne := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", env.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", sse)
		req.Header.Set(HeaderProtocolVersion, "2025-11-25")
		req.Header.Set(HeaderSession, a)
		resp, err := one.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	for round := range 3 {
		id := fmt.Sprintf(`"ka%d"`, round)
		ch := make(chan r11Answer, 1)
		go func() {
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", env.url, strings.NewReader(r11Call(id, "wait", `{}`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", sse)
			req.Header.Set(HeaderProtocolVersion, "2025-11-25")
			req.Header.Set(HeaderSession, a)
			resp, err := one.Do(req)
			if err != nil {
				ch <- r11Answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			ch <- r11Answer{resp.StatusCode, string(b), err}
		}()
		env.g.awaitStart(t, 1)
		env.mustPost(t, a, r11Cancel(id)) // on another connection
		env.g.awaitCancelled(t, id)
		wantCancelled(t, r11Await(t, ch, id), id, id)
		for i := range 50 {
			kid := fmt.Sprintf(`"k%d-%d"`, round, i)
			if st, body := postOne(r11Call(kid, "quick", `{"spin":0}`)); st != 200 || !strings.Contains(body, "done") {
				t.Fatalf("request %s after the cancellation: %d %s", kid, st, body)
			}
		}
		if st, body := postOne(`{"jsonrpc":"2.0","id":"kp","method":"ping"}`); st != 200 || !strings.Contains(body, `"result":{}`) {
			t.Fatalf("ping: %d %s", st, body)
		}
	}
	if n := env.misuse.Load(); n != 0 {
		t.Fatalf("%d later requests saw their context cancelled", n)
	}
	if n := fresh.Load(); n != 1 {
		t.Errorf("%d connections opened, want 1 (the checks ran on one connection)", n)
	}
}

// TestReview11HammerPooledCalls: many goroutines race cancellations
// against their handlers' return, and against later requests served by
// the same pooled calls; the same ids run in another session meanwhile.
// No request that no cancellation of its session named is ever cancelled;
// every cancelled one is answered "request cancelled", every other one
// with its result.
func TestReview11HammerPooledCalls(t *testing.T) {
	env := newR11Env(t, SessionOptions{}, nil)
	a, b := env.session(t), env.session(t)
	const workers, iters = 6, 150
	var (
		wg                sync.WaitGroup
		cancelled, served atomic.Int64
		failures          atomic.Int64
		current           [workers]atomic.Int64
		mu                sync.Mutex
		first             string
	)
	fail := func(f string, args ...any) {
		failures.Add(1)
		mu.Lock()
		if first == "" {
			first = fmt.Sprintf(f, args...)
		}
		mu.Unlock()
	}
	stop := time.Now().Add(40 * time.Second)
	var done atomic.Bool
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < iters && time.Now().Before(stop); i++ {
				current[w].Store(int64(i))
				xid := fmt.Sprintf(`"x-%d-%d"`, w, i)
				var cw sync.WaitGroup
				cw.Go(func() {
					time.Sleep(time.Duration(rand.IntN(800)) * time.Microsecond)
					for range 1 + rand.IntN(3) {
						if st, _, err := env.post(nil, a, r11Cancel(xid)); err != nil || st != 202 {
							fail("cancel %s: %d %v", xid, st, err)
						}
					}
				})
				st, body, err := env.post(nil, a, r11Call(xid, "quick", fmt.Sprintf(`{"spin":%d}`, rand.IntN(1000))))
				switch {
				case err != nil:
					fail("%s: %v", xid, err)
				case strings.Contains(body, "request cancelled") && strings.Contains(body, `"id":`+xid):
					cancelled.Add(1)
				case st == 200 && strings.Contains(body, `"done `) && strings.Contains(body, `"id":`+xid):
					served.Add(1)
				default:
					fail("%s: %d %s", xid, st, body)
				}
				// The cancellations may still be on their way: a later
				// request, likely on the same pooled call, must not mind.
				for k := range 2 {
					yid := fmt.Sprintf(`"y-%d-%d-%d"`, w, i, k)
					st, body, err := env.post(nil, a, r11Call(yid, "quick", fmt.Sprintf(`{"spin":%d}`, rand.IntN(300))))
					if err != nil || st != 200 || !strings.Contains(body, `"done `) || !strings.Contains(body, `"id":`+yid) {
						fail("%s (never cancelled): %d %s %v", yid, st, body, err)
					}
				}
				cw.Wait()
			}
		})
	}
	// Session b runs the ids session a is cancelling, as they are
	// cancelled.
	for bw := range 2 {
		wg.Go(func() {
			for n := 0; !done.Load() && time.Now().Before(stop); n++ {
				w := (bw + n) % workers
				id := fmt.Sprintf(`"x-%d-%d"`, w, current[w].Load())
				st, body, err := env.post(nil, b, r11Call(id, "quick", fmt.Sprintf(`{"spin":%d}`, rand.IntN(1000))))
				if err != nil || st != 200 || !strings.Contains(body, `"done `) {
					fail("b's %s (another session's id): %d %s %v", id, st, body, err)
				}
			}
		})
	}
	// Wait for session a's workers (the first workers goroutines) by
	// polling their progress, then stop b's.
	go func() {
		for {
			all := true
			for w := range workers {
				if current[w].Load() < iters-1 {
					all = false
				}
			}
			if all || time.Now().After(stop) {
				time.Sleep(50 * time.Millisecond)
				done.Store(true)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(60 * time.Second):
		t.Fatal("the hammer did not finish in 60 s")
	}
	t.Logf("x requests: %d cancelled, %d served", cancelled.Load(), served.Load())
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d failures, the first: %s", n, first)
	}
	if cancelled.Load() == 0 {
		t.Error("no cancellation reached a running request: the race was not exercised")
	}
	if n := env.misuse.Load(); n != 0 {
		t.Fatalf("%d requests no cancellation named saw their context cancelled", n)
	}
	awaitUntracked(t, env.sess(a), "a")
	awaitUntracked(t, env.sess(b), "b")
}

// TestReview11Tasks: a task-augmented tools/call (2026-07-28, which has no
// sessions) is not touched by notifications/cancelled, whether it names
// the call's id in a 2025-xx session or under 2026-07-28; tasks/cancel is
// what ends it. The same tool called in the session under 2025-11-25 runs
// on its request, and a cancellation there ends it.
func TestReview11Tasks(t *testing.T) {
	var taskCtx atomic.Pointer[context.Context]
	env := newR11Env(t, SessionOptions{}, func(s *Server, g *r11Gate) {
		if err := s.AddTool(Tool{Name: "tasky", Task: TaskOptional, InputSchema: `{"type":"object"}`, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			id := "task"
			if c.Request() != nil {
				id = string(c.Request().Msg.ID)
			} else {
				ctx := c.Context()
				taskCtx.Store(&ctx)
			}
			if err := g.wait(c.Context(), id); err != nil {
				return err
			}
			c.AddText("task released")
			return nil
		})}); err != nil {
			t.Fatal(err)
		}
	}, WithTasks(TaskOptions{}))
	t.Cleanup(env.s.Close)
	a := env.session(t)
	const id = `"t1"`
	h26 := func(method, name string) []string {
		h := []string{HeaderProtocolVersion, "2026-07-28", HeaderMethod, method}
		if name != "" {
			h = append(h, HeaderName, name)
		}
		return h
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tasky","arguments":{},` + metaTasks + `}}`
	st, created := env.mustPost(t, a, body, h26("tools/call", "tasky")...)
	if st != 200 || !strings.Contains(created, `"resultType":"task"`) {
		t.Fatalf("task-augmented call: %d %s", st, created)
	}
	i := strings.Index(created, `"taskId":"`)
	if i < 0 {
		t.Fatalf("no taskId: %s", created)
	}
	taskID := created[i+10:]
	taskID = taskID[:strings.IndexByte(taskID, '"')]
	if e := env.g.awaitStart(t, 1); e[0] != "task" {
		t.Fatalf("started %v", e)
	}
	// A 2025-xx cancellation in the session, and a 2026-07-28 one, of the
	// call's id: nothing.
	env.mustPost(t, a, r11Cancel(id))
	env.mustPost(t, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,`+meta26+`}}`, h26("notifications/cancelled", "")...)
	env.mustPost(t, a, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,`+meta26+`}}`, h26("notifications/cancelled", "")...)
	env.g.quiet(t, 200*time.Millisecond, "notifications/cancelled naming a task's call")
	if p := taskCtx.Load(); p == nil || (*p).Err() != nil {
		t.Fatal("the task's context ended")
	}
	get := `{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":"` + taskID + `",` + metaTasks + `}}`
	if st, v := env.mustPost(t, "", get, h26("tasks/get", taskID)...); st != 200 || !strings.Contains(v, `"status":"working"`) {
		t.Fatalf("tasks/get: %d %s", st, v)
	}

	// Under 2025-11-25 in the session the same tool runs on its request:
	// cancellable.
	ans := env.async(nil, a, r11Call(`"t2"`, "tasky", `{}`))
	if e := env.g.awaitStart(t, 1); e[0] != `"t2"` {
		t.Fatalf("started %v", e)
	}
	env.mustPost(t, a, r11Cancel(`"t2"`))
	if e := env.g.awaitCancelled(t, "t2"); e.id != `"t2"` {
		t.Fatalf("cancelling t2 ended %s", e.id)
	}
	wantCancelled(t, r11Await(t, ans, "t2"), `"t2"`, "t2")

	env.g.open()
	if e := env.g.awaitEnd(t, "task release"); e.id != "task" || e.err != nil {
		t.Fatalf("task run: %s %v", e.id, e.err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, v := env.mustPost(t, "", get, h26("tasks/get", taskID)...)
		if strings.Contains(v, `"status":"completed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not complete: %s", v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReview11CancelOnResetRequest: Request.Cancel on a Request made with
// Reset, or a zero one, does nothing: its context is not ended.
func TestReview11CancelOnResetRequest(t *testing.T) {
	var zero fastserver.Request
	zero.Cancel()
	var d decode.Decoder
	var m decode.Message
	if err := d.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`), &m); err != nil {
		t.Fatal(err)
	}
	var h fasthttp.RequestHeader
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var r fastserver.Request
	r.Reset(&h, &m, ctx)
	r.Cancel()
	r.Cancel()
	if err := r.Context().Err(); err != nil {
		t.Fatalf("a Reset request's context after Cancel: %v", err)
	}
	r.Reset(&h, &m, nil)
	r.Cancel()
	if err := r.Context().Err(); err != nil {
		t.Fatalf("a Reset request (Background) after Cancel: %v", err)
	}
}

// TestReview11StdioWithSessions: a server with sessions on also serves
// stdio (StreamEndpoint), where no request names a session: the wrapped
// routes run untracked, a stdio cancellation still ends its call (and it
// gets no answer), and the stream serves on.
func TestReview11StdioWithSessions(t *testing.T) {
	var g *r11Gate
	env := newR11Env(t, SessionOptions{}, func(_ *Server, gg *r11Gate) { g = gg })
	inW, lines, done := serveStdio(env.s)
	defer func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("ServeLines did not return")
		}
	}()
	fmt.Fprintln(inW, r11Call(`5`, "wait", `{}`))
	if id := g.awaitStart(t, 1)[0]; id != `5` {
		t.Fatalf("started %s", id)
	}
	fmt.Fprintln(inW, r11Cancel(`5`))
	g.awaitCancelled(t, "stdio cancellation")
	for i := range 10 {
		fmt.Fprintln(inW, r11Call(fmt.Sprintf(`"k%d"`, i), "quick", `{"spin":0}`))
		select {
		case l := <-lines:
			if !strings.Contains(l, fmt.Sprintf(`"id":"k%d"`, i)) || !strings.Contains(l, "done") {
				t.Fatalf("answer %d: %q (the cancelled call gets none)", i, l)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to k%d", i)
		}
	}
	if n := env.misuse.Load(); n != 0 {
		t.Fatalf("%d later calls saw their context cancelled", n)
	}
}
