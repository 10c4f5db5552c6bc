package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenServerSource is the server TestMCPGoSDKListen drives: an rpcedge
// mcp.Server with one plain resource (its URI is the first argument) and
// the template interop://items/{id}, served by fastserver on a free
// loopback port. This module does not require the parent one (the
// clients stay out of its dependencies), so the test writes this program
// to a temporary directory and builds it in the parent module, as
// startServer builds cmd/rpcedge. It prints "listening on http://ADDR",
// then answers one line on standard output for each line on standard
// input:
//
//	notify URI  → "ok N": Server.NotifyResourceUpdated(URI) queued it for N
//	listeners   → "ok N": Server.Listeners()
//	close       → "ok 0": Server.Close()
//
// At the end of its input it shuts fastserver down (3 s of grace) and
// exits 0, or 1 if the shutdown failed.
const listenServerSource = `package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

func main() {
	plain := os.Args[1]
	s, err := mcp.New(mcp.Info{Name: "interop-listen", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	s.AddResource(mcp.Resource{URI: plain, MIMEType: "text/plain", Text: "plain"})
	s.AddResourceTemplate(mcp.ResourceTemplate{
		URITemplate: "interop://items/{id}",
		MIMEType:    "text/plain",
		Read: func(_ *fastserver.Request, uri string, vars map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{Text: "item " + vars["id"]}}, nil
		},
	})
	srv, err := fastserver.New(fastserver.Config{
		Addr:          "127.0.0.1:0",
		ShutdownGrace: 3 * time.Second,
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}, s.Endpoint())
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "notify":
			fmt.Printf("ok %d\n", s.NotifyResourceUpdated(arg))
		case "listeners":
			fmt.Printf("ok %d\n", s.Listeners())
		case "close":
			s.Close()
			fmt.Println("ok 0")
		default:
			fmt.Printf("unknown command %q\n", cmd)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		os.Exit(1)
	}
	if err := <-served; err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
`

// listenServer is the running listenServerSource program.
type listenServer struct {
	url     string
	in      io.WriteCloser
	replies chan string
	stderr  *syncBuffer
}

// startListenServer builds and starts listenServerSource, serving plain;
// t.Cleanup ends its input and checks that it exits 0 within 10 s.
func startListenServer(t *testing.T, plain string) *listenServer {
	t.Helper()
	bin := buildProgram(t, "listen-server", listenServerSource)
	cmd := exec.Command(bin, plain)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &listenServer{in: in, replies: make(chan string, 16), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			s.replies <- lines.Text()
		}
		close(s.replies)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the listen server exited with %v after its input ended, want 0; stderr:\n%s", err, s.stderr)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("the listen server did not exit within 10 s of its input's end; stderr:\n%s", s.stderr)
		}
	})
	select {
	case l, ok := <-s.replies:
		if !ok || !strings.HasPrefix(l, "listening on ") {
			t.Fatalf("the listen server printed %q, want its address; stderr:\n%s", l, s.stderr)
		}
		s.url = strings.TrimPrefix(l, "listening on ")
	case <-time.After(10 * time.Second):
		t.Fatalf("the listen server did not print its address within 10 s; stderr:\n%s", s.stderr)
	}
	return s
}

// do sends one command and returns the number the server answers.
func (s *listenServer) do(t *testing.T, cmd string) int {
	t.Helper()
	if _, err := io.WriteString(s.in, cmd+"\n"); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	select {
	case l, ok := <-s.replies:
		n, err := strconv.Atoi(strings.TrimPrefix(l, "ok "))
		if !ok || err != nil || !strings.HasPrefix(l, "ok ") {
			t.Fatalf("%s: the listen server answered %q; stderr:\n%s", cmd, l, s.stderr)
		}
		return n
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no answer within 5 s", cmd)
	}
	return 0
}

