package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// listenServer is a Server with two resources and a template, served on
// loopback with cfg.
func listenServer(t testing.TB, cfg fastserver.Config, opts ...Option) (*Server, *fastserver.Server, string) {
	t.Helper()
	s, err := New(Info{Name: "listen", Version: "1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"test://a", "test://b"} {
		if err := s.AddResource(Resource{URI: u, Text: u}); err != nil {
			t.Fatal(err)
		}
	}
	err = s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://items/{id}",
		Read: func(r *fastserver.Request, uri string, vars map[string]string) ([]ResourceContents, error) {
			return []ResourceContents{{Text: vars["id"]}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv, url := serveLoopback(t, s, cfg)
	return s, srv, url
}

// listenStream is an open subscriptions/listen answer, read event by
// event.
type listenStream struct {
	resp     *http.Response
	br       *bufio.Reader
	comments int
}

// openListen POSTs subscriptions/listen with id (raw JSON) and filter
// (the notifications object).
func openListen(t testing.TB, url, id, filter string, header ...string) *listenStream {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":` + filter + `,` + meta26 + `}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", sse)
	req.Header.Set(HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(HeaderMethod, "subscriptions/listen")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &listenStream{resp: resp, br: bufio.NewReader(resp.Body)}
}

// next returns the next event's JSON, counting the comments before it;
// it fails the test after d.
func (ls *listenStream) next(t testing.TB, d time.Duration) map[string]any {
	t.Helper()
	type got struct {
		m   map[string]any
		err error
	}
	ch := make(chan got, 1)
	go func() {
		var data string
		for {
			line, err := ls.br.ReadString('\n')
			if err != nil {
				ch <- got{err: err}
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "" && data != "":
				var m map[string]any
				err := json.Unmarshal([]byte(data), &m)
				ch <- got{m, err}
				return
			case strings.HasPrefix(line, ":"):
				ls.comments++
			case strings.HasPrefix(line, "data: "):
				data += line[len("data: "):]
			}
		}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatalf("reading the listen stream: %v", g.err)
		}
		return g.m
	case <-time.After(d):
		ls.resp.Body.Close()
		<-ch
		t.Fatalf("no event within %v", d)
	}
	return nil
}

// subID returns an event's _meta subscriptionId as raw JSON.
func subID(t testing.TB, ev map[string]any, where string) string {
	t.Helper()
	m, _ := ev[where].(map[string]any)
	meta, _ := m["_meta"].(map[string]any)
	v, ok := meta["io.modelcontextprotocol/subscriptionId"]
	if !ok {
		t.Fatalf("no subscriptionId in %v", ev)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func waitListeners(t testing.TB, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Listeners() != n {
		if time.Now().After(deadline) {
			t.Fatalf("Listeners() = %d, want %d", s.Listeners(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A stream is acknowledged with what it is honored, then carries the
// updates of the URIs it follows and only those, each tagged with its
// id; Close ends it with its SubscriptionsListenResult.
func TestListen(t *testing.T) {
	s, _, url := listenServer(t, fastserver.Config{})
	for round, id := range []string{strconv.Itoa(rand.IntN(1 << 40)), `"s-` + strconv.Itoa(rand.IntN(1000)) + `"`, `-7`} {
		item := "test://items/" + strconv.Itoa(rand.IntN(1e6))
		ls := openListen(t, url, id, `{"resourceSubscriptions":["test://a","`+item+`","test://a"],"toolsListChanged":true,"promptsListChanged":false,"later":{"x":1}}`)
		if ls.resp.StatusCode != 200 || ls.resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s: %d %s", id, ls.resp.StatusCode, ls.resp.Header.Get("Content-Type"))
		}
		ack := ls.next(t, 5*time.Second)
		if ack["method"] != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first event %v", ack)
		}
		if got := subID(t, ack, "params"); got != id {
			t.Errorf("ack subscriptionId %s, want %s", got, id)
		}
		honored := ack["params"].(map[string]any)["notifications"]
		if want := map[string]any{"resourceSubscriptions": []any{"test://a", item}}; !reflect.DeepEqual(honored, want) {
			t.Errorf("honored %v, want %v (no list changes: the lists are fixed)", honored, want)
		}
		waitListeners(t, s, 1)
		if n := s.NotifyResourceUpdated("test://b"); n != 0 {
			t.Errorf("test://b reached %d streams", n)
		}
		for _, u := range []string{item, "test://a", item} {
			if n := s.NotifyResourceUpdated(u); n != 1 {
				t.Errorf("%s reached %d streams", u, n)
			}
			ev := ls.next(t, 5*time.Second)
			p, _ := ev["params"].(map[string]any)
			if ev["method"] != "notifications/resources/updated" || p["uri"] != u || ev["id"] != nil {
				t.Fatalf("update of %s: %v", u, ev)
			}
			if got := subID(t, ev, "params"); got != id {
				t.Errorf("update subscriptionId %s, want %s", got, id)
			}
		}
		if round < 2 {
			// The client goes: the stream ends, its slot is freed.
			ls.resp.Body.Close()
			waitListeners(t, s, 0)
			continue
		}
		s.Close()
		end := ls.next(t, 5*time.Second)
		res, _ := end["result"].(map[string]any)
		if b, _ := json.Marshal(end["id"]); string(b) != id || res["resultType"] != "complete" || subID(t, end, "result") != id {
			t.Errorf("the end: %v", end)
		}
		if _, ok := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"]; !ok {
			t.Errorf("the end has no serverInfo: %v", end)
		}
		waitListeners(t, s, 0)
		// Closed: a new stream is refused.
		again := openListen(t, url, "1", `{}`)
		if again.resp.StatusCode != 503 {
			t.Errorf("listen after Close: %d", again.resp.StatusCode)
		}
	}
}

// Refusals come before the stream, as plain JSON.
func TestListenRefusals(t *testing.T) {
	_, ep := testServer(t, WithListen(ListenOptions{Subscriptions: 2}))
	body := func(params string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{` + params + meta26 + `}}`
	}
	for _, c := range []struct {
		params string
		status int
		code   int
		field  string
	}{
		{``, 200, decode.CodeInvalidParams, "notifications"},
		{`"notifications":[],`, 200, decode.CodeInvalidParams, "notifications"},
		{`"notifications":null,`, 200, decode.CodeInvalidParams, "notifications"},
		{`"notifications":{"toolsListChanged":"yes"},`, 200, decode.CodeInvalidParams, "notifications.toolsListChanged"},
		{`"notifications":{"resourcesListChanged":1},`, 200, decode.CodeInvalidParams, "notifications.resourcesListChanged"},
		{`"notifications":{"resourceSubscriptions":"test://about"},`, 200, decode.CodeInvalidParams, "notifications.resourceSubscriptions"},
		{`"notifications":{"resourceSubscriptions":["test://about",1]},`, 200, decode.CodeInvalidParams, "notifications.resourceSubscriptions"},
		{`"notifications":{"resourceSubscriptions":[["test://about"]]},`, 200, decode.CodeInvalidParams, "notifications.resourceSubscriptions"},
		{`"notifications":{"toolsListChanged":true,"toolsListChanged":false},`, 200, decode.CodeInvalidParams, "notifications.toolsListChanged"},
		{`"notifications":{"resourceSubscriptions":["test://about","test://dyn","test://broken"]},`, 200, decode.CodeInvalidParams, "notifications.resourceSubscriptions"},
		{`"notifications":{"resourceSubscriptions":["test://nowhere"]},`, 200, decode.CodeMethodNotFound, ""},
		// Valid, but this exchange has no streams (as stdio).
		{`"notifications":{"resourceSubscriptions":["test://about","test://about","test://dyn"]},`, 200, decode.CodeInvalidRequest, ""},
		{`"notifications":{},`, 200, decode.CodeInvalidRequest, ""},
	} {
		a := exchange(t, ep, v26("subscriptions/listen"), body(c.params))
		if a.Status != c.status || a.Code != c.code {
			t.Errorf("%s: %d %d %s, want %d %d", c.params, a.Status, a.Code, a.Msg, c.status, c.code)
			continue
		}
		if c.field != "" {
			if f := fieldOf(t, a); f != c.field {
				t.Errorf("%s: field %q, want %q", c.params, f, c.field)
			}
		}
	}
	a := exchange(t, ep, hdr{HeaderProtocolVersion, "2025-11-25"}, body(`"notifications":{},`))
	if a.Status != 404 || a.Code != decode.CodeMethodNotFound {
		t.Errorf("under 2025-11-25: %+v", a)
	}
	if _, err := New(Info{Name: "n", Version: "1"}, WithListen(ListenOptions{KeepAlive: -1})); err == nil {
		t.Error("a negative KeepAlive was accepted")
	}
}

// Max streams: one more is 503 with Retry-After, and the slot comes back
// when a client goes; a client that does not accept a stream is 406.
func TestListenBounds(t *testing.T) {
	s, _, url := listenServer(t, fastserver.Config{}, WithListen(ListenOptions{Max: 1}))
	first := openListen(t, url, "1", `{"resourceSubscriptions":["test://a"]}`)
	first.next(t, 5*time.Second)
	second := openListen(t, url, "2", `{}`)
	if second.resp.StatusCode != 503 || second.resp.Header.Get("Retry-After") != "1" {
		t.Errorf("over Max: %d Retry-After %q", second.resp.StatusCode, second.resp.Header.Get("Retry-After"))
	}
	first.resp.Body.Close()
	waitListeners(t, s, 0)
	third := openListen(t, url, "3", `{}`)
	if ack := third.next(t, 5*time.Second); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Errorf("after the first went: %v", ack)
	}
	plain := openListen(t, url, "4", `{}`, "Accept", "application/json")
	if plain.resp.StatusCode != 406 {
		t.Errorf("Accept: application/json: %d", plain.resp.StatusCode)
	}
	var m strings.Builder
	s.WritePrometheus(&m)
	for _, want := range []string{"rpcedge_mcp_listen_streams 1\n", "rpcedge_mcp_listen_refused_total 1\n"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, m.String())
		}
	}
}

// A stream outlives the handler timeout, says it is alive when silent,
// and ends gracefully at MaxDuration and at shutdown.
func TestListenEnds(t *testing.T) {
	s, srv, url := listenServer(t, fastserver.Config{HandlerTimeout: 100 * time.Millisecond},
		WithListen(ListenOptions{KeepAlive: 50 * time.Millisecond, MaxDuration: 600 * time.Millisecond}))
	start := time.Now()
	ls := openListen(t, url, `"d"`, `{"resourceSubscriptions":["test://b"]}`)
	ls.next(t, 5*time.Second)
	time.Sleep(250 * time.Millisecond) // past HandlerTimeout
	s.NotifyResourceUpdated("test://b")
	if ev := ls.next(t, 5*time.Second); ev["method"] != "notifications/resources/updated" {
		t.Fatalf("after the handler timeout: %v", ev)
	}
	end := ls.next(t, 5*time.Second)
	if res, _ := end["result"].(map[string]any); res["resultType"] != "complete" || time.Since(start) < 550*time.Millisecond {
		t.Errorf("at MaxDuration (%v): %v", time.Since(start), end)
	}
	if ls.comments == 0 {
		t.Error("no keep-alive comment in a stream silent for 250 ms, KeepAlive 50 ms")
	}
	waitListeners(t, s, 0)

	ls = openListen(t, url, "9", `{}`)
	ls.next(t, 5*time.Second)
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	end = ls.next(t, 5*time.Second)
	if res, _ := end["result"].(map[string]any); res["resultType"] != "complete" || subID(t, end, "result") != "9" {
		t.Errorf("at shutdown: %v", end)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Shutdown did not return")
	}
}

// Updates of a URI merge while one waits: a stream's pending list never
// grows past the URIs it follows, whatever the rate of updates.
func TestListenMerges(t *testing.T) {
	lt := newListenTable(ListenOptions{})
	uris := []string{"u://1", "u://2", "u://3"}
	l, e := lt.add(uris)
	if e != nil {
		t.Fatal(e)
	}
	for i := range 30000 {
		lt.notify(uris[(i*7)%3])
	}
	if n, _ := l.q.Len(); n != 3 {
		t.Fatalf("pending %d", n)
	}
	if got := l.q.Take(nil); !reflect.DeepEqual(got, []string{"u://1", "u://2", "u://3"}) {
		t.Errorf("take: %v", got)
	}
	if m := lt.merged.Load(); m != 30000-3 {
		t.Errorf("merged %d", m)
	}
	lt.notify("u://2")
	if got := l.q.Take(nil); !reflect.DeepEqual(got, []string{"u://2"}) {
		t.Errorf("after a take: %v", got)
	}
	lt.remove(l)
	if n := lt.notify("u://1"); n != 0 || len(lt.byURI) != 0 || lt.n != 0 {
		t.Errorf("after remove: %d reached, %d URIs, %d streams", n, len(lt.byURI), lt.n)
	}
}

func ExampleServer_NotifyResourceUpdated() {
	s, _ := New(Info{Name: "files", Version: "1"})
	s.AddResource(Resource{URI: "file:///notes.txt", Text: "v1"})
	// A 2026-07-28 client follows the file with subscriptions/listen
	// ({"notifications":{"resourceSubscriptions":["file:///notes.txt"]}});
	// when it changes, every stream that follows it is told.
	n := s.NotifyResourceUpdated("file:///notes.txt")
	fmt.Println(n, "streams told") // none open in this example
	// Output: 0 streams told
}

// Telling a stream of an update, and its writer taking it, allocate
// nothing once warm.
func TestListenNotifyAllocs(t *testing.T) {
	lt := newListenTable(ListenOptions{})
	uris := []string{"u://" + strconv.Itoa(rand.IntN(100)), "u://x", "u://y"}
	l, _ := lt.add(uris)
	var buf []string
	i := 0
	step := func() {
		lt.notify(uris[i%3])
		lt.notify(uris[(i+1)%3])
		buf = l.q.Take(buf)
		<-l.q.Wake()
		i++
	}
	step()
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Errorf("%v allocations a notification", a)
	}
}

// BenchmarkNotifyResourceUpdated: one update told to 100 streams that
// follow it (and to none of 900 that follow others), and taken by each.
func BenchmarkNotifyResourceUpdated(b *testing.B) {
	lt := newListenTable(ListenOptions{})
	var ls []*listener
	for i := range 1000 {
		u := "u://watched"
		if i%10 != 0 {
			u = "u://other/" + strconv.Itoa(i)
		}
		l, _ := lt.add([]string{u})
		ls = append(ls, l)
	}
	var buf []string
	b.ReportAllocs()
	for b.Loop() {
		if lt.notify("u://watched") != 100 {
			b.Fatal("not 100")
		}
		for i := 0; i < len(ls); i += 10 {
			buf = ls[i].q.Take(buf)
			<-ls[i].q.Wake()
		}
	}
}
