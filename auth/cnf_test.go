package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// A sender-constrained token, bound to a DPoP key (RFC 9449) or a client
// certificate (RFC 8705) by its cnf claim (RFC 7800), is refused: this
// resource server checks neither proof, so taken as a bearer token a
// stolen one would work here (found by review on 2026-12-06: it was
// accepted). cnf null is no binding. Introspection answers likewise, and
// token_type "DPoP" (RFC 9449 §6.2).
func TestSenderConstrainedRefused(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{
		Introspection: &auth.IntrospectionConfig{ClientID: "rs", ClientSecret: "rs-secret", TTL: time.Hour},
	})
	ctx := context.Background()
	for name, cnf := range map[string]any{
		"DPoP jkt":       map[string]any{"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"},
		"mTLS x5t#S256":  map[string]any{"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"},
		"empty object":   map[string]any{},
		"not an object":  "x",
		"nested in list": []any{map[string]any{"jkt": "a"}},
	} {
		c := as.Claims(resourceID, "")
		c["cnf"] = cnf
		if tok, e := res.Authenticate(ctx, bearer(as.Token(c)), nil); e == nil || e.Status != 401 {
			t.Errorf("JWT with cnf %s: %+v, %v; want 401", name, tok, e)
		}
	}
	c := as.Claims(resourceID, "")
	c["cnf"] = nil
	if _, e := res.Authenticate(ctx, bearer(as.Token(c)), nil); e != nil {
		t.Errorf("JWT with cnf null: %v", e)
	}

	exp := time.Now().Add(time.Minute).Unix()
	good := map[string]any{"active": true, "aud": resourceID, "iss": as.URL, "exp": exp, "sub": "u"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range good {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	as.Opaque("bound-jkt", with("cnf", map[string]any{"jkt": "a"}))
	as.Opaque("bound-type", with("token_type", "DPoP"))
	as.Opaque("bound-type-case", with("token_type", "dpop"))
	as.Opaque("bearer-type", with("token_type", "Bearer"))
	as.Opaque("cnf-null", with("cnf", nil))
	for tok, want := range map[string]int{"bound-jkt": 401, "bound-type": 401, "bound-type-case": 401, "bearer-type": 0, "cnf-null": 0} {
		_, e := res.Authenticate(ctx, bearer(tok), nil)
		got := 0
		if e != nil {
			got = e.Status
		}
		if got != want {
			t.Errorf("introspected %s: status %d, want %d (0: accepted)", tok, got, want)
		}
	}
}
