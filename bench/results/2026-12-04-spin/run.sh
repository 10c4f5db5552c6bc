#!/bin/bash
# run.sh user-sys | perf-stat — the two measurements of this folder.
#   user-sys:  5 interleaved repetitions of 4 s of loadgen against floor,
#              floor-stream, floor-spin and rpcedge; the server's user and
#              system clock ticks around each run (loadgen-user-sys.txt).
#   perf-stat: perf stat on floor and rpcedge over 4 s of a 5 s loadgen run,
#              two repetitions (perf-stat.txt).
# Expects benchserver, loadgen and rpcedge built into this folder. Servers
# on 127.0.0.1 only, each stopped by its process id.
set -u
mode=${1:?usage: run.sh user-sys|perf-stat}
case $mode in
user-sys) names=(floor floor-stream floor-spin rpcedge) reps=5 dur=4 ;;
perf-stat) names=(floor rpcedge) reps=2 dur=5 ;;
*) echo "run.sh: unknown mode $mode" >&2; exit 2 ;;
esac
declare -A PID PORT
p=19500
for n in "${names[@]}"; do
	p=$((p + 1)); PORT[$n]=$p
	if [ "$n" = rpcedge ]; then GOMAXPROCS=1 taskset -c 1 ./rpcedge -addr 127.0.0.1:$p 2>"$n.log" &
	else GOMAXPROCS=1 taskset -c 1 ./benchserver -name "$n" -addr 127.0.0.1:$p -for 5m 2>"$n.log" & fi
	PID[$n]=$!
done
trap 'for n in "${!PID[@]}"; do kill "${PID[$n]}" 2>/dev/null; done' EXIT
sleep 1.5
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12, $13}'; }
for rep in $(seq $reps); do
	for n in "${names[@]}"; do
		pid=${PID[$n]} out=out-$n-$rep.json
		read -r u0 s0 < <(ticks "$pid")
		timeout 30 taskset -c 0 env GOMAXPROCS=1 ./loadgen -url "http://127.0.0.1:${PORT[$n]}/mcp" -c 64 -d ${dur}s \
			-mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -json >"$out" 2>&1 &
		lg=$!
		if [ "$mode" = perf-stat ]; then
			sleep 0.5
			timeout 10 perf stat -x, -e context-switches,page-faults,raw_syscalls:sys_enter,irq:irq_handler_entry,irq:softirq_entry,timer:hrtimer_expire_entry,sched:sched_wakeup \
				-p "$pid" -- sleep 4 2>"perf-$n-$rep.txt"
		fi
		wait $lg
		read -r u1 s1 < <(ticks "$pid")
		res=$(python3 -c "import json;d=json.load(open('$out'));print(d['answers'], d['rps'], d['latency_us']['p99'])")
		if [ "$mode" = user-sys ]; then
			echo "$rep $n req=$res user_ticks=$((u1 - u0)) sys_ticks=$((s1 - s0))"
		else
			echo "== $rep $n answers: ${res%% *}"; cut -d, -f1,3 "perf-$n-$rep.txt"
		fi
	done
done
