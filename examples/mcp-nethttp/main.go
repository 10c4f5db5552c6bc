// Command mcp-nethttp mounts an MCP endpoint on a net/http mux beside a
// route of its own, over TLS (HTTP/2 included) when -tls-cert is given,
// and as an OAuth 2.1 protected resource when -auth-issuer is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/rpcedge/rpcedge/nethttp"
)

// AddIn is the add tool's arguments; its input schema is derived from
// this type (the json tags name the members).
type AddIn struct {
	A int64 `json:"a"`
	B int64 `json:"b"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "listen address")
	cert, key := flag.String("tls-cert", "", "PEM certificate"), flag.String("tls-key", "", "PEM key")
	issuer := flag.String("auth-issuer", "", "OAuth issuer whose tokens /mcp requires (empty: none)")
	resource := flag.String("resource", "https://127.0.0.1:8443/mcp", "this endpoint's resource identifier")
	flag.Parse()
	var opts []mcp.Option
	var res *auth.Resource
	if *issuer != "" {
		iss, err := auth.NewIssuer(auth.IssuerConfig{URL: *issuer})
		if err == nil {
			res, err = auth.NewResource(iss, auth.ResourceConfig{Resource: *resource})
		}
		if err != nil {
			log.Fatal(err)
		}
		opts = append(opts, mcp.WithAuth(res))
	}
	s, err := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"}, opts...)
	if err != nil {
		log.Fatal(err)
	}
	mcp.AddTool(s, mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(_ context.Context, _ *mcp.Call, in AddIn) (int64, error) { return in.A + in.B, nil })
	srv, h, err := nethttp.New(fastserver.Config{}, s.Endpoint())
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	if res != nil { // RFC 9728 metadata, public
		srv.HandleGET(res.MetadataPath(), res.ServeMetadata)
		mux.Handle(res.MetadataPath(), h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "the service's own route") })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", ln.Addr())
	serve := func() error { return hs.Serve(ln) }
	if *cert != "" {
		serve = func() error { return hs.ServeTLS(ln, *cert, *key) }
	}
	go func() {
		if err := serve(); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	hs.Shutdown(context.Background()) // stop accepting; requests in flight go on
	if err := srv.Shutdown(context.Background()); err != nil {
		log.Fatal(err)
	}
}
