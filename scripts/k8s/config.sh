#!/usr/bin/env bash
# Writes the configuration of one node's private containerd, CNI network
# and kubelet under DIR:
#   config.sh CNI_BIN DIR NODE_IP POD_CIDR CERT [CGROUP_ROOT]
# (CERT: the name of the kubelet's serving certificate in the PKI; a
# second node's kubelet keeps its pods under a cgroup root of its own, so
# that neither kubelet takes the other's pods for its own leftovers).
# Every path the components write to is under the state dir, except the
# few the kubelet and containerd hard-code, which k8s-down.sh removes.
set -euo pipefail
. "$(dirname "$0")/env.sh"

cni_bin=$1 dir=$2 node_ip=$3 pod_cidr=$4 cert=$5 cgroup_root=${6:-}
gateway=${pod_cidr%.*/*}.1
ctd=$dir/containerd
mkdir -p "$ctd" "$dir/cni/conf" "$dir/kubelet" "$dir/pod-logs"

# restrict_oom_score_adj: this VM lacks CAP_SYS_RESOURCE, and without it
# every sandbox fails with "can't get final child's PID from pipe: EOF".
# The v1 linux runtime stays enabled: disabling it breaks CRI on 1.6.
cat >"$ctd/config.toml" <<TOML
version = 2
root = "$ctd/root"
state = "$ctd/state"
[grpc]
  address = "$ctd/containerd.sock"
[ttrpc]
  address = "$ctd/containerd.sock.ttrpc"
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$ctd/opt"
  [plugins."io.containerd.runtime.v1.linux"]
    runtime_root = "$ctd/runc-v1"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$K8S_PAUSE_IMAGE"
    disable_apparmor = true
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          Root = "$ctd/runc"
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$cni_bin"
      conf_dir = "$dir/cni/conf"
      max_conf_num = 1
TOML

# No masquerade: pods talk only to this machine and to each other, routed
# through the node's bridge (the default route: node A's address is off
# node B's pod network).
cat >"$dir/cni/conf/10-cairn.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "cairn-k8s",
  "plugins": [{
    "type": "bridge",
    "bridge": "$K8S_BRIDGE",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "$dir/cni/ipam",
      "ranges": [[{"subnet": "$pod_cidr", "gateway": "$gateway"}]],
      "routes": [{"dst": "0.0.0.0/0"}]
    }
  }]
}
JSON

# failCgroupV1: the host is cgroup v1. makeIPTablesUtilChains: leave the
# host's iptables alone. The kubelet serves on the node address only.
cat >"$dir/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
makeIPTablesUtilChains: false
containerRuntimeEndpoint: unix://$ctd/containerd.sock
address: $node_ip
port: ${CAIRN_K8S_KUBELET_PORT:-26250}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${CAIRN_K8S_KUBELET_HEALTHZ_PORT:-26248}
tlsCertFile: $K8S_STATE/pki/$cert.crt
tlsPrivateKeyFile: $K8S_STATE/pki/$cert.key
podLogsDir: $dir/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $K8S_STATE/pki/ca.crt}
authorization: {mode: Webhook}
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
YAML
if [ -n "$cgroup_root" ]; then echo "cgroupRoot: $cgroup_root" >>"$dir/kubelet/config.yaml"; fi
