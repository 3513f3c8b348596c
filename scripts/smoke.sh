#!/usr/bin/env bash
# End-to-end smoke test of the two Make targets a newcomer uses: `make up`,
# plain HTTP against the stack, then `make down`, which must leave no
# process, container or volume of the stack behind.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export CAIRN_STATE="$root/.cairn/smoke"
export CAIRN_LISTEN=127.0.0.1:${SMOKE_PORT:-44199}
base="http://$CAIRN_LISTEN"
# Its own app name, so the smoke stack never touches the volumes of a stack
# the developer runs.
app=cairnsmoke
mkdir -p "$CAIRN_STATE"
export CAIRN_DEV_CONFIG="$CAIRN_STATE/override.yaml"
# cairn dev writes the client config (server URL, admin token) here, not
# over the developer's own.
export XDG_CONFIG_HOME="$CAIRN_STATE/config"
echo "appName: $app" >"$CAIRN_DEV_CONFIG"
fail() { echo "smoke: FAIL: $*" >&2; "$root/scripts/down.sh" >/dev/null 2>&1 || true; exit 1; }

"$root/scripts/down.sh" >/dev/null 2>&1 || true
"$root/scripts/up.sh" >/dev/null
pid=$(cat "$CAIRN_STATE/dev.pid")
token=$(cat "$CAIRN_STATE/dev/dev-token")
[ -n "$token" ] || fail "no token in the stack's state dir"
grep -qx 'current-context: dev' "$XDG_CONFIG_HOME/cairn/config.yaml" || fail "cairn dev did not make its context current"
auth="Authorization: Bearer $token"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/workspaces")" = 401 ] || fail "an anonymous request was served"

name="smoke-$RANDOM"
ws=$(curl -fsS -X POST "$base/v1/workspaces" -H "$auth" -H 'Content-Type: application/json' \
  -d "{\"name\":\"$name\"}") || fail "create workspace"
id=$(printf '%s' "$ws" | sed -n 's/.*"id":"\([0-9a-f-]*\)".*/\1/p')
[ -n "$id" ] || fail "no workspace id in $ws"
curl -fsS -X POST -H "$auth" "$base/v1/workspaces/$id/volume" >/dev/null || fail "set up volume"
curl -fsS -H "$auth" "$base/v1/workspaces/$id" | grep -q '"volume_state":"READY"' || fail "volume not READY"
vol=$(docker volume ls -q --filter "name=$app-$id")
[ "$vol" = "$app-$id" ] || fail "docker volume $app-$id missing"

"$root/scripts/down.sh" >/dev/null
kill -0 "$pid" 2>/dev/null && fail "cairn dev (pid $pid) still running"
pgrep -f "$CAIRN_STATE" >/dev/null && fail "a process of the stack is still running: $(pgrep -af "$CAIRN_STATE")"
[ -z "$(docker ps -aq --filter label=cairn.app=$app)" ] || fail "containers left behind"
[ -z "$(docker volume ls -q --filter "name=$app-$id")" ] || fail "volume $app-$id left behind"
[ ! -d "$CAIRN_STATE/dev" ] || fail "state dir left behind"
echo "smoke: 1 passed, 0 failed"
