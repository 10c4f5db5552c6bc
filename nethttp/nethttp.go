// Package nethttp serves rpcedge's JSON-RPC endpoints on net/http: for a
// service that already runs net/http (a mux, chi, HTTP/2, TLS in process)
// and mounts /mcp and /a2a beside its own routes.
//
//	srv, h, err := nethttp.New(fastserver.Config{}, m.Endpoint(), a.Endpoint())
//	mux := http.NewServeMux()
//	mux.Handle("/mcp", h)
//	mux.Handle("/a2a", h)
//	mux.HandleFunc("/", myRoutes)
//	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
//	go hs.ListenAndServeTLS("cert.pem", "key.pem") // HTTP/2 too
//	// at shutdown: hs.Shutdown(ctx), then srv.Shutdown(ctx)
//
// The handler runs the same pipeline as package fastserver's fasthttp
// server — every row of rpcedge's wire contract in order, the body
// ceiling enforced while the body streams in, the in-flight budget, the
// minimum data rate, early answers, streamed answers (text/event-stream,
// flushed per batch), the panic guard and the metrics — because it is
// fastserver.Server.HTTPHandler. What belongs to net/http stays there:
// framing (net/http refuses what it cannot frame, and accepts identical
// duplicate lengths and obsolete line folding), connection limits,
// header size and timeouts (set them on your http.Server; or use
// fastserver.Server.ServeNetHTTP, which sets them from the Config).
//
// Early answers (a refusal decided with the body still arriving) take
// the HTTP/1.x connection (http.Hijacker) to answer, half-close, drain
// and close it, so a handler mounted behind middleware that wraps the
// ResponseWriter without Unwrap answers without the early close.
//
// Cost: each request is copied into a pooled fasthttp request (its
// header lines, one allocation each, and the request URI), on top of what
// net/http allocates per request; the fasthttp transport does neither.
package nethttp

import (
	"net/http"

	"github.com/rpcedge/rpcedge/fastserver"
)

// New returns a fastserver.Server for the endpoints (for Shutdown, Stats,
// HandleGET and metrics) and its http.Handler. The handler serves the
// endpoints' paths (POST, OPTIONS; 405 otherwise) and the server's GET
// routes (/healthz, /metrics, and those of HandleGET), wherever it is
// mounted: it routes by the request's path, which must be the endpoint's.
// Config works as for fastserver.New; its Addr, MaxConns, MaxHeaderBytes
// and timeouts apply only through Server.ServeNetHTTP.
func New(cfg fastserver.Config, endpoints ...*fastserver.Endpoint) (*fastserver.Server, http.Handler, error) {
	s, err := fastserver.New(cfg, endpoints...)
	if err != nil {
		return nil, nil, err
	}
	return s, s.HTTPHandler(), nil
}
