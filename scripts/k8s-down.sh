#!/usr/bin/env bash
# Takes the local cluster of k8s-up.sh down and leaves the host as it was
# before: pods deleted, the components stopped by their PID files, each
# containerd's leftover tasks and shims ended, the state dir's mounts
# (node B's network namespace among them) unmounted, the bridge, node B's
# link and forwarding rules, the kubelets' cgroups and the host paths the
# components created removed, the kernel tunables restored, and the state
# dir deleted. Idempotent: with nothing up it does nothing.
set -euo pipefail
. "$(dirname "$0")/k8s/env.sh"
. "$(dirname "$0")/k8s/host.sh"

# The containerd sockets of the nodes there are (node B's, if it was made).
socks=("$K8S_STATE/containerd/containerd.sock")
if [ -d "$K8S_STATE_B" ]; then socks+=("$K8S_STATE_B/containerd/containerd.sock"); fi

# delete_pods lets the kubelet stop every pod, so CNI tears each network
# down; whatever is left after the grace is killed below.
delete_pods() {
  running kube-apiserver && running kubelet || return 0
  "$K8S_BIN/kubectl" --kubeconfig "$K8S_STATE/admin.kubeconfig" delete pods --all -A \
    --grace-period=1 --wait=true --timeout=30s >/dev/null 2>&1 || log "some pods did not stop in 30 s"
}

# kill_tasks ends the tasks of every containerd still running.
kill_tasks() {
  local sock id
  for sock in "${socks[@]}"; do
    [ -S "$sock" ] || continue
    for id in $(ctr -n k8s.io --address "$sock" tasks ls -q 2>/dev/null); do
      ctr -n k8s.io --address "$sock" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
      ctr -n k8s.io --address "$sock" tasks delete -f "$id" >/dev/null 2>&1 || true
    done
  done
}

# stop_shims ends the runc shims the cluster's containerds started: each
# names its containerd's own socket on its command line, which no other
# process does.
stop_shims() {
  local p sock
  for p in /proc/[0-9]*; do
    for sock in "${socks[@]}"; do
      if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "-address $sock "; then
        stop_pids "${p#/proc/}"
      fi
    done
  done
}

main() {
  if [ ! -d "$K8S_STATE" ]; then
    log "nothing to take down"
    return
  fi
  local t0
  t0=$(date +%s%N)
  delete_pods
  stop_components kubelet kubelet-b
  kill_tasks
  stop_components localpv kube-scheduler kube-controller-manager kube-apiserver
  stop_components etcd
  stop_components containerd containerd-b
  stop_shims
  unmount_state
  remove_bridge
  remove_node_b_network
  remove_cgroups
  remove_absent_paths
  restore_sysctls
  rm -rf --one-file-system "$K8S_STATE"
  log "down in $(elapsed "$t0") s"
}

main "$@"
