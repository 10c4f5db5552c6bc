#!/bin/bash
# ab.sh REPS DUR SIZE bin1 bin2 ... : interleaved loadgen runs, server CPU µs/request
# GZIP=1 ab.sh ...: the bodies sent gzip-compressed (loadgen -gzip; the
# benchserver and loadgen builds that know it: abz-256.txt)
reps=$1 dur=$2 size=$3; shift 3
cd /tmp/st
declare -A PID PORT
i=0
for b in "$@"; do i=$((i+1)); PORT[$b]=$((18700+i))
  if [[ $b == rpcedge* ]]; then GOMAXPROCS=1 taskset -c 1 ./$b -addr 127.0.0.1:${PORT[$b]} 2>/dev/null &
  else GOMAXPROCS=1 taskset -c 1 ./benchserver -name $b -addr 127.0.0.1:${PORT[$b]} -for 30m 2>/dev/null & fi
  PID[$b]=$!; done
sleep 1
ticks() { sed 's/^.*) //' /proc/$1/stat | awk '{print $12 + $13}'; }
for r in $(seq $reps); do for b in "$@"; do
  t0=$(ticks ${PID[$b]})
  gz=; [ "${GZIP:-0}" = 1 ] && gz=-gzip
  n=$(taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$b]}/mcp -c 16 -d ${dur}s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -body body-$size.json $gz -timeout 30s -json 2>&1 | awk '/"answers"/{gsub(",","",$2);a=$2} /"wrong"/{gsub(",","",$2);w=$2} END{print a, w}')
  t1=$(ticks ${PID[$b]})
  echo "$r $b $n $(( (t1-t0) ))" | awk '{printf "%d %-14s answers %7d wrong %s cpu/req %.1f us\n", $1, $2, $3, $4, $5*10000/$3}'
done; done
for b in "$@"; do kill ${PID[$b]}; done; wait 2>/dev/null
