// Command plot summarises a run of bench/run.sh: it reads the load
// matrix's raw samples and the Go benchmark output, and writes matrix.md
// (medians with their min–max spread, paired ratios, the targets of
// TARGETS.md met or missed) and PNG charts drawn with gonum/plot:
//
//	go run ./plot -dir results/2026-12-02
//
// It reads, in -dir:
//
//	matrix-raw.tsv  one line per load run: rep server client rps requests
//	                p50_us p99_us p999_us server_cpu_s wrong
//	paired-raw.tsv  the same columns for run.sh's ABBA pairs of rpcedge and
//	                the floor (rep is the pair)
//	rss.tsv         server vmhwm_kib (peak RSS over the whole matrix)
//	bench.txt       go test -bench output (BenchmarkDecode, BenchmarkServe…)
//	run-info.md     optional: copied to the top of matrix.md
//
// and writes matrix.md, throughput.png, p99.png, cpu-per-request.png,
// decode-ns.png and decode-mbs.png there. A missing input leaves its
// sections and charts out.
//
// With -sweep DIR it summarises sweep.sh's sweep-raw.tsv instead (size
// server rep rps requests server_cpu_s wrong) into sweep.md,
// sweep-cpu.png and sweep-cpu-per-kib.png.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the results folder of one run")
	sweepDir := flag.String("sweep", "", "summarise the size sweep (sweep.sh) in this folder instead")
	flag.Parse()
	do := func() error { return run(*dir) }
	if *sweepDir != "" {
		do = func() error { return runSweep(*sweepDir) }
	}
	if err := do(); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	var r report
	var err error
	if r.matrix, err = readMatrix(filepath.Join(dir, "matrix-raw.tsv")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if r.paired, err = readMatrix(filepath.Join(dir, "paired-raw.tsv")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if r.rss, err = readRSS(filepath.Join(dir, "rss.tsv")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if r.bench, err = readBench(filepath.Join(dir, "bench.txt")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(dir, "run-info.md")); err == nil {
		r.info = string(b)
	}
	if err := r.charts(dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "matrix.md"), []byte(r.markdown()), 0o644)
}
