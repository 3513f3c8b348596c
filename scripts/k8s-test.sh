#!/usr/bin/env bash
# The Kubernetes half of `make test` (build tag kube), or with `bench` of
# `make bench` (the Kubernetes benchmarks, on a cluster of their own as
# below, without the up/down check). First the cluster's
# own check: TestClusterUpDown brings a cluster up and down and compares
# the host before and after. Then one cluster of two nodes, apart from a
# developer's `make k8s-up` one (own state dir, ports, bridge and pod
# networks), is brought up for every other cluster test — the runtime conformance suite,
# the server end to end, the deploy manifests — and taken down at the end
# whatever happened. Binaries come from the cache (scripts/k8s/build.sh).
#
# Two kubelets on one host share the kubepods cgroups and clean up each
# other's pods, so with a cluster already up (a kubelet running) the tests
# use that one (CAIRN_K8S_STATE must name it) and the up/down check cannot
# run: under CI=true that is a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH=/usr/local/go/bin:$PATH CI=${CI:-true}

mode=${1:-test}
run_tests() {
  if [ "$mode" = bench ]; then
    CAIRN_BENCH_RECORD=$record go test -tags kube -count=1 -run '^$' -bench '^BenchmarkKube' -benchtime 1x \
      -timeout 20m ./server/runtimetest/
    return
  fi
  go test -tags kube -count=1 -p 1 -timeout 20m \
    -run '^(TestKube|TestKubernetes|TestDeploy)' ./server/kube/ ./server/runtimetest/ ./cmd/cairn/ ./deploy/...
}

# TestDeploy runs the server image: build it (and the others) from this
# source, never one an earlier checkout left in Docker.
if [ "$mode" = test ]; then
  make -s images >/dev/null
fi

if pgrep -x kubelet >/dev/null; then
  if [ "$CI" = true ] || [ -z "${CAIRN_K8S_STATE:-}" ]; then
    echo "k8s-test: a cluster is already up (a kubelet runs); take it down (make k8s-down) or, outside CI, name it with CAIRN_K8S_STATE" >&2
    exit 1
  fi
  echo "k8s-test: using the cluster at $CAIRN_K8S_STATE; TestClusterUpDown does not run beside it" >&2
  run_tests
  exit
fi

if [ "$mode" = test ]; then
  go test -tags kube -count=1 -timeout 30m -run '^TestClusterUpDown$' ./server/kube/
fi

export CAIRN_K8S_STATE=$root/.cairn/k8s-test CAIRN_K8S_BRIDGE=cairnk8sr0 CAIRN_K8S_POD_CIDR=10.244.79.0/24 \
  CAIRN_K8S_APISERVER_PORT=28443 CAIRN_K8S_ETCD_PORT=28379 CAIRN_K8S_KUBELET_PORT=28250 \
  CAIRN_K8S_KUBELET_HEALTHZ_PORT=28248 CAIRN_K8S_CM_PORT=28257 CAIRN_K8S_SCHEDULER_PORT=28259 CAIRN_K8S_IMAGES= \
  CAIRN_K8S_NODES=2
trap 'scripts/k8s-down.sh' EXIT
record=$(mktemp)
scripts/k8s-up.sh >/dev/null
run_tests
[ "$mode" = bench ] || exit 0

# The benchmarks ran on two nodes; provision + first shell runs again on
# one, and the two are printed side by side.
scripts/k8s-down.sh
CAIRN_K8S_NODES=1 scripts/k8s-up.sh >/dev/null
CAIRN_BENCH_RECORD=$record go test -tags kube -count=1 -run '^$' -bench '^BenchmarkKubeProvisionShell$' -benchtime 1x \
  -timeout 20m ./server/runtimetest/ >/dev/null
awk '{ms[$1] = $2} END {
  printf "provision + first shell, p50: one node %d ms, two nodes %d ms, ratio %.2f (goal <= 1.2)\n", ms[1], ms[2], ms[2] / ms[1]
}' "$record"
rm -f "$record"
