package servers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Path is where every candidate serves MCP.
const Path = "/mcp"

// Server is one candidate, ready to serve. It is safe for concurrent use.
type Server interface {
	// Serve serves connections from ln until Shutdown; it returns nil
	// after a shutdown.
	Serve(ln net.Listener) error
	// Shutdown stops the server: it stops accepting, lets requests in
	// flight finish and closes idle connections, within ctx.
	Shutdown(ctx context.Context) error
}

// The candidate names, as BenchmarkServe and cmd/benchserver spell them.
const (
	Rpcedge      = "rpcedge"
	SDK          = "mcp-go-sdk"
	Mark3labs    = "mark3labs"
	NetHTTPJSON  = "nethttp-json"
	FastHTTPJSON = "fasthttp-json"
	Floor        = "floor"

	// FloorStream is a diagnostic (see Diagnostics).
	FloorStream = "floor-stream"
	// FloorSpin is a diagnostic (see Diagnostics).
	FloorSpin = "floor-spin"
	// FloorWrap is a diagnostic (see Diagnostics).
	FloorWrap = "floor-wrap"
)

var constructors = map[string]func() (Server, error){
	Rpcedge:      newRpcedge,
	SDK:          newSDK,
	Mark3labs:    newMark3labs,
	NetHTTPJSON:  newNetHTTPJSON,
	FastHTTPJSON: newFastHTTPJSON,
	Floor:        newFloor,
	FloorStream:  newFloorStream,
	FloorSpin:    newFloorSpin,
	FloorWrap:    newFloorWrap,
}

// Names returns the candidate names in the order the reports list them.
func Names() []string {
	return []string{Rpcedge, SDK, Mark3labs, NetHTTPJSON, FastHTTPJSON, Floor}
}

// Diagnostics returns servers that are not candidates but help explain
// the differences between them: BenchmarkServe runs them, the load matrix
// does not. floor-stream is the floor behind fasthttp configured as
// rpcedge's fastserver configures it; floor-spin is floor-stream burning
// rpcedge's in-process pipeline cost per request (newFloorSpin);
// floor-wrap is floor-stream with each connection in a wrapper that
// changes nothing, as fastserver's Serve wraps them (newFloorWrap).
func Diagnostics() []string { return []string{FloorStream, FloorSpin, FloorWrap} }

// New returns the candidate or diagnostic called name.
func New(name string) (Server, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("servers: no candidate %q (have %v)", name, Names())
	}
	return c()
}

func init() {
	// Names, Diagnostics and constructors must list the same servers.
	all := append(Names(), Diagnostics()...)
	for _, n := range all {
		if constructors[n] == nil {
			panic("servers: " + n + " has no constructor")
		}
	}
	if len(constructors) != len(all) {
		panic("servers: a constructor is missing from Names or Diagnostics")
	}
}

// Timeouts shared by the net/http and fasthttp candidates: the same as
// rpcedge's defaults.
const (
	readTimeout  = 10 * time.Second
	writeTimeout = 10 * time.Second
	idleTimeout  = 60 * time.Second
	maxBody      = 1 << 20
)

// fastServer adapts a *fasthttp.Server.
type fastServer struct{ s *fasthttp.Server }

func (f fastServer) Serve(ln net.Listener) error        { return f.s.Serve(ln) }
func (f fastServer) Shutdown(ctx context.Context) error { return f.s.ShutdownWithContext(ctx) }

// ServeConn serves one connection (an in-memory one in the pipeline
// benchmark) with the server's configuration.
func (f fastServer) ServeConn(c net.Conn) error { return f.s.ServeConn(c) }

// httpServer adapts a *http.Server.
type httpServer struct{ s *http.Server }

func (h httpServer) Serve(ln net.Listener) error {
	if err := h.s.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (h httpServer) Shutdown(ctx context.Context) error { return h.s.Shutdown(ctx) }

// newHTTPServer serves h at Path with rpcedge's timeouts.
func newHTTPServer(h http.Handler) httpServer {
	mux := http.NewServeMux()
	mux.Handle(Path, gunzipBodies(h))
	return httpServer{&http.Server{
		Handler:           mux,
		ReadHeaderTimeout: readTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    8 << 10,
	}}
}

// gunzipBodies undoes a gzip request body before h reads it, as a net/http
// service adds it for the size sweep's GZIP=1: with the pooled klauspost
// reader the floors use (floorGunzip), like rpcedge's, so that the sweep
// compares the JSON work and not two inflaters; a body that does not
// inflate, or inflates past maxBody, is refused.
func gunzipBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
			h.ServeHTTP(w, r)
			return
		}
		wire, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		g := floorGunzips.Get().(*floorGunzip)
		defer floorGunzips.Put(g)
		var body []byte
		if err == nil {
			body = g.gunzip(wire)
		}
		if body == nil || len(body) > maxBody {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.Header.Del("Content-Encoding")
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}
