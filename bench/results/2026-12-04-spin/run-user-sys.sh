#!/bin/bash
# user and system CPU per request under loadgen, interleaved
declare -A PID PORT
p=19500
for n in floor floor-stream floor-spin rpcedge; do
  p=$((p+1)); PORT[$n]=$p
  if [ $n = rpcedge ]; then GOMAXPROCS=1 taskset -c 1 ./rpcedge -addr 127.0.0.1:$p 2>$n.log &
  else GOMAXPROCS=1 taskset -c 1 ./benchserver -name $n -addr 127.0.0.1:$p -for 5m 2>$n.log & fi
  PID[$n]=$!
done
sleep 1.5
for rep in 1 2 3 4 5; do
 for n in floor floor-stream floor-spin rpcedge; do
  pid=${PID[$n]}
  read u0 s0 < <(sed 's/^.*) //' /proc/$pid/stat | awk '{print $12, $13}')
  timeout 30 taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$n]}/mcp -c 64 -d 4s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -json > out-$n-$rep.json 2>&1
  read u1 s1 < <(sed 's/^.*) //' /proc/$pid/stat | awk '{print $12, $13}')
  req=$(python3 -c "import json;d=json.load(open('out-$n-$rep.json'));print(d['answers'], d['rps'], d['latency_us']['p99'])" 2>/dev/null)
  echo "$rep $n req=$req user_ticks=$((u1-u0)) sys_ticks=$((s1-s0))"
 done
done
for n in "${!PID[@]}"; do kill ${PID[$n]}; done
