package fuzz

// FuzzRawHTTP: arbitrary bytes — request lines, headers, framing, bodies,
// several requests pipelined — written onto a loopback TCP connection to a
// real fastserver.Server serving the demo MCP and A2A endpoints, then the
// write side is closed. Where FuzzServer builds polite requests and checks
// the contract's rows, this target writes what an attacker or a careless
// client writes, and checks that:
//
//   - the server never panics, recovered or not: no "panic serving a
//     request" in its log, every rpcedge_panics_total series 0;
//   - every byte that comes back parses as a sequence of HTTP/1.x
//     responses, each with a status the contract allows (rawStatuses);
//   - every JSON-RPC body is one answer object whose code fits its status
//     (rawCodes), and whose id is null when the status says the message
//     was never read as valid (400 with -32700, and every 403, 408, 413,
//     415, 429, 503);
//   - afterwards, a valid tools/call echo on a fresh connection is
//     answered 200 with its own id and text;
//   - every accepted request is answered: Stats().Entered ==
//     Stats().Answered once the connection is gone.
//
// The seeds are every body framing of RFC 9112 §6 (absent length,
// Content-Length 0, duplicate and conflicting lengths, signs and spaces,
// Transfer-Encoding lists, chunk extensions, trailers, obsolete line
// folding, bare LF, HTTP/1.0 with and without keep-alive, Expect variants,
// absolute-form targets, //mcp, query strings), repeated singleton fields,
// X-Forwarded-For and Forwarded lists, zstd frames declaring large
// windows, slow bodies sent in pieces (rawPause), and pipelines mixing
// them with valid calls.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// rawStatuses are the statuses the server may answer raw bytes with:
// the contract's (§1, §2, §3), the framing refusals of RFC 9112 (400,
// 501 for a transfer coding it does not implement) and 505 for a request
// line's HTTP version other than 1.x.
var rawStatuses = map[int]bool{
	100: true, 200: true, 202: true, 204: true,
	400: true, 403: true, 404: true, 405: true, 408: true, 413: true,
	415: true, 417: true, 429: true, 431: true, 501: true, 503: true,
	505: true,
}

// rawCodes are the JSON-RPC codes each status may carry (0: a result).
var rawCodes = map[int]map[int]bool{
	200: {0: true, -32601: true, -32602: true, -32001: true, -32002: true, -32003: true, -32004: true},
	400: {-32700: true, -32600: true, -32020: true, -32021: true, -32022: true, -32009: true, -32602: true},
	403: {-32600: true},
	404: {-32601: true},
	408: {-32600: true},
	413: {-32600: true},
	415: {-32600: true},
	429: {-32603: true},
	503: {-32603: true},
}

// rawServer is a fastserver on a loopback port with the demo endpoints.
type rawServer struct {
	srv  *fastserver.Server
	addr string
	log  *syncBuffer
}

func startRawServer(tb testing.TB) *rawServer {
	tb.Helper()
	m, err := demoMCP()
	if err != nil {
		tb.Fatal(err)
	}
	a, err := demoA2A()
	if err != nil {
		tb.Fatal(err)
	}
	logs := new(syncBuffer)
	cfg := fastserver.Config{
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
		ReadTimeout:  2 * time.Second,
		DrainTimeout: 100 * time.Millisecond,
	}
	srv, err := fastserver.New(cfg, m.Endpoint(), a.Endpoint())
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.HandleGET("/.well-known/agent-card.json", a.ServeCard); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return &rawServer{srv: srv, addr: ln.Addr().String(), log: logs}
}

// rawPause in a fuzz input marks a pause in its sending (exchange).
const rawPause = "\x00<pause>\x00"

