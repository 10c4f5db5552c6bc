package mcp

// Review 9: subscriptions/listen (MCP 2026-07-28, SEP-2575), attacked as a
// hostile client (raw sockets that never read, half-close, vanish; odd
// ids; malformed filters) and as a careless embedder (extreme
// ListenOptions, Close and Shutdown while streams are open, a short
// HandlerTimeout). Tests named TestR9ListenFault… show a fault; the others
// pin properties the feature promises (listen.go's NOTE).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// r9Server is a server with three plain resources and two templates, one
// of which ({+rest}) takes any URI of its scheme.
func r9Server(t testing.TB, lo ListenOptions) *Server {
	t.Helper()
	s, err := New(Info{Name: "r9", Version: "1"}, WithListen(lo))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"test://a", "test://b", "test://c"} {
		if err := s.AddResource(Resource{URI: u, Name: u, Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(r *fastserver.Request, uri string, vars map[string]string) ([]ResourceContents, error) {
		return []ResourceContents{{Text: uri}}, nil
	}
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "tmpl://item/{id}", Read: read}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "big://{+rest}", Read: read}); err != nil {
		t.Fatal(err)
	}
	return s
}

// r9Serve serves s on loopback and returns the fastserver and host:port.
func r9Serve(t testing.TB, s *Server, cfg fastserver.Config) (*fastserver.Server, string) {
	t.Helper()
	srv, url := serveLoopback(t, s, cfg)
	return srv, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
}

// r9Body is a 2026-07-28 subscriptions/listen request.
func r9Body(id, filter string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":` + filter + `,` + meta26 + `}}`
}

// r9Req is the raw HTTP request carrying body.
func r9Req(proto, accept, version, body string) string {
	var b strings.Builder
	b.WriteString("POST /mcp " + proto + "\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
	if accept != "" {
		b.WriteString("Accept: " + accept + "\r\n")
	}
	b.WriteString("MCP-Protocol-Version: " + version + "\r\n")
	if version == "2026-07-28" {
		b.WriteString("Mcp-Method: subscriptions/listen\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return b.String()
}

// r9Conn is a listen stream read off a raw socket.
type r9Conn struct {
	c    net.Conn
	resp *http.Response
	body *bufio.Reader
}

// r9Dial connects and writes raw, reading nothing.
func r9Dial(t testing.TB, host, raw string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	return c
}

// r9Open sends a listen request and reads the answer's head.
func r9Open(t testing.TB, host, id, filter string) *r9Conn {
	t.Helper()
	return r9OpenRaw(t, host, r9Req("HTTP/1.1", sse, "2026-07-28", r9Body(id, filter)))
}

func r9OpenRaw(t testing.TB, host, raw string) *r9Conn {
	t.Helper()
	c := r9Dial(t, host, raw)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &r9Conn{c: c, resp: resp, body: bufio.NewReader(resp.Body)}
}

// next returns the next SSE event's data (or ": comment"), waiting at
// most d; "" and an error when none came.
func (rc *r9Conn) next(d time.Duration) (string, error) {
	rc.c.SetReadDeadline(time.Now().Add(d))
	var data []string
	for {
		line, err := rc.body.ReadString('\n')
		if err != nil {
			return strings.Join(data, "\n"), err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if len(data) > 0 {
				return strings.Join(data, "\n"), nil
			}
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[len("data: "):])
		case strings.HasPrefix(line, ":"):
			return line, nil
		}
	}
}

// event returns the next event that is not a comment, failing the test
// when none comes within d.
func (rc *r9Conn) event(t testing.TB, d time.Duration) string {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		ev, err := rc.next(time.Until(end))
		if err != nil {
			t.Fatalf("no event within %v: %v (partial %q)", d, err, ev)
		}
		if !strings.HasPrefix(ev, ":") {
			return ev
		}
	}
	t.Fatalf("no event within %v", d)
	return ""
}

// r9Obj decodes one event.
func r9Obj(t testing.TB, ev string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev), &m); err != nil {
		t.Fatalf("event %q: %v", ev, err)
	}
	return m
}

