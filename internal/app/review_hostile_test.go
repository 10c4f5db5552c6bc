package app

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/fleet"
	"github.com/rpcedge/rpcedge/internal/services"
)

// The command's behaviour under signals can only be seen from outside
// the process: these tests run Main in a child, the test binary itself
// re-run with reviewMainEnv set to the arguments (JSON).
const reviewMainEnv = "RPCEDGE_REVIEW_MAIN_ARGS"

func TestReviewHelperMain(t *testing.T) {
	raw := os.Getenv(reviewMainEnv)
	if raw == "" {
		t.Skip("helper process for the tests below")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	os.Exit(Main(args, strings.NewReader(""), io.Discard, os.Stderr))
}

// startMain starts Main(args) in a child process; its standard error is
// read line by line into the returned channel.
func startMain(t *testing.T, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestReviewHelperMain$", "-test.count=1")
	cmd.Env = append(os.Environ(), reviewMainEnv+"="+string(raw))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	var mu sync.Mutex
	var all []string
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			all = append(all, sc.Text())
			mu.Unlock()
			select {
			case lines <- sc.Text():
			default: // a test that stopped reading must not block the child
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("the child's stderr:\n%s", strings.Join(all, "\n"))
			mu.Unlock()
		}
	})
	return cmd, lines
}

// waitExit waits up to d for the child and returns its exit code (-1 when
// a signal ended it).
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the process did not exit within %v", d)
		return 0
	}
}

// TestSignalDuringStartup: SIGTERM while the server is still starting (here
// waiting for an authorization server that accepts the connection and never
// answers, which New waits up to 10 s for) must stop it promptly with exit 0,
// not kill it with the signal's default action.
func TestSignalDuringStartup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	cmd, lines := startMain(t, "-addr", "127.0.0.1:0", "-auth-issuer", "http://"+ln.Addr().String(), "-auth-audience", "https://agents.test/mcp")
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the child never asked the issuer for its metadata")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 5*time.Second); code != 0 {
		var out []string
		for l := range lines {
			out = append(out, l)
		}
		t.Fatalf("exit code %d after SIGTERM during start-up, want 0; stderr:\n%s", code, strings.Join(out, "\n"))
	}
	for l := range lines {
		if strings.Contains(l, "listening on") {
			t.Errorf("it started listening after SIGTERM: %s", l)
		}
	}
}

// writeCert writes a self-signed P-256 certificate for localhost valid
// from notBefore to notAfter, and its key, into dir.
func writeCert(t *testing.T, dir string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestExpiredCertificateRefused: an expired certificate would be served
// to every client, each of which refuses it; the operator learns it at
// start, with a non-zero exit, not from the clients.
func TestExpiredCertificateRefused(t *testing.T) {
	now := time.Now()
	cert, key := writeCert(t, t.TempDir(), now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"-addr", "127.0.0.1:0", "-tls-cert", cert, "-tls-key", key}, strings.NewReader(""), io.Discard, &stderr)
	}()
	select {
	case code := <-done:
		if code == 0 || !strings.Contains(stderr.String(), "expired") {
			t.Fatalf("exit %d, stderr %q; want a non-zero exit naming the expiry", code, stderr.String())
		}
	case <-time.After(3 * time.Second):
		// It is serving: stop it the way an operator would.
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		<-done
		t.Fatalf("it started with a certificate that expired a day ago; stderr:\n%s", stderr.String())
	}
}

