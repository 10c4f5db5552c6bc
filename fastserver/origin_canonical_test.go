package fastserver

import "testing"

// Config.AllowedOrigins are taken as browsers send an Origin: a scheme's
// default port left out, case aside (an entry "https://a.example:443"
// never matched, found by review on 2026-12-06); entries no Origin can
// equal are refused by New.
func TestAllowedOriginsCanonical(t *testing.T) {
	_, addr := serve(t, Config{AllowedOrigins: []string{"https://A.example:443", "http://b.example:08080/"}})
	for origin, status := range map[string]int{
		"https://a.example": 200, "http://b.example:8080": 200,
		"https://a.example:443": 403, "https://c.example": 403,
	} {
		r := dial(t, addr).do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"echo"}`, "Origin: "+origin))
		if r.Status != status {
			t.Errorf("Origin %s: %d, want %d", origin, r.Status, status)
		}
	}
	for _, bad := range []string{"https://u@a.example", "https://a.example?x", "https://a.example/p", "https://a.example:99999", "a.example"} {
		if _, err := New(Config{AllowedOrigins: []string{bad}}, testEndpoints(nil)...); err == nil {
			t.Errorf("AllowedOrigins %q accepted", bad)
		}
	}
}
