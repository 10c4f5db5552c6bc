package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/services"
)

// bins holds the binaries built once per test process.
var (
	binOnce          sync.Once
	binDir, binErr   string
	rpcedge, loadgen string
)

func build(t *testing.T) {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fleet-e2e-bin-")
		if err != nil {
			binErr = err.Error()
			return
		}
		binDir = dir
		rpcedge, loadgen = filepath.Join(dir, "rpcedge"), filepath.Join(dir, "loadgen")
		// Built in the main module (two directories up), with its go.sum.
		for bin, pkg := range map[string]string{rpcedge: "./cmd/rpcedge", loadgen: "./cmd/loadgen"} {
			cmd := exec.Command("go", "build", "-o", bin, pkg)
			cmd.Dir = filepath.Join("..", "..")
			out, err := cmd.CombinedOutput()
			if err != nil {
				binErr = fmt.Sprintf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if binErr != "" {
		t.Fatal(binErr)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// instance is one cmd/rpcedge process.
type instance struct {
	name string
	port int
	args []string
	proc *services.Proc
	log  *bytes.Buffer
}

func (i *instance) url() string { return "http://127.0.0.1:" + strconv.Itoa(i.port) }

// cluster is Redis, instances and haproxy, all on loopback.
type cluster struct {
	t     *testing.T
	redis *services.Redis
	insts []*instance
	hap   *services.Proc
	hport int
	sport int // haproxy's stats
	dir   string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	build(t)
	services.Need(t, "haproxy")
	return &cluster{t: t, redis: services.StartRedis(t), dir: t.TempDir()}
}

// start starts (or restarts, on its port) instance i with args.
func (c *cluster) start(i *instance) {
	c.t.Helper()
	args := append([]string{"-addr", "127.0.0.1:" + strconv.Itoa(i.port), "-instance", i.name, "-grace", "2s"}, i.args...)
	cmd := exec.Command(rpcedge, args...)
	i.log = &bytes.Buffer{}
	cmd.Stderr = &syncWriter{b: i.log}
	i.proc = services.StartProc(c.t, "rpcedge "+i.name, cmd)
	if err := waitHTTP(i.url()+"/healthz", 10*time.Second); err != nil {
		c.t.Fatalf("instance %s: %v\n%s", i.name, err, i.logText())
	}
}

func (i *instance) logText() string {
	if w, ok := i.proc.Cmd.Stderr.(*syncWriter); ok {
		return w.String()
	}
	return ""
}

// startInstances starts n instances with args (plus -redis unless
// local).
func (c *cluster) startInstances(n int, local bool, args ...string) {
	c.t.Helper()
	c.stopInstances()
	for k := range n {
		i := &instance{name: "i" + strconv.Itoa(k+1), port: services.FreePort(c.t), args: args}
		if !local {
			i.args = append([]string{"-redis", c.redis.URL()}, args...)
		}
		c.start(i)
		c.insts = append(c.insts, i)
	}
}

func (c *cluster) stopInstances() {
	for _, i := range c.insts {
		i.proc.Stop(5 * time.Second)
	}
	c.insts = nil
}

// haproxy (re)starts haproxy in front of the first n instances.
func (c *cluster) haproxy(n int) {
	c.t.Helper()
	if c.hap != nil {
		c.hap.Stop(5 * time.Second)
	}
	if c.hport == 0 {
		c.hport, c.sport = services.FreePort(c.t), services.FreePort(c.t)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 4096
defaults
  mode http
  option http-keep-alive
  http-reuse safe
  timeout connect 500ms
  timeout client 30s
  timeout server 5s
  timeout http-request 5s
  timeout http-keep-alive 30s
  timeout queue 2s
  timeout check 300ms
  retries 2
  option redispatch 1
  retry-on conn-failure
frontend fe
  bind 127.0.0.1:%d
  option forwardfor
  default_backend be
frontend stats
  bind 127.0.0.1:%d
  stats enable
  stats uri /stats
backend be
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server check inter 250ms fastinter 100ms downinter 500ms fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down
`, c.hport, c.sport)
	for _, i := range c.insts[:n] {
		// MCP tasks live in the instance that runs them, and their ids
		// start with its name (-instance): tasks/* go there by Mcp-Name.
		fmt.Fprintf(&b, "  use-server %s if { req.hdr(Mcp-Method) -m str tasks/get tasks/update tasks/cancel } { req.hdr(Mcp-Name) -m beg %s. }\n", i.name, i.name)
	}
	for _, i := range c.insts[:n] {
		fmt.Fprintf(&b, "  server %s 127.0.0.1:%d\n", i.name, i.port)
	}
	cfg := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	bin := services.Need(c.t, "haproxy")
	if out, err := exec.Command(bin, "-c", "-q", "-f", cfg).CombinedOutput(); err != nil {
		c.t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-W", "-db", "-f", cfg)
	cmd.Stderr = &syncWriter{b: &logs}
	c.hap = services.StartProc(c.t, "haproxy", cmd)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		up := 0
		for _, i := range c.insts[:n] {
			if c.serverStatus(i.name) == "UP" {
				up++
			}
		}
		if up == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("haproxy: servers not up within 10 s\n%s", logs.String())
}

func (c *cluster) lb() string { return "http://127.0.0.1:" + strconv.Itoa(c.hport) }

// serverStatus reads a backend server's status from haproxy's stats
// ("UP", "DOWN", "UP 1/2", ...).
func (c *cluster) serverStatus(name string) string {
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(c.sport) + "/stats;csv")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	r := csv.NewReader(resp.Body)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return ""
	}
	col := -1
	for k, h := range rows[0] {
		if h == "status" {
			col = k
		}
	}
	for _, row := range rows[1:] {
		if len(row) > col && col >= 0 && row[0] == "be" && row[1] == name {
			return row[col]
		}
	}
	return ""
}

// waitStatus polls until pred(status of name) holds, within d; it returns
// how long that took.
func (c *cluster) waitStatus(name string, d time.Duration, pred func(string) bool) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < d {
		if pred(c.serverStatus(name)) {
			return time.Since(start), true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start), false
}

func waitHTTP(url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %v: %v", url, d, last)
}

// rpcResult is one JSON-RPC answer as the test reads it.
type rpcResult struct {
	Status     int
	RetryAfter string
	Result     json.RawMessage
	Code       int // 0 for a result
	Err        error
}

var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxIdleConns: 256}}

// rpc posts a JSON-RPC request; header pairs are added.
func rpc(url, body string, header ...string) rpcResult {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k := 0; k+1 < len(header); k += 2 {
		req.Header.Set(header[k], header[k+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return rpcResult{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	r := rpcResult{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Err: err}
	var v struct {
		Result json.RawMessage
		Error  *struct{ Code int }
	}
	if err == nil {
		if jerr := json.Unmarshal(b, &v); jerr != nil {
			r.Err = fmt.Errorf("answer %d is not JSON: %q", resp.StatusCode, b)
			return r
		}
		r.Result = v.Result
		if v.Error != nil {
			r.Code = v.Error.Code
		}
	}
	return r
}

// metric returns the value of the first metric line starting with name
// at url's /metrics, or -1.
func metric(url, name string) float64 {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, name) {
			f, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			return f
		}
	}
	return -1
}

// loadReport is the part of loadgen's JSON report the proof reads.
type loadReport struct {
	Sent         uint64            `json:"sent"`
	OK           uint64            `json:"ok"`
	Wrong        uint64            `json:"wrong"`
	RPS          float64           `json:"rps"`
	WrongByClass map[string]uint64 `json:"wrong_by_class"`
	Latency      struct {
		P50 int64 `json:"p50"`
		P99 int64 `json:"p99"`
	} `json:"latency_us"`
	Examples []struct {
		Class  string `json:"class"`
		Detail string `json:"detail"`
		Answer string `json:"answer"`
	} `json:"wrong_examples"`
}

// runLoad runs cmd/loadgen with args and returns its report.
func runLoad(t *testing.T, args ...string) loadReport {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(loadgen, append([]string{"-json"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run() // exit 1 when any answer was wrong: judged by the caller
	var rep loadReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
		t.Fatalf("loadgen %v: %v %v\n%s\n%s", args, err, jerr, out.String(), errb.String())
	}
	return rep
}

type syncWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// figures collects the proof's figures for the README.
type figures struct {
	mu    sync.Mutex
	lines []string
}

func (f *figures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines = append(f.lines, fmt.Sprintf(format, args...))
}

func (f *figures) write(t *testing.T) {
	for _, l := range f.lines {
		t.Log(l)
	}
	if path := os.Getenv("FLEET_RESULTS"); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(f.lines, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}
