#!/usr/bin/env bash
# run.sh: the serving and decoding benchmarks of bench/, side by side, and
# the loopback load matrix; results in bench/results/<UTC date>/.
#
#   bench/run.sh   # about 8 minutes (10 on a busy machine); bounded by 12
#
# 1. The load matrix: every server pinned to core 1 with GOMAXPROCS=1
#    (rpcedge = cmd/rpcedge built from ../; rpcedge-auth = the same with
#    -auth-issuer, every request carrying one valid token from
#    bench/authority; rpcedge-token = authorization off, the same token
#    sent anyway; rpcedge-nethttp = the same pipeline on net/http
#    (-transport nethttp); rpcedge-tls = HTTPS with a P-256 certificate,
#    wrk only; the others = benchserver), the
#    client pinned to core 0: cmd/loadgen (GOMAXPROCS=1, checks every
#    answer; -text-size LG_TEXT_SIZE, 176: the small fixture's shape and
#    size with the id and text fresh per request; its default -spin, so
#    that a client asleep between answers does not add its wakeups to the
#    server's CPU) and wrk -t1 (a Lua script posting the small fixture's shape, id and text varied per request), 64
#    connections, no pipelining, MCP 2025-11-25 headers, REPS repetitions
#    of DUR seconds each, the servers' order rotating from one repetition
#    to the next (A B C, then B C A, then C A B, …) so that each takes
#    every place in turn; bench/plot's ratios within a repetition compare
#    runs of one pass over the servers, not adjacent ones (1b's pairs are).
#    A server that dies is logged ("<name> died"), its row recorded as
#    flagged, and it is started again for the next repetition. Server CPU
#    per request from /proc/PID/stat, peak RSS from VmHWM.
# 1b. The targets' comparison again, in ABBA pairs: rpcedge and the floor
#    in runs of PAIR_DUR seconds next to each other, PAIRS pairs per
#    client; bench/plot takes the ratio within each pair (median and a
#    95 % bootstrap interval).
# 2. Profiles of rpcedge and the floor under loadgen (perf, flat, summed by
#    component).
# 3. Go benchmarks: BenchmarkDecode (-cpu 1, -benchtime 100ms) and
#    BenchmarkServe, BenchmarkServe2026 (-benchtime 100ms), ROUNDS samples
#    each (-count 6, taken as 6 interleaved rounds of -count 1 from one
#    test binary, so drift on this shared machine hits every candidate
#    alike), summarised by benchstat; then rpcedge's in-process allocation
#    and CPU profiles (go tool pprof).
# 4. bench/plot writes matrix.md and the PNG charts.
# The matrix's streaming rows (MCP streamed tools; A2A streams: events/s,
# time to first event, memory per open stream) are bench/stream.sh's.
#
# Environment: REPS (5), DUR (3, seconds per load run), ROUNDS (6), ONLY
# (a space-separated subset of the servers), OUT (results/<UTC date>),
# PORT_BASE (18470: ports PORT_BASE+1… must be free), PAIRS (12, 0 for
# none), PAIR_DUR (2 s), LG_TEXT_SIZE (176; 0 for loadgen's short
# texts), BUDGET (720 s: repetitions, pairs and rounds that
# would end after it are not started; the matrix keeps the pairs' time and
# MATRIX_RESERVE, 200 s, for what follows them; every command also has
# its own timeout). Needs taskset, two cores, openssl when rpcedge-tls is
# among the servers (its certificate), and wrk (apt-get install -y wrk;
# without it the wrk rows are skipped); perf is optional.
#
# Sourced (. bench/run.sh), it defines its settings and steps and runs
# nothing: cmd/loadgen's runsh_test.go tests the steps that way.
set -euo pipefail

REPS=${REPS:-5}
DUR=${DUR:-3}
ROUNDS=${ROUNDS:-6}
CONNS=64
PORT_BASE=${PORT_BASE:-18470}
BUDGET=${BUDGET:-720}
MATRIX_RESERVE=${MATRIX_RESERVE:-200} # s kept for what follows the matrix
PAIRS=${PAIRS:-12}
PAIR_DUR=${PAIR_DUR:-2}
VERSION=2025-11-25
LG_TEXT_SIZE=${LG_TEXT_SIZE:-176} # loadgen's texts: the small fixture's size (0: loadgen's short texts)
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
SERVERS=(rpcedge rpcedge-nethttp rpcedge-tls rpcedge-token rpcedge-auth mcp-go-sdk mark3labs nethttp-json fasthttp-json floor)
[ -n "${ONLY:-}" ] && read -r -a SERVERS <<<"$ONLY" # a subset, such as ONLY="rpcedge rpcedge-auth floor"


