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

# How many nodes k8s-up starts: 1, or 2 (CAIRN_K8S_NODES, `make k8s-up
# NODES=2`). The first node's kubelet and containerd run on the host's
# network, its node address the bridge's. The second runs its own kubelet
# and containerd in a network namespace of its own (K8S_NETNS_B, a file the
# namespace is bind-mounted on), joined to the host by a veth pair
# (K8S_LINK_B.1 on the host, .2 the node's address) and routing its own pod
# network, which the host routes to it.
K8S_NODES=${CAIRN_K8S_NODES:-1}
K8S_NODE_B=$K8S_NODE-b
k8s_octet=${K8S_POD_CIDR#*.*.} && k8s_octet=${k8s_octet%%.*}
K8S_POD_CIDR_B=${K8S_POD_CIDR%.*.*/*}.$((k8s_octet + 100)).0/24
K8S_LINK_B=${K8S_POD_CIDR%.*.*/*}.$((k8s_octet + 150))
K8S_STATE_B=$K8S_STATE/$K8S_NODE_B
K8S_NETNS_B=$K8S_STATE_B/netns
K8S_VETH_B=${K8S_BRIDGE}b
# Where the storage provisioner (scripts/k8s/localpv) makes each node's
# volumes: VOLUMES/NODE/NAME.
K8S_VOLUMES=$K8S_STATE/volumes

export PATH=/usr/local/go/bin:$PATH

log() { echo "k8s: $*" >&2; }
die() { log "$*"; exit 1; }
need() {
  local t
  for t in "$@"; do command -v "$t" >/dev/null || die "$t is needed"; done
}

# elapsed START: seconds since START (date +%s%N), to a tenth.
elapsed() { awk -v d=$(($(date +%s%N) - $1)) 'BEGIN {printf "%.1f", d / 1e9}'; }
