// Package services starts the real components the fleet's tests need
// (redis-server, haproxy) on loopback and ephemeral ports, installs them
// with apt-get when they are missing (as root), and stops every process
// it starts by its pid. In CI (CI=true) a component that cannot be had
// fails the test; elsewhere the test is skipped with the reason.
package services

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Packages maps each binary to its Debian package.
var Packages = map[string]string{"redis-server": "redis-server", "haproxy": "haproxy"}

var installMu sync.Mutex

// Need returns the path of binary, installing its Debian package when it
// is missing and the test runs as root; else it skips the test (fails it
// in CI).
func Need(t testing.TB, binary string) string {
	t.Helper()
	if p, err := Find(binary); err == nil {
		return p
	}
	installMu.Lock()
	defer installMu.Unlock()
	if p, err := Find(binary); err == nil {
		return p
	}
	err := Install(Packages[binary])
	if err == nil {
		if p, ferr := Find(binary); ferr == nil {
			return p
		}
		err = fmt.Errorf("%s still missing after installing %s", binary, Packages[binary])
	}
	msg := fmt.Sprintf("%s is not available: %v (install it with: apt-get install -y %s)", binary, err, Packages[binary])
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Find looks binary up in PATH and the sbin directories.
func Find(binary string) (string, error) {
	if p, err := exec.LookPath(binary); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin"} {
		p := filepath.Join(dir, binary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", binary)
}

// Install runs apt-get install -y pkg (after apt-get update), as root,
// within five minutes.
func Install(pkg string) error {
	if pkg == "" {
		return errors.New("no package known")
	}
	if os.Geteuid() != 0 {
		return errors.New("not root: cannot apt-get install")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return errors.New("no apt-get")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	up := exec.CommandContext(ctx, "apt-get", "update", "-qq")
	up.Env = env
	if out, err := up.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %v: %s", err, tail(out))
	}
	in := exec.CommandContext(ctx, "apt-get", "install", "-y", "-qq", "--no-install-recommends", pkg)
	in.Env = env
	if out, err := in.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get install %s: %v: %s", pkg, err, tail(out))
	}
	return nil
}

func tail(b []byte) string {
	if len(b) > 400 {
		b = b[len(b)-400:]
	}
	return strings.TrimSpace(string(b))
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Proc is a process started by a test: stopped by its pid when the test
// ends, if still running.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProc starts cmd and registers its stop.
func StartProc(t testing.TB, name string, cmd *exec.Cmd) *Proc {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	return p
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits at most d for the process to exit.
func (p *Proc) Wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Signal sends sig to the process (by pid).
func (p *Proc) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	return syscall.Kill(p.Pid(), sig)
}

// Kill sends SIGKILL and waits for the exit.
func (p *Proc) Kill() {
	p.Signal(syscall.SIGKILL)
	p.Wait(10 * time.Second)
}

// Stop sends SIGTERM, waits up to grace, then SIGKILL.
func (p *Proc) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	p.Signal(syscall.SIGTERM)
	if !p.Wait(grace) {
		p.Kill()
	}
}

// Redis is a redis-server on a loopback port.
type Redis struct {
	t    testing.TB
	bin  string
	Port int
	Proc *Proc
}

// StartRedis starts redis-server on a free loopback port, without
// persistence.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	r := &Redis{t: t, bin: Need(t, "redis-server")}
	var last error
	for range 5 {
		r.Port = FreePort(t)
		if last = r.start(); last == nil {
			return r
		}
	}
	t.Fatalf("redis-server did not start: %v", last)
	return nil
}

func (r *Redis) start() error {
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
		"--dir", r.t.TempDir())
	r.Proc = StartProc(r.t, "redis-server", cmd)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if r.Proc.Exited() {
			return fmt.Errorf("exited: %v", r.Proc.err)
		}
		if r.Ping() == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.Proc.Kill()
	return errors.New("no answer to PING within 5 s")
}

// Addr is "127.0.0.1:PORT".
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// URL is "redis://127.0.0.1:PORT/0".
func (r *Redis) URL() string { return "redis://" + r.Addr() + "/0" }

// Kill kills redis-server (SIGKILL): connections refused from now on.
func (r *Redis) Kill() { r.Proc.Kill() }

// Restart starts redis-server again on the same port (empty: no
// persistence).
func (r *Redis) Restart() {
	r.t.Helper()
	var err error
	for range 20 { // the port may linger a moment
		if err = r.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Fatalf("redis-server did not restart on port %d: %v", r.Port, err)
}

// Ping sends PING and expects PONG.
func (r *Redis) Ping() error {
	_, err := r.Do("PING")
	return err
}

// Do sends one command in RESP and returns the first line of the answer.
func (r *Redis) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", r.Addr(), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "-") {
		return "", errors.New(line)
	}
	return line, nil
}
