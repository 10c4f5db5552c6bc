#!/bin/bash
# ab-pair.sh PAIRS DUR A B [client]: ABBA-ordered short loadgen (or wrk)
# runs of servers A and B, one line a run: server answers cpu_ticks
# seconds (pairstat.py reads them). BS names the benchserver binary,
# LGARGS adds loadgen flags (-text-size 176, -body FILE); wrk reads
# post.lua (bench/run.sh writes the same script).
pairs=$1 dur=$2 A=$3 B=$4 cl=${5:-loadgen}
cd "$(dirname "$0")"
declare -A PID PORT
i=0
for b in $A $B; do i=$((i+1)); PORT[$b]=$((18950+i))
  if [[ $b == rpcedge* ]]; then GOMAXPROCS=1 taskset -c 1 ./$b -addr 127.0.0.1:${PORT[$b]} 2>/dev/null &
  else GOMAXPROCS=1 taskset -c 1 ${BS:-./benchserver} -name $b -addr 127.0.0.1:${PORT[$b]} -for 30m 2>/dev/null & fi
  PID[$b]=$!; done
sleep 1
ticks() { sed 's/^.*) //' /proc/$1/stat | awk '{print $12 + $13}'; }
one() { local b=$1
  t0=$(ticks ${PID[$b]})
  if [ $cl = loadgen ]; then
  out=$(timeout $((dur+20)) taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$b]}/mcp -c 64 -d ${dur}s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" $LGARGS -json 2>&1)
  a=$(echo "$out" | awk '/"answers"/{gsub(",","",$2);print $2; exit}')
  else
  out=$(timeout $((dur+20)) taskset -c 0 wrk -t1 -c64 -d${dur}s -s post.lua http://127.0.0.1:${PORT[$b]}/mcp 2>&1)
  a=$(echo "$out" | awk '/WRKSTATS/{print $2}')
  fi
  t1=$(ticks ${PID[$b]})
  echo "$b $a $((t1-t0)) $dur"
}
for r in $(seq $pairs); do
  if (( r % 2 )); then one $A; one $B; else one $B; one $A; fi
done
for b in $A $B; do kill ${PID[$b]}; done; wait 2>/dev/null
