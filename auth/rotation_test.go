package auth_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// During a key rotation, requests whose tokens carry the new kid arrive
// together: the first starts the one refresh the interval allows, and
// the others wait for it (or find its keys) rather than get 401 while it
// runs, which an MCP client takes for a bad token (it authorizes again).
// Still one JWKS fetch for all of them.
func TestRotationConcurrentNewKID(t *testing.T) {
	for round := range 5 {
		as := authtest.New(t)
		res := newResource(t, as, auth.ResourceConfig{}, auth.IssuerConfig{UnknownKeyInterval: time.Hour})
		ctx := context.Background()
		if _, e := res.Authenticate(ctx, bearer(as.Token(as.Claims(resourceID, ""))), nil); e != nil {
			t.Fatal(e.Message)
		}
		before := as.JWKSFetches.Load()
		as.Rotate()
		const n = 40
		var (
			start  = make(chan struct{})
			wg     sync.WaitGroup
			mu     sync.Mutex
			failed []string
		)
		for i := range n {
			c := as.Claims(resourceID, "")
			c["jti"] = strconv.Itoa(round*n + i)
			tok := bearer(as.Token(c))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, e := res.Authenticate(ctx, tok, nil); e != nil {
					mu.Lock()
					failed = append(failed, strconv.Itoa(e.Status)+" "+e.Message)
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(failed) > 0 {
			t.Fatalf("round %d: %d of %d tokens under the new key refused during the refresh: %q", round, len(failed), n, failed[0])
		}
		if got := as.JWKSFetches.Load() - before; got != 1 {
			t.Fatalf("round %d: %d JWKS fetches for the rotation, want 1", round, got)
		}
	}
}
