#!/usr/bin/env bash
# stream.sh: the streamed-tool rows of the load matrix, and the plain path
# beside it; results in bench/results/<UTC date>/stream.md (raw runs in
# stream-raw/).
#
#   bench/stream.sh      # about 2 minutes; bounded by BUDGET
#
# Servers are pinned to core 1 with GOMAXPROCS=1, cmd/loadgen to core 0
# (GOMAXPROCS=1), as in run.sh.
#
# 1. Events/s: cmd/rpcedge -demo conformance, tool stream_events (N
#    progress notifications, then the result) called with a progress
#    token under 2025-11-25; loadgen -events N checks every event and the
#    result; 64 connections, REPS runs of DUR seconds for N = 16 and 256.
# 2. Memory per open stream: OPEN connections each hold a stream open
#    (stream_events, 100 events 50 ms apart: 5 s each); the server's RSS
#    (VmRSS) while they are open, less its RSS before, over OPEN; the
#    rpcedge_streams_open gauge confirms how many were open.
# 3. A2A streams, on a fresh server of their own: first memory per open
#    A2A stream (OPEN streams of the wait skill, 5 s each, held open at
#    once; RSS as in 2); then SendStreamingMessage of the demo's skill
#    stream (chunks C, delayMs 0: the task, C artifact chunks with a
#    working status between each, completed: 2C+1 events), loadgen -a2a
#    checking every event: events/s and the time to the first event (send
#    to the read that brought it) for C = 16 and 128, 64 connections.
# 4. The plain path unchanged: tools/call echo (loadgen's default calls),
#    this checkout's cmd/rpcedge against main's (built from `git archive
#    main`), interleaved A B A B, REPS runs of DUR seconds each.
#
# Environment: REPS (3), DUR (5), OPEN (500), PORT_BASE (18570), BUDGET
# (240 s), BASE (main: the commit the plain path is compared with).
set -euo pipefail
REPS=${REPS:-3}
DUR=${DUR:-5}
OPEN=${OPEN:-500}
PORT_BASE=${PORT_BASE:-18570}
BUDGET=${BUDGET:-240}
BASE=${BASE:-main}

cd "$(dirname "$0")"
DATE=$(date -u +%Y-%m-%d)
OUT=results/$DATE
mkdir -p "$OUT/stream-raw"
tmp=$(mktemp -d)
declare -a PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
log() { printf '[%4ds] %s\n' "$SECONDS" "$*" >&2; }
over() { [ "$SECONDS" -ge "$BUDGET" ]; }
command -v taskset >/dev/null || { echo "stream.sh: taskset is missing" >&2; exit 2; }

log "building this checkout and $BASE"
(cd .. && go build -o "$tmp/rpcedge" ./cmd/rpcedge && go build -o "$tmp/loadgen" ./cmd/loadgen)
mkdir -p "$tmp/base"
(cd .. && git archive "$BASE" | tar -x -C "$tmp/base")
(cd "$tmp/base" && GOFLAGS=-mod=mod go build -o "$tmp/rpcedge-base" ./cmd/rpcedge)

