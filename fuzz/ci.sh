#!/usr/bin/env bash
# fuzz/ci.sh: the fuzz smoke of CI. It replays every seed corpus (the
# testdata/fuzz/<Target>/ files, the shared corpora and the seeds in the
# code) with a plain go test, then fuzzes each target, those of this module
# and every one in the main module, for FUZZTIME (default 10s: a smoke run
# that finds what is close to the seeds; fuzz/run.sh fuzzes for longer). A
# failure fails CI and says where the crashing input was written.
#
# Usage: fuzz/ci.sh             (from anywhere; it works in its own directory)
#        FUZZTIME=30s fuzz/ci.sh
set -uo pipefail
cd "$(dirname "$0")"

FUZZTIME=${FUZZTIME:-10s}
# Minimizing a new input stops the engine (0 execs/s) for up to
# -fuzzminimizetime; keep it short so each target really fuzzes.
MINIMIZE=${MINIMIZE:-5s}
PARALLEL=${PARALLEL:-2}

# deadline_race LOG: the run in LOG failed only with Go's fuzz
# coordinator race at the end of -fuzztime (go.dev/issue/75804, fixed in
# Go 1.27, not in 1.26): "context deadline exceeded" as the target's one
# error, no input written, no panic. Such a run found nothing; any input
# that fails is written to testdata/fuzz and reported as a crash.
deadline_race() {
  grep -q '^    context deadline exceeded$' "$1" &&
    ! grep -q 'Failing input written to' "$1" &&
    ! grep -q '^panic: \|^fatal error: ' "$1" &&
    [ "$(grep -c '^--- FAIL: ' "$1")" = 1 ]
}

start=$SECONDS
echo "--- fuzz: replaying the seed corpora (go test ./...)"
if ! go test -count=1 ./...; then
  echo
  echo "FAIL: a seed input fails. If it is a crasher in testdata/fuzz/<Target>/, the bug it"
  echo "records is back (or not fixed yet); rerun it with: cd fuzz && go test -run '<Target>/<file>' -v"
  exit 1
fi
echo "--- fuzz: seeds replayed in $((SECONDS - start))s"
# Every Fuzz target of the package, as go test lists them: a new target is
# fuzzed without a list here to keep in step.
mapfile -t TARGETS < <(go test -list '^Fuzz' . | grep '^Fuzz')
if [ ${#TARGETS[@]} -eq 0 ]; then
  echo "FAIL: go test -list found no fuzz target"
  exit 1
fi

failed=0
# fuzz_one DIR TARGET: fuzz TARGET of the package in ../DIR for FUZZTIME
# and report it; a failure sets failed and says where the input is.
fuzz_one() {
  local dir=$1 t=$2 t0=$SECONDS log rc last crasher
  log=$(mktemp)
  (cd "../$dir" && go test -run '^$' -fuzz "^${t}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZE" -parallel "$PARALLEL" .) >"$log" 2>&1
  rc=$?
  last=$(grep -E '^fuzz: elapsed: .*execs:' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "--- $dir $t: ok in $((SECONDS - t0))s; ${last#fuzz: }"
  elif deadline_race "$log"; then
    echo "--- $dir $t: ok in $((SECONDS - t0))s, no input failed; the run ended on Go's fuzz deadline race (go.dev/issue/75804); ${last#fuzz: }"
  else
    failed=1
    echo "--- $dir $t: FAIL after $((SECONDS - t0))s"
    grep -v '^fuzz: elapsed' "$log" | tail -40
    crasher=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | tail -1)
    if [ -n "$crasher" ]; then
      echo
      echo "The crashing input was written to $dir/$crasher."
      echo "Reproduce:  cd $dir && go test -run '$t/$(basename "$crasher")' -v"
      echo "Fix the bug, then commit $dir/$crasher as a regression seed (git add $dir/$crasher)."
    fi
  fi
  rm -f "$log"
}

for t in "${TARGETS[@]}"; do
  fuzz_one fuzz "$t"
done
# Targets that live beside the code they exercise, in the main module
# (decode's scanners, stage 1 and answer writer; mcp's raw-JSON helpers
# and endpoint; auth; loadgen's answer checker), found the same way: every
# `func Fuzz` in a _test.go file of a directory that is not in a nested
# module. SKIP lists any to leave out ("dir:Target", space-separated);
# none is by default.
SKIP=${SKIP:-}
nested=$(cd .. && find . -name go.mod -not -path ./go.mod -printf '%h\n' | sed 's|^\./||')
mapfile -t MAIN < <(cd .. && grep -rl --include='*_test.go' '^func Fuzz' . | sed 's|^\./||' | sort |
  while read -r f; do
    d=$(dirname "$f")
    skip=0
    for n in $nested; do
      case "$d/" in "$n"/*) skip=1 ;; esac
    done
    [ $skip = 1 ] && continue
    sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f" | while read -r t; do echo "$d:$t"; done
  done)
if [ ${#MAIN[@]} -eq 0 ]; then
  echo "FAIL: no fuzz target found in the main module"
  exit 1
fi
for dt in "${MAIN[@]}"; do
  case " $SKIP " in *" $dt "*) echo "--- ${dt%%:*} ${dt#*:}: skipped (SKIP)"; continue ;; esac
  fuzz_one "${dt%%:*}" "${dt#*:}"
done
echo "--- fuzz: done in $((SECONDS - start))s"
exit $failed
