package reliability

// Requests with absent or unusual body framing, against the built
// cmd/rpcedge binary: the one-packet crash of a POST without
// Content-Length or Transfer-Encoding (issue #11) and every framing RFC
// 9112 §6 lets a client write. A crash of the binary fails the test: the
// next request finds nobody listening, and the exit status is checked.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rpcBinary is a running cmd/rpcedge.
type rpcBinary struct {
	cmd  *exec.Cmd
	addr string
	logs *syncBuffer
	done chan struct{} // closed when stderr ends (the process exited)
}

// startBinary builds cmd/rpcedge and starts it on a loopback port with
// args; it is killed when the test ends if still running.
func startBinary(t *testing.T, args ...string) *rpcBinary {
	t.Helper()
	bin := buildRPCEdge(t)
	if netHTTP {
		args = append([]string{"-transport", "nethttp"}, args...)
	}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	b := &rpcBinary{cmd: cmd, logs: new(syncBuffer), done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		defer close(b.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			b.logs.Write([]byte(line + "\n"))
			if a, ok := strings.CutPrefix(line, "listening on http://"); ok {
				addrc <- a
			} else if a, ok := strings.CutPrefix(line, "listening on https://"); ok {
				addrc <- a
			}
		}
	}()
	select {
	case b.addr = <-addrc:
	case <-time.After(20 * time.Second):
		t.Fatalf("no \"listening on\" line within 20 s; stderr:\n%s", b.logs.String())
	}
	return b
}

// alive fails the test if the process has exited.
func (b *rpcBinary) alive(t *testing.T) {
	t.Helper()
	select {
	case <-b.done:
		t.Fatalf("cmd/rpcedge exited; its log:\n%s", b.logs.String())
	default:
	}
}

// stop sends SIGTERM and checks that the process exits 0 within wait.
func (b *rpcBinary) stop(t *testing.T, wait time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("cmd/rpcedge exited with %v; its log:\n%s", err, b.logs.String())
		}
	case <-time.After(wait):
		t.Fatalf("cmd/rpcedge did not exit within %v of SIGTERM", wait)
	}
	return time.Since(start)
}

// rawExchange writes raw on a new connection, half-closes it, and reads
// every response until the server closes (or, for keep-alive answers,
// until the read deadline). It returns the responses' statuses, bodies and
// whether the connection ended cleanly.
type rawAnswer struct {
	status int
	body   []byte
	close  bool
}

func rawExchange(t *testing.T, addr, raw string, halfClose bool) []rawAnswer {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		t.Fatalf("dial: %v (the server is gone?)", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatalf("write: %v", err)
	}
	if halfClose {
		c.(*net.TCPConn).CloseWrite()
	}
	br := bufio.NewReader(c)
	var out []rawAnswer
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			if len(out) == 0 {
				t.Fatalf("no answer: %v", err)
			}
			return out
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out = append(out, rawAnswer{resp.StatusCode, body, resp.Close})
		if resp.StatusCode >= 200 && !halfClose {
			return out
		}
	}
}

// rpcCode returns the JSON-RPC error code of an answer body (0 for a
// result, -1 for a body that is not a JSON-RPC answer).
func rpcCode(body []byte) int {
	var a struct {
		JSONRPC string
		ID      json.RawMessage
		Error   *struct{ Code int }
		Result  json.RawMessage
	}
	if json.Unmarshal(body, &a) != nil || a.JSONRPC != "2.0" {
		return -1
	}
	if a.Error != nil {
		return a.Error.Code
	}
	return 0
}