// r9Wait polls cond every 10 ms for at most d.
func r9Wait(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// r9Handlers counts the goroutines running a listen stream's loop.
func r9Handlers() int {
	buf := make([]byte, 8<<20)
	n := runtime.Stack(buf, true)
	return bytes.Count(buf[:n], []byte("mcp.(*Server).listenStream("))
}

// r9Gone waits until s has no listener, no listen goroutine, and srv no
// request in flight.
func r9Gone(t testing.TB, s *Server, srv *fastserver.Server, d time.Duration) {
	t.Helper()
	r9Wait(t, d, "listen streams still open", func() bool {
		st := srv.Stats()
		return s.Listeners() == 0 && r9Handlers() == 0 && st.Entered == st.Answered
	})
}

const r9Tag = `"_meta":{"io.modelcontextprotocol/subscriptionId":`

// A client that sends a listen request and never reads a byte, then
// closes: the stream, its goroutine and its slot are given back.
func TestR9ListenNeverReadThenClose(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{})
	var conns []net.Conn
	for i := range 5 {
		conns = append(conns, r9Dial(t, host, r9Req("HTTP/1.1", sse, "2026-07-28", r9Body(fmt.Sprint(i), `{"resourceSubscriptions":["test://a"]}`))))
	}
	r9Wait(t, 5*time.Second, "5 listeners", func() bool { return s.Listeners() == 5 })
	for i := range 200 {
		s.NotifyResourceUpdated("test://a")
		if i%50 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	r9Gone(t, s, srv, 8*time.Second)
}

// A client that half-closes (shuts its sending side) after its request:
// counted as gone, as the stream's doc says, within the peer watch's
// period.
func TestR9ListenHalfClose(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{})
	rc := r9Open(t, host, `"h"`, `{"resourceSubscriptions":["test://a"]}`)
	if rc.resp.StatusCode != 200 {
		t.Fatalf("status %d", rc.resp.StatusCode)
	}
	rc.event(t, 5*time.Second) // the ack
	if err := rc.c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	r9Gone(t, s, srv, 8*time.Second)
}

// A client that reads nothing while NotifyResourceUpdated is called
// 100,000 times for three URIs: the stream never holds more than three
// pending updates, and every update is either written, merged, or one
// of those pending (none is dropped, none queued past the bound).
func TestR9ListenNoReaderBoundedPending(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{WriteTimeout: 30 * time.Second})
	c := r9Dial(t, host, r9Req("HTTP/1.1", sse, "2026-07-28", r9Body(`"slow"`, `{"resourceSubscriptions":["test://a","test://b","test://c"]}`)))
	r9Wait(t, 5*time.Second, "listener", func() bool { return s.Listeners() == 1 })
	t.Cleanup(func() { c.Close() })
	s.listen.mu.Lock()
	l := s.listen.byURI["test://a"][0]
	s.listen.mu.Unlock()
	uris := []string{"test://a", "test://b", "test://c"}
	const total = 100_000
	maxPending := 0
	start := time.Now()
	for i := range total {
		if n := s.NotifyResourceUpdated(uris[i%3]); n != 1 {
			t.Fatalf("NotifyResourceUpdated = %d", n)
		}
		if i%97 == 0 {
			n, _ := l.q.Len()
			maxPending = max(maxPending, n)
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("100,000 notifications took over 20 s (%d done)", i)
		}
	}
	if maxPending > 3 {
		t.Fatalf("pending grew to %d for 3 URIs", maxPending)
	}
	pending, _ := l.q.Len()
	sent, merged := s.listen.sent.Load(), s.listen.merged.Load()
	// At most 3 taken and being written (Send blocked on the full queue).
	if sum := sent + merged + uint64(pending); sum > total || sum+3 < total {
		t.Fatalf("sent %d + merged %d + pending %d = %d, want %d (at most 3 in flight)", sent, merged, pending, sum, total)
	}
	if merged == 0 {
		t.Fatalf("no update merged although the client read nothing (sent %d)", sent)
	}
	c.Close()
	r9Gone(t, s, srv, 10*time.Second)
}

