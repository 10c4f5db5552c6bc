#!/usr/bin/env bash
# compare.sh: loadgen against wrk on the floor server, one core each.
#
# The floor server (this folder) runs on core 1 with GOMAXPROCS=1; wrk
# (-t1) and loadgen (GOMAXPROCS=1) take turns on core 0, interleaved
# (wrk, loadgen, wrk, loadgen, …), 64 connections each, no pipelining.
# wrk sends one fixed tools/call body and checks nothing; loadgen sends a
# fresh id and text each time and checks every answer. CPU is read from
# /proc/PID/stat (server) and from the finished client's rusage.
#
#   internal/loadgen/floorserver/compare.sh [RUNS] [SECONDS] [CONNECTIONS]
#
# Defaults: 5 runs of 8 s each, 64 connections; LG_FLAGS adds flags to
# loadgen's (LG_FLAGS="-spin 0" for a loadgen that sleeps whenever it
# waits). Needs taskset and wrk
# (apt-get install -y wrk), and two cores. Prints one line per run, then
# the medians.
set -euo pipefail
RUNS=${1:-5}
DUR=${2:-8}
CONNS=${3:-64}
PORT=${PORT:-18080}
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d)
trap 'kill "${SPID:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

command -v wrk >/dev/null || { echo "compare.sh: wrk is missing (apt-get install -y wrk)" >&2; exit 2; }
go build -o "$tmp/floorserver" ./internal/loadgen/floorserver
go build -o "$tmp/loadgen" ./cmd/loadgen
cat > "$tmp/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"lg 3039 caf\\u00e9"}}}'
wrk.headers["Content-Type"] = "application/json"
LUA

GOMAXPROCS=1 taskset -c 1 "$tmp/floorserver" -addr "127.0.0.1:$PORT" -for $((RUNS * DUR * 3 + 60))s 2>"$tmp/server.log" &
SPID=$!
for _ in $(seq 50); do
	grep -q listening "$tmp/server.log" 2>/dev/null && break
	sleep 0.1
done
URL="http://127.0.0.1:$PORT/mcp"
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

# measure NAME CMD…: runs CMD on core 0; prints NAME rps client_cpu_s
# server_cpu_s; the command's output is in $tmp/out.
measure() {
	local name=$1; shift
	local s0 s1
	s0=$(ticks "$SPID")
	TIMEFORMAT='%U %S'
	{ time taskset -c 0 "$@" >"$tmp/out" 2>&1; } 2>"$tmp/time" || true
	s1=$(ticks "$SPID")
	local rps reqs
	if [ "$name" = wrk ]; then
		rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/out")
		reqs=$(awk '/requests in/ {print $1}' "$tmp/out")
		if grep -q "Non-2xx\|Socket errors" "$tmp/out"; then echo "wrk reported errors:" >&2; cat "$tmp/out" >&2; fi
	else
		rps=$(sed -n 's/^  "rps": \([0-9.]*\),$/\1/p' "$tmp/out")
		reqs=$(sed -n 's/^  "answers": \([0-9]*\),$/\1/p' "$tmp/out")
		if ! grep -q '"wrong": 0,' "$tmp/out"; then echo "loadgen saw wrong answers:" >&2; cat "$tmp/out" >&2; fi
	fi
	awk -v n="$name" -v rps="$rps" -v reqs="$reqs" -v t="$(cat "$tmp/time")" -v s=$((s1 - s0)) -v hz="$HZ" 'BEGIN {
		split(t, c, " "); cpu = c[1] + c[2]
		printf "%-8s %10.0f rps  client %6.2f s CPU %6.2f µs/req  server %6.2f µs/req\n", n, rps, cpu, cpu * 1e6 / reqs, s / hz * 1e6 / reqs
	}' | tee -a "$tmp/results"
}

for i in $(seq "$RUNS"); do
	measure wrk wrk -t1 -c"$CONNS" -d"${DUR}s" -s "$tmp/post.lua" "$URL"
	# shellcheck disable=SC2086 # LG_FLAGS is a list of flags
	GOMAXPROCS=1 measure loadgen "$tmp/loadgen" -url "$URL" -c "$CONNS" -d "${DUR}s" ${LG_FLAGS:-} -json
done

echo "medians over $RUNS runs (spread min–max):"
for name in wrk loadgen; do
	grep "^$name " "$tmp/results" | awk -v n="$name" '
		{ r[NR] = $2; c[NR] = $8; s[NR] = $11 }
		function med(a, k,   i, j, t) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		END {
			k = NR
			for (i = 1; i <= k; i++) { r2[i] = r[i]; c2[i] = c[i]; s2[i] = s[i] }
			mr = med(r2, k); mc = med(c2, k); ms = med(s2, k)
			printf "%-8s %10.0f rps (%.0f–%.0f)  client %6.2f µs/req (%.2f–%.2f)  server %6.2f µs/req\n", n, mr, r2[1], r2[k], mc, c2[1], c2[k], ms
		}'
done
