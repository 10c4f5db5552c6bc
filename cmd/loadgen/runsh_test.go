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

// TestRunShServerDied: a server that dies during a run of the matrix, or
// is gone before one, is logged ("<name> died"), its row recorded as
// flagged (no requests, one wrong), and the script carries on (the CPU
// reading of a process that is gone ended it with a sed error).
func TestRunShServerDied(t *testing.T) {
	abs, err := filepath.Abs(runSh)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := `
. "$RUNSH"
tmp=$DIR/tmp OUT=$DIR/out
mkdir -p "$tmp" "$OUT/raw"
: >"$tmp/run-info.md"
SERVERS=(floor)
PORT[floor]=1
sleep 20 &
PID[floor]=$!
trap 'kill "${PID[floor]}" 2>/dev/null || true' EXIT
# The server dies while loadgen runs.
run_loadgen() { kill "${PID[floor]}"; wait "${PID[floor]}" 2>/dev/null || true; echo '{}' >"$3"; }
run_wrk() { echo "wrk ran" >&2; }
measure 1 floor loadgen
measure 1 floor wrk
echo "carried on"
cat "$OUT/matrix-raw.tsv"
`
	code, stdout, stderr := bashRun(t, dir, "", script, "RUNSH="+abs, "DIR="+dir)
	want := "carried on\n1 floor loadgen 0 0 0 0 0 0 1\n1 floor wrk 0 0 0 0 0 0 1\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d\nstdout %q, want %q\nstderr %s", code, stdout, want, stderr)
	}
	if !strings.Contains(stderr, "floor died during its run (repetition 1, loadgen): row flagged") ||
		!strings.Contains(stderr, "floor died before its run (repetition 1, wrk)") || strings.Contains(stderr, "wrk ran") {
		t.Errorf("stderr %s", stderr)
	}
	info, _ := os.ReadFile(filepath.Join(dir, "tmp", "run-info.md"))
	if !strings.Contains(string(info), "floor died during its run (repetition 1, loadgen); the row is flagged.") {
		t.Errorf("run-info.md: %s", info)
	}
}

// TestRunShRestart: a server that died is started again before its next
// repetition (ensure_up), and one alive is left alone.
func TestRunShRestart(t *testing.T) {
	abs, err := filepath.Abs(runSh)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := `
. "$RUNSH"
tmp=$DIR/tmp
mkdir -p "$tmp"
: >"$tmp/run-info.md"
# A stand-in for benchserver: says it listens, then idles.
printf '#!/bin/sh\necho "listening on 127.0.0.1:1" >&2\nexec sleep 20\n' >"$tmp/benchserver"
chmod +x "$tmp/benchserver"
SERVERS=(floor)
PORT[floor]=1
trap 'kill "${PID[floor]}" 2>/dev/null || true' EXIT
start_server floor
first=${PID[floor]}
ensure_up floor
[ "${PID[floor]}" = "$first" ] && echo "left alone"
kill "$first"
wait "$first" 2>/dev/null || true
ensure_up floor
[ "${PID[floor]}" != "$first" ] && alive floor && echo "started again"
`
	code, stdout, stderr := bashRun(t, dir, "", script, "RUNSH="+abs, "DIR="+dir)
	if code != 0 || stdout != "left alone\nstarted again\n" || !strings.Contains(stderr, "floor died: started again") {
		t.Errorf("exit %d\nstdout %q\nstderr %s", code, stdout, stderr)
	}
}

// TestRunShOrder: the matrix runs the servers in an order that rotates
// from one repetition to the next, so that each takes every place in turn
// (the ratios within a repetition were taken from runs in the same order
// every time, the first server always first).
func TestRunShOrder(t *testing.T) {
	abs, err := filepath.Abs(runSh)
	if err != nil {
		t.Fatal(err)
	}
	script := `
. "$RUNSH"
SERVERS=(a b c)
CLIENTS=(loadgen wrk)
ensure_up() { :; }
measure() { printf '%s%s ' "$2" "${3:0:1}"; }
for rep in 1 2 3 4; do matrix_rep "$rep"; echo; done
`
	code, stdout, stderr := bashRun(t, t.TempDir(), "", script, "RUNSH="+abs)
	want := "al aw bl bw cl cw \n" +
		"bl bw cl cw al aw \n" +
		"cl cw al aw bl bw \n" +
		"al aw bl bw cl cw \n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d\nruns by repetition:\n%s\nwant:\n%s\nstderr %s", code, stdout, want, stderr)
	}
}