// The ack, every notification and the final result carry the request's
// id byte for byte: string ids with escapes, a large integer, negatives.
func TestR9ListenIDByteForByte(t *testing.T) {
	s := r9Server(t, ListenOptions{MaxDuration: 300 * time.Millisecond})
	srv, host := r9Serve(t, s, fastserver.Config{})
	for _, id := range []string{`"a\u0041\"b"`, `"\u00e9\/x"`, `"é"`, `9007199254740993`, `-7`, `0`, `""`} {
		rc := r9Open(t, host, id, `{"resourceSubscriptions":["test://b"]}`)
		if rc.resp.StatusCode != 200 || rc.resp.Header.Get("Content-Type") != "text/event-stream" {
			b, _ := io.ReadAll(rc.resp.Body)
			t.Fatalf("id %s: %d %s", id, rc.resp.StatusCode, b)
		}
		ack := rc.event(t, 5*time.Second)
		want := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourceSubscriptions":["test://b"]},` + r9Tag + id + `}}}`
		if ack != want {
			t.Errorf("id %s: ack\n%s\nwant\n%s", id, ack, want)
		}
		s.NotifyResourceUpdated("test://b")
		up := rc.event(t, 5*time.Second)
		want = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://b",` + r9Tag + id + `}}}`
		if up != want {
			t.Errorf("id %s: update\n%s\nwant\n%s", id, up, want)
		}
		final := rc.event(t, 5*time.Second)
		if !strings.HasPrefix(final, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete",`) ||
			!strings.HasSuffix(final, `,"io.modelcontextprotocol/subscriptionId":`+id+`}}}`) {
			t.Errorf("id %s: final %s", id, final)
		}
		r9Obj(t, final)
		rc.c.Close()
	}
	r9Gone(t, s, srv, 5*time.Second)
}

// The acknowledgement names the honored subset: resourceSubscriptions
// deduplicated and unescaped, no *ListChanged, unknown members ignored;
// an update of a URI not followed is not sent.
func TestR9ListenAckSubset(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{})
	rc := r9Open(t, host, `1`, `{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"future":{"x":[1,{}]},"resourceSubscriptions":["test://a","test:\/\/a","tmpl://item/7","test://a"]}`)
	ack := r9Obj(t, rc.event(t, 5*time.Second))
	p := ack["params"].(map[string]any)
	got, _ := json.Marshal(p["notifications"])
	if string(got) != `{"resourceSubscriptions":["test://a","tmpl://item/7"]}` {
		t.Errorf("ack notifications %s", got)
	}
	s.NotifyResourceUpdated("test://b")
	s.NotifyResourceUpdated("tmpl://item/7")
	up := r9Obj(t, rc.event(t, 5*time.Second))
	if up["params"].(map[string]any)["uri"] != "tmpl://item/7" {
		t.Errorf("update %v", up)
	}
	// A URI with control characters, a quote and a line separator (the
	// {+rest} template takes it): framed and escaped intact.
	odd := "big://\x00\n\r\"<\u2028\\"
	oj, _ := json.Marshal([]string{odd})
	rc3 := r9Open(t, host, `3`, `{"resourceSubscriptions":`+string(oj)+`}`)
	a3 := r9Obj(t, rc3.event(t, 5*time.Second))
	if subs := a3["params"].(map[string]any)["notifications"].(map[string]any)["resourceSubscriptions"].([]any); len(subs) != 1 || subs[0] != odd {
		t.Errorf("odd ack %v", a3)
	}
	s.NotifyResourceUpdated(odd)
	if u := r9Obj(t, rc3.event(t, 5*time.Second)); u["params"].(map[string]any)["uri"] != odd {
		t.Errorf("odd update %v", u)
	}
	rc3.c.Close()
	// Only *ListChanged: an empty acknowledgement.
	rc2 := r9Open(t, host, `2`, `{"toolsListChanged":true}`)
	if ev := rc2.event(t, 5*time.Second); ev != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{},`+r9Tag+`2}}}` {
		t.Errorf("ack %s", ev)
	}
	rc.c.Close()
	rc2.c.Close()
	r9Gone(t, s, srv, 5*time.Second)
}

// Filters, checked before any stream: malformed ones -32602, unknown
// URIs -32601, well-formed ones reach the stream (which exchange cannot
// give: -32600).
func TestR9ListenFilterShapes(t *testing.T) {
	s := r9Server(t, ListenOptions{Subscriptions: 3})
	ep := s.Endpoint()
	kb := func(n int) string { return strings.Repeat("x", n<<10) }
	cases := []struct {
		filter string
		code   int
	}{
		{`[]`, -32602},
		{`null`, -32602},
		{`"test://a"`, -32602},
		{`7`, -32602},
		{`{"toolsListChanged":"true"}`, -32602},
		{`{"promptsListChanged":1}`, -32602},
		{`{"resourcesListChanged":null}`, -32602},
		{`{"resourceSubscriptions":"test://a"}`, -32602},
		{`{"resourceSubscriptions":{"0":"test://a"}}`, -32602},
		{`{"resourceSubscriptions":null}`, -32602},
		{`{"resourceSubscriptions":[1]}`, -32602},
		{`{"resourceSubscriptions":[null]}`, -32602},
		{`{"resourceSubscriptions":[["test://a"]]}`, -32602},
		{`{"resourceSubscriptions":["test://a",{"uri":"test://b"}]}`, -32602},
		{`{"resourceSubscriptions":[],"resourceSubscriptions":[]}`, -32602},
		{`{"toolsListChanged":true,"toolsListChanged":true}`, -32602},
		{`{"resourceSubscriptions":["test://a","test://b","test://c","tmpl://item/1"]}`, -32602},
		{`{"resourceSubscriptions":["big://` + kb(70) + `"]}`, -32602},
		{`{"resourceSubscriptions":["big://` + kb(40) + `","big://y` + kb(40) + `"]}`, -32602},
		{`{"resourceSubscriptions":["test://nope"]}`, -32601},
		{`{"resourceSubscriptions":["tmpl://item/4/2"]}`, -32601},
		{`{"resourceSubscriptions":["test://A"]}`, -32601},
		// Member names with escapes are the names they spell.
		{`{"resource\u0053ubscriptions":["test://nope"]}`, -32601},
		{`{"resourceSubscriptions":[],"resource\u0053ubscriptions":[]}`, -32602},
		{`{"tools\u004cistChanged":"yes"}`, -32602},
		// Well-formed.
		{`{}`, -32600},
		{`{"resourceSubscriptions":[]}`, -32600},
		{`{"unknown":[1,2],"later":{"a":"b"},"toolsListChanged":false}`, -32600},
		{`{"resourceSubscriptions":["test://a","test://b","test://c","test://a","test:\/\/b"]}`, -32600},
		{`{"resourceSubscriptions":["tmpl://item/1"]}`, -32600},
		{`{"resourceSubscriptions":["big://` + kb(60) + `"]}`, -32600},
	}
	for _, c := range cases {
		a := exchange(t, ep, v26("subscriptions/listen"), r9Body(`1`, c.filter))
		if a.Code != c.code {
			f := c.filter
			if len(f) > 80 {
				f = f[:80] + "…"
			}
			t.Errorf("%s: code %d (%s), want %d", f, a.Code, a.Msg, c.code)
		}
	}
	for _, params := range []string{`"notific\u0061tions":[]`, `"notifications":{},"notifications":{}`, `"filter":{}`} {
		a := exchange(t, ep, v26("subscriptions/listen"), `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{`+params+`,`+meta26+`}}`)
		if a.Code != -32602 {
			t.Errorf("params %s: code %d (%s)", params, a.Code, a.Msg)
		}
	}
	if n := s.Listeners(); n != 0 {
		t.Errorf("Listeners = %d", n)
	}
	// Not a method under 2025-11-25 nor 2025-03-26.
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		a := exchange(t, ep, hdr{HeaderProtocolVersion, v}, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}}}`)
		if a.Status != 404 || a.Code != -32601 {
			t.Errorf("%s: %d %d", v, a.Status, a.Code)
		}
	}
	a := exchange(t, ep, nil, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}}}`)
	if a.Status != 404 || a.Code != -32601 {
		t.Errorf("no version: %d %d", a.Status, a.Code)
	}
}

// Over the newline-delimited transport there is no stream: -32600, at
// once, and the transport goes on with the next line.
func TestR9ListenStdio(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	in := r9Body(`"L"`, `{"resourceSubscriptions":["test://a"]}`) + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta26 + `}}` + "\n"
	var out bytes.Buffer
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		done <- fastserver.ServeLines(ctx, s.StreamEndpoint(), fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, strings.NewReader(in), &out)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("ServeLines hung on subscriptions/listen")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("answers %q", out.String())
	}
	m := r9Obj(t, lines[0])
	e, _ := m["error"].(map[string]any)
	if m["id"] != "L" || e == nil || e["code"] != -32600.0 {
		t.Errorf("listen over stdio: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"id":2,"result"`) {
		t.Errorf("next line: %s", lines[1])
	}
	if s.Listeners() != 0 {
		t.Errorf("Listeners %d", s.Listeners())
	}
}

