package fastserver

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// A route no request could reach — requests are matched by their decoded,
// cleaned path — is refused wherever one is given: Config's own routes,
// endpoint paths and HandleGET (the -health-path and -metrics-path flags
// were checked, an embedder's Config was not: "/a/../h" answered 404 to
// every health check).
func TestCheckPathEverywhere(t *testing.T) {
	for _, p := range []string{"", "h", "/a/../h", "//h", "/h?x=1", "/h#f", "/h%20x", "/h/./z"} {
		if CheckPath(p) == nil {
			t.Errorf("CheckPath(%q) accepted", p)
		}
		if _, err := New(Config{HealthPath: p, Logger: quietLogger}, testEndpoints(nil)...); p != "" && err == nil {
			t.Errorf("HealthPath %q accepted", p)
		}
		if _, err := New(Config{MetricsPath: p, Logger: quietLogger}, testEndpoints(nil)...); p != "" && err == nil {
			t.Errorf("MetricsPath %q accepted", p)
		}
		ep := testEndpoint(testMethods(nil))
		ep.Path = p
		if _, err := New(Config{Logger: quietLogger}, ep); err == nil {
			t.Errorf("endpoint path %q accepted", p)
		}
		s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
		if err != nil {
			t.Fatal(err)
		}
		if s.HandleGET(p, func(*fasthttp.RequestCtx) {}) == nil {
			t.Errorf("HandleGET(%q) accepted", p)
		}
	}
	for _, p := range []string{"/", "/healthz", "/a/b/", "/.well-known/agent-card.json", "/m:x@y"} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q): %v", p, err)
		}
	}
}
