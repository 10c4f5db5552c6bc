#!/usr/bin/env bash
# fuzz/run.sh DURATION: fuzz every target for DURATION (a go duration such
# as 10m, or a count such as 100000x), one after another, and print the
# executions and the new interesting inputs (new coverage) of each.
#
# Usage: fuzz/run.sh 10m
#        PARALLEL=1 fuzz/run.sh 5m FuzzServer FuzzChunking   (some targets only)
# Environment: PARALLEL (workers, default 2), MINIMIZE (-fuzzminimizetime,
# default 30s), LOGDIR (where the full logs go, default a temporary directory).
set -uo pipefail
cd "$(dirname "$0")"

if [ $# -lt 1 ]; then
  echo "usage: $0 DURATION [Target ...]" >&2
  exit 2
fi
DURATION=$1
shift
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  # Every Fuzz target of the package, as go test lists them.
  mapfile -t TARGETS < <(go test -list '^Fuzz' . | grep '^Fuzz')
fi
PARALLEL=${PARALLEL:-2}
MINIMIZE=${MINIMIZE:-30s}
LOGDIR=${LOGDIR:-$(mktemp -d)}
mkdir -p "$LOGDIR"

declare -A EXECS INTERESTING TOTAL STATUS
for t in "${TARGETS[@]}"; do
  log="$LOGDIR/$t.log"
  echo "=== $t for $DURATION (log: $log)"
  go test -run '^$' -fuzz "^${t}\$" -fuzztime "$DURATION" -fuzzminimizetime "$MINIMIZE" -parallel "$PARALLEL" . >"$log" 2>&1
  rc=$?
  # fuzz: elapsed: 5m0s, execs: 1234567 (4115/sec), new interesting: 12 (total: 345)
  last=$(grep -E '^fuzz: elapsed: .*execs: [0-9]+' "$log" | tail -1)
  EXECS[$t]=$(sed -n 's/.*execs: \([0-9]*\).*/\1/p' <<<"$last")
  INTERESTING[$t]=$(sed -n 's/.*new interesting: \([0-9]*\).*/\1/p' <<<"$last")
  TOTAL[$t]=$(sed -n 's/.*(total: \([0-9]*\)).*/\1/p' <<<"$last")
  if [ $rc -eq 0 ]; then
    STATUS[$t]=ok
  else
    STATUS[$t]=FAIL
    grep -v '^fuzz: elapsed' "$log" | tail -30
    crasher=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | tail -1)
    [ -n "$crasher" ] && echo "crasher: fuzz/$crasher (commit it as a regression seed once fixed)"
  fi
  echo "    ${last#fuzz: }"
done

echo
printf '%-24s %-6s %14s %16s %14s\n' target status execs "new interesting" "corpus total"
for t in "${TARGETS[@]}"; do
  printf '%-24s %-6s %14s %16s %14s\n' "$t" "${STATUS[$t]}" "${EXECS[$t]:-?}" "${INTERESTING[$t]:-?}" "${TOTAL[$t]:-?}"
done
for t in "${TARGETS[@]}"; do
  [ "${STATUS[$t]}" = ok ] || exit 1
done
