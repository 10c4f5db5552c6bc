// Command benchserver serves one candidate of the serving benchmarks
// (package servers) on a loopback address, for the load matrix of
// bench/run.sh:
//
//	go run ./servers/cmd/benchserver -name mcp-go-sdk -addr 127.0.0.1:18081
//
// It prints "listening on http://ADDR" to standard error once it accepts
// connections and exits 0 after SIGINT or SIGTERM, or by itself after -for
// (default 15m), so a forgotten one does not run on. It pins nothing and
// leaves GOMAXPROCS to the environment: run.sh uses taskset -c 1 and
// GOMAXPROCS=1.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rpcedge/rpcedge/bench/servers"
)

func main() {
	name := flag.String("name", "", "the candidate: "+strings.Join(servers.Names(), ", "))
	addr := flag.String("addr", "127.0.0.1:18080", "listen address (loopback only)")
	life := flag.Duration("for", 15*time.Minute, "exit after this long")
	flag.Parse()
	if flag.NArg() > 0 || *life <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		fmt.Fprintln(os.Stderr, "benchserver: -addr must be a loopback host:port")
		os.Exit(2)
	}
	s, err := servers.New(*name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchserver:", err)
			os.Exit(1)
		}
		return
	case <-sig:
	case <-time.After(*life):
		fmt.Fprintln(os.Stderr, "benchserver: -for elapsed, stopping")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver: shutdown:", err)
	}
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}
