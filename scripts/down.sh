#!/usr/bin/env bash
# Stops the stack `make up` started and removes what it left behind: its
# state, containers and workspace volumes.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state=${CAIRN_STATE:-$root/.cairn}

if [ -f "$state/dev.pid" ]; then
  pid=$(cat "$state/dev.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid"
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$state/dev.pid"
fi
if [ -d "$state/dev" ]; then
  "$root/bin/cairn" dev purge --state-dir "$state/dev"
fi
