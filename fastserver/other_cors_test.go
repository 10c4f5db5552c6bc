package fastserver

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// An endpoint's other methods (an MCP session's GET stream and DELETE)
// go through row 1 as its POSTs do: a foreign Origin, or one in two
// lines, is 403 and Other never runs; an allowed origin gets the CORS
// fields and ExposeHeaders on Other's answer, also on one Other made
// with ctx.Error (which resets the answer's header). The preflight allows
// POST, OPTIONS and OtherMethods, or, with OtherMethods nil, the method
// asked for.
func TestOtherMethodsOriginAndCORS(t *testing.T) {
	for _, methods := range [][]string{{"GET", "DELETE"}, nil} {
		calls := 0
		eps := testEndpoints(nil)
		eps[0].OtherMethods = methods
		eps[0].ExposeHeaders = []string{"Mcp-Session-Id", "X-Trace"}
		eps[0].Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
			calls++
			switch {
			case ctx.IsGet():
				ctx.SetStatusCode(fasthttp.StatusNoContent)
			case ctx.IsDelete():
				ctx.Error("gone", fasthttp.StatusNotFound)
			default:
				return false
			}
			return true
		}
		_, addr := serve(t, Config{AllowedOrigins: []string{"https://app.example"}}, eps...)
		ask := func(method, extra string) *resp {
			t.Helper()
			c := dial(t, addr)
			c.send(method + " " + pathRPC + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n")
			return c.read()
		}
		for _, origin := range []string{"Origin: https://evil.example\r\n", "Origin: null\r\n",
			"Origin: https://app.example.evil.example\r\n", "Origin: https://app.example\r\nOrigin: https://app.example\r\n"} {
			for _, m := range []string{"GET", "DELETE"} {
				before := calls
				if r := ask(m, origin); r.Status != 403 {
					t.Errorf("OtherMethods %v, %s with %q: %s, want 403", methods, m, origin, r.StatusLine)
				}
				if calls != before {
					t.Errorf("%s with %q reached Other", m, origin)
				}
			}
		}
		for _, tc := range []struct {
			method string
			status int
		}{{"GET", 204}, {"DELETE", 404}} {
			r := ask(tc.method, "Origin: https://app.example\r\n")
			if r.Status != tc.status {
				t.Fatalf("%s from an allowed origin: %s, want %d", tc.method, r.StatusLine, tc.status)
			}
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example" {
				t.Errorf("%s: Access-Control-Allow-Origin %q", tc.method, got)
			}
			if got := r.Header.Get("Access-Control-Expose-Headers"); got != "Mcp-Session-Id, X-Trace" {
				t.Errorf("%s: Access-Control-Expose-Headers %q", tc.method, got)
			}
			if got := r.Header.Get("Vary"); !strings.Contains(got, "Origin") {
				t.Errorf("%s: Vary %q", tc.method, got)
			}
			// Without an Origin: no CORS fields.
			if r := ask(tc.method, ""); r.Status != tc.status || r.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s without Origin: %s, Allow-Origin %q", tc.method, r.StatusLine, r.Header.Get("Access-Control-Allow-Origin"))
			}
		}
		// A POST's answer exposes the same fields.
		c := dial(t, addr)
		c.send(strings.Replace(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"echo"}`), "\r\n\r\n", "\r\nOrigin: https://app.example\r\n\r\n", 1))
		if r := c.read(); r.Status != 200 || r.Header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id, X-Trace" {
			t.Errorf("POST: %s, Expose-Headers %q", r.StatusLine, r.Header.Get("Access-Control-Expose-Headers"))
		}
		for _, m := range []string{"GET", "DELETE", "PUT"} {
			r := ask("OPTIONS", "Origin: https://app.example\r\nAccess-Control-Request-Method: "+m+"\r\n")
			want := "POST, OPTIONS, GET, DELETE"
			if methods == nil {
				want = "POST, OPTIONS, " + m
			}
			if got := r.Header.Get("Access-Control-Allow-Methods"); r.Status != 204 || got != want {
				t.Errorf("OtherMethods %v, preflight of %s: %s, Allow-Methods %q, want %q", methods, m, r.StatusLine, got, want)
			}
		}
	}
}

// New refuses OtherMethods and ExposeHeaders that are not tokens: each
// goes into a header field as it is.
func TestEndpointFieldsAreTokens(t *testing.T) {
	for _, tc := range []struct {
		methods, expose []string
	}{
		{[]string{"GET", ""}, nil},
		{[]string{"GET\r\nX-Injected: 1"}, nil},
		{nil, []string{"Mcp-Session-Id, X"}},
		{nil, []string{"X\r\nSet-Cookie: a=b"}},
	} {
		eps := testEndpoints(nil)
		eps[0].OtherMethods, eps[0].ExposeHeaders = tc.methods, tc.expose
		eps[0].Other = func(*Server, *fasthttp.RequestCtx) bool { return false }
		if _, err := New(Config{Logger: quietLogger}, eps...); err == nil || !strings.Contains(err.Error(), "tokens") {
			t.Errorf("OtherMethods %q, ExposeHeaders %q: New gave %v", tc.methods, tc.expose, err)
		}
	}
}
