#!/bin/bash
declare -A PID PORT
p=19600
for n in floor rpcedge; do
  p=$((p+1)); PORT[$n]=$p
  if [ $n = rpcedge ]; then GOMAXPROCS=1 taskset -c 1 ./rpcedge -addr 127.0.0.1:$p 2>$n.log &
  else GOMAXPROCS=1 taskset -c 1 ./benchserver -name $n -addr 127.0.0.1:$p -for 5m 2>$n.log & fi
  PID[$n]=$!
done
sleep 1.5
for rep in 1 2; do
 for n in floor rpcedge; do
  timeout 30 taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$n]}/mcp -c 64 -d 5s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -json > st-$n-$rep.json 2>&1 &
  lg=$!
  sleep 0.5
  timeout 10 perf stat -x, -e context-switches,page-faults,raw_syscalls:sys_enter,irq:irq_handler_entry,irq:softirq_entry,timer:hrtimer_expire_entry,sched:sched_wakeup -p ${PID[$n]} -- sleep 4 2> perf-$n-$rep.txt
  wait $lg
  echo "$rep $n $(python3 -c "import json;d=json.load(open('st-$n-$rep.json'));print(d['answers'])")"; cat perf-$n-$rep.txt | cut -d, -f1,3
 done
done
for n in "${!PID[@]}"; do kill ${PID[$n]}; done
