# Starting and watching the local cluster's components: shared by
# k8s-up.sh and k8s-node.sh (sourced, after env.sh).

# The components of a cluster of K8S_NODES nodes, each with a PID file.
components=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler localpv kubelet)
if [ "$K8S_NODES" = 2 ]; then components+=(containerd-b kubelet-b); fi

kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "$K8S_STATE/admin.kubeconfig" "$@"; }

# in_node_b is how node B's components are run: on its network only
# (nsenter enters no other namespace, so the mounts its kubelet makes are
# the ones its containerd sees).
in_node_b=(nsenter "--net=$K8S_NETNS_B")

# start NAME ARGV...: runs a component in its own session, its output in
# log/NAME.log and its PID in run/NAME.pid.
start() {
  local name=$1
  shift
  mkdir -p "$K8S_STATE/log" "$K8S_STATE/run"
  setsid "$@" >"$K8S_STATE/log/$name.log" 2>&1 </dev/null &
  echo $! >"$K8S_STATE/run/$name.pid"
}

# await WHAT TRIES CMD...: retries CMD every 0.2 s until it succeeds; a
# component that exits meanwhile fails at once with its log.
await() {
  local what=$1 tries=$2 c
  shift 2
  for _ in $(seq "$tries"); do
    "$@" >/dev/null 2>&1 && return
    for c in "${components[@]}"; do
      if [ -f "$K8S_STATE/run/$c.pid" ] && ! running "$c"; then
        tail -20 "$K8S_STATE/log/$c.log" >&2
        die "$c exited while waiting for $what"
      fi
    done
    sleep 0.2
  done
  die "$what did not happen in time; logs in $K8S_STATE/log"
}

# start_containerd NAME DIR [IN...]: the containerd of the node whose
# state is DIR, run through IN (the second node's nsenter).
start_containerd() {
  local name=$1 dir=$2
  shift 2
  start "$name" "$@" /usr/bin/containerd --config "$dir/containerd/config.toml"
  await "$name" 150 ctr --address "$dir/containerd/containerd.sock" version
}

# start_kubelet NAME NODE DIR KUBECONFIG IP [IN...]
start_kubelet() {
  local name=$1 node=$2 dir=$3 kubeconfig=$4 ip=$5
  shift 5
  start "$name" "$@" "$K8S_BIN/kubelet" --config "$dir/kubelet/config.yaml" \
    --kubeconfig "$K8S_STATE/$kubeconfig.kubeconfig" --root-dir "$dir/kubelet" \
    --hostname-override "$node" --node-ip "$ip"
}

node_ready() {
  [ "$(kubectl_ get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