// A client that does not accept text/event-stream, or speaks HTTP/1.0:
// 406, before a stream is held.
func TestR9ListenNotAccepted(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{})
	body := r9Body(`1`, `{"resourceSubscriptions":["test://a"]}`)
	for _, raw := range []string{
		r9Req("HTTP/1.1", "application/json", "2026-07-28", body),
		r9Req("HTTP/1.1", "application/json, text/event-stream;q=0", "2026-07-28", body),
		r9Req("HTTP/1.0", sse, "2026-07-28", body),
		r9Req("HTTP/1.0", "text/event-stream", "2026-07-28", body),
	} {
		rc := r9OpenRaw(t, host, raw)
		b, _ := io.ReadAll(rc.resp.Body)
		if rc.resp.StatusCode != 406 || !strings.Contains(string(b), `"code":-32600`) {
			t.Errorf("%q: %d %s", raw[:20], rc.resp.StatusCode, b)
		}
		rc.c.Close()
	}
	r9Gone(t, s, srv, 3*time.Second)
}

// ListenOptions.Max: one more stream is refused 503 with Retry-After,
// and a slot freed by a departed client is taken again.
func TestR9ListenMaxAndSlotFreed(t *testing.T) {
	s := r9Server(t, ListenOptions{Max: 2})
	srv, host := r9Serve(t, s, fastserver.Config{})
	a := r9Open(t, host, `"a"`, `{}`)
	a.event(t, 5*time.Second)
	b := r9Open(t, host, `"b"`, `{}`)
	b.event(t, 5*time.Second)
	c := r9Open(t, host, `"c"`, `{}`)
	body, _ := io.ReadAll(c.resp.Body)
	if c.resp.StatusCode != 503 || c.resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), `"code":-32603`) {
		t.Fatalf("third: %d %q %s", c.resp.StatusCode, c.resp.Header.Get("Retry-After"), body)
	}
	var sb strings.Builder
	s.WritePrometheus(&sb)
	if !strings.Contains(sb.String(), "rpcedge_mcp_listen_streams 2\n") || !strings.Contains(sb.String(), "rpcedge_mcp_listen_refused_total 1\n") {
		t.Errorf("metrics:\n%s", sb.String())
	}
	a.c.Close()
	r9Wait(t, 5*time.Second, "slot freed", func() bool { return s.Listeners() == 1 })
	d := r9Open(t, host, `"d"`, `{}`)
	if d.resp.StatusCode != 200 {
		t.Fatalf("after a slot freed: %d", d.resp.StatusCode)
	}
	d.event(t, 5*time.Second)
	b.c.Close()
	d.c.Close()
	r9Gone(t, s, srv, 5*time.Second)
}

