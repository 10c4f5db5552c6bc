package reliability

// rpcedge -stdio stops on SIGTERM and SIGINT even while it waits for
// input (contract §6; issue #18 item 7).

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// stdioBinary is cmd/rpcedge -stdio with its standard input a pipe the
// test holds open.
type stdioBinary struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // standard output, line by line
	exited chan error
}

func startStdio(t *testing.T, bin string) *stdioBinary {
	t.Helper()
	cmd := exec.Command(bin, "-stdio", "-demo", "conformance")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &stdioBinary{cmd: cmd, stdin: stdin, lines: make(chan string, 16), exited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
		close(b.lines)
		b.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		<-b.exited
	})
	return b
}

func (b *stdioBinary) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(b.stdin, line+"\n"); err != nil {
		t.Fatalf("write to stdin: %v", err)
	}
}

// answerID reads the next answer line and returns its id.
func (b *stdioBinary) answerID(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-b.lines:
		if !ok {
			t.Fatal("standard output ended before the answer")
		}
		var a rpcAnswer
		if err := json.Unmarshal([]byte(l), &a); err != nil || a.Error != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		return string(a.ID)
	case <-time.After(ioTimeout):
		t.Fatal("no answer line")
		return ""
	}
}

// signalStop sends sig and waits for the process to exit: it must exit 0
// within 5 s, with no answer line left unread. It returns the stop time.
// Signal 0 only waits: a process signalled before may have exited already.
func (b *stdioBinary) signalStop(t *testing.T, sig os.Signal) time.Duration {
	t.Helper()
	start := time.Now()
	if err := b.cmd.Process.Signal(sig); err != nil && !(sig == syscall.Signal(0) && errors.Is(err, os.ErrProcessDone)) {
		t.Fatalf("%v: %v", sig, err)
	}
	var extra []string
	for l := range b.lines {
		extra = append(extra, l)
	}
	select {
	case err := <-b.exited:
		took := time.Since(start)
		if err != nil {
			t.Errorf("after %v: exited with %v, want 0", sig, err)
		}
		if len(extra) > 0 {
			t.Errorf("after %v: unexpected output %q", sig, extra)
		}
		b.exited <- err // for the cleanup
		return took
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after %v, its input open", sig)
		return 0
	}
}

// TestStdioSignalsAgainstBinary runs cmd/rpcedge -stdio with an input
// pipe that stays open:
//   - idle (an answered ping, then nothing): SIGTERM or SIGINT ends it,
//     exit 0, within 1 s (it waited for stdin's end before);
//   - while a call is being handled (stream_events, 4 × 150 ms), with
//     another call sent after it: the call in progress is answered, the
//     one after it is not read, exit 0.
func TestStdioSignalsAgainstBinary(t *testing.T) {
	bin := buildRPCEdge(t)
	id := 0
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String()+" idle", func(t *testing.T) {
			b := startStdio(t, bin)
			id++
			b.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"ping"}`)
			if got := b.answerID(t); got != strconv.Itoa(id) {
				t.Fatalf("answer id %s, want %d", got, id)
			}
			time.Sleep(100 * time.Millisecond)
			took := b.signalStop(t, sig)
			t.Logf("%v while waiting for input: exit 0 after %v", sig, took.Round(time.Microsecond))
			if took > time.Second {
				t.Errorf("stopped %v after %v, want within 1 s", took, sig)
			}
		})
		t.Run(sig.String()+" in progress", func(t *testing.T) {
			b := startStdio(t, bin)
			id++
			slow, next := strconv.Itoa(id), strconv.Itoa(id+1000)
			b.send(t, `{"jsonrpc":"2.0","id":0,"method":"ping"}`) // it is up
			if got := b.answerID(t); got != "0" {
				t.Fatalf("answer id %s, want 0", got)
			}
			b.send(t, `{"jsonrpc":"2.0","id":`+slow+`,"method":"tools/call","params":{"name":"stream_events","arguments":{"count":4,"delayMs":150}}}`+"\n"+
				`{"jsonrpc":"2.0","id":`+next+`,"method":"ping"}`)
			time.Sleep(200 * time.Millisecond)
			start := time.Now()
			if err := b.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if got := b.answerID(t); got != slow {
				t.Fatalf("answer id %s, want %s (the call in progress)", got, slow)
			}
			answered := time.Since(start)
			took := answered + b.signalStop(t, syscall.Signal(0)) // already signalled: waits for the exit
			t.Logf("%v during a 600 ms call: answered after %v, exit 0 after %v", sig, answered.Round(time.Millisecond), took.Round(time.Millisecond))
		})
	}
}
