#!/bin/bash
# ab-small.sh REPS DUR bin1 bin2 ...: interleaved loadgen runs of the
# small tools/call echo (loadgen's own plan: varied ids and texts, every
# answer checked), 64 connections, server pinned to core 1, loadgen to
# core 0; server CPU µs per request from /proc/PID/stat. A name starting
# with rpcedge is a cmd/rpcedge build, any other a benchserver candidate;
# the binaries (those named, benchserver, loadgen) are looked for beside
# the script:
#   go build -o DIR/rpcedge-new ./cmd/rpcedge; go build -o DIR/loadgen ./cmd/loadgen
#   (cd bench && go build -o DIR/benchserver ./servers/cmd/benchserver)
reps=$1 dur=$2; shift 2
cd "$(dirname "$0")"
declare -A PID PORT
i=0
for b in "$@"; do i=$((i+1)); PORT[$b]=$((18750+i))
  if [[ $b == rpcedge* ]]; then GOMAXPROCS=1 taskset -c 1 ./$b -addr 127.0.0.1:${PORT[$b]} 2>/dev/null &
  else GOMAXPROCS=1 taskset -c 1 ./benchserver -name $b -addr 127.0.0.1:${PORT[$b]} -for 30m 2>/dev/null & fi
  PID[$b]=$!; done
sleep 1
ticks() { sed 's/^.*) //' /proc/$1/stat | awk '{print $12 + $13}'; }
for r in $(seq $reps); do for b in "$@"; do
  t0=$(ticks ${PID[$b]})
  out=$(timeout $((dur+20)) taskset -c 0 env GOMAXPROCS=1 ./loadgen -url http://127.0.0.1:${PORT[$b]}/mcp -c 64 -d ${dur}s -mcp-version 2025-11-25 -header "Accept: application/json, text/event-stream" -json 2>&1)
  t1=$(ticks ${PID[$b]})
  a=$(echo "$out" | awk '/"answers"/{gsub(",","",$2);print $2; exit}')
  w=$(echo "$out" | awk '/"wrong"/{gsub(",","",$2);print $2; exit}')
  echo "$r $b $a $w $((t1-t0)) $dur" | awk '{printf "%d %-14s answers %8d wrong %s req/s %7.0f cpu/req %.2f us\n", $1, $2, $3, $4, $3/$6, $5*10000/$3}'
done; done
for b in "$@"; do kill ${PID[$b]}; done; wait 2>/dev/null
