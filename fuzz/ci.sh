#!/usr/bin/env bash
# fuzz/ci.sh: the fuzz smoke of CI. It replays every seed corpus (the
# testdata/fuzz/<Target>/ files, the shared corpora and the seeds in the
# code) with a plain go test, then fuzzes each target for FUZZTIME (default
# 15s). A failure fails CI and says where the crashing input was written.
#
# Usage: fuzz/ci.sh             (from anywhere; it works in its own directory)
#        FUZZTIME=30s fuzz/ci.sh
set -uo pipefail
cd "$(dirname "$0")"

FUZZTIME=${FUZZTIME:-15s}
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
# Targets that live beside the unexported code they exercise, in the main
# module: decode's SIMD scanner (decode/stage1_test.go: FuzzStage1
# compares the AVX2 kernel with its pure-Go twin block by block, the three
# bytes before a block its carried UTF-8 state; FuzzSIMD compares the
# scanner with the SIMD stage against the scalar scanner, whole and in
# random pieces), decode's raw-value helpers (FuzzRawHelpers: no panic
# and no endless loop on any bytes, agreement on valid ones) and loadgen's
# answer checker (FuzzCheck: any bytes a server answers get a verdict,
# never a panic).
for dt in decode:FuzzStage1 decode:FuzzSIMD decode:FuzzRawHelpers internal/loadgen:FuzzCheck; do
  fuzz_one "${dt%%:*}" "${dt#*:}"
done
echo "--- fuzz: done in $((SECONDS - start))s"
exit $failed