// exchange writes raw on a new connection, closes the write side, and
// returns everything the server sent until it closed the connection.
func (s *rawServer) exchange(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		// The server may answer early and stop reading: write in the
		// background and ignore errors. rawPause splits the write into
		// pieces sent 30 ms apart (a slow body; at most 4 pauses).
		for i, piece := range bytes.SplitN(raw, []byte(rawPause), 5) {
			if i > 0 {
				time.Sleep(30 * time.Millisecond)
			}
			if _, err := tc.Write(piece); err != nil {
				break
			}
		}
		tc.CloseWrite()
	}()
	out, err := io.ReadAll(tc)
	if err != nil && !isReset(err) {
		tb.Fatalf("reading the answers: %v (after %d bytes)", err, len(out))
	}
	return out
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

func FuzzRawHTTP(f *testing.F) {
	for _, s := range rawSeeds() {
		f.Add([]byte(s))
	}
	srv := startRawServer(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := srv.exchange(t, raw)
		checkRawAnswers(t, raw, out)
		if logs := srv.log.Take(); strings.Contains(logs, "panic serving a request") {
			t.Fatalf("the server recovered a panic for %q:\n%s", raw, logs)
		}
		checkRawAfter(t, srv)
	})
}

// checkRawAnswers parses out as HTTP/1.x responses and checks each.
func checkRawAnswers(t *testing.T, raw, out []byte) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(out))
	for n := 0; ; n++ {
		if _, err := br.Peek(1); err == io.EOF {
			return
		}
		var resp fasthttp.Response
		if err := resp.Read(br); err != nil {
			t.Fatalf("answer %d does not parse as HTTP/1.x (%v)\nrequest: %q\nanswers: %q", n, err, raw, out)
		}
		st := resp.StatusCode()
		if !rawStatuses[st] {
			t.Fatalf("answer %d: status %d is not one the contract allows\nrequest: %q\nanswers: %q", n, st, raw, out)
		}
		if !bytes.HasPrefix(resp.Header.ContentType(), []byte("application/json")) || len(resp.Body()) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(resp.Body(), &m); err != nil {
			t.Fatalf("answer %d: a JSON body that is not an object: %q", n, resp.Body())
		}
		if _, ok := m["jsonrpc"]; !ok {
			if _, card := m["skills"]; !card || st != 200 {
				t.Fatalf("answer %d: a JSON body that is neither a JSON-RPC answer nor the agent card: %q", n, resp.Body())
			}
			continue
		}
		code := 0
		if e, ok := m["error"]; ok {
			var eo struct{ Code int }
			if err := json.Unmarshal(e, &eo); err != nil {
				t.Fatalf("answer %d: bad error object %q", n, resp.Body())
			}
			code = eo.Code
		} else if _, ok := m["result"]; !ok || st != 200 {
			t.Fatalf("answer %d: status %d with neither an error nor a result at 200: %q", n, st, resp.Body())
		}
		if len(m) != 3 || string(m["jsonrpc"]) != `"2.0"` {
			t.Fatalf("answer %d: not one JSON-RPC answer object: %q", n, resp.Body())
		}
		if !rawCodes[st][code] {
			t.Fatalf("answer %d: code %d does not fit status %d\nrequest: %q\nanswer: %q", n, code, st, raw, resp.Body())
		}
		nullOnly := st == 403 || st == 408 || st == 413 || st == 415 || st == 429 || st == 503 || (st == 400 && code == -32700)
		if nullOnly && string(m["id"]) != "null" {
			t.Fatalf("answer %d: a %d decided before the message was read carries id %s", n, st, m["id"])
		}
	}
}

