#!/usr/bin/env bash
# Brings up a Kubernetes cluster of one or two nodes (CAIRN_K8S_NODES) on
# this machine, private to the checkout: etcd, the control plane, a
# storage provisioner (scripts/k8s/localpv) and, per node, a containerd
# and a kubelet of its own; the second node in a network namespace of its
# own (see env.sh). State under .cairn/k8s (CAIRN_K8S_STATE), binaries
# built once into the cache (scripts/k8s/build.sh). Prints the
# kubeconfig's path. Idempotent: a cluster already up is left as it is; a
# half-up one is taken down first. scripts/k8s-down.sh undoes all of it.
set -euo pipefail
. "$(dirname "$0")/k8s/env.sh"
. "$(dirname "$0")/k8s/host.sh"
. "$(dirname "$0")/k8s/run.sh"

images=${CAIRN_K8S_IMAGES:-cairn-sidecar:latest cairn-shell:latest}
components=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler localpv kubelet)
if [ "$K8S_NODES" = 2 ]; then components+=(containerd-b kubelet-b); fi
node_ip=${K8S_POD_CIDR%.*/*}.1
kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "$K8S_STATE/admin.kubeconfig" "$@"; }

all_running() {
  local c
  for c in "${components[@]}"; do running "$c" || return 1; done
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

start_etcd() {
  start etcd "$K8S_BIN/etcd" --name cairn --data-dir "$K8S_STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT + 1))" \
    --initial-cluster "cairn=http://127.0.0.1:$((K8S_ETCD_PORT + 1))"
  await "etcd health" 150 curl -fsS "http://127.0.0.1:$K8S_ETCD_PORT/health"
}

# The apiserver listens on the first node's address, where the host's
# clients and the second node's kubelet both reach it. It reaches a
# kubelet (logs, attach, exec) by its InternalIP: by hostname it would ask
# DNS off the machine.
start_apiserver() {
  local pki=$K8S_STATE/pki
  start kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$K8S_ETCD_PORT" \
    --bind-address "$node_ip" --secure-port "$K8S_APISERVER_PORT" --advertise-address "$node_ip" \
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

# A node that stops reporting is marked not Ready after 30 s (the default
# is 50 s): the node-loss tests wait less.
start_controllers() {
  local pki=$K8S_STATE/pki
  start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$K8S_STATE/controller-manager.kubeconfig" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "${CAIRN_K8S_CM_PORT:-26257}" \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --use-service-account-credentials --profiling=false --node-monitor-grace-period=30s
  start kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$K8S_STATE/scheduler.kubeconfig" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "${CAIRN_K8S_SCHEDULER_PORT:-26259}" --profiling=false
}

# start_localpv builds the storage provisioner from this checkout (the Go
# build cache makes a rebuild quick) and runs it with the admin's rights.
start_localpv() {
  mkdir -p "$K8S_STATE/bin" "$K8S_VOLUMES"
  (cd "$K8S_ROOT" && go build -o "$K8S_STATE/bin/localpv" ./scripts/k8s/localpv)
  start localpv "$K8S_STATE/bin/localpv" -kubeconfig "$K8S_STATE/admin.kubeconfig" -root "$K8S_VOLUMES"
}

# second_node prepares node B up to its containerd: its network namespace
# and link, a cgroup root of its own, its configuration.
second_node() {
  make_node_b_network
  make_node_b_cgroups
  "$(dirname "$0")/k8s/config.sh" "$1" "$K8S_STATE_B" "$K8S_LINK_B.2" "$K8S_POD_CIDR_B" kubelet-serving-b "/$K8S_NODE_B"
  start_containerd containerd-b "$K8S_STATE_B" "${in_node_b[@]}"
}

# The storage class cairn's PVCs name by default, and its namespace. Its
# volumes are node-local (localpv), so a claim binds once its first pod
# has a node.
cluster_objects() {
  kubectl_ apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: cairn-local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: cairn.local/node-dir
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
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
  if [ -f "$K8S_STATE/admin.kubeconfig" ] && all_running && node_ready "$K8S_NODE" &&
    { [ "$K8S_NODES" = 1 ] || node_ready "$K8S_NODE_B"; }; then
    log "already up"
    echo "$K8S_STATE/admin.kubeconfig"
    return
  fi
  if [ -d "$K8S_STATE/run" ]; then
    log "a cluster is half up; taking it down first"
    "$(dirname "$0")/k8s-down.sh"
  fi
  case $K8S_NODES in 1 | 2) ;; *) die "CAIRN_K8S_NODES must be 1 or 2, not $K8S_NODES" ;; esac
  need openssl curl ctr apt-get dpkg setsid ip nsenter unshare
  [ -x /usr/bin/containerd ] || { log "installing containerd"; apt-get install -y containerd >/dev/null; }
  local t0 t1
  t0=$(date +%s%N)
  "$(dirname "$0")/k8s/build.sh" >/dev/null
  t1=$(date +%s%N)
  mkdir -p "$K8S_STATE"
  save_host
  "$(dirname "$0")/k8s/certs.sh"
  local cni
  cni=$(cni_plugins)
  "$(dirname "$0")/k8s/config.sh" "$cni" "$K8S_STATE" "$node_ip" "$K8S_POD_CIDR" kubelet-serving
  make_bridge
  start_containerd containerd "$K8S_STATE"
  if [ "$K8S_NODES" = 2 ]; then second_node "$cni"; fi
  # shellcheck disable=SC2086 # a list of image names
  "$(dirname "$0")/k8s/images.sh" $images
  start_etcd
  start_apiserver
  start_controllers
  start_localpv
  start_kubelet kubelet "$K8S_NODE" "$K8S_STATE" kubelet "$node_ip"
  if [ "$K8S_NODES" = 2 ]; then
    start_kubelet kubelet-b "$K8S_NODE_B" "$K8S_STATE_B" kubelet-b "$K8S_LINK_B.2" "${in_node_b[@]}"
  fi
  await "node $K8S_NODE Ready" 600 node_ready "$K8S_NODE"
  if [ "$K8S_NODES" = 2 ]; then await "node $K8S_NODE_B Ready" 600 node_ready "$K8S_NODE_B"; fi
  cluster_objects
  log "up in $(elapsed "$t1") s (binaries ready in $(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.1f", d / 1e9}') s)"
  echo "$K8S_STATE/admin.kubeconfig"
}

main "$@"