declare -A PID PORT AUTHZ PROTO
HZ=$(getconf CLK_TCK)

cleanup() {
	for name in "${!PID[@]}"; do
		kill -TERM "${PID[$name]}" 2>/dev/null || true
	done
	for name in "${!PID[@]}"; do
		wait "${PID[$name]}" 2>/dev/null || true
	done
	rm -rf "$tmp"
}

log() { printf '[%4ds] %s\n' "$SECONDS" "$*" >&2; }

# selected NAME: whether NAME is one of the servers run (SERVERS, ONLY).
selected() {
	local s
	for s in "${SERVERS[@]}"; do
		[ "$s" = "$1" ] && return 0
	done
	return 1
}

# check_tools: the tools the run needs, checked before anything is built
# (exit 2 with what is missing); sets HAVE_WRK.
check_tools() {
	command -v taskset >/dev/null || { echo "run.sh: taskset is missing" >&2; exit 2; }
	[ "$(nproc)" -ge 2 ] || { echo "run.sh: needs two cores" >&2; exit 2; }
	if selected rpcedge-tls && ! command -v openssl >/dev/null; then
		echo "run.sh: openssl is missing, and rpcedge-tls needs it for its certificate (apt-get install -y openssl, or run without rpcedge-tls: ONLY=\"${SERVERS[*]/rpcedge-tls/}\")" >&2
		exit 2
	fi
	HAVE_WRK=1
	command -v wrk >/dev/null || { HAVE_WRK=0; log "wrk is missing (apt-get install -y wrk): wrk rows skipped"; }
}

# make_cert: rpcedge-tls's self-signed P-256 certificate, in $tmp.
make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>"$tmp/openssl.log" ||
		{ echo "run.sh: openssl could not make rpcedge-tls's certificate:" >&2; cat "$tmp/openssl.log" >&2; exit 1; }
}

# start_authority: the token issuer rpcedge-auth trusts (its audience is
# rpcedge-auth's /mcp); sets issuer, and AUTHZ of rpcedge-auth and of
# rpcedge-token (which carries the same token, authorization off).
start_authority() {
	local port=${PORT[rpcedge-auth]}
	taskset -c 0 "$tmp/authority" -audience "http://127.0.0.1:$port/mcp" -ttl 1h -for 30m >"$tmp/authority.out" 2>"$tmp/authority.log" &
	PID[authority]=$!
	for _ in $(seq 100); do grep -q '^token ' "$tmp/authority.out" 2>/dev/null && break; sleep 0.1; done
	issuer=$(awk '/^issuer /{print $2}' "$tmp/authority.out")
	[ -n "$issuer" ] || { echo "run.sh: the authority did not start" >&2; exit 1; }
	AUTHZ[$port]="Bearer $(awk '/^token /{print $2}' "$tmp/authority.out")"
	selected rpcedge-token && AUTHZ[${PORT[rpcedge-token]}]=${AUTHZ[$port]}
	return 0
}

