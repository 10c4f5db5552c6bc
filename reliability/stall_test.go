package reliability

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The stall probe measures how late the machine runs a process that does
// nothing but sleep 1 ms at a time: on a machine shared with other jobs a
// process can be held off the CPU for seconds. The probe runs in a process
// of its own (this test binary, running TestStallProbe), so a stall it
// sees is the machine's, not the server's. Latency checks are judged only
// over windows in which the probe saw no stall as long as their bound.

const stallProbeEnv = "RPCEDGE_STALL_PROBE"

// TestStallProbe is the probe's process; it is skipped in a normal run.
func TestStallProbe(t *testing.T) {
	if os.Getenv(stallProbeEnv) != "1" {
		t.Skip("the stall probe's helper process (runs only when started by a test)")
	}
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	var worst time.Duration
	for {
		select {
		case <-stop:
			os.Stdout.WriteString("worst=" + strconv.FormatInt(int64(worst), 10) + "\n")
			os.Exit(0)
		default:
		}
		s := time.Now()
		time.Sleep(time.Millisecond)
		worst = max(worst, time.Since(s)-time.Millisecond)
	}
}

// stallProbe is a running probe.
type stallProbe struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startStallProbe starts a probe; nil when it cannot start (the caller
// then judges as if the machine had not stalled).
func startStallProbe(t *testing.T) *stallProbe {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStallProbe$")
	cmd.Env = append(os.Environ(), stallProbeEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		t.Logf("stall probe: %v", err)
		return nil
	}
	return &stallProbe{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
}

// stop ends the probe and returns the longest stall it saw.
func (p *stallProbe) stop() time.Duration {
	if p == nil {
		return 0
	}
	p.stdin.Close()
	defer p.cmd.Wait()
	for {
		line, err := p.out.ReadString('\n')
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "worst="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return time.Duration(n)
		}
		if err != nil {
			return 0
		}
	}
}
