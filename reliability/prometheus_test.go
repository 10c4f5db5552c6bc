package reliability

// /metrics as the ecosystem reads it: promtool's linter accepts it, and a
// real Prometheus (Debian's prometheus package) started on loopback
// scrapes the built cmd/rpcedge and answers queries over its HTTP API for
// the request counter and a latency quantile. In CI (CI=true) a missing
// prometheus fails the test; .ci/run installs it.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needTool returns the path of a command, skipping the test when it is
// missing, or failing it under CI=true.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not installed (Debian package prometheus; .ci/run installs it)", name)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestPromtoolAcceptsMetrics(t *testing.T) {
	promtool := needTool(t, "promtool")
	b := startBinary(t)
	for i := range 20 {
		rawExchange(t, b.addr, rawReq("/mcp", string(echoCall(i, "metrics")), "Content-Type: application/json"), false)
	}
	rawExchange(t, b.addr, rawReq("/mcp", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, "Content-Type: application/json"), false)
	body := rawExchange(t, b.addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", false)[0].body
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\n--- the exposition:\n%s", err, out, body)
	}
	for _, family := range []string{"rpcedge_requests_total", "rpcedge_request_duration_seconds"} {
		if !strings.Contains(string(body), "# HELP "+family+" ") || !strings.Contains(string(body), "# TYPE "+family+" ") {
			t.Errorf("no # HELP or # TYPE for %s", family)
		}
	}
	b.stop(t, 15*time.Second)
}

func TestPrometheusScrapes(t *testing.T) {
	prom := needTool(t, "prometheus")
	b := startBinary(t)
	port := freePort(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: rpcedge\n    static_configs:\n      - targets: ['%s']\n", b.addr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address=127.0.0.1:"+strconv.Itoa(port))
	logs := new(syncBuffer)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	}()

	// Traffic for a while, so that rates and quantiles have samples.
	stop := make(chan struct{})
	trafficDone := make(chan struct{})
	go func() {
		defer close(trafficDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			c, err := net.DialTimeout("tcp", b.addr, time.Second)
			if err != nil {
				continue
			}
			c.SetDeadline(time.Now().Add(time.Second))
			io.WriteString(c, rawReq("/mcp", string(echoCall(i, "scraped")), "Content-Type: application/json", "Connection: close"))
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	defer func() { close(stop); <-trafficDone }()

	api := "http://127.0.0.1:" + strconv.Itoa(port) + "/api/v1/query?query="
	query := func(q string) (float64, bool) {
		resp, err := http.Get(api + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var r struct {
			Status string
			Data   struct {
				Result []struct {
					Value []any
				}
			}
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" || len(r.Data.Result) == 0 || len(r.Data.Result[0].Value) != 2 {
			return 0, false
		}
		s, _ := r.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil && v == v
	}
	var total, p99 float64
	var ok1, ok2 bool
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) && !(ok1 && ok2) {
		time.Sleep(time.Second)
		total, ok1 = query(`sum(rpcedge_requests_total{endpoint="/mcp",method="tools/call",status="200"})`)
		p99, ok2 = query(`histogram_quantile(0.99, sum by (le) (rate(rpcedge_request_duration_seconds_bucket{endpoint="/mcp"}[10s])))`)
		ok1 = ok1 && total > 0
		ok2 = ok2 && p99 > 0
	}
	if !ok1 || !ok2 {
		t.Fatalf("Prometheus did not answer both queries within 40 s (requests %v %v, p99 %v %v); its log:\n%s", total, ok1, p99, ok2, logs.String())
	}
	t.Logf("Prometheus scraped cmd/rpcedge: rpcedge_requests_total{tools/call,200} = %.0f, p99 latency over 10 s = %.3f ms", total, p99*1000)
	if up, ok := query(`up{job="rpcedge"}`); !ok || up != 1 {
		t.Errorf("up{job=\"rpcedge\"} = %v (%v), want 1", up, ok)
	}
}
