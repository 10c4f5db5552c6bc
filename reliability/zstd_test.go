package reliability

// zstd request bodies as real clients frame them (issue #18 item 6).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// needZstd returns the path of the reference zstd CLI (Debian's zstd
// package), skipping the test when it is missing, or failing it under
// CI=true (.ci/run installs it).
func needZstd(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("zstd")
	if err == nil {
		return p
	}
	msg := "zstd not installed (Debian package zstd; .ci/run installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// cliZstd compresses data with the zstd CLI reading a pipe, as
// `echo … | zstd -c | curl --data-binary @-` does: the CLI then knows no
// content size and declares its level's window (2 MiB at level 3).
func cliZstd(t *testing.T, bin string, data []byte, flags ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-c", "-q"}, flags...)...)
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zstd %v: %v: %s", flags, err, stderr.Bytes())
	}
	return out.Bytes()
}

// TestZstdCLIAgainstBinary posts bodies framed by the reference zstd CLI
// to the built binary: a 41-byte ping at levels 1, 3 and 19 (windows of
// 2 and 8 MiB declared; 413 before issue #18 item 6, 200 now), and echo
// calls of 100 B to 600 KiB at every window log from 10 to 23 (RFC 9659's
// 8 MiB). Every one is answered 200 with its own id and text.
func TestZstdCLIAgainstBinary(t *testing.T) {
	bin := needZstd(t)
	b := startBinary(t)
	addr := b.addr
	id := 16 // two-digit ids: 41-byte pings
	for _, level := range []string{"-1", "-3", "-19"} {
		id++
		ping := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping"}`)
		wire := cliZstd(t, bin, ping, level)
		wd := wire[5]
		t.Logf("level %s: a %d-byte ping in %d bytes, Window_Descriptor 0x%02x (%d KiB)",
			level, len(ping), len(wire), wd, (1<<(10+wd>>3)+(1<<(10+wd>>3))/8*int(wd&7))>>10)
		want{200, 0, strconv.Itoa(id)}.check(t, roundTrip(t, addr, post("/mcp", wire, "Content-Encoding: zstd")))
	}
	id = 100
	sizes := []int{100, 40 << 10, 600 << 10}
	for log := 10; log <= 23; log++ {
		for i, n := range sizes {
			id++
			unit := fmt.Sprintf("%c%d ", 'a'+byte(log), id)
			text := fmt.Sprintf("w%d-%d ", log, i) + strings.Repeat(unit, n/len(unit)+1)
			text = text[:n]
			wire := cliZstd(t, bin, echoCall(id, text), "-3", fmt.Sprintf("--zstd=wlog=%d", log))
			a := want{200, 0, strconv.Itoa(id)}.check(t, roundTrip(t, addr, post("/mcp", wire, "Content-Encoding: zstd")))
			if got := echoText(t, a); got != text {
				t.Fatalf("wlog %d, %d B: echo text of %d B differs", log, n, len(got))
			}
		}
	}
	b.alive(t)
	b.stop(t, 10e9)
}
