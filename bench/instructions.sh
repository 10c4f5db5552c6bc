#!/bin/bash
# Instructions per request, counted by valgrind (callgrind), for the
# candidates of BenchmarkPipeline: on a quiet machine, a measure that
# other jobs' timing noise does not move, for changes too small for the
# benchmark's timing to resolve (a few tens of ns). It counts instructions,
# not cycles: a cache miss, a locked instruction or a clock read through
# the vDSO (which valgrind does not see) cost time that it does not show,
# so a change is kept on its time measured beside it, and this count says
# what the change did to the work.
#
#	bench/instructions.sh [server ...]     (default: floor-stream rpcedge)
#
# Each candidate runs 400 and 1,400 batches of 16 pipelined requests with
# GOMAXPROCS=1 and the collector off; the difference, divided by 16,000,
# is the steady state per request (setup and the first batches cancel).
# Run it on a quiet machine: under load the runtime spins and waits more
# (counted too). valgrind 3.19 cannot execute RDTSCP, which the runtime's
# lock-contention timing would run under load: GODEBUG cpu.rdtscp=off
# keeps the runtime off it (golang.org/x/sys/cpu, which does not know the
# name, warns once and goes on), and async preemption stays off so that no
# signal lands in a count. A run that fails anyway is retried, twice.
set -eu
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is missing (apt-get install -y valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .
count() { # server batches
	for try in 1 2 3; do
		rm -f "$tmp/cg"
		if GOMAXPROCS=1 GOGC=off GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$tmp/bench.test" \
			-test.run '^$' -test.bench "BenchmarkPipeline\$/server=$1\$" -test.benchtime "$2x" >"$tmp/out" 2>&1 &&
			grep -q '^ok\|^PASS' "$tmp/out"; then
			n=$(awk '/^(summary|totals):/ {print $2; exit}' "$tmp/cg")
			if [ -n "$n" ]; then
				echo "$n"
				return
			fi
		fi
		echo "instructions.sh: $1 at $2 batches: run $try failed" >&2
	done
	exit 1
}
for s in "${@:-floor-stream rpcedge}"; do
	for name in $s; do
		a=$(count "$name" 400)
		b=$(count "$name" 1400)
		if [ "$b" -le "$a" ]; then
			echo "instructions.sh: $name: $b instructions at 1,400 batches, $a at 400: not a steady state (a loaded machine?)" >&2
			exit 1
		fi
		echo "$name $(((b - a) / 16000)) instructions/request"
	done
done
