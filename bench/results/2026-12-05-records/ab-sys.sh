#!/bin/bash
# ab-sys.sh PAIRS DUR A B [client]: ABBA runs as ../2026-12-05-footprint/ab-pair.sh, and
# per run the server's user time and its system calls and context switches (perf
# tracepoints, software: this VM has no hardware counters). Output per run: server,
# answers, CPU ticks, seconds, user=ticks, then the events.
pairs=$1 dur=$2 A=$3 B=$4 cl=${5:-loadgen}
cd "$(dirname "$0")"
declare -A PID PORT
i=0
for b in $A $B; do i=$((i+1)); PORT[$b]=$((18970+i))
  GOMAXPROCS=1 taskset -c 1 ${BS:-./benchserver-w2} -name $b -addr 127.0.0.1:${PORT[$b]} -for 30m 2>/dev/null &
  PID[$b]=$!; done
sleep 1
EV=raw_syscalls:sys_enter,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep,syscalls:sys_enter_tgkill,syscalls:sys_enter_sched_yield
ticks() { sed 's/^.*) //' /proc/$1/stat | awk '{print $12 + $13}'; }
ut() { sed 's/^.*) //' /proc/$1/stat | awk '{print $12}'; }
one() { local b=$1
  t0=$(ticks ${PID[$b]}); u0=$(ut ${PID[$b]})
  perf stat -p ${PID[$b]} -x, -e $EV -o /tmp/st/ab2/perf.$b.txt -- sleep $dur &
  pp=$!
  if [ $cl = loadgen ]; then
  out=$(timeout $((dur+20)) taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$b]}/mcp -c 64 -d ${dur}s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" $LGARGS -json 2>&1)
  a=$(echo "$out" | awk '/"answers"/{gsub(",","",$2);print $2; exit}')
  else
  out=$(timeout $((dur+20)) taskset -c 0 wrk -t1 -c64 -d${dur}s -s post.lua http://127.0.0.1:${PORT[$b]}/mcp 2>&1)
  a=$(echo "$out" | awk '/WRKSTATS/{print $2}')
  fi
  wait $pp
  t1=$(ticks ${PID[$b]}); u1=$(ut ${PID[$b]})
  ev=$(awk -F, '$1 ~ /^[0-9]+$/ {split($3,n,":"); printf "%s=%s ", (n[2]?n[2]:$3), $1}' /tmp/st/ab2/perf.$b.txt)
  echo "$b $a $((t1-t0)) $dur user=$((u1-u0)) $ev"
}
for r in $(seq $pairs); do
  if (( r % 2 )); then one $A; one $B; else one $B; one $A; fi
done
for b in $A $B; do kill ${PID[$b]}; done; wait 2>/dev/null