# start_server NAME: starts NAME on core 1 at PORT[NAME] and waits until
# it listens; sets PID[NAME]. It fails, its log on stderr, when the
# server does not start.
start_server() {
	local name=$1 port=${PORT[$1]}
	# Empty the log first: the server's own redirection truncates it only
	# once its process has started, and until then the wait below could
	# read the "listening on" of the process this one replaces, then find
	# the log emptied (TestRunShRestart failed so once under load).
	: >"$tmp/$name.log"
	case $name in
	rpcedge)
		GOMAXPROCS=1 taskset -c 1 "$tmp/rpcedge" -addr "127.0.0.1:$port" 2>"$tmp/$name.log" &
		;;
	rpcedge-nethttp)
		# The same pipeline on net/http (fastserver.Server.ServeNetHTTP).
		GOMAXPROCS=1 taskset -c 1 "$tmp/rpcedge" -addr "127.0.0.1:$port" -transport nethttp 2>"$tmp/$name.log" &
		;;
	rpcedge-tls)
		# HTTPS, wrk only: loadgen speaks plain HTTP.
		GOMAXPROCS=1 taskset -c 1 "$tmp/rpcedge" -addr "127.0.0.1:$port" -tls-cert "$tmp/cert.pem" -tls-key "$tmp/key.pem" 2>"$tmp/$name.log" &
		PROTO[$port]=https
		;;
	rpcedge-token)
		# Authorization off, the same ~800-byte token in every request:
		# what carrying the token costs, apart from checking it.
		GOMAXPROCS=1 taskset -c 1 "$tmp/rpcedge" -addr "127.0.0.1:$port" 2>"$tmp/$name.log" &
		;;
	rpcedge-auth)
		GOMAXPROCS=1 taskset -c 1 "$tmp/rpcedge" -addr "127.0.0.1:$port" -auth-issuer "$issuer" \
			-auth-audience "http://127.0.0.1:$port/mcp" 2>"$tmp/$name.log" &
		;;
	*)
		GOMAXPROCS=1 taskset -c 1 "$tmp/benchserver" -name "$name" -addr "127.0.0.1:$port" -for 15m 2>"$tmp/$name.log" &
		;;
	esac
	PID[$name]=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$tmp/$name.log" 2>/dev/null && break
		kill -0 "${PID[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "listening on" "$tmp/$name.log" 2>/dev/null || { echo "run.sh: $name did not start:" >&2; cat "$tmp/$name.log" >&2; return 1; }
}

# alive NAME: whether NAME's process is still there.
alive() { [ -n "${PID[$1]:-}" ] && kill -0 "${PID[$1]}" 2>/dev/null; }

# ensure_up NAME: starts NAME again if it died (during a run, which was
# recorded as flagged, or between its runs); when it will not start, its
# runs are recorded as flagged.
ensure_up() {
	alive "$1" && return 0
	wait "${PID[$1]}" 2>/dev/null || true
	if start_server "$1"; then
		log "$1 died: started again"
		echo "$1 died and was started again (its peak RSS is the new process's)." >>"$tmp/run-info.md"
	else
		log "$1 died and did not start again: its runs are recorded as flagged"
	fi
}

# ticks PID: the process's user+system CPU in clock ticks; fails, quietly,
# when the process is gone.
ticks() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	printf '%s\n' "${stat##*) }" | awk '{print $12 + $13}'
}

run_loadgen() { # PORT SECONDS OUTFILE
	[ "${PROTO[$1]:-http}" = https ] && { : >"$3"; return; } # loadgen speaks plain HTTP
	local auth=()
	[ -n "${AUTHZ[$1]:-}" ] && auth=(-header "Authorization: ${AUTHZ[$1]}")
	timeout $(($2 + 20)) taskset -c 0 env GOMAXPROCS=1 "$tmp/loadgen" -url "http://127.0.0.1:$1/mcp" \
		-c "$CONNS" -d "$2s" -mcp-version "$VERSION" -header "Accept: application/json, text/event-stream" \
		-text-size "$LG_TEXT_SIZE" "${auth[@]}" -json >"$3" 2>&1 || true
}
run_wrk() { # PORT SECONDS OUTFILE
	local script=$tmp/post.lua
	[ -n "${AUTHZ[$1]:-}" ] && script=$tmp/post-auth.lua
	local token=${AUTHZ[$1]:-}
	timeout $(($2 + 20)) taskset -c 0 env TOKEN="${token#Bearer }" wrk -t1 -c"$CONNS" -d"$2s" -s "$script" "${PROTO[$1]:-http}://127.0.0.1:$1/mcp" >"$3" 2>&1 || true
}

# died REP SERVER CLIENT TSV WHEN: SERVER's process is gone: say so, and
# record the run as flagged (no requests, one wrong) so that the matrix
# shows it and carries on.
died() {
	log "$2 died $5 (repetition $1, $3): row flagged"
	echo "$2 died $5 (repetition $1, $3); the row is flagged." >>"$tmp/run-info.md"
	echo "$1 $2 $3 0 0 0 0 0 0 1" >>"$4"
}

