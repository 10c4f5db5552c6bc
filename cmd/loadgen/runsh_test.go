package main

// bench/run.sh drives loadgen (and wrk) in the load matrix. Its steps are
// shell functions; sourced, the script defines them and runs nothing, so
// these tests call them with stand-ins for the servers and clients. They
// start no server of the matrix and build nothing.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runSh is bench/run.sh, from this package's directory.
var runSh = filepath.Join("..", "..", "bench", "run.sh")

// bashRun runs script with bash in dir, with env added to a PATH of
// path (the system's when empty), bounded to 30 s. It returns the exit
// status, stdout and stderr.
func bashRun(t *testing.T, dir, path, script string, env ...string) (int, string, string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if _, err := os.Stat(runSh); err != nil {
		t.Skipf("no bench/run.sh: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", script)
	cmd.Dir = dir
	if path == "" {
		path = os.Getenv("PATH")
	}
	cmd.Env = append([]string{"PATH=" + path, "HOME=" + t.TempDir(), "LC_ALL=C.UTF-8"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// toolDir returns a directory holding links to the named tools only.
func toolDir(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range tools {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s", name)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunShOpenSSL: run.sh needs openssl only for rpcedge-tls's
// certificate: with rpcedge-tls among the servers and no openssl it stops
// at once, before building anything, saying what is missing (under set -e
// the certificate's command, its output thrown away, ended the script
// with status 127 and no word); without rpcedge-tls it does not ask.
func TestRunShOpenSSL(t *testing.T) {
	abs, err := filepath.Abs(runSh)
	if err != nil {
		t.Fatal(err)
	}
	// What the script runs before its checks; no openssl, no go.
	path := toolDir(t, "bash", "dirname", "date", "rm", "mkdir", "mktemp", "getconf", "nproc", "taskset")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := bashRun(t, t.TempDir(), path, `"$RUNSH"`, "RUNSH="+abs, "OUT="+out, "ONLY=rpcedge rpcedge-tls floor")
	if code != 2 || !strings.Contains(stderr, "run.sh: openssl is missing, and rpcedge-tls needs it") || strings.Contains(stderr, "building") {
		t.Errorf("ONLY with rpcedge-tls, no openssl: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `ONLY="rpcedge  floor"`) {
		t.Errorf("the message does not say how to leave rpcedge-tls out:\n%s", stderr)
	}
	code, stdout, stderr = bashRun(t, t.TempDir(), path, `. "$RUNSH"; check_tools; echo "checked, wrk $HAVE_WRK"`, "RUNSH="+abs, "ONLY=rpcedge floor")
	if code != 0 || !strings.Contains(stdout, "checked, wrk 0") || strings.Contains(stderr, "openssl") {
		t.Errorf("ONLY without rpcedge-tls, no openssl: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