// Server.Close ends every stream with its SubscriptionsListenResult and
// refuses new ones 503.
func TestR9ListenClose(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{})
	ids := []string{`"x"`, `42`, `"q\""`}
	var rcs []*r9Conn
	for _, id := range ids {
		rc := r9Open(t, host, id, `{"resourceSubscriptions":["test://a"]}`)
		rc.event(t, 5*time.Second)
		rcs = append(rcs, rc)
	}
	s.Close()
	for i, rc := range rcs {
		final := rc.event(t, 5*time.Second)
		m := r9Obj(t, final)
		res, _ := m["result"].(map[string]any)
		meta, _ := res["_meta"].(map[string]any)
		if !strings.HasPrefix(final, `{"jsonrpc":"2.0","id":`+ids[i]+`,"result":`) || res["resultType"] != "complete" ||
			!strings.Contains(final, `"io.modelcontextprotocol/subscriptionId":`+ids[i]+`}`) || meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Errorf("final %s", final)
		}
		if ev, err := rc.next(2 * time.Second); err == nil {
			t.Errorf("after the final result: %q", ev)
		}
	}
	r9Gone(t, s, srv, 5*time.Second)
	rc := r9Open(t, host, `"late"`, `{}`)
	b, _ := io.ReadAll(rc.resp.Body)
	if rc.resp.StatusCode != 503 {
		t.Errorf("listen after Close: %d %s", rc.resp.StatusCode, b)
	}
	s.Close() // twice: harmless
}

