#!/usr/bin/env bash
# The fleet's proof on loopback, in one command: installs redis-server and
# haproxy with apt-get when they are missing, then runs fleet/e2e's
# TestProof with the figures on (FLEET_FIGURES=1). The test builds
# cmd/rpcedge and cmd/loadgen, starts redis-server, three rpcedge
# instances and haproxy on ephemeral loopback ports, drives them, stops
# every process it started by its pid, and writes the figures to
# fleet/results.txt (quoted in the README's Reliability section).
#
#   fleet/run.sh            # the proof and the figures (about 3 minutes)
#   fleet/run.sh -bench     # also the go-redis / rueidis comparison
set -euo pipefail
cd "$(dirname "$0")"
export GOTOOLCHAIN=local

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt-get)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

results="$PWD/results.txt"
cd e2e
FLEET_FIGURES=1 FLEET_RESULTS="$results" timeout --signal=INT --kill-after=30 900 \
  go test -count=1 -v -timeout 14m -run 'TestProof$' . | grep -v '^\s*time=' || { echo "fleet proof FAILED"; exit 1; }
if [ "${1:-}" = "-bench" ]; then
  # go-redis and rueidis interleaved, four rounds each, so that the
  # machine's noise falls on both alike; then the limiter's Take, lease
  # against local, in-process.
  bin=$(mktemp -d)
  trap 'rm -rf "$bin"' EXIT
  go test -c -o "$bin/e2e.test" .
  for round in 1 2 3 4; do
    for c in go-redis rueidis; do
      timeout 120 "$bin/e2e.test" -test.run '^$' -test.bench "Clients/$c/" -test.benchtime 5000x | grep -E '^Benchmark'
    done
  done
  (cd .. && timeout 300 go test -run '^$' -bench Take -count 4 . | grep -E '^Benchmark')
fi
echo
echo "figures in $results:"
cat "$results"
