package reliability

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/loadgen"
)

// buildRPCEdge builds cmd/rpcedge into a temporary directory.
func buildRPCEdge(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build cmd/rpcedge: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "rpcedge")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/rpcedge")
	cmd.Dir = ".." // the repository root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/rpcedge: %v\n%s", err, out)
	}
	return bin
}

// shutdownTally counts what the clients saw.
type shutdownTally struct {
	mu       sync.Mutex
	sent     int // requests written (in full or in part)
	answered int // complete, right answers
	wrong    []string
	partial  int // some bytes of an answer, then the connection ended
	never    int // no byte of an answer: never accepted
	refused  int // connection attempts refused once the server stopped listening
}

// TestShutdownUnderLoad sends SIGTERM to the cmd/rpcedge binary while 64
// connections (16 under -short) drive it: three quarters are the test's
// own clients sending echo calls, one in eight uploading a 256 KiB text
// in pieces (so that requests are accepted with their body still
// arriving); a quarter are loadgen's, with every request shape, 2,000
// requests/s. Every
// request that got any answer got a complete and right one (loadgen:
// no wrong answer but transport errors; test clients: no answer cut
// short); the clients' count of complete answers equals the server's own
// counts of requests entered and answered (its "stopped entered=N
// answered=N" log line), so every accepted request was answered and
// every answer arrived; the process exits 0 within the grace period.
func TestShutdownUnderLoad(t *testing.T) {
	conns, load := 64, time.Second
	if testing.Short() {
		conns, load = 16, 500*time.Millisecond
	}
	needFiles(t, uint64(conns+100))
	bin := buildRPCEdge(t)
	const grace = 5 * time.Second
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-grace", grace.String(), "-read-timeout", "2s", "-idle-timeout", "5s")
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
			line := sc.Text()
			logs.Write([]byte(line + "\n"))
			if a, ok := strings.CutPrefix(line, "listening on http://"); ok {
				addrc <- a
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(10 * time.Second):
		t.Fatalf("no \"listening on\" line within 10 s; stderr:\n%s", logs.String())
	}

	// A quarter of the connections are loadgen's, with every request
	// shape (notifications, early refusals that close the connection);
	// the rest are the test's own clients, which tell an answer cut short
	// from a request never accepted.
	lgConns := conns / 4
	mix, err := loadgen.ParseMix(soakMix)
	if err != nil {
		t.Fatal(err)
	}
	lgCtx, lgCancel := context.WithCancel(context.Background())
	defer lgCancel()
	type lgResult struct {
		rep *loadgen.Report
		err error
	}
	lgDone := make(chan lgResult, 1)
	go func() {
		// An open loop: a closed one would take the CPU from the
		// test's clients, which then stall mid-upload.
		rep, err := loadgen.Run(lgCtx, loadgen.Config{
			URL: "http://" + addr + "/mcp", Connections: lgConns, Duration: time.Minute,
			Rate: 2000, Mix: mix, Timeout: ioTimeout, SharedProcess: true,
		}, nil)
		lgDone <- lgResult{rep, err}
	}()

	var tally shutdownTally
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range conns - lgConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shutdownClient(addr, w, stop, &tally)
		}()
	}
	time.Sleep(load)
	tally.mu.Lock()
	before := tally.answered
	tally.mu.Unlock()
	sigAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { <-logDone; exited <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(grace + 5*time.Second):
		t.Fatalf("the process did not exit within the grace period (%v) + 5 s; stderr:\n%s", grace, logs.String())
	}
	exitAfter := time.Since(sigAt)
	close(stop)
	wg.Wait()
	time.Sleep(300 * time.Millisecond) // loadgen tallies what it received
	lgCancel()
	lg := <-lgDone
	if lg.err != nil {
		t.Fatalf("loadgen: %v", lg.err)
	}
	rep := lg.rep
	lgWrong := rep.Wrong - rep.WrongByClass["transport"]

	if waitErr != nil {
		t.Errorf("exit: %v (want status 0); stderr:\n%s", waitErr, logs.String())
	}
	if exitAfter > grace {
		t.Errorf("exited %v after SIGTERM, over the grace period %v", exitAfter, grace)
	}
	m := regexp.MustCompile(`msg=stopped entered=(\d+) answered=(\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no \"stopped entered=N answered=N\" line; stderr:\n%s", logs.String())
	}
	entered, _ := strconv.Atoi(m[1])
	answered, _ := strconv.Atoi(m[2])
	for _, w := range tally.wrong[:min(len(tally.wrong), 5)] {
		t.Errorf("wrong answer: %s", w)
	}
	t.Logf("loadgen, %d connections, every shape: %d answers, %d right, %d wrong among the answers, %d transport errors (requests never accepted, connections refused)",
		lgConns, rep.Answers, rep.OK, lgWrong, rep.WrongByClass["transport"])
	if lgWrong != 0 {
		t.Errorf("loadgen: %d wrong answers among those that arrived: %+v", lgWrong, rep.Examples)
	}
	t.Logf("%d connections (%d test clients); SIGTERM after %v and %d answers; exit 0 after %v (grace %v); server: entered=%d answered=%d; clients: %d requests sent, %d complete right answers (%d after SIGTERM), %d wrong, %d cut short, %d never answered (not accepted), %d connections refused after the listener closed",
		conns, conns-lgConns, load, before, exitAfter.Round(time.Millisecond), grace, entered, answered,
		tally.sent, tally.answered, tally.answered-before, len(tally.wrong), tally.partial, tally.never, tally.refused)
	if entered != answered {
		t.Errorf("the server entered %d requests and answered %d", entered, answered)
	}
	if tally.partial > 0 {
		t.Errorf("%d answers were cut short", tally.partial)
	}
	if got := tally.answered + len(tally.wrong) + int(rep.Answers); got != answered {
		t.Errorf("the clients got %d complete answers (test clients %d, loadgen %d); the server answered %d",
			got, tally.answered+len(tally.wrong), rep.Answers, answered)
	}
	if tally.sent-tally.answered-len(tally.wrong)-tally.partial != tally.never {
		t.Errorf("accounting: %d sent, %d answered, %d wrong, %d partial, %d never", tally.sent, tally.answered, len(tally.wrong), tally.partial, tally.never)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// shutdownClient sends echo calls on one keep-alive connection until
// stop, reconnecting when the connection ends, and tallies the outcomes.
func shutdownClient(addr string, w int, stop <-chan struct{}, tally *shutdownTally) {
	rng := rand.New(rand.NewPCG(uint64(w), 1))
	var c net.Conn
	var cr *countingReader
	var br *bufio.Reader
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if c == nil {
			var err error
			c, err = net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				tally.mu.Lock()
				tally.refused++
				tally.mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				continue
			}
			cr = &countingReader{r: c}
			br = bufio.NewReader(cr)
		}
		id := w*1_000_000 + i
		text := strconv.Itoa(id) + strings.Repeat("t", rng.IntN(4*kib))
		slow := rng.IntN(8) == 0
		if slow {
			text = strings.Repeat("x", 256*kib)
		}
		raw := post("/mcp", echoCall(id, text))
		c.SetDeadline(time.Now().Add(ioTimeout))
		tally.mu.Lock()
		tally.sent++
		tally.mu.Unlock()
		var werr error
		if slow {
			for p := raw; len(p) > 0 && werr == nil; {
				n := min(len(p), 32*kib)
				_, werr = c.Write(p[:n])
				p = p[n:]
				time.Sleep(5 * time.Millisecond)
			}
		} else {
			_, werr = c.Write(raw)
		}
		cr.n = 0
		buffered := br.Buffered() // bytes past the previous answer (none without pipelining)
		r, err := readResp(br)
		tally.mu.Lock()
		switch {
		case err != nil && cr.n == 0 && buffered == 0:
			tally.never++
		case err != nil:
			tally.partial++
		default:
			if msg := checkEcho(r, id, text); msg != "" {
				tally.wrong = append(tally.wrong, msg)
			} else {
				tally.answered++
			}
		}
		tally.mu.Unlock()
		_ = werr // a failed write shows as no answer
		if err != nil || r.close {
			c.Close()
			c = nil
		}
	}
}

// checkEcho checks an echo call's answer; it returns "" when right.
func checkEcho(r *resp, id int, text string) string {
	a, err := parseRPC(r)
	switch {
	case err != nil:
		return err.Error()
	case r.status != 200 || a.Error != nil:
		return fmt.Sprintf("id %d: %d %.200q", id, r.status, r.body)
	case string(a.ID) != strconv.Itoa(id):
		return fmt.Sprintf("id %s, want %d", a.ID, id)
	case !bytes.Contains(a.Result, []byte(`"text":"`+text+`"`)):
		return fmt.Sprintf("id %d: result %.200s does not echo the text", id, a.Result)
	}
	return ""
}

// TestShutdownStalledUpload shuts down (grace 1 s) a server with one
// accepted request whose client sent the headers and part of the body,
// then stopped. The contract (§3): every accepted request gets its
// complete answer, and the server stops within the grace period. The
// request cannot succeed, but it can be answered (an error, then the
// connection closed) when the grace ends.
func TestShutdownStalledUpload(t *testing.T) {
	cfg := testConfig()
	cfg.ShutdownGrace = time.Second
	cfg.ReadTimeout = 10 * time.Second // longer than the grace: only Shutdown can end the request
	srv := startApp(t, cfg)
	c := dial(t, srv.addr)
	body := echoCall(1, "stalled upload")
	c.send(request("POST", "/mcp", body[:20], "Content-Type: application/json", fmt.Sprintf("Content-Length: %d", len(body))))
	deadline := time.Now().Add(time.Second)
	for srv.s.Stats().Entered == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if srv.s.Stats().Entered != 1 {
		t.Fatalf("the request was not accepted: %+v", srv.s.Stats())
	}
	start := time.Now()
	err := srv.s.Shutdown(context.Background())
	took := time.Since(start)
	st := srv.s.Stats()
	r, rerr := c.tryRead(time.Second)
	answer := "none"
	if rerr == nil {
		answer = fmt.Sprintf("%d %s", r.status, r.body)
	} else {
		answer = rerr.Error()
	}
	t.Logf("Shutdown returned %v after %v (grace %v); entered=%d answered=%d; the client got: %s",
		err, took.Round(time.Millisecond), cfg.ShutdownGrace, st.Entered, st.Answered, answer)
	if st.Entered != st.Answered || rerr != nil {
		t.Errorf("an accepted request whose body stalls is not answered: Shutdown gives up %v after the grace period with the handler still blocked reading the body (entered=%d answered=%d); the client gets no answer and the connection stays open until the read timeout; cmd/rpcedge then exits 1",
			took-cfg.ShutdownGrace, st.Entered, st.Answered)
	}
}