# start NAME BINARY PORT ARGS...: runs a server pinned to core 1; its
# process id is left in LAST.
LAST=
start() {
	local name=$1 bin=$2 port=$3
	shift 3
	GOMAXPROCS=1 taskset -c 1 "$bin" -addr "127.0.0.1:$port" -max-conns 20000 "$@" 2>"$tmp/$name.log" &
	PIDS+=($!)
	for _ in $(seq 100); do
		grep -q "listening on" "$tmp/$name.log" 2>/dev/null && break
		sleep 0.1
	done
	grep -q "listening on" "$tmp/$name.log" || { cat "$tmp/$name.log" >&2; exit 1; }
	LAST=${PIDS[-1]}
}
field() { sed -n "s/^  \"$1\": \([0-9.]*\).*/\1/p" "$2" | head -1; }
p99() { awk '/"latency_us": \{/ {l=1} l && /"p99":/ {gsub(/[,]/,"",$2); print $2; exit}' "$1"; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

start streamed "$tmp/rpcedge" $((PORT_BASE + 1)) -demo conformance
SPID=$LAST
URL="http://127.0.0.1:$((PORT_BASE + 1))/mcp"

# 1. Events/s.
{
	echo "| events per stream | streams/s | events/s | p99 per stream (µs) | server CPU per event (µs) | wrong |"
	echo "|---|---|---|---|---|---|"
} >"$tmp/events.md"
HZ=$(getconf CLK_TCK)
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
for n in 16 256; do
	echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"stream_events\",\"arguments\":{\"count\":$n},\"_meta\":{\"progressToken\":\"lg\"}}}" >"$tmp/stream-$n.json"
	for rep in $(seq "$REPS"); do
		over && break
		f="$OUT/stream-raw/events-$n-$rep.json"
		t0=$(ticks "$SPID")
		timeout $((DUR + 20)) taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "$URL" -c 64 -d "${DUR}s" \
			-mcp-version 2025-11-25 -body "$tmp/stream-$n.json" -events "$n" -json >"$f" 2>&1 || true
		t1=$(ticks "$SPID")
		ev=$(field events "$f")
		awk -v n="$n" -v rps="$(field rps "$f")" -v eps="$(field events_per_s "$f")" -v p="$(p99 "$f")" \
			-v w="$(field wrong "$f")" -v cpu="$(((t1 - t0)))" -v hz="$HZ" -v ev="$ev" \
			'BEGIN { printf "| %d | %s | %s | %s | %.2f | %s |\n", n, rps, eps, p, (ev > 0 ? cpu / hz * 1e6 / ev : 0), w }' >>"$tmp/events.md"
		log "events n=$n rep=$rep: $(field events_per_s "$f") events/s"
	done
done

# 2. Memory per open stream.
echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"stream_events\",\"arguments\":{\"count\":100,\"delayMs\":50},\"_meta\":{\"progressToken\":\"lg\"}}}" >"$tmp/slow.json"
sleep 1
before=$(rss "$SPID")
timeout 30 taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "$URL" -c "$OPEN" -n "$OPEN" -timeout 20s \
	-mcp-version 2025-11-25 -body "$tmp/slow.json" -events 100 -json >"$OUT/stream-raw/open.json" 2>&1 &
LG=$!
sleep 3
during=$(rss "$SPID")
open=$(curl -s "http://127.0.0.1:$((PORT_BASE + 1))/metrics" | awk '/^rpcedge_streams_open / {print $2}')
wait "$LG" || true
per=$(awk -v a="$before" -v b="$during" -v n="${open:-0}" 'BEGIN { if (n > 0) printf "%.1f", (b - a) / n; else print "n/a" }')
log "memory: RSS $before KiB idle, $during KiB with ${open:-?} streams open: $per KiB per stream"

# 3. A2A streams, on a server of their own: memory per open stream first
# (the server fresh), then events/s and the time to the first event.
start a2a "$tmp/rpcedge" $((PORT_BASE + 4))
A2APID=$LAST
A2A="http://127.0.0.1:$((PORT_BASE + 4))/a2a"
echo '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"metadata":{"skillId":"wait","seconds":5},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hold"}]}}}' >"$tmp/a2a-open.json"
sleep 1
a2a_before=$(rss "$A2APID")
timeout 30 taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "$A2A" -c "$OPEN" -n "$OPEN" -timeout 20s \
	-body "$tmp/a2a-open.json" -events 3 -a2a -json >"$OUT/stream-raw/a2a-open.json" 2>&1 &
LG=$!
sleep 3
a2a_during=$(rss "$A2APID")
a2a_open=$(curl -s "http://127.0.0.1:$((PORT_BASE + 4))/metrics" | awk '/^rpcedge_streams_open / {print $2}')
wait "$LG" || true
a2a_per=$(awk -v a="$a2a_before" -v b="$a2a_during" -v n="${a2a_open:-0}" 'BEGIN { if (n > 0) printf "%.1f", (b - a) / n; else print "n/a" }')
a2a_ok=$(field ok "$OUT/stream-raw/a2a-open.json")
a2a_f50=$(awk '/"first_event_us": \{/ {l=1} l && /"p50":/ {gsub(/[,]/,"",$2); print $2; exit}' "$OUT/stream-raw/a2a-open.json")
log "a2a memory: RSS $a2a_before KiB idle, $a2a_during KiB with ${a2a_open:-?} A2A streams open: $a2a_per KiB per stream ($a2a_ok of $OPEN streams right)"
{
	echo "| events per stream | streams/s | events/s | first event p50 / p99 (µs) | p99 per stream (µs) | server CPU per event (µs) | wrong |"
	echo "|---|---|---|---|---|---|---|"
} >"$tmp/a2a.md"
fp() { awk -v k="$1" '/"first_event_us": \{/ {l=1} l && $0 ~ "\"" k "\":" {gsub(/[,]/,"",$2); print $2; exit}' "$2"; }
for c in 16 128; do
	n=$((2 * c + 1))
	echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendStreamingMessage\",\"params\":{\"metadata\":{\"skillId\":\"stream\",\"chunks\":$c,\"delayMs\":0},\"message\":{\"role\":\"ROLE_USER\",\"messageId\":\"m\",\"parts\":[{\"text\":\"$(head -c $((c * 8)) /dev/zero | tr '\0' 'x')\"}]}}}" >"$tmp/a2a-$c.json"
	for rep in $(seq "$REPS"); do
		over && break
		f="$OUT/stream-raw/a2a-$c-$rep.json"
		t0=$(ticks "$A2APID")
		timeout $((DUR + 20)) taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "$A2A" -c 64 -d "${DUR}s" \
			-body "$tmp/a2a-$c.json" -events "$n" -a2a -json >"$f" 2>&1 || true
		t1=$(ticks "$A2APID")
		ev=$(field events "$f")
		awk -v n="$n" -v rps="$(field rps "$f")" -v eps="$(field events_per_s "$f")" -v p="$(p99 "$f")" \
			-v f50="$(fp p50 "$f")" -v f99="$(fp p99 "$f")" \
			-v w="$(field wrong "$f")" -v cpu="$(((t1 - t0)))" -v hz="$HZ" -v ev="$ev" \
			'BEGIN { printf "| %d | %s | %s | %s / %s | %s | %.2f | %s |\n", n, rps, eps, f50, f99, p, (ev > 0 ? cpu / hz * 1e6 / ev : 0), w }' >>"$tmp/a2a.md"
		log "a2a events n=$n rep=$rep: $(field events_per_s "$f") events/s, first event p50 $(fp p50 "$f") µs, wrong $(field wrong "$f")"
	done
done

# 4. The plain path: this checkout against $BASE, interleaved.
start plain "$tmp/rpcedge" $((PORT_BASE + 2))
APID=$LAST
start base "$tmp/rpcedge-base" $((PORT_BASE + 3))
BPID=$LAST
{
	echo "| build | run | answers/s | p99 (µs) | server CPU per request (µs) | wrong |"
	echo "|---|---|---|---|---|---|"
} >"$tmp/plain.md"
for rep in $(seq "$REPS"); do
	for which in this base; do
		over && break 2
		if [ "$which" = this ]; then port=$((PORT_BASE + 2)) pid=$APID; else port=$((PORT_BASE + 3)) pid=$BPID; fi
		f="$OUT/stream-raw/plain-$which-$rep.json"
		t0=$(ticks "$pid")
		timeout $((DUR + 20)) taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "http://127.0.0.1:$port/mcp" -c 64 -d "${DUR}s" \
			-mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -json >"$f" 2>&1 || true
		t1=$(ticks "$pid")
		awk -v b="$which" -v r="$rep" -v rps="$(field rps "$f")" -v p="$(p99 "$f")" -v w="$(field wrong "$f")" \
			-v n="$(field answers "$f")" -v cpu="$((t1 - t0))" -v hz="$HZ" \
			'BEGIN { printf "| %s | %d | %s | %s | %.2f | %s |\n", b, r, rps, p, (n > 0 ? cpu / hz * 1e6 / n : 0), w }' >>"$tmp/plain.md"
		log "plain $which rep=$rep: $(field rps "$f") answers/s"
	done
done

{
	echo "# Streamed answers: the load matrix's streamed-tool rows ($DATE)"
	echo
	echo "Server: cmd/rpcedge on core 1 (GOMAXPROCS=1); client: cmd/loadgen on core 0 (GOMAXPROCS=1), 64 connections, every event and result checked."
	echo
	echo "## Events/s (tool stream_events: N progress notifications, then the result)"
	echo
	cat "$tmp/events.md"
	echo
	echo "## Memory per open stream"
	echo
	echo "$OPEN connections each holding a 5 s stream (100 events, 50 ms apart): server RSS $before KiB idle, $during KiB with ${open:-?} streams open (rpcedge_streams_open): **$per KiB per open stream**."
	echo
	echo "## A2A streams (SendStreamingMessage, skill stream: the task, then chunks with a working status between each, then completed)"
	echo
	echo "Every event checked by loadgen -a2a; first event: from the send to the read that brought the first event."
	echo
	cat "$tmp/a2a.md"
	echo
	echo "Memory per open A2A stream (a fresh server): $OPEN streams of the wait skill (5 s) open at once: server RSS $a2a_before KiB idle, $a2a_during KiB with ${a2a_open:-?} open (rpcedge_streams_open): **$a2a_per KiB per open stream** ($a2a_ok of $OPEN streams right; first event p50 $a2a_f50 µs while they opened)."
	echo
	echo "## The plain path (tools/call echo, 2025-11-25), this checkout against $BASE ($(git rev-parse --short "$BASE"))"
	echo
	cat "$tmp/plain.md"
} >"$OUT/stream.md"
cat "$OUT/stream.md"
