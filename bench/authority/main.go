// Command authority is the authorization server of the load matrix's
// "rpcedge-auth" row: it serves RFC 8414 metadata and a JWKS on a loopback
// port (internal/authtest) and prints, on standard output, its issuer URL
// and one RS256 access token for -audience, valid for -ttl:
//
//	issuer http://127.0.0.1:PORT
//	token eyJ…
//
// The load generator sends that token with every request; the server
// verifies it once and finds it in its verified-token cache afterwards,
// which is what the row measures. It serves until SIGTERM or -for.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rpcedge/rpcedge/internal/authtest"
)

func main() {
	audience := flag.String("audience", "", "the token's aud (the resource identifier of the server under test)")
	ttl := flag.Duration("ttl", time.Hour, "the token's lifetime")
	scope := flag.String("scope", "", "the token's scope claim")
	limit := flag.Duration("for", 30*time.Minute, "stop after this long")
	flag.Parse()
	if *audience == "" {
		fmt.Fprintln(os.Stderr, "authority: -audience is required")
		os.Exit(2)
	}
	i := authtest.Start()
	defer i.Close()
	c := i.Claims(*audience, *scope)
	c["exp"] = time.Now().Add(*ttl).Unix()
	fmt.Printf("issuer %s\ntoken %s\n", i.URL, i.Token(c))
	fmt.Fprintf(os.Stderr, "listening on %s\n", i.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case <-time.After(*limit):
	}
}
