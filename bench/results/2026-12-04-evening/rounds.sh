#!/bin/bash
# rounds.sh N out before.test after.test: N interleaved rounds of
# BenchmarkPipeline (1 s per candidate), each test binary pinned to CPU 1
# with GOMAXPROCS=1, into out.a and out.b; compare them with
# ../2026-12-04-pipeline/pipeline-gap.py out.a out.b. Build a binary
# with `go test -c -o X.test .` in bench/ at each commit.
set -eu
n=$1 out=$(realpath -m "$2") a=$(realpath "$3") b=$(realpath "$4")
: >"$out.a"
: >"$out.b"
cd "$(dirname "$0")/../.."
for _ in $(seq "$n"); do
	GOMAXPROCS=1 taskset -c 1 "$a" -test.run '^$' -test.bench 'BenchmarkPipeline$' -test.benchtime 1s >>"$out.a" 2>&1
	GOMAXPROCS=1 taskset -c 1 "$b" -test.run '^$' -test.bench 'BenchmarkPipeline$' -test.benchtime 1s >>"$out.b" 2>&1
done
