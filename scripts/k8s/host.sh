# What the local cluster changes on the host outside its state dir, and how
# that is put back. Sourced by k8s-up.sh and k8s-down.sh after env.sh.
# save_host records the host once, before the first component starts;
# restore_host puts back exactly what it recorded.

# The tunables the kubelet sets at start (setupKernelTunables) and the one
# the CNI bridge plugin sets for a gateway bridge.
K8S_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward)

# Paths the kubelet and containerd create whatever their configuration
# says; each is removed at stop only if it was absent before.
K8S_HOST_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /etc/cni
  /opt/cni /var/lib/containerd /etc/kubernetes /run/containerd)

# cgroup_roots lists the cgroups the kubelets make, in every controller:
# node A's kubepods hierarchy and node B's cgroup root.
cgroup_roots() {
  local c
  for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/"$K8S_NODE_B"; do
    if [ -e "$c" ]; then echo "$c"; fi
  done
}

host_dir() { echo "$K8S_STATE/host"; }

save_host() {
  local d s p
  d=$(host_dir)
  [ -f "$d/saved" ] && return
  mkdir -p "$d"
  for s in "${K8S_SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$d/sysctls"
  for p in "${K8S_HOST_PATHS[@]}"; do [ -e "$p" ] || echo "$p"; done >"$d/absent-paths"
  cgroup_roots >"$d/cgroups"
  touch "$d/saved"
}

restore_sysctls() {
  local f line
  f=$(host_dir)/sysctls
  [ -f "$f" ] || return 0
  while IFS= read -r line; do
    [ "$(sysctl -n "${line%%=*}")" = "${line#*=}" ] || sysctl -q -w "$line"
  done <"$f"
}

remove_absent_paths() {
  local f p
  f=$(host_dir)/absent-paths
  [ -f "$f" ] || return 0
  while IFS= read -r p; do
    if [ -e "$p" ]; then rm -rf --one-file-system "$p"; fi
  done <"$f"
}

# remove_cgroups removes the hierarchies the kubelets made in every
# controller, deepest first; a cgroup still holding a task stays, and says so.
remove_cgroups() {
  local f c
  f=$(host_dir)/cgroups
  for c in $(cgroup_roots); do
    if grep -qxF "$c" "$f" 2>/dev/null; then continue; fi
    find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || log "cgroup $c still has tasks"
  done
}

# unmount_state unmounts every mount under the state dir, deepest first.
unmount_state() {
  local m
  awk -v s="$K8S_STATE/" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo | sort -r |
    while IFS= read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
}

# make_bridge creates the cluster's bridge with the node's address before
# the kubelet starts, so the kubelet serves on it; the CNI bridge plugin
# adopts it.
make_bridge() {
  local ip=${K8S_POD_CIDR%.*/*}.1 len=${K8S_POD_CIDR#*/}
  ip link show "$K8S_BRIDGE" >/dev/null 2>&1 || ip link add "$K8S_BRIDGE" type bridge
  ip addr show dev "$K8S_BRIDGE" | grep -qF "inet $ip/" || ip addr add "$ip/$len" dev "$K8S_BRIDGE"
  ip link set "$K8S_BRIDGE" up
}

remove_bridge() {
  if ip link show "$K8S_BRIDGE" >/dev/null 2>&1; then ip link delete "$K8S_BRIDGE"; fi
}

# make_node_b_network makes node B's network namespace (bind-mounted on a
# file in its state dir, so no /run/netns appears), the veth pair joining
# it to the host, and the routes between the host and B's pod network.
make_node_b_network() {
  local host=$K8S_LINK_B.1 node=$K8S_LINK_B.2 in=(nsenter "--net=$K8S_NETNS_B")
  # A cluster of these names that was killed rather than taken down (its
  # state dir perhaps gone with a work tree) left its veth and rules behind.
  remove_node_b_network
  mkdir -p "$K8S_STATE_B"
  touch "$K8S_NETNS_B"
  unshare --net="$K8S_NETNS_B" true
  ip link add "$K8S_VETH_B" type veth peer name eth0 netns "$K8S_NETNS_B"
  ip addr add "$host/30" dev "$K8S_VETH_B"
  ip link set "$K8S_VETH_B" up
  "${in[@]}" ip link set lo up
  "${in[@]}" ip addr add "$node/30" dev eth0
  "${in[@]}" ip link set eth0 up
  "${in[@]}" ip route add default via "$host"
  "${in[@]}" sysctl -q -w net.ipv4.ip_forward=1
  ip route add "$K8S_POD_CIDR_B" via "$node" dev "$K8S_VETH_B"
  forward_between_nodes -I
}

# remove_node_b_network deletes the veth pair (its route goes with it) and
# the forwarding rules; the namespace itself goes when unmount_state
# unmounts its file and its last process is gone.
remove_node_b_network() {
  if ip link show "$K8S_VETH_B" >/dev/null 2>&1; then ip link delete "$K8S_VETH_B"; fi
  forward_between_nodes -D
}

# forward_between_nodes -I|-D: lets pod traffic between the two nodes'
# pod networks through the host's FORWARD chain (Docker sets its policy to
# DROP), or takes the rules out again.
forward_between_nodes() {
  command -v iptables >/dev/null || return 0
  local rule
  for rule in "-s $K8S_POD_CIDR -d $K8S_POD_CIDR_B" "-s $K8S_POD_CIDR_B -d $K8S_POD_CIDR"; do
    # shellcheck disable=SC2086 # the rule's words
    if [ "$1" = -I ] || iptables -w -C FORWARD $rule -m comment --comment cairn-k8s -j ACCEPT 2>/dev/null; then
      iptables -w "$1" FORWARD $rule -m comment --comment cairn-k8s -j ACCEPT
    fi
  done
}

# make_node_b_cgroups makes node B's cgroup root in every controller; a new
# cpuset cgroup has no CPUs or memory nodes until it is given its parent's.
make_node_b_cgroups() {
  local c f cs=/sys/fs/cgroup/cpuset
  for c in /sys/fs/cgroup/*/; do mkdir -p "$c$K8S_NODE_B"; done
  if [ -d "$cs/$K8S_NODE_B" ]; then
    for f in cpuset.cpus cpuset.mems; do cat "$cs/$f" >"$cs/$K8S_NODE_B/$f"; done
  fi
}
pid_of() { cat "$K8S_STATE/run/$1.pid" 2>/dev/null; }

running() {
  local pid
  pid=$(pid_of "$1") && [ -n "$pid" ] && alive "$pid"
}

# alive PID: the process exists and is no zombie (this machine's init
# reaps its orphans only every few seconds).
alive() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]
}

# stop_pids PID...: SIGTERM to all at once, then SIGKILL to those left
# after 10 s; returns once every one is gone.
stop_pids() {
  local pid left
  kill -TERM "$@" 2>/dev/null || true
  for _ in $(seq 50); do
    left=
    for pid in "$@"; do
      if alive "$pid"; then left=1; fi
    done
    [ -z "$left" ] && return 0
    sleep 0.2
  done
  kill -KILL "$@" 2>/dev/null || true
  for pid in "$@"; do
    while alive "$pid"; do sleep 0.1; done
  done
}

# stop_components NAME...: stops the named components together, by their
# PID files.
stop_components() {
  local c pid pids=()
  for c in "$@"; do
    pid=$(pid_of "$c") || continue
    if [ -n "$pid" ]; then pids+=("$pid"); fi
  done
  if [ ${#pids[@]} -gt 0 ]; then stop_pids "${pids[@]}"; fi
  for c in "$@"; do rm -f "$K8S_STATE/run/$c.pid"; done
}
