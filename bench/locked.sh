#!/bin/bash
# Locked instructions per request, for the candidates of BenchmarkPipeline:
# every atomic read-modify-write (LOCK-prefixed), every atomic store (an
# XCHG with memory on amd64) and every mutex operation is one, and each
# waits for the core's store buffer to drain — a cost instructions.sh does
# not see. It runs the candidate under callgrind with per-instruction
# counts (400 and 1,400 batches of 16 pipelined requests; the difference,
# divided by 16,000, is the steady state per request), finds the locked
# instructions of the test binary with objdump, and sums their executions,
# by function. amd64 only.
#
#	bench/locked.sh [server ...]     (default: floor-stream rpcedge)
#
# What one costs here is measured beside it in the README ("Serving at the
# floor"): it depends on what the store buffer holds, from ~5 ns back to
# back down to too little to resolve when scattered.
set -eu
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "locked.sh: valgrind is missing (apt-get install -y valgrind)" >&2; exit 1; }
command -v objdump >/dev/null || { echo "locked.sh: objdump is missing (apt-get install -y binutils)" >&2; exit 1; }
[ "$(go env GOARCH)" = amd64 ] || { echo "locked.sh: amd64 only" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .
objdump -d --no-show-raw-insn "$tmp/bench.test" |
	awk '/^ *[0-9a-f]+:/ { a = $1; sub(":", "", a); if ($0 ~ /\tlock / || $0 ~ /\txchg .*\(/) print a }' >"$tmp/locked"
profile() { # server batches out
	for try in 1 2 3; do
		if GOMAXPROCS=1 GOGC=off GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \
			--callgrind-out-file="$3" "$tmp/bench.test" -test.run '^$' -test.bench "BenchmarkPipeline\$/server=$1\$" \
			-test.benchtime "$2x" >"$tmp/out" 2>&1 && grep -q '^ok\|^PASS' "$tmp/out"; then
			return
		fi
		echo "locked.sh: $1 at $2 batches: run $try failed" >&2
	done
	exit 1
}
for s in "${@:-floor-stream rpcedge}"; do
	for name in $s; do
		profile "$name" 400 "$tmp/a"
		profile "$name" 1400 "$tmp/b"
		python3 - "$tmp/locked" "$tmp/a" "$tmp/b" "$name" <<'EOF'
import collections, re, sys

locked = {int(l, 16) for l in open(sys.argv[1]) if l.strip()}

def executions(path):
    # Per-instruction lines are "0xADDR line count"; the line after a
    # calls= line is the call's inclusive cost, not an execution.
    obs, fns, seen = {}, {}, collections.Counter()
    ours, fn, skip = False, "?", False
    for line in open(path):
        m = re.match(r'(c?)(ob|fn)=(\(\d+\))\s*(.*)', line.rstrip('\n'))
        if m:
            table = obs if m.group(2) == 'ob' else fns
            if m.group(4):
                table[m.group(3)] = m.group(4)
            if not m.group(1):
                if m.group(2) == 'ob':
                    ours = obs.get(m.group(3), '').endswith('bench.test')
                else:
                    fn = fns.get(m.group(3), '?')
            continue
        if line.startswith('calls='):
            skip = True
            continue
        if line.startswith('0x'):
            if skip:
                skip = False
                continue
            if ours:
                p = line.split()
                if int(p[0], 16) in locked:
                    seen[fn] += int(p[2])
    return seen

a, b = executions(sys.argv[2]), executions(sys.argv[3])
per = {f: (b[f] - a[f]) / 16000 for f in set(a) | set(b)}
print("%s %.1f locked instructions/request" % (sys.argv[4], sum(per.values())))
for f, n in sorted(per.items(), key=lambda kv: -kv[1]):
    if n >= 0.05:
        print("  %5.2f %s" % (n, f))
EOF
	done
done