// TestFramingAgainstBinary sends every framing variant to both endpoints
// of the built binary, checks each answer, checks after each that the
// process serves a valid call, and stops it with SIGTERM (exit 0).
func TestFramingAgainstBinary(t *testing.T) {
	b := startBinary(t, "-read-timeout", "2s")
	call := `{"jsonrpc":"2.0","id":"f1","method":"tools/call","params":{"name":"echo","arguments":{"text":"framing"}}}`
	send := `{"jsonrpc":"2.0","id":"f2","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"framing"}]}}}`
	type tc struct {
		name   string
		head   string // request line and header fields after the path
		body   string
		status int
		code   int // -1: plain text
		// netOK: net/http serves this one (200) where fasthttp refuses:
		// identical duplicate lengths (RFC 9112 §6.3 lets a recipient
		// accept them), obsolete line folding (replaced by a space, as
		// RFC 9112 §5.2 allows), trailer fields it keeps in
		// Request.Trailer. No check reads any of them.
		netOK bool
	}
	for _, ep := range []struct{ path, body, hdr string }{
		{"/mcp", call, "MCP-Protocol-Version: 2025-11-25\r\n"},
		{"/a2a", send, "A2A-Version: 1.0\r\n"},
	} {
		n := strconv.Itoa(len(ep.body))
		for _, q := range []string{"", "?x=1"} {
			cases := []tc{
				{"no length (curl -X POST)", " HTTP/1.1\r\nHost: h\r\nUser-Agent: curl/8\r\nAccept: */*\r\n\r\n", "", 400, -32700, false},
				{"no length, HTTP/1.0", " HTTP/1.0\r\nHost: h\r\n\r\n", "", 400, -32700, false},
				{"no length, HTTP/1.0 keep-alive", " HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\n\r\n", "", 400, -32700, false},
				{"no length, Expect", " HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n", "", 400, -32700, false},
				{"no length, gzip", " HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\n\r\n", "", 400, -32700, false},
				{"no length, JSON", " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n" + ep.hdr + "\r\n", "", 400, -32700, false},
				{"no length, text/plain", " HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\n\r\n", "", 415, -32600, false},
				{"Content-Length: 0", " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", "", 400, -32700, false},
				{"chunked, empty", " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", "0\r\n\r\n", 400, -32700, false},
				{"chunked with extensions and trailers", " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n" + ep.hdr + "Transfer-Encoding: chunked\r\n\r\n",
					strconv.FormatInt(int64(len(ep.body)), 16) + ";a=b\r\n" + ep.body + "\r\n0\r\nMcp-Method: tools/list\r\nA2A-Version: 9\r\nX-Sum: 1\r\n\r\n", 200, 0, false},
				{"chunked with a trailer RFC 9110 forbids", " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n" + ep.hdr + "Transfer-Encoding: chunked\r\n\r\n",
					strconv.FormatInt(int64(len(ep.body)), 16) + "\r\n" + ep.body + "\r\n0\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\n", 200, 0, false},
				{"Transfer-Encoding: identity", " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\nContent-Length: " + n + "\r\n\r\n", ep.body, 501, -1, false},
				{"Transfer-Encoding: gzip", " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", "", 501, -1, false},
				{"chunked and Content-Length", " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n", 400, -1, false},
				{"chunked on HTTP/1.0", " HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", "0\r\n\r\n", 400, -1, false},
				{"two lengths", " HTTP/1.1\r\nHost: h\r\nContent-Length: " + n + "\r\nContent-Length: " + n + "\r\n\r\n", ep.body, 400, -1, true},
				{"signed length", " HTTP/1.1\r\nHost: h\r\nContent-Length: +" + n + "\r\n\r\n", ep.body, 400, -1, false},
				{"obsolete line folding", " HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\nContent-Length: " + n + "\r\n\r\n", ep.body, 400, -1, true},
				{"length longer than the body", " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n", ep.body, 400, -32700, false},
			}
			for _, c := range cases {
				t.Run(ep.path+q+"/"+c.name, func(t *testing.T) {
					b.alive(t)
					as := rawExchange(t, b.addr, "POST "+ep.path+q+c.head+c.body, true)
					final := as[len(as)-1]
					if netHTTP && c.netOK {
						c.status, c.code = 200, 0
					}
					if final.status != c.status {
						t.Fatalf("answer %d %q, want %d", final.status, final.body, c.status)
					}
					if got := rpcCode(final.body); c.code != -1 && got != c.code {
						t.Errorf("answer %q: code %d, want %d", final.body, got, c.code)
					}
					// The process serves on, on a new connection.
					b.alive(t)
					ok := rawExchange(t, b.addr, "POST "+ep.path+" HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"+ep.hdr+
						"Content-Length: "+n+"\r\n\r\n"+ep.body, false)
					if ok[0].status != 200 || !bytes.Contains(ok[0].body, []byte("framing")) {
						t.Fatalf("a valid call after it: %d %q", ok[0].status, ok[0].body)
					}
					t.Logf("%-40s %d %s", c.name, final.status, bytes.TrimSpace(final.body))
				})
			}
		}
	}
	b.alive(t)
	if strings.Contains(b.logs.String(), "panic") {
		t.Errorf("the binary logged a panic:\n%s", b.logs.String())
	}
	b.stop(t, 15*time.Second)
}
