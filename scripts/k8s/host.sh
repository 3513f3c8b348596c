# What the local cluster changes on the host outside its state dir, and how
# that is put back. Sourced by k8s-up.sh and k8s-down.sh after env.sh.
# save_host records the host once, before the first component starts;
# restore_host puts back exactly what it recorded.

# The tunables the kubelet sets at start (setupKernelTunables) and the one
# the CNI bridge plugin sets for a gateway bridge.
K8S_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward)

# Paths the kubelet, containerd and the hostPath provisioner create whatever
# their configuration says; each is removed at stop only if it was absent
# before.
K8S_HOST_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /etc/cni
  /opt/cni /var/lib/containerd /etc/kubernetes /tmp/hostpath_pv /run/containerd)

host_dir() { echo "$K8S_STATE/host"; }

save_host() {
  local d s p
  d=$(host_dir)
  [ -f "$d/saved" ] && return
  mkdir -p "$d"
  for s in "${K8S_SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$d/sysctls"
  for p in "${K8S_HOST_PATHS[@]}"; do [ -e "$p" ] || echo "$p"; done >"$d/absent-paths"
  for p in /sys/fs/cgroup/*/kubepods; do if [ -e "$p" ]; then echo "$p"; fi; done >"$d/cgroups"
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

# remove_cgroups removes the kubepods hierarchy the kubelet made in every
# controller, deepest first; a cgroup still holding a task stays, and says so.
remove_cgroups() {
  local f c
  f=$(host_dir)/cgroups
  for c in /sys/fs/cgroup/*/kubepods; do
    [ -d "$c" ] || continue
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