// TestHostileFlags: values that parse but could never work are refused at
// start with a message naming the flag, not accepted into a server that
// then misbehaves or fails naming a setting the command has no flag for.
func TestHostileFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "+Inf"}, "-rate"},
		{[]string{"-rate", "1e300"}, "-rate"},
		{[]string{"-rate", "NaN"}, "-rate"},
		{[]string{"-max-body", "200M"}, "-max-body"},
		{[]string{"-max-body", "1G"}, "-max-body"},
		{[]string{"-allow-origin", "http://u@a.example"}, "not an origin"},
		{[]string{"-allow-origin", "https://a.example?x=1"}, "not an origin"},
		{[]string{"-allow-origin", "https://a.example#f"}, "not an origin"},
		{[]string{"-allow-origin", "https://a.example:99999"}, "not an origin"},
		{[]string{"-allow-origin", "https://a.example:"}, "not an origin"},
		{[]string{"-allow-origin", "https://a.example/app"}, "not an origin"},
		{[]string{"-allow-origin", "null"}, "not an origin"},
		{[]string{"-stdio", "-tls-cert", "c.pem", "-tls-key", "k.pem"}, "not with -stdio"},
		{[]string{"-stdio", "-transport", "nethttp"}, "not with -stdio"},
		{[]string{"-auth-issuer", "https://user:secret@issuer.example", "-auth-audience", "https://x.example/mcp"}, "-auth-issuer"},
		{[]string{"-metrics-path", "/a/../m"}, "-metrics-path"},
		{[]string{"-metrics-path", "//m"}, "-metrics-path"},
		{[]string{"-metrics-path", "/m?x=1"}, "-metrics-path"},
		{[]string{"-metrics-path", "/m%20x"}, "-metrics-path"},
		{[]string{"-health-path", "/h#f"}, "-health-path"},
		{[]string{"-health-path", "/h/./z"}, "-health-path"},
	} {
		var stderr strings.Builder
		if _, err := ParseFlags(tc.args, &stderr); err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: err %v, stderr %q; want an error naming %s", tc.args, err, stderr.String(), tc.want)
		}
	}
	for _, p := range []string{"/", "/m", "/-/metrics", "/probe/", "/a.b_c~d"} {
		if _, err := ParseFlags([]string{"-metrics-path", p}, io.Discard); err != nil {
			t.Errorf("-metrics-path %s: %v", p, err)
		}
	}
	// The ceiling the budget allows is still accepted.
	if o, err := ParseFlags([]string{"-max-body", "128MiB", "-rate", "1e6"}, io.Discard); err != nil || o.Server.MaxBodyBytes != 128<<20 {
		t.Errorf("-max-body 128MiB -rate 1e6: %v", err)
	}
}

// TestAllowOriginAsBrowsersSendIt: browsers leave the scheme's default port
// out of Origin, so an origin configured with it must still match.
func TestAllowOriginAsBrowsersSendIt(t *testing.T) {
	o, err := ParseFlags([]string{"-addr", "127.0.0.1:0", "-allow-origin", "https://App.Example.com:443, http://b.example:80/,http://c.example:08080,https://[2001:DB8::1]:443"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	url, stop, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for origin, want := range map[string]int{
		"https://app.example.com": 204, "http://b.example": 204, "http://c.example:8080": 204,
		"https://[2001:db8::1]": 204, "http://c.example": 403, "https://evil.example": 403,
	} {
		a := do(t, "OPTIONS", url+"/mcp", map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST"}, "")
		if a.status != want {
			t.Errorf("preflight from %s: %d, want %d", origin, a.status, want)
		}
	}
}

// waitListening returns the base URL the child prints once it listens.
func waitListening(t *testing.T, lines <-chan string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child exited before listening")
			}
			if u, found := strings.CutPrefix(l, "listening on "); found {
				return u
			}
		case <-timeout:
			t.Fatal("the child did not listen within 10 s")
		}
	}
}

