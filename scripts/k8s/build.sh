#!/usr/bin/env bash
# Builds (or reuses) the binaries of the local cluster: the Kubernetes
# control plane, kubelet and kubectl from the Go module proxy, etcd through a
# wrapper module, and the pause binary from the Kubernetes tree. They live in
# the cache, outside the checkout, so every clone of the repository reuses
# them. Prints the bin dir.
set -euo pipefail
. "$(dirname "$0")/env.sh"

bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd pause)

have_all() {
  local b
  for b in "${bins[@]}"; do [ -x "$K8S_BIN/$b" ] || return 1; done
}

# kube_tree copies the downloaded kubernetes module into a writable tree and
# fills staging/src from the published staging modules: the module zip has
# neither, and the tree's go.mod points every k8s.io/* at staging/src.
kube_tree() {
  local src tree mod dir
  src=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  tree=$K8S_CACHE/src/kubernetes
  rm -rf "$tree" && mkdir -p "$K8S_CACHE/src"
  cp -r "$src" "$tree" && chmod -R u+w "$tree"
  rm -rf "$tree/vendor"
  for mod in $(cd "$tree" && go mod edit -json | sed -n 's/.*"Path": "\.\/staging\/src\/k8s.io\/\([^"]*\)".*/\1/p' | sort -u); do
    if ! dir=$(go mod download -json "k8s.io/$mod@v$K8S_STAGING" 2>/dev/null | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p') || [ -z "$dir" ]; then
      log "staging module k8s.io/$mod@v$K8S_STAGING is not published; skipped"
      continue
    fi
    mkdir -p "$tree/staging/src/k8s.io"
    cp -r "$dir" "$tree/staging/src/k8s.io/$mod"
    chmod -R u+w "$tree/staging/src/k8s.io/$mod"
  done
  echo "$tree"
}

build_kube() {
  local tree=$1 cmd pkg=k8s.io/component-base/version
  local ldflags="-s -w -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=${K8S_VERSION%%.*}"
  ldflags+=" -X $pkg.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2) -X $pkg.gitTreeState=clean"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
    log "building $cmd v$K8S_VERSION"
    (cd "$tree" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 \
      go build -trimpath -ldflags "$ldflags" -o "$K8S_BIN/$cmd.tmp" "./cmd/$cmd")
    mv "$K8S_BIN/$cmd.tmp" "$K8S_BIN/$cmd"
  done
}

# build_etcd builds etcd from its server module: Debian's etcd 3.4 is too old
# for the 3.7 client the apiserver links.
build_etcd() {
  local w=$K8S_CACHE/src/etcd
  rm -rf "$w" && mkdir -p "$w"
  cat >"$w/main.go" <<'GO'
// Command etcd is etcd's server, built from its published module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  log "building etcd v$ETCD_VERSION"
  (cd "$w" && go mod init cairn.local/etcd >/dev/null 2>&1 &&
    GOWORK=off GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >/dev/null 2>&1 &&
    GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 &&
    GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$K8S_BIN/etcd.tmp" .)
  mv "$K8S_BIN/etcd.tmp" "$K8S_BIN/etcd"
}

build_pause() {
  local tree=$1
  log "building pause"
  gcc -Os -static -DVERSION="v$K8S_VERSION-cairn" -o "$K8S_BIN/pause.tmp" "$tree/build/pause/linux/pause.c"
  strip "$K8S_BIN/pause.tmp"
  mv "$K8S_BIN/pause.tmp" "$K8S_BIN/pause"
}

main() {
  if have_all; then
    echo "$K8S_BIN"
    return
  fi
  need go gcc strip
  mkdir -p "$K8S_BIN"
  local start tree
  start=$(date +%s)
  tree=$(kube_tree)
  build_kube "$tree"
  build_etcd
  build_pause "$tree"
  rm -rf "$K8S_CACHE/src"
  log "built in $(($(date +%s) - start)) s into $K8S_BIN"
  echo "$K8S_BIN"
}

main "$@"
