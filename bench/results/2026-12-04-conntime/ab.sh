#!/bin/bash
# rpcedge before and after, and the floor, under loadgen (CLIENT=wrk: wrk), interleaved;
# columns: rep server client requests/s server-CPU-µs/request p99-µs wrong-or-errors
declare -A PID PORT
p=19800
for n in floor rpcedge-old rpcedge-new; do
  p=$((p+1)); PORT[$n]=$p
  case $n in
  floor) GOMAXPROCS=1 taskset -c 1 ./benchserver -name floor -addr 127.0.0.1:$p -for 10m 2>$n.log & ;;
  *) GOMAXPROCS=1 taskset -c 1 ./$n -addr 127.0.0.1:$p 2>$n.log & ;;
  esac
  PID[$n]=$!
done
trap 'for n in "${!PID[@]}"; do kill "${PID[$n]}" 2>/dev/null; done' EXIT
sleep 1.5
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
for rep in $(seq ${REPS:-5}); do
 for n in floor rpcedge-old rpcedge-new; do
  pid=${PID[$n]}
  t0=$(ticks $pid)
  if [ "${CLIENT:-loadgen}" = loadgen ]; then
  timeout 30 taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$n]}/mcp -c 64 -d 4s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -json > ab.json 2>&1
  t1=$(ticks $pid)
  python3 -c "import json;d=json.load(open('ab.json'));print('$rep $n loadgen', d['rps'], '%.2f'%(($t1-$t0)*1e4/d['answers']), d['latency_us']['p99'], d['wrong'])"
  else
  timeout 30 taskset -c 0 wrk -t1 -c64 -d4s -s post.lua http://127.0.0.1:${PORT[$n]}/mcp > ab.wrk 2>&1
  t1=$(ticks $pid)
  awk -v t=$((t1-t0)) -v r=$rep -v n=$n '/^WRKSTATS/ {printf "%s %s wrk %.1f %.2f %d %d\n", r, n, $2/($3/1e6), t*1e4/$2, $5, $7}' ab.wrk
  fi
 done
done
