// Command floorserver is the benchmark floor for cmd/loadgen: a fasthttp
// handler that answers every POST with a fixed JSON-RPC template into which
// the request's id (and, when present, its arguments' "text") is spliced by
// a byte scan. It does no JSON parsing, so it costs about the same as a
// server that answers a constant, yet every answer it gives passes the
// checks of loadgen's default call shape (tools/call of tool echo).
//
// It is a measuring instrument, not a server: it trusts its input, answers
// 202 with no body when the request has no "id", and exits by itself after
// -for (default 10m) or on SIGINT/SIGTERM.
//
//	go run ./internal/loadgen/floorserver -addr 127.0.0.1:8080
//
// compare.sh beside this file runs it against cmd/loadgen and wrk.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (loopback only)")
	life := flag.Duration("for", 10*time.Minute, "exit after this long (0 means the default, 10m)")
	flag.Parse()
	if *life <= 0 {
		*life = 10 * time.Minute
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorserver: -addr:", err)
		os.Exit(2)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintln(os.Stderr, "floorserver: -addr must be a loopback address")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorserver:", err)
		os.Exit(1)
	}
	s := &fasthttp.Server{
		Handler:               handle,
		NoDefaultContentType:  true,
		NoDefaultServerHeader: true,
		NoDefaultDate:         true,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          10 * time.Second,
		IdleTimeout:           60 * time.Second,
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sig:
		case <-time.After(*life):
		}
		_ = s.Shutdown()
	}()
	fmt.Fprintln(os.Stderr, "floorserver: listening on", ln.Addr())
	if err := s.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "floorserver:", err)
		os.Exit(1)
	}
}

var (
	idKey   = []byte(`"id":`)
	textKey = []byte(`"text":"`)
	head    = []byte(`{"jsonrpc":"2.0","id":`)
	mid     = []byte(`,"result":{"content":[{"type":"text","text":"`)
	tail    = []byte(`"}]}}`)
	ctJSON  = []byte("application/json")
)

// handle splices the request's id and text into the answer template.
func handle(ctx *fasthttp.RequestCtx) {
	body := ctx.PostBody()
	i := bytes.Index(body, idKey)
	if i < 0 {
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		return
	}
	id := body[i+len(idKey):]
	j := 0
	for j < len(id) && id[j] != ',' && id[j] != '}' {
		j++
	}
	id = id[:j]
	var text []byte
	if k := bytes.Index(body, textKey); k >= 0 {
		text = body[k+len(textKey):]
		e := 0
		for e < len(text) && text[e] != '"' {
			if text[e] == '\\' {
				e++
			}
			e++
		}
		if e > len(text) {
			e = len(text)
		}
		text = text[:e]
	}
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	w := ctx.Response.BodyWriter()
	w.Write(head)
	w.Write(id)
	w.Write(mid)
	w.Write(text)
	w.Write(tail)
}
