#!/usr/bin/env bash
# sweep.sh: how the cost of a request grows with its body. tools/call
# echo with texts of 1 KiB, 16 KiB, 256 KiB and 1 MiB minus the envelope
# and 64 bytes (the body then is just under the default ceiling, 1 MiB,
# whatever id loadgen writes), identity encoding (GZIP=1: gzip), sent
# by cmd/loadgen (-body: the id rewritten per request, every answer
# checked) to rpcedge (cmd/rpcedge), fasthttp + encoding/json, net/http +
# encoding/json, the MCP Go SDK and the floor (fasthttp reading the body
# and returning its text by byte searches, unparsed). Each server pinned
# to core 1 with GOMAXPROCS=1, loadgen to core 0, CONNS connections,
# REPS interleaved repetitions of DUR seconds per size; server CPU per
# request from /proc/PID/stat. bench/plot -sweep writes sweep.md and
# sweep-cpu.png / sweep-cpu-per-kib.png (log-log) from sweep-raw.tsv.
#
#   bench/sweep.sh   # about 5 minutes at the defaults
#
# Environment: REPS (3), DUR (3), CONNS (16), ONLY (a subset of the
# servers), OUT (results/<UTC date>-sweep, -sweep-gzip with GZIP=1),
# PORT_BASE (18570), TEXT (sentence: the small fixture's sentence; code:
# a line of Go source as JSON, a \n, \t, \" or \\ every few bytes), GZIP
# (1: every body sent gzip-compressed, loadgen -gzip; each server undoes
# it with the klauspost reader rpcedge uses, pooled).
set -euo pipefail

REPS=${REPS:-3}
DUR=${DUR:-3}
CONNS=${CONNS:-16}
PORT_BASE=${PORT_BASE:-18570}
VERSION=2025-11-25
SERVERS=(rpcedge fasthttp-json nethttp-json mcp-go-sdk floor)
[ -n "${ONLY:-}" ] && read -r -a SERVERS <<<"$ONLY"
SIZES=(1024 16384 262144 1048576) # text bytes; the last is the whole body

cd "$(dirname "$0")" # bench/
GZIP_FLAG=()
SUFFIX=
if [ "${GZIP:-0}" = 1 ]; then GZIP_FLAG=(-gzip); SUFFIX=-gzip; fi
OUT=${OUT:-results/$(date -u +%Y-%m-%d)-sweep$SUFFIX}
mkdir -p "$OUT"
tmp=$(mktemp -d)
declare -A PID PORT
cleanup() {
	for name in "${!PID[@]}"; do kill -TERM "${PID[$name]}" 2>/dev/null || true; done
	for name in "${!PID[@]}"; do wait "${PID[$name]}" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
log() { printf '[%4ds] %s\n' "$SECONDS" "$*" >&2; }
command -v taskset >/dev/null || { echo "sweep.sh: taskset is missing" >&2; exit 2; }

log "building"
(cd .. && go build -o "$tmp/rpcedge" ./cmd/rpcedge && go build -o "$tmp/loadgen" ./cmd/loadgen)
go build -o "$tmp/benchserver" ./servers/cmd/benchserver
go build -o "$tmp/plot" ./plot

# The bodies: the small fixture's sentence (or a line of code) repeated
# whole and padded with x to the text size, so that no escape is cut.
case ${TEXT:-sentence} in
sentence) unit='The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!! ' ;;
code) unit='func f(x int) string {\n\tif x > 0 {\n\t\treturn \"pos\\n\"\n\t}\n\treturn fmt.Sprint(x)\n}\n' ;;
*) echo "sweep.sh: TEXT must be sentence or code" >&2; exit 2 ;;
esac
for size in "${SIZES[@]}"; do
	head='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
	tail='"}}}'
	n=$size
	# The last text fills the 1 MiB ceiling, less 64 bytes: room for the
	# ids loadgen writes in place of 1.
	[ "$size" = 1048576 ] && n=$((size - ${#head} - ${#tail} - 64))
	{
		printf '%s' "$head"
		# awk -v would read the backslashes as escapes: the unit comes
		# through the environment.
		UNIT=$unit awk -v n="$n" 'BEGIN {
			s = ENVIRON["UNIT"]; u = length(s); t = s
			while (2 * length(t) <= n) t = t t
			t = t substr(t, 1, int((n - length(t)) / u) * u)
			while (length(t) < n) t = t "x"
			printf "%s", t
		}'
		printf '%s' "$tail"
	} >"$tmp/body-$size.json"
done

i=0
for name in "${SERVERS[@]}"; do
	i=$((i + 1))
	port=$((PORT_BASE + i))
	PORT[$name]=$port
	if [ "$name" = rpcedge ]; then
		GOMAXPROCS=1 taskset -c 1 "$tmp/rpcedge" -addr "127.0.0.1:$port" 2>"$tmp/$name.log" &
	else
		GOMAXPROCS=1 taskset -c 1 "$tmp/benchserver" -name "$name" -addr "127.0.0.1:$port" -for 30m 2>"$tmp/$name.log" &
	fi
	PID[$name]=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$tmp/$name.log" 2>/dev/null && break
		kill -0 "${PID[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "listening on" "$tmp/$name.log" || { echo "sweep.sh: $name did not start:" >&2; cat "$tmp/$name.log" >&2; exit 1; }
done
HZ=$(getconf CLK_TCK)
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

echo "size server rep rps requests server_cpu_s wrong" >"$OUT/sweep-raw.tsv"
for size in "${SIZES[@]}"; do
	for rep in $(seq "$REPS"); do
		log "size $size, repetition $rep of $REPS"
		for name in "${SERVERS[@]}"; do
			pid=${PID[$name]} raw=$tmp/run.json
			t0=$(ticks "$pid")
			timeout $((DUR + 30)) taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "http://127.0.0.1:${PORT[$name]}/mcp" \
				-c "$CONNS" -d "${DUR}s" -mcp-version "$VERSION" -header "Accept: application/json, text/event-stream" \
				-body "$tmp/body-$size.json" ${GZIP_FLAG[@]+"${GZIP_FLAG[@]}"} -timeout 30s -json >"$raw" 2>&1 || true
			t1=$(ticks "$pid")
			awk -v size="$size" -v rep="$rep" -v srv="$name" -v cpu="$(awk -v d=$((t1 - t0)) -v hz="$HZ" 'BEGIN { printf "%.3f", d / hz }')" '
				/^  "rps": /     { gsub(/[,]/, "", $2); rps = $2 }
				/^  "answers": / { gsub(/[,]/, "", $2); n = $2 }
				/^  "wrong": /   { gsub(/[,]/, "", $2); wrong = $2 }
				END { if (rps == "") { rps = 0; n = 0; wrong = 1 }; print size, srv, rep, rps, n, cpu, wrong }' "$raw" >>"$OUT/sweep-raw.tsv"
			tail -1 "$OUT/sweep-raw.tsv" | awk '{ printf "  %-14s %8.0f req/s  server %9.1f µs/req  wrong %d\n", $2, $4, ($5 ? $6 * 1e6 / $5 : 0), $7 }' >&2
		done
	done
done
{
	echo "Run of \`bench/sweep.sh\` (REPS=$REPS DUR=$DUR CONNS=$CONNS TEXT=${TEXT:-sentence} GZIP=${GZIP:-0}), $(date -u '+%Y-%m-%d %H:%M UTC'),"
	echo "$(go version | cut -d' ' -f3-4), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$OUT/sweep-info.md"
"$tmp/plot" -sweep "$OUT"
log "done: $OUT/sweep.md"
