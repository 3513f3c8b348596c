#!/usr/bin/env bash
# Cuts node B of a two-node local cluster off as a power cut would, or
# brings it back:
#   k8s-node.sh cut      SIGKILLs, at once, node B's kubelet, its containerd,
#                        their shims and every process of its pods (those in
#                        its cgroup root), leaving everything on its disk —
#                        volumes, images, containerd's records — as it was;
#   k8s-node.sh restore  starts its containerd and kubelet again and waits
#                        for the node to be Ready.
# The control plane and node A go on throughout, and see what a real
# cluster sees: node B stops reporting.
set -euo pipefail
. "$(dirname "$0")/k8s/env.sh"
[ -d "$K8S_STATE_B" ] || die "no node B at $K8S_STATE_B: bring the cluster up with CAIRN_K8S_NODES=2"
K8S_NODES=2
. "$(dirname "$0")/k8s/host.sh"
. "$(dirname "$0")/k8s/run.sh"

# node_b_pids prints node B's kubelet, containerd, shims and pod processes.
node_b_pids() {
  local sock=$K8S_STATE_B/containerd/containerd.sock p f
  pid_of kubelet-b || true
  pid_of containerd-b || true
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "-address $sock "; then echo "${p#/proc/}"; fi
  done
  for f in $(find /sys/fs/cgroup/pids/"$K8S_NODE_B" -name cgroup.procs 2>/dev/null); do cat "$f"; done
}

cut_power() {
  local pids
  mapfile -t pids < <(node_b_pids | sort -u)
  if [ ${#pids[@]} -gt 0 ]; then
    kill -KILL "${pids[@]}" 2>/dev/null || true
    local pid
    for pid in "${pids[@]}"; do
      while alive "$pid"; do sleep 0.1; done
    done
  fi
  rm -f "$K8S_STATE/run/kubelet-b.pid" "$K8S_STATE/run/containerd-b.pid"
  log "node $K8S_NODE_B is cut off (${#pids[@]} processes killed)"
}

restore() {
  running containerd-b || start_containerd containerd-b "$K8S_STATE_B" "${in_node_b[@]}"
  running kubelet-b || start_kubelet kubelet-b "$K8S_NODE_B" "$K8S_STATE_B" kubelet-b "$K8S_LINK_B.2" "${in_node_b[@]}"
  await "node $K8S_NODE_B Ready" 600 node_ready "$K8S_NODE_B"
  log "node $K8S_NODE_B is back"
}

case ${1:-} in
cut) cut_power ;;
restore) restore ;;
*) die "usage: k8s-node.sh cut|restore" ;;
esac
