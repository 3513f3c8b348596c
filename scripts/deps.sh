#!/usr/bin/env bash
# Installs what cairn's stack needs and is missing, and starts dockerd when no
# Docker daemon answers. Idempotent; needs root (Debian).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
versitygw_version=v1.8.0
# SeaweedFS, the second store of the store-conformance tests. Its go.mod has
# replace directives, so `go install` refuses it: it is built inside its
# downloaded module instead.
seaweedfs_module=github.com/seaweedfs/seaweedfs@v0.0.0-20261109003541-7506e5f91cd6
golangci_lint_version=v2.15.0

need_pkgs=()
command -v dockerd >/dev/null || need_pkgs+=(docker.io)
command -v docker >/dev/null || need_pkgs+=(docker.io)
[ -x /usr/bin/busybox ] || [ -x /bin/busybox ] || need_pkgs+=(busybox-static)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need_pkgs+=(postgresql)
command -v tmux >/dev/null || need_pkgs+=(tmux)
command -v ssh >/dev/null || need_pkgs+=(openssh-client) # the SSH workbench e2e tests
# The local Kubernetes cluster (make k8s-up, the kube tests): its own
# containerd, certificates, the pause binary's static build, the bridge.
command -v ctr >/dev/null || need_pkgs+=(containerd)
command -v openssl >/dev/null || need_pkgs+=(openssl)
command -v curl >/dev/null || need_pkgs+=(curl)
command -v gcc >/dev/null || need_pkgs+=(gcc libc6-dev)
command -v ip >/dev/null || need_pkgs+=(iproute2)
command -v npm >/dev/null || need_pkgs+=(npm) # installs the MCP test clients below
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "deps: installing ${need_pkgs[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

if [ ! -x "$bin/versitygw" ]; then
  echo "deps: installing versitygw $versitygw_version into $bin (takes a minute or two the first time)"
  mkdir -p "$bin"
  GOBIN="$bin" go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version"
fi

if [ ! -x "$bin/weed" ]; then
  echo "deps: building SeaweedFS (weed) into $bin (takes five to ten minutes the first time)"
  mkdir -p "$bin"
  src=$(cd / && GOFLAGS= go mod download -json "$seaweedfs_module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || { echo "deps: could not download $seaweedfs_module" >&2; exit 1; }
  (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$bin/weed.tmp" ./weed)
  mv "$bin/weed.tmp" "$bin/weed"
fi

if [ "$("$bin/golangci-lint" version --short 2>/dev/null)" != "${golangci_lint_version#v}" ]; then
  echo "deps: installing golangci-lint $golangci_lint_version into $bin (takes a few minutes the first time)"
  mkdir -p "$bin"
  GOBIN="$bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$golangci_lint_version"
fi

# The MCP test clients (server/mcp/conformance/testdata): the official
# conformance suite, the TypeScript SDK and the Node.js 22 the suite needs
# (Debian's is older), all from the npm registry, as the lock file pins
# them. Installed again whenever the lock file changes.
mcp_clients=$root/server/mcp/conformance/testdata
if ! cmp -s "$mcp_clients/package-lock.json" "$mcp_clients/node_modules/.installed-lock.json"; then
  echo "deps: installing the MCP test clients into $mcp_clients/node_modules"
  (cd "$mcp_clients" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$mcp_clients/package-lock.json" "$mcp_clients/node_modules/.installed-lock.json"
fi

if ! docker info >/dev/null 2>&1; then
  echo "deps: starting dockerd (log in /var/log/cairn-dockerd.log)"
  setsid nohup dockerd >/var/log/cairn-dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "deps: dockerd did not come up; see /var/log/cairn-dockerd.log" >&2; exit 1; }
fi
