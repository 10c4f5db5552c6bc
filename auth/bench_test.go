package auth_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// BenchmarkAuthenticate measures a request's token check: a token in the
// cache (the hot path), and one the cache has not seen (an RS256
// signature and the claims, then the insert).
func BenchmarkAuthenticate(b *testing.B) {
	as := authtest.New(b)
	ctx := context.Background()
	uri := []byte("/mcp")
	b.Run("cached", func(b *testing.B) {
		res := newResourceB(b, as)
		h := bearer(as.Token(as.Claims(resourceID, "mcp")))
		res.Authenticate(ctx, h, uri)
		b.ReportAllocs()
		for b.Loop() {
			if _, e := res.Authenticate(ctx, h, uri); e != nil {
				b.Fatal(e.Message)
			}
		}
	})
	b.Run("verify-RS256", func(b *testing.B) {
		toks := make([][]byte, 4096)
		for i := range toks {
			c := as.Claims(resourceID, "mcp")
			c["jti"] = strconv.Itoa(i)
			toks[i] = bearer(as.Token(c))
		}
		b.ReportAllocs()
		var res *auth.Resource
		i := 0
		for b.Loop() {
			if i%len(toks) == 0 {
				b.StopTimer()
				res = newResourceB(b, as) // an empty cache
				res.Authenticate(ctx, bearer(as.Token(jwt.MapClaims{})), uri)
				b.StartTimer()
			}
			if _, e := res.Authenticate(ctx, toks[i%len(toks)], uri); e != nil {
				b.Fatal(e.Message)
			}
			i++
		}
	})
}

func newResourceB(b *testing.B, as *authtest.Issuer) *auth.Resource {
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: as.URL})
	if err != nil {
		b.Fatal(err)
	}
	if err := iss.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	if err != nil {
		b.Fatal(err)
	}
	return res
}
