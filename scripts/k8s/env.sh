# Shared settings of the local cluster scripts (sourced, not run).
# Every path and name is derived here so that up, down and the tests agree.

K8S_VERSION=${CAIRN_K8S_VERSION:-1.37.2}
K8S_STAGING=${CAIRN_K8S_STAGING:-0.37.2}
ETCD_VERSION=${CAIRN_ETCD_VERSION:-3.7.3}

K8S_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K8S_CACHE=${CAIRN_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/k8s/v$K8S_VERSION}
K8S_BIN=$K8S_CACHE/bin
K8S_STATE=${CAIRN_K8S_STATE:-$K8S_ROOT/.cairn/k8s}

K8S_NODE=${CAIRN_K8S_NODE:-cairn-node}
K8S_BRIDGE=${CAIRN_K8S_BRIDGE:-cairnk8s0}
K8S_POD_CIDR=${CAIRN_K8S_POD_CIDR:-10.244.77.0/24}
K8S_SERVICE_CIDR=10.96.0.0/16
K8S_APISERVER_PORT=${CAIRN_K8S_APISERVER_PORT:-26443}
K8S_ETCD_PORT=${CAIRN_K8S_ETCD_PORT:-26379}
K8S_PAUSE_IMAGE=cairn.local/pause:$K8S_VERSION

export PATH=/usr/local/go/bin:$PATH

log() { echo "k8s: $*" >&2; }
die() { log "$*"; exit 1; }
need() {
  local t
  for t in "$@"; do command -v "$t" >/dev/null || die "$t is needed"; done
}

# elapsed START: seconds since START (date +%s%N), to a tenth.
elapsed() { awk -v d=$(($(date +%s%N) - $1)) 'BEGIN {printf "%.1f", d / 1e9}'; }