// fastserver Shutdown while streams are open: each ends gracefully, and
// Shutdown does not wait for its grace period.
func TestR9ListenShutdown(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{ShutdownGrace: 20 * time.Second})
	var rcs []*r9Conn
	for i := range 3 {
		rc := r9Open(t, host, fmt.Sprint(i), `{"resourceSubscriptions":["test://a"]}`)
		rc.event(t, 5*time.Second)
		rcs = append(rcs, rc)
	}
	type res struct{ ev []string }
	out := make(chan res, len(rcs))
	for _, rc := range rcs {
		go func() {
			var r res
			for range 4 {
				ev, err := rc.next(10 * time.Second)
				if err != nil {
					break
				}
				if !strings.HasPrefix(ev, ":") {
					r.ev = append(r.ev, ev)
				}
			}
			out <- r
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	for range rcs {
		r := <-out
		if len(r.ev) != 1 || !strings.Contains(r.ev[0], `"result":{"resultType":"complete"`) {
			t.Errorf("events after Shutdown: %q", r.ev)
		}
	}
	r9Wait(t, 5*time.Second, "listeners after Shutdown", func() bool { return s.Listeners() == 0 && r9Handlers() == 0 })
}

// A HandlerTimeout shorter than the stream's life does not end it; the
// keep-alive comes every KeepAlive.
func TestR9ListenOutlivesHandlerTimeout(t *testing.T) {
	s := r9Server(t, ListenOptions{KeepAlive: 150 * time.Millisecond})
	srv, host := r9Serve(t, s, fastserver.Config{HandlerTimeout: 100 * time.Millisecond, WriteTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	rc := r9Open(t, host, `"t"`, `{"resourceSubscriptions":["test://c"]}`)
	rc.event(t, 5*time.Second)
	// Eight keep-alives (1.2 s at 150 ms) outlast the handler, read,
	// write and idle timeouts several times over. Each read waits well
	// past the keep-alive period: a read that times out breaks the
	// chunked body reader for good, so it is a failure, never the loop's
	// end.
	start := time.Now()
	for comments := 0; comments < 8; comments++ {
		ev, err := rc.next(2 * time.Second)
		if err != nil {
			t.Fatalf("stream ended after %d keep-alives (%v): %v %q", comments, time.Since(start), err, ev)
		}
		if ev != ": keep-alive" {
			t.Fatalf("unexpected %q", ev)
		}
	}
	if el := time.Since(start); el < 800*time.Millisecond {
		t.Errorf("8 keep-alives at 150 ms in %v", el)
	}
	s.NotifyResourceUpdated("test://c")
	if ev := r9Obj(t, rc.event(t, 3*time.Second)); ev["method"] != "notifications/resources/updated" {
		t.Errorf("after the handler timeout: %v", ev)
	}
	if s.Listeners() != 1 {
		t.Errorf("Listeners %d", s.Listeners())
	}
	rc.c.Close()
	r9Gone(t, s, srv, 5*time.Second)
}

// Many streams, concurrent NotifyResourceUpdated and disconnects (run
// with -race): each stream sees only its own id and the URIs it follows,
// and everything is given back.
func TestR9ListenConcurrent(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{})
	uris := []string{"test://a", "test://b", "test://c", "tmpl://item/1"}
	const streams = 16
	var wg sync.WaitGroup
	errs := make(chan string, streams*4)
	stop := make(chan struct{})
	for i := range streams {
		follow := []string{uris[i%4], uris[(i+1)%4]}
		fj, _ := json.Marshal(follow)
		rc := r9Open(t, host, fmt.Sprintf(`"s%d"`, i), `{"resourceSubscriptions":`+string(fj)+`}`)
		rc.event(t, 5*time.Second)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rc.c.Close()
			tag := fmt.Sprintf(`%s"s%d"}}}`, r9Tag, i)
			for n := 0; n < 10_000; n++ {
				if i%3 == 0 && n == 20 {
					return // leaves early
				}
				ev, err := rc.next(3 * time.Second)
				if err != nil {
					select {
					case <-stop:
					default:
						errs <- fmt.Sprintf("s%d: %v", i, err)
					}
					return
				}
				if strings.HasPrefix(ev, ":") {
					continue
				}
				if !strings.HasSuffix(ev, tag) {
					errs <- fmt.Sprintf("s%d: %s", i, ev)
					return
				}
				m := map[string]any{}
				json.Unmarshal([]byte(ev), &m)
				u, _ := m["params"].(map[string]any)["uri"].(string)
				if u != follow[0] && u != follow[1] {
					errs <- fmt.Sprintf("s%d follows %v, got %s", i, follow, u)
					return
				}
			}
		}()
	}
	var nw sync.WaitGroup
	for g := range 4 {
		nw.Add(1)
		go func() {
			defer nw.Done()
			for n := range 5000 {
				s.NotifyResourceUpdated(uris[(g+n)%4])
				s.NotifyResourceUpdated("test://unfollowed")
				if n%500 == 0 {
					s.Listeners()
					var b strings.Builder
					s.WritePrometheus(&b)
				}
			}
		}()
	}
	nw.Wait()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	for _, u := range uris {
		s.NotifyResourceUpdated(u) // wakes readers so that they end
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	r9Gone(t, s, srv, 8*time.Second)
}

// WithListen refuses negative bounds, and zero takes the defaults.
func TestR9ListenOptions(t *testing.T) {
	for _, o := range []ListenOptions{{Max: -1}, {Subscriptions: -1}, {KeepAlive: -time.Nanosecond}, {MaxDuration: -time.Hour}} {
		if _, err := New(Info{Name: "x", Version: "1"}, WithListen(o)); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	s, err := New(Info{Name: "x", Version: "1"}, WithListen(ListenOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if o := s.listen.opts; o.Max != DefaultMaxListeners || o.Subscriptions != DefaultListenSubscriptions || o.KeepAlive != DefaultListenKeepAlive || o.MaxDuration != DefaultListenMaxDuration {
		t.Errorf("defaults %+v", o)
	}
}

// server/discover declares resources.subscribe (updates come on listen
// streams) and no listChanged.
func TestR9ListenDiscover(t *testing.T) {
	_, ep := testServer(t)
	a := exchange(t, ep, v26("server/discover"), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta26+`}}`)
	if a.Status != 200 || !strings.Contains(string(a.Result), `"resources":{"subscribe":true}`) || strings.Contains(string(a.Result), "listChanged") {
		t.Errorf("discover: %d %s", a.Status, a.Result)
	}
}

// TestR9ListenFaultMaxDurationForever: an embedder who wants streams
// never ended by duration sets ListenOptions.MaxDuration to the largest
// Duration (math.MaxInt64, "forever"); WithListen accepts it. listenStream
// then sets the stream's deadline to
// time.Now().Add(t.opts.MaxDuration + listenSlack) (listen.go,
// listenStream, the st.SetDeadline line): the sum overflows int64 and
// wraps to a large negative Duration, a deadline in the past, so the
// stream's context is cancelled at the watchdog's next tick, a
// fraction of a second after the acknowledgement: the stream ends with
// an error instead of lasting, and the update sent after it is lost.
// (Any MaxDuration within listenSlack of math.MaxInt64 does the same.)
//
// Fixed: WithListen refuses a MaxDuration over a year; a year holds.
func TestR9ListenFaultMaxDurationForever(t *testing.T) {
	if _, err := New(Info{Name: "n", Version: "1"}, WithListen(ListenOptions{MaxDuration: math.MaxInt64})); err == nil {
		t.Error("WithListen accepted MaxDuration math.MaxInt64")
	}
	s := r9Server(t, ListenOptions{MaxDuration: 365 * 24 * time.Hour})
	srv, host := r9Serve(t, s, fastserver.Config{})
	rc := r9Open(t, host, `"forever"`, `{"resourceSubscriptions":["test://a"]}`)
	if rc.resp.StatusCode != 200 {
		t.Fatalf("status %d", rc.resp.StatusCode)
	}
	rc.event(t, 5*time.Second)
	time.Sleep(600 * time.Millisecond)
	if n := s.Listeners(); n != 1 {
		t.Errorf("Listeners = %d 600 ms after the ack, want 1", n)
	}
	s.NotifyResourceUpdated("test://a")
	ev := rc.event(t, 3*time.Second)
	if !strings.Contains(ev, `"method":"notifications/resources/updated"`) {
		t.Errorf("MaxDuration math.MaxInt64: the stream ended at once: %s", ev)
	}
	rc.c.Close()
	r9Gone(t, s, srv, 5*time.Second)
}

// TestR9ListenFaultBodyBudgetHeld: a listen stream keeps its request,
// and with it the request body's share of fastserver's in-flight body
// budget (Config.InflightBodyBytes), for as long as it is open: the
// budget of a streamed answer is released when the stream ends
// (fastserver body.go: "the request of an answer that streams ends with
// the stream"), which for a listen stream is MaxDuration (an hour) away.
// Nothing in serveListen / readListenFilter bounds a listen request's
// size below Config.MaxBodyBytes (1 MiB): the filter's unknown members
// are ignored whatever their size, so a hostile client pads its filter to
// ~1 MiB and holds the stream. At the defaults 256 such streams (far
// under ListenOptions.Max's 1,000 and MaxStreams' 1,000) hold the whole
// 256 MiB budget, and every other request to the server (any method, any
// endpoint) is refused 503 "in-flight body budget spent" for as long as
// they stay. Scaled down here: a 2 MiB budget, two padded listen
// streams, and an ordinary 32 KiB tools/list refused while they are
// open. listen.go needs only the URIs (copied) and the id after
// readListenFilter; it should bound the request it keeps (refuse a
// listen body much larger than its URIs' 64 KiB bound, or copy what it
// needs and let the body go).
func TestR9ListenFaultBodyBudgetHeld(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, host := r9Serve(t, s, fastserver.Config{MaxBodyBytes: 1 << 20, InflightBodyBytes: 2 << 20, BudgetWait: 300 * time.Millisecond})
	plain := func() (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"` + strings.Repeat(" ", 32<<10) + `}`
		c := r9Dial(t, host, strings.Replace(r9Req("HTTP/1.1", sse, "2025-11-25", body), "HTTP/1.1\r\n", "HTTP/1.1\r\nConnection: close\r\n", 1))
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := plain(); st != 200 {
		t.Fatalf("before any listen stream: %d %s", st, b)
	}
	pad := strings.Repeat("p", 1_040_000)
	var rcs []*r9Conn
	for i := range 2 {
		rc := r9Open(t, host, fmt.Sprint(i), `{"resourceSubscriptions":["test://a"],"padding":"`+pad+`"}`)
		if rc.resp.StatusCode != 200 {
			b, _ := io.ReadAll(rc.resp.Body)
			t.Fatalf("padded listen %d: %d %s", i, rc.resp.StatusCode, b)
		}
		rc.event(t, 5*time.Second)
		rcs = append(rcs, rc)
	}
	if n := s.Listeners(); n != 2 {
		t.Fatalf("Listeners %d", n)
	}
	st, during := plain()
	for _, rc := range rcs {
		rc.c.Close()
	}
	r9Gone(t, s, srv, 8*time.Second)
	if st != 200 {
		t.Errorf("an ordinary 32 KiB request while two idle listen streams are open: %d %s, want 200 (their bodies hold the in-flight budget)", st, during)
	}
	if st, b := plain(); st != 200 {
		t.Errorf("after the listen streams ended: %d %s", st, b)
	}
}

// The same stream over fastserver's net/http transport (ServeNetHTTP):
// ack, update, a client that leaves, and Close's final result.
func TestR9ListenNetHTTP(t *testing.T) {
	s := r9Server(t, ListenOptions{})
	srv, err := fastserver.New(fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeNetHTTP(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	open := func(id string) (*http.Response, *bufio.Reader, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+ln.Addr().String()+"/mcp", strings.NewReader(r9Body(id, `{"resourceSubscriptions":["test://a"]}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", sse)
		req.Header.Set(HeaderProtocolVersion, "2026-07-28")
		req.Header.Set(HeaderMethod, "subscriptions/listen")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return resp, bufio.NewReader(resp.Body), cancel
	}
	read := func(br *bufio.Reader) string {
		for range 100 {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				return d
			}
		}
		t.Fatal("no event")
		return ""
	}
	r1, b1, c1 := open(`"n1"`)
	defer c1()
	if ev := read(b1); !strings.Contains(ev, "acknowledged") {
		t.Fatalf("ack %s", ev)
	}
	r2, b2, c2 := open(`"n2"`)
	read(b2)
	r2.Body.Close()
	c2()
	r9Wait(t, 5*time.Second, "the departed net/http client's stream", func() bool { return s.Listeners() == 1 })
	s.NotifyResourceUpdated("test://a")
	if ev := read(b1); !strings.Contains(ev, `"uri":"test://a"`) || !strings.HasSuffix(ev, r9Tag+`"n1"}}}`) {
		t.Fatalf("update %s", ev)
	}
	s.Close()
	if ev := read(b1); !strings.HasPrefix(ev, `{"jsonrpc":"2.0","id":"n1","result":{"resultType":"complete"`) {
		t.Fatalf("final %s", ev)
	}
	r1.Body.Close()
	r9Wait(t, 5*time.Second, "listeners after Close", func() bool { return s.Listeners() == 0 && r9Handlers() == 0 })
}

// fastserver's stream bounds (MaxStreams, MaxClientStreams) refuse a
// listen 503 with Retry-After, before it is counted.
func TestR9ListenStreamLimits(t *testing.T) {
	for _, cfg := range []fastserver.Config{{MaxStreams: 1}, {MaxClientStreams: 1}} {
		s := r9Server(t, ListenOptions{})
		srv, host := r9Serve(t, s, cfg)
		a := r9Open(t, host, `"a"`, `{}`)
		a.event(t, 5*time.Second)
		b := r9Open(t, host, `"b"`, `{}`)
		body, _ := io.ReadAll(b.resp.Body)
		if b.resp.StatusCode != 503 || b.resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), `"code":-32603`) {
			t.Errorf("%+v: second: %d %q %s", cfg, b.resp.StatusCode, b.resp.Header.Get("Retry-After"), body)
		}
		if n := s.Listeners(); n != 1 {
			t.Errorf("Listeners %d", n)
		}
		a.c.Close()
		b.c.Close()
		r9Gone(t, s, srv, 5*time.Second)
	}
}
