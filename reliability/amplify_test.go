package reliability

// Memory amplification against the built binary (issue 18 item 2): many
// clients sending at once the request shapes whose decoded form used to
// cost 20 to 150 times their body bytes.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// procHWM returns the peak resident set size (VmHWM) of process pid.
func procHWM(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc/%d/status: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			n, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				t.Fatalf("VmHWM line %q", line)
			}
			return n * 1024
		}
	}
	t.Skip("no VmHWM in /proc/pid/status")
	return 0
}

// worstBody returns a body of about size bytes in one of the shapes
// that amplified memory most, with ids and names varied by seq.
func worstBody(kind, seq, size int) (path string, hdr []string, body []byte) {
	var b bytes.Buffer
	b.Grow(size)
	items := func(head, tail string, item func(i int) string) {
		b.WriteString(head)
		for i := 0; b.Len()+len(tail) < size-32; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item(i))
		}
		b.WriteString(tail)
	}
	id := strconv.Itoa(seq*7919 + kind)
	name := func(i int) string { return `"k` + strconv.Itoa(seq) + "_" + strconv.FormatInt(int64(i), 36) + `":` }
	switch kind % 4 {
	case 0: // A2A 1.0: empty text parts (was 150×)
		items(`{"jsonrpc":"2.0","id":`+id+`,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m`+id+`","parts":[`, `]}}}`,
			func(int) string { return `{"text":""}` })
		return "/a2a", []string{"A2A-Version", "1.0"}, b.Bytes()
	case 1: // A2A 0.3: escaped text parts
		items(`{"jsonrpc":"2.0","id":`+id+`,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m`+id+`","parts":[`, `]}}}`,
			func(int) string { return `{"kind":"text","text":"\n"}` })
		return "/a2a", []string{"A2A-Version", "0.3"}, b.Bytes()
	case 2: // MCP: many unknown top-level members (was 38×)
		items(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t`+id+`"}},`, `}`,
			func(i int) string { return name(i) + `0` })
		return "/mcp", nil, b.Bytes()
	default: // MCP: a prompt with many arguments (was 26×)
		items(`{"jsonrpc":"2.0","id":`+id+`,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"n`+id+`",`, `}}}`,
			func(i int) string { return name(i) + `""` })
		return "/mcp", nil, b.Bytes()
	}
}

// TestMemoryAmplificationAgainstBinary starts cmd/rpcedge and has 48
// clients send 1 MiB bodies of the worst shapes at once, 4 each (192
// requests, 192 MiB), then checks the process's peak RSS.
//
// The bound: what a 1 MiB request of these shapes holds live while in
// flight is its body buffer (under 2 MiB: it grows by doubling), the
// copy of its parts (1 MiB) and its answer buffer (under 4 MiB, for an
// answer of about 2 MiB: the echo agent repeats the text parts); its
// decoded form adds at most 8× the body, but as garbage made and dropped
// along the way. 48 in flight hold at most 336 MiB live, the task store
// adds its 64 MiB budget: 400 MiB. The collector lets the heap pass the
// live set before it runs (GOGC=100), and garbage counts until then: the
// test allows 640 MiB above the RSS after warm-up (1.6× the live bound).
// Measured on the 2-core test machine: about 370 MiB above; before issue
// 18's change the same run peaked at 1974 MiB (1852 above), the decoded
// form alone costing 142× the body.
func TestMemoryAmplificationAgainstBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 192 MiB")
	}
	const (
		clients = 48
		each    = 4
		size    = 1<<20 - 1024
		bound   = 640 << 20
	)
	// A memory test, not a latency one: on a busy machine 48 bodies of
	// 1 MiB at once may take the handler past its default 10 s deadline.
	b := startBinary(t, "-handler-timeout", "60s", "-read-timeout", "60s", "-write-timeout", "60s")
	pid := b.cmd.Process.Pid
	base := "http://" + b.addr
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	send := func(kind, seq int) error {
		path, hdr, body := worstBody(kind, seq, size)
		req, err := http.NewRequest("POST", base+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || bytes.Contains(got, []byte(`"error"`)) {
			return fmt.Errorf("%s: %d %.200s", path, resp.StatusCode, got)
		}
		return nil
	}
	// Warm up: one request of each shape, then the baseline.
	for k := 0; k < 4; k++ {
		if err := send(k, 1000+k); err != nil {
			t.Fatal(err)
		}
	}
	before := procHWM(t, pid)

	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := send(c+i, c*each+i); err != nil {
					errs <- err
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	b.alive(t)
	peak := procHWM(t, pid)
	t.Logf("%d clients × %d requests of %d bytes in %v: peak RSS %d MiB (%d MiB after warm-up), bound %d MiB above it",
		clients, each, size, time.Since(start).Round(time.Millisecond), peak>>20, before>>20, bound>>20)
	if peak > before+bound {
		t.Errorf("peak RSS %d MiB, more than %d MiB above the %d MiB after warm-up", peak>>20, bound>>20, before>>20)
	}
	b.stop(t, 15*time.Second)
}
