package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// echoServer answers echo calls correctly, except that every wrongEvery-th
// answer carries a different id. It returns its base URL.
func echoServer(t *testing.T, wrongEvery int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	s := &fasthttp.Server{NoDefaultContentType: true, Handler: func(ctx *fasthttp.RequestCtx) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(ctx.PostBody(), &msg); err != nil {
			ctx.SetStatusCode(400)
			return
		}
		id := msg.ID
		if k := n.Add(1); wrongEvery > 0 && k%wrongEvery == 0 {
			id = json.RawMessage(`"wrong"`)
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
			"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": msg.Params.Arguments.Text}}}})
		ctx.SetContentType("application/json")
		ctx.SetBody(b)
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = s.Shutdown()
		<-done
	})
	return "http://" + ln.Addr().String()
}

type result struct {
	code           int
	stdout, stderr string
}

func runCmd(t *testing.T, e env, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e.stdout, e.stderr = &out, &errb
	e.shared = true // the test servers run in this process
	code := run(context.Background(), args, e)
	return result{code, out.String(), errb.String()}
}

func TestExitCodes(t *testing.T) {
	right := echoServer(t, 0) + "/mcp"
	wrong := echoServer(t, 100) + "/mcp"
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"all right", []string{"-url", right, "-n", "500", "-c", "4"}, 0},
		{"wrong ids", []string{"-url", wrong, "-n", "1000", "-c", "4"}, 1},
		{"help", []string{"-h"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := runCmd(t, env{}, tc.args...); r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout %s\nstderr %s", r.code, tc.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestWrongIDsJSON: 1 answer in 100 with a wrong id is reported exactly,
// in the JSON report, and the exit status is 1.
func TestWrongIDsJSON(t *testing.T) {
	url := echoServer(t, 100) + "/mcp"
	r := runCmd(t, env{}, "-url", url, "-n", "3000", "-c", "8", "-json")
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct {
		OK           uint64            `json:"ok"`
		Wrong        uint64            `json:"wrong"`
		WrongByClass map[string]uint64 `json:"wrong_by_class"`
		ExitCode     int               `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if rep.WrongByClass["id"] != 30 || rep.Wrong != 30 || rep.OK != 2970 || rep.ExitCode != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	body := filepath.Join(dir, "b.json")
	if err := os.WriteFile(body, []byte(`{"jsonrpc":"2.0","method":"ping"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown flag", []string{"-bogus"}, "flag provided but not defined: -bogus"},
		{"argument", []string{"extra"}, `unexpected argument "extra"`},
		{"zero connections", []string{"-c", "0"}, "-c 0: want at least 1 connection"},
		{"bad duration", []string{"-d", "soon"}, `invalid value "soon" for flag -d`},
		{"zero duration", []string{"-d", "0s"}, "-d 0s: want a positive duration"},
		{"negative count", []string{"-n", "-5"}, "-n -5"},
		{"negative rate", []string{"-rate", "-1"}, "-rate -1"},
		{"mix shape", []string{"-mix", "call=1,teapot=2"}, `unknown shape "teapot"`},
		{"mix weight", []string{"-mix", "call=lots"}, `weight of call is "lots"`},
		{"mix zero", []string{"-mix", "call=0"}, "every weight is 0"},
		{"header", []string{"-header", "NoColon"}, `invalid value "NoColon" for flag -header`},
		{"header reserved", []string{"-header", "Connection: close"}, "Connection is written by loadgen"},
		{"accept-encoding", []string{"-header", "Accept-Encoding: gzip"}, "Accept-Encoding: loadgen does not decompress answers"},
		{"url scheme", []string{"-url", "https://127.0.0.1/mcp"}, "only http:// URLs"},
		{"mcp version", []string{"-mcp-version", "1999-01-01"}, "want one of 2026-07-28"},
		{"engine", []string{"-engine", "magic"}, `-engine "magic"`},
		{"timeout", []string{"-timeout", "0s"}, "-timeout 0s"},
		{"drain", []string{"-drain", "0s"}, "-drain 0s: want a positive duration"},
		{"give-up", []string{"-give-up", "0s"}, "-give-up 0s: want a positive duration"},
		{"negative spin", []string{"-spin", "-1ms"}, "-spin -1ms: want 0 (never) to 10ms"},
		{"spin too long", []string{"-spin", "11ms"}, "-spin 11ms"},
		{"body missing", []string{"-body", filepath.Join(dir, "nope.json")}, "-body: open"},
		{"body and mix", []string{"-body", body, "-mix", "call=1"}, "-body and -mix cannot be used together"},
		{"gzip without body", []string{"-gzip"}, "-gzip needs -body"},
		{"text size", []string{"-text-size", "-3"}, "-text-size -3: want 0 (short texts) to 65536 bytes"},
		{"text size too big", []string{"-text-size", "65537"}, "-text-size 65537"},
		{"text size and body", []string{"-text-size", "176", "-body", body}, "-text-size sizes the built-in calls' texts"},
		{"hist dir", []string{"-hist", filepath.Join(dir, "no", "such", "dir.hgrm")}, "-hist:"},
		{"self without server", []string{"-self"}, "-self is not available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, env{}, tc.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2", r.code)
			}
			if !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("stderr %q, want it to mention %q", r.stderr, tc.msg)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := runCmd(t, env{}, "-url", "http://"+addr+"/mcp", "-n", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot connect") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

// TestSelfHook: -self runs against whatever the hook starts, on the path
// of -url, and stops it afterwards.
func TestSelfHook(t *testing.T) {
	base := echoServer(t, 0)
	stopped := false
	e := env{self: func() (string, func(), error) { return base, func() { stopped = true }, nil }}
	r := runCmd(t, e, "-self", "-n", "100", "-c", "2", "-json")
	if r.code != 0 || !stopped || !strings.Contains(r.stdout, `"url": "`+base+`/mcp"`) {
		t.Errorf("exit %d stopped %v\n%s\n%s", r.code, stopped, r.stdout, r.stderr)
	}
}

func TestHistAndText(t *testing.T) {
	url := echoServer(t, 0) + "/mcp"
	hist := filepath.Join(t.TempDir(), "lat.hgrm")
	r := runCmd(t, env{}, "-url", url, "-n", "300", "-c", "2", "-hist", hist)
	if r.code != 0 || !strings.Contains(r.stdout, "right 300, wrong 0") || r.stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(hist)
	if err != nil || !strings.Contains(string(b), "Value\tPercentile\tTotalCount") || !strings.Contains(string(b), "Total count    =          300") {
		t.Errorf("hgrm %v:\n%s", err, b)
	}
}

// TestLiveLine: on a terminal a progress line is written each second;
// elsewhere nothing.
func TestLiveLine(t *testing.T) {
	url := echoServer(t, 0) + "/mcp"
	r := runCmd(t, env{terminal: true}, "-url", url, "-d", "1300ms", "-c", "2", "-rate", "200")
	if r.code != 0 || !strings.Contains(r.stderr, "req/s") || !strings.Contains(r.stderr, "wrong 0") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	start := time.Now()
	r = runCmd(t, env{}, "-url", url, "-d", "1100ms", "-c", "2", "-rate", "200")
	if r.code != 0 || r.stderr != "" || time.Since(start) < time.Second {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

// TestGiveUp: with -n and no -d, a server that dies makes loadgen give up
// after -give-up without an answer, saying so on stderr, exit status 1.
func TestGiveUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(202) }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ln)
	}()
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = s.Shutdown()
	}()
	t.Cleanup(func() { <-done })
	start := time.Now()
	r := runCmd(t, env{}, "-url", "http://"+ln.Addr().String()+"/mcp", "-n", "10000000", "-c", "2", "-mix", "notify=1", "-give-up", "1s", "-json")
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the run took %v", el)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "loadgen: no answer for 1s while requests failed") || !strings.Contains(r.stdout, `"aborted": "loadgen: no answer`) {
		t.Errorf("exit %d\nstderr %s\nstdout %.500s", r.code, r.stderr, r.stdout)
	}
}