// checkRawAfter checks that the server serves a valid call on a fresh
// connection and that every request it accepted was answered.
func checkRawAfter(t *testing.T, srv *rawServer) {
	t.Helper()
	id := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after ` + id + `"}}}`
	req := "POST /mcp HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
	out := srv.exchange(t, []byte(req))
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(bytes.NewReader(out))); err != nil || resp.StatusCode() != 200 ||
		!bytes.Contains(resp.Body(), []byte(`"id":`+id+`,`)) || !bytes.Contains(resp.Body(), []byte("after "+id)) {
		t.Fatalf("a valid call after the input: %v %d %q", err, resp.StatusCode(), resp.Body())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := srv.srv.Stats()
		if st.Entered == st.Answered {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests accepted and never answered", st.Entered-st.Answered)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// rawSeeds are the framings of RFC 9112 §6 and the contract's cases, on
// both endpoints.
func rawSeeds() []string {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	send := `{"jsonrpc":"2.0","id":"s","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}}`
	cl := func(b string) string { return "Content-Length: " + strconv.Itoa(len(b)) + "\r\n" }
	chunked := func(b string) string {
		return strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b + "\r\n0\r\n\r\n"
	}
	var seeds []string
	for _, ep := range []struct{ path, body, extra string }{
		{"/mcp", call, "MCP-Protocol-Version: 2025-11-25\r\n"},
		{"/a2a", send, "A2A-Version: 1.0\r\n"},
	} {
		p, b, x := ep.path, ep.body, ep.extra
		h := "Host: fuzz\r\nContent-Type: application/json\r\n" + x
		seeds = append(seeds,
			"POST "+p+" HTTP/1.1\r\nHost: fuzz\r\n\r\n",
			"POST "+p+" HTTP/1.0\r\nHost: fuzz\r\n\r\n",
			"POST "+p+" HTTP/1.0\r\nHost: fuzz\r\nConnection: keep-alive\r\n\r\n",
			"POST "+p+"?q=1 HTTP/1.1\r\nHost: fuzz\r\n\r\n",
			"POST "+p+" HTTP/1.1\r\nHost: fuzz\r\nExpect: 100-continue\r\n\r\n",
			"POST "+p+" HTTP/1.1\r\n"+h+"Expect: 100-continue\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Expect: 100-Continue\r\nContent-Type: text/plain\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.0\r\n"+h+"Expect: 100-continue\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\nHost: fuzz\r\nContent-Encoding: gzip\r\n\r\n",
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Length: 0\r\n\r\n",
			"POST "+p+" HTTP/1.1\r\n"+h+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+cl(b)+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Length: 3\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Length: +"+strconv.Itoa(len(b))+"\r\n\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Length:  "+strconv.Itoa(len(b))+" \r\n\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Length: 99999999999999999999\r\n\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: chunked\r\n\r\n"+chunked(b),
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: chunked\r\n"+cl(b)+"\r\n"+chunked(b),
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: identity\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: gzip, chunked\r\n\r\n"+chunked(b),
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"+chunked(b),
			"POST "+p+" HTTP/1.0\r\n"+h+"Transfer-Encoding: chunked\r\n\r\n"+chunked(b),
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: chunked\r\n\r\n"+strconv.FormatInt(int64(len(b)), 16)+";ext=\"v\"\r\n"+b+"\r\n0\r\n\r\n",
			"POST "+p+" HTTP/1.1\r\n"+h+"Transfer-Encoding: chunked\r\n\r\n"+strconv.FormatInt(int64(len(b)), 16)+"\r\n"+b+"\r\n0\r\nMcp-Method: tools/list\r\nContent-Type: text/plain\r\n\r\n",
			"POST "+p+" HTTP/1.1\r\n"+h+"X-Folded: a\r\n b\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\n"+strings.ReplaceAll(h, "\r\n", "\n")+cl(b)[:len(cl(b))-2]+"\n\n"+b,
			"POST http://fuzz"+p+" HTTP/1.1\r\n"+h+cl(b)+"\r\n"+b,
			"POST /"+p+" HTTP/1.1\r\n"+h+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Origin: http://localhost\r\nOrigin: http://localhost\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Type: application/json\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Type: application/json; charset=latin1\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"X-Forwarded-For: 1.2.3.4\r\nX-Forwarded-For: 5.6.7.8, 9.9.9.9\r\n"+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+cl(b)+"\r\n"+b+"POST "+p+" HTTP/1.1\r\nHost: fuzz\r\n\r\n"+"POST "+p+" HTTP/1.1\r\n"+h+cl(b)+"\r\n"+b,
			"POST "+p+" HTTP/1.1\r\n"+h+"Content-Length: 500\r\n\r\n"+b,
			"GET "+p+" HTTP/1.1\r\nHost: fuzz\r\n"+cl(b)+"\r\n"+b,
			"OPTIONS "+p+" HTTP/1.1\r\nHost: fuzz\r\nOrigin: http://localhost\r\n\r\n",
		)
	}
	// zstd frames declaring large windows (RFC 9659's 8 MiB, the CLI's
	// 2 MiB on a pipe, 9 MiB over it), whole and cut inside a block.
	zf := func(wd byte, body string, last bool) string {
		bh := uint32(len(body)) << 3
		if last {
			bh |= 1
		}
		return string([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, wd, byte(bh), byte(bh >> 8), byte(bh >> 16)}) + body
	}
	zh := "Host: fuzz\r\nContent-Type: application/json\r\nContent-Encoding: zstd\r\n"
	for _, z := range []string{zf(0x68, call, true), zf(0x58, call, true), zf(0x69, call, true), zf(0x68, call[:20], false), zf(0x68, call, true) + zf(0x50, call, true)} {
		seeds = append(seeds, "POST /mcp HTTP/1.1\r\n"+zh+cl(z)+"\r\n"+z)
	}
	half := len(call) / 2
	seeds = append(seeds,
		// Repeated singleton fields: two Mcp-Name lines, two Origin lines
		// (one not allowed); Forwarded lists on several lines.
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Name: echo\r\nMcp-Name: add\r\nContent-Type: application/json\r\n"+cl(call)+"\r\n"+call,
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nOrigin: http://localhost\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\n"+cl(call)+"\r\n"+call,
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nForwarded: for=1.2.3.4\r\nForwarded: for=\"[2001:db8::1]:80\", for=5.6.7.8;proto=http\r\nContent-Type: application/json\r\n"+cl(call)+"\r\n"+call,
		// Slow bodies: sent in pieces with pauses between them.
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n"+cl(call)+"\r\n"+call[:half]+rawPause+call[half:],
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+chunked(call)[:half]+rawPause+chunked(call)[half:],
		"POST /mcp HTTP/1.1\r\n"+zh+cl(zf(0x68, call, true))+"\r\n"+zf(0x68, call, true)[:7]+rawPause+zf(0x68, call, true)[7:],
	)
	// Answers larger than the server's 16 KiB write buffer (whose first
	// write is held to go out with the next, fastserver conns.go): alone,
	// pipelined with answers between one and two buffers (the rest of
	// each waits in fasthttp's buffer while the next is served), with a
	// small call and a card between them, and with a slow body.
	bigCall := func(id, n int) string {
		b := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("w", n) + `"}}}`
		return "POST /mcp HTTP/1.1\r\nHost: fuzz\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Type: application/json\r\n" + cl(b) + "\r\n" + b
	}
	card := "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: fuzz\r\n\r\n"
	small := "POST /mcp HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n" + cl(call) + "\r\n" + call
	seeds = append(seeds,
		bigCall(1, 20000),
		bigCall(1, 17000)+bigCall(2, 20000)+bigCall(3, 40000),
		bigCall(1, 24000)+small+bigCall(2, 24000)+card+bigCall(3, 16500),
		bigCall(1, 30000)[:200]+rawPause+bigCall(1, 30000)[200:]+bigCall(2, 30000),
	)
	seeds = append(seeds,
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nMcp-Method: tools/call\r\nMcp-Method: tools/list\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Type: application/json\r\n"+cl(call)+"\r\n"+call,
		"POST /mcp HTTP/1.1\r\nHost: fuzz\r\nMCP-Protocol-Version: 2025-11-25\r\nMCP-Protocol-Version: 2025-11-25\r\n"+cl(call)+"\r\n"+call,
		"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: fuzz\r\n\r\n",
		"GET /healthz HTTP/1.0\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"\r\n\r\nPOST /mcp HTTP/1.1\r\nHost: fuzz\r\n\r\n",
		"POST /mcp HTTP/9.9\r\nHost: fuzz\r\n\r\n",
		"POST /mcp\r\n\r\n",
		"",
	)
	return seeds
}
