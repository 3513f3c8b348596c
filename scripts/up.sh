#!/usr/bin/env bash
# Starts `cairn dev` in the background with its state under .cairn/dev and
# waits until the server is ready. `make down` stops it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state=${CAIRN_STATE:-$root/.cairn}
listen=${CAIRN_LISTEN:-127.0.0.1:44123}
mkdir -p "$state"

if [ -f "$state/dev.pid" ] && kill -0 "$(cat "$state/dev.pid")" 2>/dev/null; then
  echo "cairn dev is already running (pid $(cat "$state/dev.pid")); 'make down' stops it"
  exit 0
fi

# CAIRN_DEV_CONFIG names a file of server config keys overriding the dev ones.
setsid nohup "$root/bin/cairn" dev --state-dir "$state/dev" --listen "$listen" \
  ${CAIRN_DEV_CONFIG:+-c "$CAIRN_DEV_CONFIG"} \
  >"$state/dev.log" 2>&1 </dev/null &
echo $! >"$state/dev.pid"

for _ in $(seq 1 180); do
  if curl -fsS "http://$listen/liveness/ready" >/dev/null 2>&1; then
    cat "$state/dev.log"
    exit 0
  fi
  if ! kill -0 "$(cat "$state/dev.pid")" 2>/dev/null; then
    echo "cairn dev exited:" >&2
    cat "$state/dev.log" >&2
    exit 1
  fi
  sleep 1
done
echo "cairn dev did not become ready in 180 s; see $state/dev.log" >&2
exit 1