// waitListeners polls Server.Listeners until it is want, for at most 5 s.
func (s *listenServer) waitListeners(t *testing.T, want int, why string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := s.do(t, "listeners")
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Listeners() is %d after 5 s, want %d", why, n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// exchange is one POST the SDK sent and what it has read of the answer.
type exchange struct {
	req      []byte
	header   http.Header
	answered chan struct{} // closed once status and ctype are set
	status   int
	ctype    string
	resp     syncBuffer
}

// head waits at most 5 s for the answer's status and Content-Type.
func (e *exchange) head(t *testing.T) (int, string) {
	t.Helper()
	select {
	case <-e.answered:
		return e.status, e.ctype
	case <-time.After(5 * time.Second):
		t.Fatalf("no answer to %s within 5 s", e.req)
	}
	return 0, ""
}

// message is the JSON-RPC message of the request.
func (e *exchange) message() (m struct {
	ID     any             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}) {
	json.Unmarshal(e.req, &m)
	return m
}

// wireRecorder records every POST's bytes and the bytes of its answer as
// the SDK reads them (an SSE answer grows while its stream is open).
type wireRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ex   []*exchange
}

func (w *wireRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil {
		return w.base.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	e := &exchange{req: body, header: r.Header.Clone(), answered: make(chan struct{})}
	w.mu.Lock()
	w.ex = append(w.ex, e)
	w.mu.Unlock()
	resp, err := w.base.RoundTrip(r2)
	if err != nil {
		close(e.answered)
		return nil, err
	}
	e.status, e.ctype = resp.StatusCode, resp.Header.Get("Content-Type")
	resp.Body = teeBody{resp.Body, &e.resp}
	close(e.answered)
	return resp, nil
}

type teeBody struct {
	io.ReadCloser
	w io.Writer
}

func (t teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.w.Write(p[:n])
	return n, err
}

// listens returns the subscriptions/listen POSTs sent so far.
func (w *wireRecorder) listens() []*exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var l []*exchange
	for _, e := range w.ex {
		if e.message().Method == "subscriptions/listen" {
			l = append(l, e)
		}
	}
	return l
}

