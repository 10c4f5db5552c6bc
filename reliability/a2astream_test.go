package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// a2aStream is an A2A event stream read by a test client.
type a2aStream struct {
	resp *http.Response
	br   *bufio.Reader
}

// openA2AStream POSTs body to /a2a asking for text/event-stream. It
// returns the stream, or the plain answer's status and body.
func openA2AStream(addr, body string) (*a2aStream, int, string, error) {
	req, _ := http.NewRequest("POST", "http://"+addr+"/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, "", err
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, resp.StatusCode, string(b), nil
	}
	return &a2aStream{resp: resp, br: bufio.NewReader(resp.Body)}, resp.StatusCode, "", nil
}

// next returns the next event's result; nil, nil at the end of the stream.
func (s *a2aStream) next() (map[string]any, error) {
	var data string
	for {
		line, err := s.br.ReadString('\n')
		if err == io.EOF && line == "" && data == "" {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" && data != "" {
			break
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data += d
		}
	}
	var ev struct {
		Result map[string]any
		Error  any
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Result == nil {
		return nil, fmt.Errorf("event without a result: %s", data)
	}
	return ev.Result, nil
}

// TestA2AStreamsAtSIGTERM opens A2A streams on the cmd/rpcedge binary
// (tasks of the wait and stream skills, and subscriptions to them, both
// wire versions), checks the -max-streams bound (503 with Retry-After),
// then sends SIGTERM: every stream ends at once with the task's current
// status as its last event (0.3: final: true) and a clean end of body;
// the process exits 0 well within the grace period, having answered
// every request it entered.
func TestA2AStreamsAtSIGTERM(t *testing.T) {
	bin := buildRPCEdge(t)
	const grace, maxStreams = 10 * time.Second, 12
	args := []string{"-addr", "127.0.0.1:0", "-grace", grace.String(), "-max-streams", fmt.Sprint(maxStreams)}
	if netHTTP {
		args = append(args, "-transport", "nethttp") // the same streams on the other transport
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var logs syncBuffer
	addrc := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if a, ok := strings.CutPrefix(sc.Text(), "listening on http://"); ok {
				addrc <- a
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(10 * time.Second):
		t.Fatalf("no \"listening on\" line; stderr:\n%s", logs.String())
	}

	type open struct {
		s       *a2aStream
		version string
	}
	var streams []open
	var taskIDs []string
	for i := range maxStreams / 2 {
		skill, meta := "wait", `"seconds":120`
		if i%2 == 1 {
			skill, meta = "stream", `"chunks":1000,"delayMs":300`
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendStreamingMessage","params":{"metadata":{"skillId":%q,%s},"message":{"role":"ROLE_USER","messageId":"m%d","parts":[{"text":"a long text to stream slowly, %d"}]}}}`, i, skill, meta, i, i)
		s, st, b, err := openA2AStream(addr, body)
		if err != nil || s == nil {
			t.Fatalf("stream %d: %v %d %s", i, err, st, b)
		}
		first, err := s.next()
		id, _ := first["task"].(map[string]any)["id"].(string)
		if err != nil || id == "" {
			t.Fatalf("stream %d: first event %v %v", i, first, err)
		}
		streams = append(streams, open{s, "1.0"})
		taskIDs = append(taskIDs, id)
	}
	for i, id := range taskIDs {
		s, st, b, err := openA2AStream(addr, fmt.Sprintf(`{"jsonrpc":"2.0","id":"sub%d","method":"tasks/resubscribe","params":{"id":%q}}`, i, id))
		if err != nil || s == nil {
			t.Fatalf("subscribe %d: %v %d %s", i, err, st, b)
		}
		if first, err := s.next(); err != nil || first["kind"] != "task" || first["id"] != id {
			t.Fatalf("subscribe %d: first event %v %v", i, first, err)
		}
		streams = append(streams, open{s, "0.3"})
	}
	// Past -max-streams: 503, Retry-After, and no task created.
	if s, st, b, err := openA2AStream(addr, `{"jsonrpc":"2.0","id":99,"method":"SubscribeToTask","params":{"id":"`+taskIDs[0]+`"}}`); err != nil || s != nil || st != 503 || !strings.Contains(b, "-32603") {
		t.Errorf("past -max-streams: %v %d %s", err, st, b)
	}

	sigAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	for i, o := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last map[string]any
			for {
				ev, err := o.s.next()
				if err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("stream %d: %v", i, err))
					mu.Unlock()
					return
				}
				if ev == nil {
					break
				}
				last = ev
			}
			ok := false
			if o.version == "1.0" {
				st, _ := last["statusUpdate"].(map[string]any)
				ok = st != nil && st["status"].(map[string]any)["state"] == "TASK_STATE_WORKING"
			} else {
				ok = last["kind"] == "status-update" && last["final"] == true && last["status"].(map[string]any)["state"] == "working"
			}
			if !ok {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("stream %d (%s): last event %v", i, o.version, last))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	ended := time.Since(sigAt)
	exited := make(chan error, 1)
	go func() { <-logDone; exited <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(grace + 5*time.Second):
		t.Fatalf("no exit within the grace period; stderr:\n%s", logs.String())
	}
	exitAfter := time.Since(sigAt)
	for _, p := range problems {
		t.Error(p)
	}
	if waitErr != nil {
		t.Errorf("exit: %v; stderr:\n%s", waitErr, logs.String())
	}
	if ended > grace/2 || exitAfter > grace/2 {
		t.Errorf("streams ended %v and the process exited %v after SIGTERM: want well within the grace period %v", ended, exitAfter, grace)
	}
	m := regexp.MustCompile(`msg=stopped entered=(\d+) answered=(\d+)`).FindStringSubmatch(logs.String())
	if m == nil || m[1] != m[2] {
		t.Errorf("server counts %v; stderr:\n%s", m, logs.String())
	}
	t.Logf("%d streams open at SIGTERM: all ended with their current status after %v; exit 0 after %v (grace %v)", len(streams), ended.Round(time.Millisecond), exitAfter.Round(time.Millisecond), grace)
}