// TestSIGHUPWithoutTLS: SIGHUP is the command's reload signal (of the
// certificate); sent to a server without one, as a fleet-wide reload
// would, it must not kill the server with requests in flight: it keeps
// serving, and SIGTERM still stops it with exit 0.
func TestSIGHUPWithoutTLS(t *testing.T) {
	cmd, lines := startMain(t, "-addr", "127.0.0.1:0")
	u := waitListening(t, lines)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(u + "/healthz")
	if err != nil {
		t.Fatalf("after SIGHUP: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("after SIGHUP: /healthz %d", resp.StatusCode)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 15*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestListenFailureLeavesFleet: an instance that joined the fleet and then
// cannot listen (its port taken) must leave the fleet as it exits, or the
// other instances count it, and shrink their shares of the rate limit,
// until its membership expires.
func TestListenFailureLeavesFleet(t *testing.T) {
	r := services.StartRedis(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var stderr strings.Builder
	if code := Main([]string{"-addr", taken.Addr().String(), "-redis", r.URL(), "-instance", "leaky"}, strings.NewReader(""), io.Discard, &stderr); code != 1 {
		t.Fatalf("exit %d with the port taken, want 1; stderr:\n%s", code, stderr.String())
	}
	if got, err := r.Do("ZSCORE", fleet.DefaultPrefix+"instances", "leaky"); err != nil || got != "$-1" {
		t.Fatalf("after the failed start the fleet still lists the instance: %q %v", got, err)
	}
	var opts Options
	opts.Server.Addr = taken.Addr().String()
	opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Redis, opts.Instance = r.URL(), "leaky2"
	if _, _, err := Start(opts); err == nil {
		t.Fatal("Start on a taken port succeeded")
	}
	if got, err := r.Do("ZSCORE", fleet.DefaultPrefix+"instances", "leaky2"); err != nil || got != "$-1" {
		t.Fatalf("after Start failed the fleet still lists the instance: %q %v", got, err)
	}
}

// TestReloadRefusesExpiredCertificate: SIGHUP after a renewal that went
// wrong (the files replaced by an expired certificate) keeps serving the
// one loaded before, as a reload that fails to parse does.
func TestReloadRefusesExpiredCertificate(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	cert, key := writeCert(t, dir, now.Add(-time.Hour), now.Add(time.Hour))
	kp, err := fastserver.LoadKeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := kp.GetCertificate(nil)
	writeCert(t, dir, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	if err := kp.Reload(); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("Reload of an expired certificate: %v", err)
	}
	if after, _ := kp.GetCertificate(nil); after != before {
		t.Fatal("an expired certificate replaced the one being served")
	}
}

// TestKeyFilePermissionsWarned: a private key any local user can read is
// served without complaint by most servers; this one says so at start.
func TestKeyFilePermissionsWarned(t *testing.T) {
	now := time.Now()
	cert, key := writeCert(t, t.TempDir(), now.Add(-time.Hour), now.Add(time.Hour))
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	startWarns(t, "readable by users other than its owner", "-tls-cert", cert, "-tls-key", key)
}

// TestWrongHostCertificateWarned: a certificate for localhost behind
// -public-url https://agents.example.com makes every client that follows
// the agent card fail its handshake; the operator is told at start.
func TestWrongHostCertificateWarned(t *testing.T) {
	now := time.Now()
	cert, key := writeCert(t, t.TempDir(), now.Add(-time.Hour), now.Add(time.Hour))
	startWarns(t, "does not name -public-url's host", "-tls-cert", cert, "-tls-key", key, "-public-url", "https://agents.example.com")
}

// startWarns starts the command with args and checks that a warning
// containing want is logged before it listens; then stops it.
func startWarns(t *testing.T, want string, args ...string) {
	t.Helper()
	cmd, lines := startMain(t, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	var warned bool
	timeout := time.After(10 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child exited before listening")
			}
			warned = warned || strings.Contains(l, "level=WARN") && strings.Contains(l, want)
			if strings.HasPrefix(l, "listening on https://") {
				break wait
			}
		case <-timeout:
			t.Fatal("the child did not listen within 10 s")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 15*time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
	if !warned {
		t.Errorf("no warning %q before listening", want)
	}
}

// TestStopRightAfterStart: a stop that comes before the serving goroutine
// has handed the listener to the HTTP server (SIGTERM just after
// "listening on", or Start's stop called at once) must still stop it:
// Shutdown then finds no listener to close, and Serve, starting after it,
// would serve for ever and the stop wait for it for ever.
func TestStopRightAfterStart(t *testing.T) {
	for _, transport := range []string{"fasthttp", "nethttp"} {
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; i < 40 && time.Now().Before(deadline); i++ {
			var opts Options
			opts.Server.Addr = "127.0.0.1:0"
			opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			opts.Transport = transport
			_, stop, err := Start(opts)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- stop() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s, run %d: stop: %v", transport, i, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s, run %d: stop right after Start did not return within 5 s", transport, i)
			}
		}
	}
}