// listenFor returns the one subscriptions/listen POST for uri.
func (w *wireRecorder) listenFor(t *testing.T, uri string) *exchange {
	t.Helper()
	var found []*exchange
	for _, e := range w.listens() {
		var p struct {
			Notifications map[string]json.RawMessage `json:"notifications"`
		}
		m := e.message()
		json.Unmarshal(m.Params, &p)
		if subs := string(p.Notifications["resourceSubscriptions"]); subs == `["`+uri+`"]` {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d subscriptions/listen POSTs for %s, want 1", len(found), uri)
	}
	return found[0]
}

// sseMessages parses the data lines of an SSE body.
func sseMessages(t *testing.T, body string) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	for _, l := range strings.Split(body, "\n") {
		d, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), "data:")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(d)), &m); err != nil {
			t.Fatalf("an SSE data line is not JSON (%v): %q", err, d)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// waitBody polls e's answer until ok accepts it, for at most 5 s.
func waitBody(t *testing.T, e *exchange, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b := e.resp.String()
		if ok(b) {
			return b
		}
		if time.Now().After(deadline) {
			status, ctype := e.head(t)
			t.Fatalf("%s: not seen within 5 s; request %s, answer so far (HTTP %d, %s):\n%s", what, e.req, status, ctype, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func randomSegment() string { return strings.ToLower(rand.Text()) }

// TestMCPGoSDKListen drives subscriptions/listen (MCP 2026-07-28,
// SEP-2575) with the official MCP Go SDK client (v1.8.0) over the
// streamable HTTP transport, against an rpcedge mcp.Server on fastserver
// (listenServerSource): the session negotiates 2026-07-28 and
// server/discover declares resources.subscribe; ClientSession.Subscribe
// opens one listen stream per URI (a plain resource, and a URI the
// template matches, both random per run), each acknowledged first; each
// NotifyResourceUpdated reaches the ResourceUpdatedHandler tagged with
// its stream's subscriptionId, and an update of a URI not subscribed is
// sent nowhere; Unsubscribe closes the stream (Listeners drops); a
// Subscribe of an unknown URI is answered -32601 and opens no stream; and
// Server.Close ends the open stream with its SubscriptionsListenResult.
//
// The SDK's own part, as v1.8.0 does it: Subscribe sends the request and
// returns nil as soon as the answer's headers are in (callSubscriptionsListen
// in the SDK's transport.go does not await the call), so it neither waits
// for the stream's end nor reports a refusal: the -32601 is on the wire
// only. The test accepts a Subscribe that returns the refusal instead (an
// SDK that awaits the answer), and logs which it saw.
func TestMCPGoSDKListen(t *testing.T) {
	start := time.Now()
	plain := "interop://plain/" + randomSegment()
	item := "interop://items/" + randomSegment()
	other := "interop://items/" + randomSegment() // the template matches it; never subscribed
	unknown := "interop://nowhere/" + randomSegment()
	s := startListenServer(t, plain)

	type update struct {
		uri   string
		subID any
	}
	var (
		mu      sync.Mutex
		updates []update
	)
	arrived := make(chan struct{}, 64)
	rec := &wireRecorder{base: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-listen", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			updates = append(updates, update{req.Params.URI, req.Params.Meta[mcp.MetaKeySubscriptionID]})
			mu.Unlock()
			select {
			case arrived <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             s.url + "/mcp",
		HTTPClient:           &http.Client{Transport: rec},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()

	// (1) 2026-07-28, and server/discover declares resources.subscribe.
	disc := session.InitializeResult()
	if disc.ProtocolVersion != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", disc.ProtocolVersion)
	}
	if c := disc.Capabilities; c == nil || c.Resources == nil || !c.Resources.Subscribe || c.Resources.ListChanged {
		t.Errorf("server/discover capabilities: %+v, want resources.subscribe and no listChanged", c)
	}

	// countOf counts the updates of uri seen so far.
	countOf := func(uri string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, u := range updates {
			if u.uri == uri {
				n++
			}
		}
		return n
	}
	waitUpdates := func(want map[string]int) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			done := true
			for uri, n := range want {
				done = done && countOf(uri) >= n
			}
			if done {
				return
			}
			select {
			case <-arrived:
			case <-deadline:
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("updates after 5 s: %+v, want at least %v", updates, want)
			}
		}
	}

	// (2) Subscribe to both, on goroutines: an SDK whose Subscribe blocks
	// until the stream ends is served as well as v1.8.0's, which returns
	// at once.
	subscribed := map[string]chan error{}
	for _, uri := range []string{plain, item} {
		ch := make(chan error, 1)
		subscribed[uri] = ch
		go func() { ch <- session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}) }()
	}
	s.waitListeners(t, 2, "after Subscribe of "+plain+" and "+item)
	listenID := map[string]any{}
	for _, uri := range []string{plain, item} {
		e := rec.listenFor(t, uri)
		m := e.message()
		listenID[uri] = m.ID
		if e.header.Get("Mcp-Method") != "subscriptions/listen" || e.header.Get("MCP-Protocol-Version") != "2026-07-28" ||
			!strings.Contains(e.header.Get("Accept"), "text/event-stream") {
			t.Errorf("listen for %s: headers %v", uri, e.header)
		}
		var p struct {
			Notifications map[string]any `json:"notifications"`
		}
		json.Unmarshal(m.Params, &p)
		if len(p.Notifications) != 1 {
			t.Errorf("listen for %s: the filter %v opts in to more than resourceSubscriptions", uri, p.Notifications)
		}
		if status, ctype := e.head(t); status != 200 || ctype != "text/event-stream" {
			t.Errorf("listen for %s: answered HTTP %d %s, want 200 text/event-stream; request %s, answer %s", uri, status, ctype, e.req, e.resp.String())
		}
		// The acknowledgement comes first, with the URI honored.
		body := waitBody(t, e, "the acknowledgement for "+uri, func(b string) bool { return strings.Contains(b, "\n\n") })
		ack := sseMessages(t, body)[0]
		want := map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{
			"notifications": map[string]any{"resourceSubscriptions": []any{uri}},
			"_meta":         map[string]any{mcp.MetaKeySubscriptionID: m.ID},
		}}
		if !jsonEqual(ack, want) {
			t.Errorf("listen for %s: first message %v, want %v", uri, ack, want)
		}
	}
	returnedEarly := map[string]bool{}
	for uri, ch := range subscribed {
		select {
		case err := <-ch:
			returnedEarly[uri] = true
			if err != nil {
				t.Fatalf("Subscribe(%s): %v", uri, err)
			}
			subscribed[uri] = nil
		default:
		}
	}
	t.Logf("Subscribe returned while its stream was open: %v (v1.8.0 returns once the answer's headers are in)", returnedEarly)

	if n := s.do(t, "notify "+other); n != 0 {
		t.Errorf("NotifyResourceUpdated(%s), which no stream follows: queued for %d, want 0", other, n)
	}
	for _, uri := range []string{plain, item} {
		if n := s.do(t, "notify "+uri); n != 1 {
			t.Errorf("NotifyResourceUpdated(%s): queued for %d, want 1", uri, n)
		}
	}
	waitUpdates(map[string]int{plain: 1, item: 1})
	// Once more, with the plain resource's second update as the marker
	// that the unsubscribed URI's had every chance to arrive.
	s.do(t, "notify "+other)
	s.do(t, "notify "+plain)
	waitUpdates(map[string]int{plain: 2})
	mu.Lock()
	for _, u := range updates {
		switch {
		case u.uri == other:
			t.Errorf("an update of %s, which was never subscribed, was delivered", other)
		case u.uri != plain && u.uri != item:
			t.Errorf("an update of %s was delivered", u.uri)
		case !jsonEqual(u.subID, listenID[u.uri]):
			t.Errorf("the update of %s carries subscriptionId %v, want %v (its listen request's id)", u.uri, u.subID, listenID[u.uri])
		}
	}
	if len(updates) != 3 {
		t.Errorf("updates %+v, want 2 of %s and 1 of %s", updates, plain, item)
	}
	mu.Unlock()
	for _, e := range rec.listens() {
		if strings.Contains(e.resp.String(), other) {
			t.Errorf("the URI never subscribed is on a listen stream: %s", e.resp.String())
		}
	}

	// (3) Unsubscribe closes the item's stream; the plain one stays. The
	// SDK cancels the POST (and sends notifications/cancelled, answered
	// 202); fastserver sees the closed connection within goneEvery (2 s).
	if err := session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: item}); err != nil {
		t.Fatalf("Unsubscribe(%s): %v", item, err)
	}
	s.waitListeners(t, 1, "after Unsubscribe of "+item)
	if n := s.do(t, "notify "+item); n != 0 {
		t.Errorf("NotifyResourceUpdated(%s) after its Unsubscribe: queued for %d, want 0", item, n)
	}
	if ch := subscribed[item]; ch != nil {
		// An SDK whose Subscribe blocked returns now.
		select {
		case err := <-ch:
			t.Logf("Subscribe(%s) returned %v at Unsubscribe", item, err)
		case <-time.After(5 * time.Second):
			t.Errorf("Subscribe(%s) had not returned 5 s after its Unsubscribe", item)
		}
	}

	// (4) A URI that names no resource and matches no template: -32601
	// on the wire, and no stream.
	before := len(rec.listens())
	ch := make(chan error, 1)
	go func() { ch <- session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: unknown}) }()
	var subErr error
	select {
	case subErr = <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("Subscribe(%s) had not returned after 5 s", unknown)
	}
	var werr *jsonrpc.Error
	switch {
	case subErr == nil:
		t.Logf("Subscribe(%s) returned nil: the SDK (v1.8.0) does not report the server's refusal, which is on the wire only", unknown)
	case errors.As(subErr, &werr) && werr.Code == -32601:
		t.Logf("Subscribe(%s) returned the refusal: %v", unknown, subErr)
	default:
		t.Errorf("Subscribe(%s): %v, want nil (v1.8.0) or a -32601 error", unknown, subErr)
	}
	if n := len(rec.listens()); n != before+1 {
		t.Fatalf("%d subscriptions/listen POSTs after Subscribe(%s), want %d", n, unknown, before+1)
	}
	e := rec.listenFor(t, unknown)
	body := waitBody(t, e, "the refusal of "+unknown, func(b string) bool { return strings.HasSuffix(strings.TrimSpace(b), "}") })
	var refusal struct {
		ID    any `json:"id"`
		Error struct {
			Code int            `json:"code"`
			Data map[string]any `json:"data"`
		} `json:"error"`
	}
	status, ctype := e.head(t)
	if err := json.Unmarshal([]byte(body), &refusal); err != nil || status != 200 || !strings.HasPrefix(ctype, "application/json") ||
		refusal.Error.Code != -32601 || refusal.Error.Data["uri"] != unknown || !jsonEqual(refusal.ID, e.message().ID) {
		t.Errorf("listen for %s: answered HTTP %d %s %s, want 200 application/json with error -32601 and data.uri", unknown, status, ctype, body)
	}
	s.waitListeners(t, 1, "after the refused Subscribe")
	session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: unknown}) // the SDK keeps it subscribed otherwise

	// (5) Server.Close ends the plain resource's stream with its
	// SubscriptionsListenResult.
	pe := rec.listenFor(t, plain)
	s.do(t, "close")
	s.waitListeners(t, 0, "after Server.Close")
	body = waitBody(t, pe, "the end of "+plain+"'s stream", func(b string) bool { return strings.Contains(b, `"result"`) })
	msgs := sseMessages(t, body)
	last := msgs[len(msgs)-1]
	result, _ := last["result"].(map[string]any)
	meta, _ := result["_meta"].(map[string]any)
	if !jsonEqual(last["id"], listenID[plain]) || result["resultType"] != "complete" || !jsonEqual(meta[mcp.MetaKeySubscriptionID], listenID[plain]) {
		t.Errorf("the last message of %s's stream: %v, want its SubscriptionsListenResult", plain, last)
	}
	if ch := subscribed[plain]; ch != nil {
		// An SDK whose Subscribe blocked returns now, with no error:
		// the stream ended gracefully.
		select {
		case err := <-ch:
			if err != nil {
				t.Errorf("Subscribe(%s) returned %v at Server.Close, want nil", plain, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Subscribe(%s) had not returned 5 s after Server.Close", plain)
		}
	}
	// The session goes on: the end of a listen stream is no failure.
	rr, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: item})
	if err != nil {
		t.Fatalf("resources/read after Server.Close: %v", err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "item "+strings.TrimPrefix(item, "interop://items/") {
		t.Errorf("resources/read %s: %+v", item, rr.Contents)
	}
	// The SDK still counts plain as subscribed after the server ended its
	// stream: a second Subscribe sends nothing (logged, not required).
	before = len(rec.listens())
	if err := session.Subscribe(ctx, &mcp.SubscribeParams{URI: plain}); err != nil {
		t.Logf("Subscribe(%s) after the stream's end: %v", plain, err)
	}
	t.Logf("Subscribe(%s) after the stream's end sent %d subscriptions/listen requests", plain, len(rec.listens())-before)

	for _, e := range rec.listens() {
		status, ctype := e.head(t)
		t.Logf("POST %s\n→ HTTP %d %s\n%s", e.req, status, ctype, e.resp.String())
	}
	rec.mu.Lock()
	all := slices.Clone(rec.ex)
	rec.mu.Unlock()
	for _, e := range all {
		if m := e.message(); m.Method != "subscriptions/listen" {
			select {
			case <-e.answered:
				t.Logf("POST %s → HTTP %d", e.req, e.status)
			default:
				t.Logf("POST %s → (no answer yet)", e.req)
			}
		}
	}
	t.Logf("%v from the server's start", time.Since(start))
}

// jsonEqual compares two values as JSON.
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var va, vb any
	json.Unmarshal(ja, &va)
	json.Unmarshal(jb, &vb)
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return slices.Equal(ca, cb)
}
