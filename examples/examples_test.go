// Package examples holds runnable programs embedders copy from; this test
// builds each one and drives it as a user would.
package examples

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/testcert"
)

// build compiles ./name into a temporary directory.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "./"+name).CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", name, err, out)
	}
	return bin
}

var listening = regexp.MustCompile(`listening (?:on |addr=)(?:https?://)?([0-9.:\[\]]+)`)

// start runs a server example and returns its address; the test ends it
// with SIGTERM and checks that it exits 0.
func start(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	var logs strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s exited with %v after SIGTERM:\n%s", bin, err, logs.String())
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s did not stop within 15 s of SIGTERM", bin)
		}
	})
	select {
	case a := <-addr:
		return a
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no listening line", bin)
	}
	return ""
}

// post sends body to url and returns the status and answer.
func post(t *testing.T, c *http.Client, url, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func expect(t *testing.T, status int, body string, wantStatus int, wantIn string) {
	t.Helper()
	if status != wantStatus || !strings.Contains(body, wantIn) {
		t.Errorf("answer %d %s, want %d containing %s", status, body, wantStatus, wantIn)
	}
}

// The two-tool service takes no more lines than on the official MCP Go
// SDK (51, TARGETS.md): an embedder writes no more to get rpcedge.
func TestMCPServerLines(t *testing.T) {
	b, err := os.ReadFile("mcp-server/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 51 {
		t.Errorf("examples/mcp-server is %d lines, more than the official SDK's 51 for the same service", n)
	}
}

func TestMCPServer(t *testing.T) {
	addr := start(t, build(t, "mcp-server"), "-addr", "127.0.0.1:0")
	u := "http://" + addr + "/mcp"
	c := http.DefaultClient
	st, b := post(t, c, u, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}`)
	expect(t, st, b, 200, `"text":"42"`)
	st, b = post(t, c, u, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":99999999999999999999,"b":1}}}`)
	expect(t, st, b, 200, `"code":-32602`)
	st, b = post(t, c, u, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"mcp"}}}`)
	expect(t, st, b, 200, `a protocol`)
	st, b = post(t, c, u, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"MCP!"}}}`)
	expect(t, st, b, 200, `"code":-32602`)
}

func TestMCPNetHTTP(t *testing.T) {
	dir := t.TempDir()
	cert, key, err := testcert.Write(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	addr := start(t, build(t, "mcp-nethttp"), "-addr", "127.0.0.1:0", "-tls-cert", cert, "-tls-key", key)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	st, b := post(t, c, "https://"+addr+"/mcp", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
	expect(t, st, b, 200, `"text":"3"`)
	resp, err := c.Get("https://" + addr + "/other")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || !strings.Contains(string(own), "own route") {
		t.Errorf("the service's own route: %s %q", resp.Proto, own)
	}
}

func TestMCPTasks(t *testing.T) {
	addr := start(t, build(t, "mcp-tasks"), "-addr", "127.0.0.1:0", "-work", "1s")
	u := "http://" + addr + "/mcp"
	c := http.DefaultClient
	meta := func(caps string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	}
	tasks := meta(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	hdr := func(method, name string) []string {
		return []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name}
	}
	// A client without the extension waits on the request.
	st, b := post(t, c, u, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"report","arguments":{"month":"2026-11"},`+meta(`{}`)+`}}`, hdr("tools/call", "report")...)
	expect(t, st, b, 200, `"structuredContent":{"month":"2026-11","orders":700}`)
	// A bad month is refused on the request, before any task.
	st, b = post(t, c, u, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"report","arguments":{"month":"Nov"},`+tasks+`}}`, hdr("tools/call", "report")...)
	expect(t, st, b, 200, `"isError":true`)
	// One that declares it gets a task, then its result.
	st, b = post(t, c, u, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"report","arguments":{"month":"2026-10"},`+tasks+`}}`, hdr("tools/call", "report")...)
	expect(t, st, b, 200, `"resultType":"task"`)
	id := regexp.MustCompile(`"taskId":"([^"]+)"`).FindStringSubmatch(b)
	if id == nil {
		t.Fatalf("no taskId in %s", b)
	}
	// The task may be polled before its goroutine has reported progress:
	// a working task has no statusMessage or "counting orders", and the
	// message is seen at least once during the second of work.
	seen := false
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, b = post(t, c, u, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"`+id[1]+`",`+tasks+`}}`, hdr("tasks/get", id[1])...)
		if strings.Contains(b, `"status":"completed"`) {
			expect(t, st, b, 200, `"structuredContent":{"month":"2026-10","orders":700}`)
			if !seen {
				t.Errorf("no poll of the working task showed its progress message")
			}
			break
		}
		expect(t, st, b, 200, `"status":"working"`)
		if strings.Contains(b, `"statusMessage"`) {
			expect(t, st, b, 200, `"statusMessage":"counting orders"`)
			seen = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(m), `rpcedge_mcp_tasks{status="completed"} 1`) {
		t.Errorf("/metrics: no completed task in\n%s", m)
	}
}

func TestA2AAgent(t *testing.T) {
	addr := start(t, build(t, "a2a-agent"), "-addr", "127.0.0.1:0")
	st, b := post(t, http.DefaultClient, "http://"+addr+"/a2a",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hello"}]}}}`, "A2A-Version", "1.0")
	expect(t, st, b, 200, `"text":"HELLO"`)
	resp, err := http.Get("http://" + addr + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	card, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(card), `"name":"shouter"`) {
		t.Errorf("card %s", card)
	}
}