# measure REP SERVER CLIENT [TSV SECONDS TAG]: one run of SECONDS (DUR);
# appends a line to TSV (matrix-raw.tsv), flagged when the server is
# gone before or after the run.
measure() {
	local rep=$1 name=$2 client=$3 tsv=${4:-$OUT/matrix-raw.tsv} secs=${5:-$DUR}
	local raw="$OUT/raw/$2-$3-${6:-}$1.txt" pid=${PID[$2]:-}
	if [ "$client" = loadgen ] && [ "${PROTO[${PORT[$name]}]:-http}" = https ]; then
		return # no loadgen row for HTTPS
	fi
	local t0 t1
	if ! alive "$name" || ! t0=$(ticks "$pid"); then
		died "$rep" "$name" "$client" "$tsv" "before its run"
		return 0
	fi
	"run_$client" "${PORT[$name]}" "$secs" "$raw"
	if ! alive "$name" || ! t1=$(ticks "$pid"); then
		died "$rep" "$name" "$client" "$tsv" "during its run"
		return 0
	fi
	local cpu
	cpu=$(awk -v d=$((t1 - t0)) -v hz="$HZ" 'BEGIN { printf "%.3f", d / hz }')
	if [ "$client" = loadgen ]; then
		awk -v rep="$rep" -v srv="$name" -v cpu="$cpu" '
			/^  "rps": /     { gsub(/[,]/, "", $2); rps = $2 }
			/^  "answers": / { gsub(/[,]/, "", $2); n = $2 }
			/^  "wrong": /   { gsub(/[,]/, "", $2); wrong = $2 }
			/^  "latency_us": \{/ { lat = 1 }
			lat && /"p50": /   { gsub(/[,]/, "", $2); p50 = $2 }
			lat && /"p99": /   { gsub(/[,]/, "", $2); p99 = $2 }
			lat && /"p99_9": / { gsub(/[,]/, "", $2); p999 = $2 }
			lat && /^  \}/ { lat = 0 }
			END {
				if (rps == "") { rps = 0; n = 0; p50 = p99 = p999 = 0; wrong = 1 }
				print rep, srv, "loadgen", rps, n, p50, p99, p999, cpu, wrong
			}' "$raw" >>"$tsv"
	else
		awk -v rep="$rep" -v srv="$name" -v cpu="$cpu" '
			/^WRKSTATS / { n = $2; dur = $3 / 1e6; p50 = $4; p99 = $5; p999 = $6; errs = $7 }
			END {
				if (n == "" || dur == 0) { print rep, srv, "wrk", 0, 0, 0, 0, 0, cpu, 1; exit }
				printf "%d %s wrk %.1f %d %d %d %d %s %d\n", rep, srv, n / dur, n, p50, p99, p999, cpu, errs
			}' "$raw" >>"$tsv"
	fi
	tail -1 "$tsv" | awk '{ printf "  %-14s %-8s %9.0f req/s  p99 %6d µs  server %6.1f µs/req  wrong %d\n", $2, $3, $4, $7, ($5 ? $9 * 1e6 / $5 : 0), $10 }' >&2
}

