#!/usr/bin/env bash
# Puts images into every node's private containerd without a registry:
# the pause image, packed here as an OCI archive around the pause binary
# build.sh made, and every Docker image named on the command line that
# Docker has (docker save, then ctr import into each node). Pods use
# imagePullPolicy Never, so an image missing here is a pod that never
# starts.
set -euo pipefail
. "$(dirname "$0")/env.sh"

socks=("$K8S_STATE/containerd/containerd.sock")
if [ -S "$K8S_STATE_B/containerd/containerd.sock" ]; then socks+=("$K8S_STATE_B/containerd/containerd.sock"); fi
ctr_() { ctr -n k8s.io --address "$sock" "$@"; }

# import_all FILE: imports the archive FILE into every node.
import_all() {
  for sock in "${socks[@]}"; do ctr_ images import "$1" >/dev/null; done
}

# blob FILE: stores FILE under blobs/sha256 and prints its digest.
blob() {
  local d
  d=$(sha256sum "$1" | cut -d' ' -f1)
  mv "$1" "$oci/blobs/sha256/$d"
  echo "$d"
}

size() { stat -c %s "$oci/blobs/sha256/$1"; }

pause_image() {
  sock=${socks[-1]}
  ctr_ images check "name==$K8S_PAUSE_IMAGE" 2>/dev/null | grep -q . && return
  local work root layer config manifest
  work=$(mktemp -d) && oci=$work/oci
  mkdir -p "$oci/blobs/sha256" "$work/root"
  install -m 0755 "$K8S_BIN/pause" "$work/root/pause"
  tar --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/root" -cf "$work/layer.tar" pause
  layer=$(blob "$work/layer.tar")
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$layer" >"$work/config.json"
  config=$(blob "$work/config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
    "$config" "$(size "$config")" "$layer" "$(size "$layer")" >"$work/manifest.json"
  manifest=$(blob "$work/manifest.json")
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$manifest" "$(size "$manifest")" "$K8S_PAUSE_IMAGE" "${K8S_PAUSE_IMAGE##*:}" >"$oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
  tar -C "$oci" -cf "$work/pause.tar" .
  import_all "$work/pause.tar"
  rm -rf "$work"
}

docker_images() {
  local have=() img
  for img in "$@"; do
    if docker image inspect "$img" >/dev/null 2>&1; then
      have+=("$img")
    else
      log "image $img is not in Docker ('make images' builds it); not imported"
    fi
  done
  [ ${#have[@]} -eq 0 ] && return
  local work
  work=$(mktemp -d)
  docker save -o "$work/images.tar" "${have[@]}"
  import_all "$work/images.tar"
  rm -rf "$work"
}

pause_image
docker_images "$@"