// run pipes input to a stdin/stdout example and returns its output.
func run(t *testing.T, bin, input string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(input)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return string(out)
}

func TestDecodeStream(t *testing.T) {
	got := run(t, build(t, "decode-stream"), `{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/call","params":{}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":[1,}}
[{"jsonrpc":"2.0","id":8,"method":"y"}]
{"jsonrpc":"2.0","id":"last","method":"z"}
`)
	// The reasons are for people; the codes and ids are the contract.
	want := []string{
		"^request tools/call id=12345678901234567890123$",
		"^notification notifications/initialized id=$",
		`^error -32700: .* \(id null\)$`,
		`^error -32600: .* \(id null\)$`,
		`^request z id="last"$`,
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got\n%s", got)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d: %q, want %s", i+1, lines[i], w)
		}
	}
}

func TestStdio(t *testing.T) {
	got := run(t, build(t, "stdio"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over stdio"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
not json
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"text":"over stdio"`) || !strings.Contains(lines[1], `-32700`) || !strings.Contains(lines[2], `"name":"echo"`) {
		t.Errorf("answers:\n%s", got)
	}
}

// TestStdioProgress: the stdio example's count tool writes a progress
// line per step, before its answer.
func TestStdioProgress(t *testing.T) {
	n := 2 + rand.IntN(5)
	token := fmt.Sprintf("tok-%d", rand.IntN(1e6))
	got := run(t, build(t, "stdio"), fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count","arguments":{"to":%d},"_meta":{"progressToken":%q}}}
`, n, token))
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != n+1 {
		t.Fatalf("%d lines, want %d progress lines and the answer:\n%s", len(lines), n, got)
	}
	for i, l := range lines[:n] {
		if !strings.Contains(l, `"method":"notifications/progress"`) || !strings.Contains(l, `"progressToken":"`+token+`"`) || !strings.Contains(l, fmt.Sprintf(`"progress":%d,"total":%d`, i+1, n)) {
			t.Errorf("progress line %d: %s", i, l)
		}
	}
	if !strings.Contains(lines[n], `"id":7`) || !strings.Contains(lines[n], fmt.Sprintf("counted to %d", n)) {
		t.Errorf("answer: %s", lines[n])
	}
}