# server_order REP: the servers in the order of repetition REP (from 1):
# SERVERS rotated by REP-1 places, so that over as many repetitions as
# there are servers each runs in every place once, and none always first
# (on a fresh machine) or last.
server_order() {
	local n=${#SERVERS[@]} k i
	k=$(((${1} - 1) % n))
	for ((i = 0; i < n; i++)); do
		printf '%s\n' "${SERVERS[(k + i) % n]}"
	done
}

# matrix_rep REP: repetition REP of the load matrix: every server, in
# server_order's order, under every client (CLIENTS); a server that died
# is started again first.
matrix_rep() {
	local name client order
	mapfile -t order < <(server_order "$1")
	for name in "${order[@]}"; do
		ensure_up "$name"
		for client in "${CLIENTS[@]}"; do
			measure "$1" "$name" "$client"
		done
	done
}

# perf_summary REPORT: percent of samples by component, then the top symbols.
perf_summary() {
	awk '
		/^ *[0-9.]+%/ {
			p = $1; sub(/%/, "", p); sym = $3
			if ($2 == "[k]") c = "kernel (network stack, scheduler, syscalls)"
			else if (sym ~ /^__vdso/) c = "vDSO (clock_gettime)"
			else if (sym ~ /^github.com\/valyala\/fasthttp/) c = "fasthttp"
			else if (sym ~ /^github.com\/rpcedge\/rpcedge\/decode/) c = "rpcedge decode"
			else if (sym ~ /^github.com\/rpcedge\/rpcedge\/mcp/) c = "rpcedge mcp"
			else if (sym ~ /^github.com\/rpcedge\/rpcedge\/fastserver/) c = "rpcedge fastserver"
			else if (sym ~ /^github.com\/rpcedge\/rpcedge\/bench/) c = "bench handler"
			else if (sym ~ /^github.com\/VictoriaMetrics/) c = "metrics"
			else if (sym ~ /^(runtime|internal\/runtime|gcBgMarkWorker|aeshash|memeqbody|indexbytebody)/ || sym ~ /^runtime\./) c = "Go runtime (scheduler, GC, memmove)"
			else c = "other Go (bufio, sync, time, syscall, …)"
			tot[c] += p; all += p
		}
		END {
			printf "share of samples by component (%.1f%% of samples listed)\n", all
			for (c in tot) printf "%6.1f%%  %s\n", tot[c], c | "sort -rn"
		}' "$1"
	echo
	echo "top symbols:"
	awk '/^ *[0-9.]+%/ && n++ < 40' "$1"
}

# Sourced: the settings and steps above, nothing run.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
	return 0
fi

cd "$(dirname "$0")" # bench/
DATE=$(date -u +%Y-%m-%d)
OUT=${OUT:-results/$DATE}
rm -rf "$OUT/raw"
mkdir -p "$OUT/raw"
tmp=$(mktemp -d)
trap cleanup EXIT
check_tools

# 0. Build everything once, so every sample measures the same code.
log "building"
(cd .. && go build -o "$tmp/rpcedge" ./cmd/rpcedge && go build -o "$tmp/loadgen" ./cmd/loadgen)
go build -o "$tmp/benchserver" ./servers/cmd/benchserver
go build -o "$tmp/authority" ./authority
go build -o "$tmp/plot" ./plot
go test -c -o "$tmp/bench.test" .
SRC_SHA=$(cd .. && cat decode/*.go fastserver/*.go mcp/*.go | sha256sum | cut -c1-16)
DIRTY="" # said only when tracked files differ from the commit
[ -n "$(cd .. && git status --porcelain --untracked-files=no 2>/dev/null)" ] && DIRTY="with uncommitted changes in the working tree; "

{
	echo "Run of \`bench/run.sh\` (REPS=$REPS DUR=$DUR ROUNDS=$ROUNDS PAIRS=$PAIRS PAIR_DUR=$PAIR_DUR LG_TEXT_SIZE=$LG_TEXT_SIZE), $(date -u '+%Y-%m-%d %H:%M UTC'),"
	echo "$(go version | cut -d' ' -f3-4), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "${DIRTY}sha256 of \`cat decode/*.go fastserver/*.go mcp/*.go\`"
	echo "at build time: \`$SRC_SHA…\`. Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo '```'
	echo '$ lscpu | head -20'
	lscpu | head -20
	echo "\$ nproc"
	nproc
	echo '```'
} >"$tmp/run-info.md"

# 1. The load matrix.
FIXTURE=../../shared/testdata/bench/small.json
if [ -r "$FIXTURE" ]; then
	BODY=$(tr -d '\n' <"$FIXTURE")
else
	log "$FIXTURE is missing: wrk posts the same shape, built here"
	BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!!"}}}'
fi
TEXT=$(printf '%s' "$BODY" | sed 's/.*"text":"\([^"]*\)".*/\1/')
# The wrk script varies the id (integers and strings) and the text (the
# fixture's, rotated and of varied length, ±8 bytes) of every request, as
# loadgen does; wrk checks statuses only.
cat >"$tmp/post.lua" <<LUA
wrk.method = "POST"
wrk.body = [[$BODY]]
local text = [[$TEXT]]
local n = 0
request = function()
  n = n + 1
  local id = (n % 2 == 0) and tostring(n * 7919) or ('"req-' .. n .. '"')
  local k = n % #text
  local t = string.sub(text .. text, k + 1, k + #text - 8 + (n % 17))
  return wrk.format(nil, nil, nil, '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":{"name":"echo","arguments":{"text":"' .. t .. '"}}}')
end
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "$VERSION"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format("WRKSTATS %d %d %d %d %d %d\n", s.requests, s.duration,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    e.status + e.connect + e.read + e.write + e.timeout))
end
LUA

# The "auth on" row: rpcedge with -auth-issuer, every request carrying
# the same valid token (the verified-token cache's hot path), beside
# rpcedge without authorization.
sed 's|^wrk.headers\["Content-Type"\]|wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")\n&|' "$tmp/post.lua" >"$tmp/post-auth.lua"

i=0
for name in "${SERVERS[@]}"; do
	i=$((i + 1))
	PORT[$name]=$((PORT_BASE + i))
done
if selected rpcedge-tls; then
	make_cert
fi
if selected rpcedge-auth; then
	start_authority
fi
for name in "${SERVERS[@]}"; do
	start_server "$name" || exit 1
done

log "warming up each server (1 s of loadgen)"
for name in "${SERVERS[@]}"; do
	run_loadgen "${PORT[$name]}" 1 "$tmp/warmup-$name.json"
done

echo "rep server client rps requests p50_us p99_us p999_us server_cpu_s wrong" >"$OUT/matrix-raw.tsv"
CLIENTS=(loadgen)
[ "$HAVE_WRK" = 1 ] && CLIENTS+=(wrk)
RUN_PAIRS=0 # the ABBA pairs (1b) run: rpcedge and the floor are both up and PAIRS > 0
[ -n "${PID[rpcedge]:-}" ] && [ -n "${PID[floor]:-}" ] && [ "$PAIRS" -gt 0 ] && RUN_PAIRS=1
PAIR_RESERVE=$((RUN_PAIRS * PAIRS * ${#CLIENTS[@]} * 2 * (PAIR_DUR + 1))) # s the matrix keeps for them
for rep in $(seq "$REPS"); do
	if [ "$SECONDS" -gt $((BUDGET - MATRIX_RESERVE - PAIR_RESERVE - ${#SERVERS[@]} * ${#CLIENTS[@]} * (DUR + 1))) ]; then
		log "time budget reached: stopping after $((rep - 1)) repetitions"
		echo "The matrix stopped after $((rep - 1)) of $REPS repetitions (time budget)." >>"$tmp/run-info.md"
		break
	fi
	log "load matrix, repetition $rep of $REPS"
	matrix_rep "$rep"
done
# 1b. ABBA pairs for the targets: rpcedge and the floor in short runs
# next to each other (rpcedge then the floor, then the floor then
# rpcedge, …), PAIRS pairs of PAIR_DUR seconds per client. The load on
# this shared machine drifts over seconds to minutes (the same server's
# CPU per request by 30 % between two repetitions of the matrix, whose
# runs of one repetition are spread over tens of seconds); a ratio taken
# within each pair cancels most of the drift, and the ABBA order cancels
# a trend within a pair. bench/plot gives the median ratio with a
# bootstrap confidence interval.
echo "rep server client rps requests p50_us p99_us p999_us server_cpu_s wrong" >"$OUT/paired-raw.tsv"
if [ "$RUN_PAIRS" = 1 ]; then
	for client in "${CLIENTS[@]}"; do
		log "ABBA pairs, $client: $PAIRS pairs of $PAIR_DUR s"
		for pair in $(seq "$PAIRS"); do
			if [ "$SECONDS" -gt $((BUDGET - MATRIX_RESERVE - 2 * (PAIR_DUR + 1))) ]; then
				log "time budget reached: $client pairs stopped after $((pair - 1))"
				echo "The $client ABBA pairs stopped after $((pair - 1)) of $PAIRS (time budget)." >>"$tmp/run-info.md"
				break
			fi
			order=(rpcedge floor)
			[ $((pair % 2)) = 0 ] && order=(floor rpcedge)
			for name in "${order[@]}"; do
				ensure_up "$name"
				measure "$pair" "$name" "$client" "$OUT/paired-raw.tsv" "$PAIR_DUR" pair
			done
		done
	done
fi

echo "server vmhwm_kib" >"$OUT/rss.tsv"
for name in "${SERVERS[@]}"; do
	if alive "$name"; then
		echo "$name $(awk '/^VmHWM:/ {print $2}' "/proc/${PID[$name]}/status")" >>"$OUT/rss.tsv"
	else
		log "$name is gone: no peak RSS"
	fi
done

# 2. Profiles: where rpcedge's time goes, beside the floor's. perf samples
# the server's process (kernel included) for 4 s of a loadgen run; the
# flat profile is then summed by component.
if command -v perf >/dev/null && perf record -o "$tmp/probe.data" true >/dev/null 2>&1; then
	for name in rpcedge rpcedge-auth floor; do
		alive "$name" || continue
		log "perf profile of $name under loadgen"
		run_loadgen "${PORT[$name]}" 6 "$tmp/prof-load.json" &
		lg=$!
		sleep 1
		timeout 20 taskset -c 0 perf record -F 1999 -p "${PID[$name]}" -o "$tmp/$name.perf" -- sleep 4 >/dev/null 2>&1 || true
		wait "$lg" || true
		timeout 60 perf report -i "$tmp/$name.perf" --stdio --no-children --sort sym --percent-limit 0.05 2>/dev/null >"$tmp/$name.report" || true
		perf_summary "$tmp/$name.report" >"$OUT/profile-$name-perf.txt"
	done
fi
for name in "${SERVERS[@]}"; do
	kill -TERM "${PID[$name]}" 2>/dev/null || true
	wait "${PID[$name]}" 2>/dev/null || true
	unset "PID[$name]"
done
# 3. Go benchmarks, interleaved rounds, after the matrix (which needs its
# repetitions most); a round is not started when it would not end within
# the budget (the next round is assumed to take as long as the last).
: >"$OUT/bench.txt"
last=60
done_rounds=0
for round in $(seq "$ROUNDS"); do
	if [ $((SECONDS + last)) -gt $((BUDGET - 45)) ]; then
		log "time budget reached: stopping after $done_rounds benchmark rounds"
		echo "The Go benchmarks stopped after $done_rounds of $ROUNDS rounds (time budget)." >>"$tmp/run-info.md"
		break
	fi
	log "go benchmarks, round $round of $ROUNDS"
	t0=$SECONDS
	timeout 120 "$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkDecode$' \
		-test.benchtime 100ms -test.benchmem -test.cpu 1 >>"$OUT/bench.txt"
	timeout 120 "$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkServe' \
		-test.benchtime 100ms -test.benchmem >>"$OUT/bench.txt"
	last=$((SECONDS - t0))
	done_rounds=$round
done
if ! timeout 60 go run "$BENCHSTAT" "$OUT/bench.txt" >"$OUT/benchstat.txt" 2>"$tmp/benchstat.err"; then
	log "benchstat failed: $(head -3 "$tmp/benchstat.err")"
fi

log "in-process profiles of rpcedge"
timeout 60 "$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkServe$/^rpcedge$' -test.benchtime 5000x \
	-test.memprofile "$tmp/mem.out" -test.memprofilerate 1 >/dev/null
{
	echo "# io.CopyN's callers (the one allocation per request):"
	go tool pprof -sample_index=alloc_objects -peek 'io.CopyN$' "$tmp/bench.test" "$tmp/mem.out" 2>/dev/null | sed -n 8,14p
	echo
	go tool pprof -sample_index=alloc_objects -peek 'io.LimitReader|fastserver|rpcedge/mcp|rpcedge/decode' \
		"$tmp/bench.test" "$tmp/mem.out" 2>/dev/null | head -60
} >"$OUT/profile-rpcedge-allocs.txt" || true
timeout 60 "$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkServe$/^rpcedge$' -test.benchtime 1s \
	-test.cpuprofile "$tmp/cpu.out" >/dev/null
go tool pprof -top -nodecount 40 "$tmp/bench.test" "$tmp/cpu.out" 2>/dev/null >"$OUT/profile-rpcedge-inprocess-cpu.txt" || true

# 4. Summary and charts.
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Whole run: ${SECONDS} s." >>"$tmp/run-info.md"
cp "$tmp/run-info.md" "$OUT/run-info.md"
"$tmp/plot" -dir "$OUT"
log "done: $OUT/matrix.md"
