package fastserver

import (
	"context"
	"testing"
	"time"
)

// Serve and ServeNetHTTP return once Shutdown has been called, whenever
// they start: after it, or racing it. Shutdown closes only the listeners
// the HTTP server has taken, and a Serve that came later served for ever
// (found by review on 2026-12-06: SIGTERM just after "listening on" left
// cmd/rpcedge running, 3 times in 20 with TLS).
func TestServeAfterShutdown(t *testing.T) {
	for _, transport := range []string{"fasthttp", "nethttp"} {
		serveOn := func(s *Server) func() error {
			ln := listen(t)
			if transport == "nethttp" {
				return func() error { return s.ServeNetHTTP(ln) }
			}
			return func() error { return s.Serve(ln) }
		}
		for round := range 30 {
			s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
			if err != nil {
				t.Fatal(err)
			}
			serve := serveOn(s)
			done := make(chan error, 1)
			if round%2 == 0 {
				// Shutdown first, then Serve.
				if err := s.Shutdown(context.Background()); err != nil {
					t.Fatalf("%s: Shutdown of a server not serving: %v", transport, err)
				}
				go func() { done <- serve() }()
			} else {
				// Racing.
				go func() { done <- serve() }()
				s.Shutdown(context.Background())
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s round %d: Serve returned %v, want nil", transport, round, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s round %d: Serve still serving 5 s after Shutdown", transport, round)
			}
		}
	}
}
