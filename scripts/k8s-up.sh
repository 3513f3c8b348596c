#!/usr/bin/env bash
# Brings up a single-node Kubernetes cluster on this machine, private to
# the checkout: a containerd of its own, etcd, the control plane and a
# kubelet, with state under .cairn/k8s (CAIRN_K8S_STATE) and binaries built
# once into the cache (scripts/k8s/build.sh). Prints the kubeconfig's path.
# Idempotent: a cluster already up is left as it is; a half-up one is taken
# down first. scripts/k8s-down.sh undoes all of it.
set -euo pipefail
. "$(dirname "$0")/k8s/env.sh"
. "$(dirname "$0")/k8s/host.sh"

images=${CAIRN_K8S_IMAGES:-cairn-sidecar:latest cairn-shell:latest}
components=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet)
node_ip=${K8S_POD_CIDR%.*/*}.1
kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "$K8S_STATE/admin.kubeconfig" "$@"; }

all_running() {
  local c
  for c in "${components[@]}"; do running "$c" || return 1; done
}

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

cni_plugins() {
  local dir=$K8S_CACHE/cni
  if [ ! -x "$dir/usr/lib/cni/bridge" ]; then
    log "fetching containernetworking-plugins from Debian"
    local work
    work=$(mktemp -d)
    (cd "$work" && apt-get download containernetworking-plugins >/dev/null)
    rm -rf "$dir" && dpkg -x "$work"/containernetworking-plugins_*.deb "$dir"
    rm -rf "$work"
  fi
  echo "$dir/usr/lib/cni"
}

start_containerd() {
  start containerd /usr/bin/containerd --config "$K8S_STATE/containerd/config.toml"
  await "containerd" 150 ctr --address "$K8S_STATE/containerd/containerd.sock" version
}

start_etcd() {
  start etcd "$K8S_BIN/etcd" --name cairn --data-dir "$K8S_STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT + 1))" \
    --initial-cluster "cairn=http://127.0.0.1:$((K8S_ETCD_PORT + 1))"
  await "etcd health" 150 curl -fsS "http://127.0.0.1:$K8S_ETCD_PORT/health"
}

# The apiserver reaches the kubelet by its InternalIP, the bridge address:
# by hostname it would ask DNS off the machine.
# The apiserver reaches the kubelet (logs, attach, exec) by its InternalIP,
# the bridge address: by hostname it would ask DNS off the machine.
start_apiserver() {
  local pki=$K8S_STATE/pki
  start kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$K8S_ETCD_PORT" \
    --bind-address 127.0.0.1 --secure-port "$K8S_APISERVER_PORT" --advertise-address "$node_ip" \
    --service-cluster-ip-range "$K8S_SERVICE_CIDR" \
    --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" --kubelet-certificate-authority "$pki/ca.crt" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --profiling=false
  await "the apiserver" 300 kubectl_ get --raw /readyz
}

start_controllers() {
  local pki=$K8S_STATE/pki
  # The hostPath provisioner backs PVCs on this one node (under /tmp/hostpath_pv).
  start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$K8S_STATE/controller-manager.kubeconfig" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "${CAIRN_K8S_CM_PORT:-26257}" \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --use-service-account-credentials --enable-hostpath-provisioner --profiling=false
  start kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$K8S_STATE/scheduler.kubeconfig" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "${CAIRN_K8S_SCHEDULER_PORT:-26259}" --profiling=false
}

start_kubelet() {
  start kubelet "$K8S_BIN/kubelet" --config "$K8S_STATE/kubelet/config.yaml" \
    --kubeconfig "$K8S_STATE/kubelet.kubeconfig" --root-dir "$K8S_STATE/kubelet" \
    --hostname-override "$K8S_NODE" --node-ip "$node_ip"
  await "node $K8S_NODE Ready" 600 node_ready
}

node_ready() {
  [ "$(kubectl_ get node "$K8S_NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# The storage class cairn's PVCs name by default, and its namespace.
cluster_objects() {
  kubectl_ apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: cairn-local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
apiVersion: v1
kind: Namespace
metadata: {name: cairn}
YAML
  # Pods are refused until the controller-manager made the namespace's
  # default service account.
  await "the default service account of namespace cairn" 150 kubectl_ -n cairn get serviceaccount default
}

main() {
  if [ -f "$K8S_STATE/admin.kubeconfig" ] && all_running && node_ready; then
    log "already up"
    echo "$K8S_STATE/admin.kubeconfig"
    return
  fi
  if [ -d "$K8S_STATE/run" ]; then
    log "a cluster is half up; taking it down first"
    "$(dirname "$0")/k8s-down.sh"
  fi
  need openssl curl ctr apt-get dpkg setsid ip
  [ -x /usr/bin/containerd ] || { log "installing containerd"; apt-get install -y containerd >/dev/null; }
  local t0 t1
  t0=$(date +%s%N)
  "$(dirname "$0")/k8s/build.sh" >/dev/null
  t1=$(date +%s%N)
  mkdir -p "$K8S_STATE"
  save_host
  "$(dirname "$0")/k8s/certs.sh"
  "$(dirname "$0")/k8s/config.sh" "$(cni_plugins)"
  make_bridge
  start_containerd
  # shellcheck disable=SC2086 # a list of image names
  "$(dirname "$0")/k8s/images.sh" $images
  start_etcd
  start_apiserver
  start_controllers
  start_kubelet
  cluster_objects
  log "up in $(elapsed "$t1") s (binaries ready in $(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.1f", d / 1e9}') s)"
  echo "$K8S_STATE/admin.kubeconfig"
}

main "$@"
