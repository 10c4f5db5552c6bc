package mcp

import (
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// headersFor returns complete headers for method under version v.
func headersFor(v Version, method string) hdr {
	h := hdr{HeaderProtocolVersion, v.String(), HeaderMethod, method}
	switch method {
	case "tools/call":
		h = append(h, HeaderName, "echo")
	case "prompts/get":
		h = append(h, HeaderName, "greet")
	case "resources/read":
		h = append(h, HeaderName, "test://about")
	case "tasks/get", "tasks/update", "tasks/cancel":
		h = append(h, HeaderName, "t1")
	}
	return h
}

// paramsFor returns valid params members for method.
func paramsFor(method string) string {
	switch method {
	case "tools/call":
		return echoArgs + ","
	case "prompts/get":
		return `"name":"greet","arguments":{"name":"Ada"},`
	case "resources/read":
		return `"uri":"test://about",`
	case "initialize":
		return `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},`
	case "completion/complete":
		return `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"A"},`
	case "logging/setLevel":
		return `"level":"info",`
	case "resources/subscribe", "resources/unsubscribe":
		return `"uri":"test://about",`
	case "tasks/get", "tasks/update", "tasks/cancel":
		return `"taskId":"t1",`
	case "subscriptions/listen":
		return `"notifications":{},`
	}
	return ""
}

func TestMethodsByVersion(t *testing.T) {
	_, ep := testServer(t)
	everywhere := []string{"server/discover", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list", "prompts/list", "prompts/get", "completion/complete"}
	legacyOnly := []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
	statelessOnly := []string{"subscriptions/listen"} // refused -32600 here: this exchange has no streams
	never := []string{"notifications/initialized", "Subscriptions/listen", "Tools/List", "tools/list ", ""}
	for _, v := range Versions() {
		check := func(method string, want int) {
			t.Helper()
			body := req(method, paramsFor(method)+meta26)
			a := exchange(t, ep, headersFor(v, method), body)
			if a.Status != want {
				t.Errorf("%v %q: status %d code %d (%s), want %d", v, method, a.Status, a.Code, a.Msg, want)
			}
			if want == 404 && a.Code != decode.CodeMethodNotFound {
				t.Errorf("%v %q: code %d", v, method, a.Code)
			}
			if want == 200 && a.Label != method {
				t.Errorf("%v %q: label %q", v, method, a.Label)
			}
		}
		for _, m := range everywhere {
			check(m, 200)
		}
		for _, m := range legacyOnly {
			if v.Stateless() {
				check(m, 404)
			} else {
				check(m, 200)
			}
		}
		for _, m := range statelessOnly {
			if v.Stateless() {
				check(m, 200)
			} else {
				check(m, 404)
			}
		}
		for _, m := range never {
			check(m, 404)
		}
		// notifications/initialized as a notification: 202 under every
		// version (the server answers notifications after Check).
		n := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		if a := exchange(t, ep, hdr{HeaderProtocolVersion, v.String()}, n); a.Status != 202 {
			t.Errorf("%v notifications/initialized: %+v", v, a)
		}
	}
}

func TestRouteOwnParams(t *testing.T) {
	_, ep := testServer(t)
	// The tasks methods, on a server with a tool registered with Task.
	ts, err := New(Info{Name: "tasks", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.AddTool(Tool{Name: "job", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error { return nil })}); err != nil {
		t.Fatal(err)
	}
	tep := ts.Endpoint()
	// The methods that name a target: they check params themselves, so
	// that an unknown target (row 16) comes before a member given twice
	// (row 17).
	own := map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true,
		"resources/subscribe": true, "resources/unsubscribe": true, "completion/complete": true}
	for _, m := range Methods() {
		r := routeOf(t, ep, Version20251125, m)
		if strings.HasPrefix(m, "tasks/") {
			r = routeOf(t, tep, Version20260728, m) // the tasks extension's
		}
		if m == "subscriptions/listen" {
			r = routeOf(t, ep, Version20260728, m)
		}
		if r.Handler == nil {
			if m != "notifications/initialized" {
				t.Errorf("%s: no handler", m)
			}
			continue
		}
		if r.OwnParams != own[m] {
			t.Errorf("%s: OwnParams %v", m, r.OwnParams)
		}
		if r.Label != m {
			t.Errorf("%s: label %q", m, r.Label)
		}
	}
}

func TestLabels(t *testing.T) {
	_, ep := testServer(t)
	want := []string{"completion/complete", "initialize", "logging/setLevel", "notifications/initialized", "ping", "prompts/get", "prompts/list",
		"resources/list", "resources/read", "resources/subscribe", "resources/templates/list", "resources/unsubscribe", "server/discover", "subscriptions/listen", "tasks/cancel", "tasks/get", "tasks/update", "tools/call", "tools/list"}
	got := append([]string(nil), ep.Labels...)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v", got)
	}
	if ep.Path != "/mcp" || ep.IDs != decode.IDsMCP || ep.Err != nil {
		t.Errorf("endpoint %+v", ep)
	}
}

// TestParamsNotObject: methods without OwnParams leave row 15 to the
// server; the three with OwnParams answer it themselves.
func TestParamsNotObject(t *testing.T) {
	_, ep := testServer(t)
	for _, m := range []string{"tools/call", "prompts/get", "resources/read", "tools/list", "initialize"} {
		for _, p := range []string{`[]`, `"x"`, `1`, `true`, `null`} {
			body := `{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":` + p + `}`
			a := exchange(t, ep, hdr{HeaderProtocolVersion, "2025-11-25"}, body)
			if a.Status != 200 || a.Code != decode.CodeInvalidParams {
				t.Errorf("%s params %s: %+v", m, p, a)
			}
		}
	}
}

// routeOf runs Check and Route for a request of method under v.
func routeOf(t *testing.T, ep *fastserver.Endpoint, v Version, method string) fastserver.Route {
	t.Helper()
	var h fasthttp.RequestHeader
	hs := headersFor(v, method)
	for i := 0; i+1 < len(hs); i += 2 {
		h.Set(hs[i], hs[i+1])
	}
	m := decodeOwn(t, []byte(req(method, paramsFor(method)+meta26)))
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	if e := ep.Check(&r); e != nil {
		t.Fatalf("%s: %v", method, e)
	}
	return ep.Route(&r)
}
