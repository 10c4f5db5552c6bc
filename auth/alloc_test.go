//go:build !race

package auth_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// TestAllocsCacheHit pins a request with a known token at zero
// allocations: the header parse, the hash, the cache lookup and the scope
// check.
func TestAllocsCacheHit(t *testing.T) {
	as := authtest.New(t)
	res := newResource(t, as, auth.ResourceConfig{Scopes: []string{"mcp"}}, auth.IssuerConfig{})
	var hdrs [][]byte
	for i := range 8 {
		c := as.Claims(resourceID, "mcp")
		c["jti"] = strconv.Itoa(i)
		hdrs = append(hdrs, bearer(as.Token(c)))
	}
	ctx := context.Background()
	uri := []byte("/mcp")
	for _, h := range hdrs {
		if _, e := res.Authenticate(ctx, h, uri); e != nil {
			t.Fatal(e.Message)
		}
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		if _, e := res.Authenticate(ctx, hdrs[i%len(hdrs)], uri); e != nil {
			t.Fatal(e.Message)
		}
		i++
	}); n != 0 {
		t.Fatalf("%v allocations per cached token, want 0", n)
	}
	// Refusals decided from the header alone allocate nothing either.
	for _, h := range [][]byte{nil, []byte("Basic x"), []byte("Bearer a b")} {
		if n := testing.AllocsPerRun(100, func() { res.Authenticate(ctx, h, uri) }); n != 0 {
			t.Errorf("%q: %v allocations", h, n)
		}
	}
}
