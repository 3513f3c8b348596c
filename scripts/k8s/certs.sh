#!/usr/bin/env bash
# Writes the cluster's PKI and kubeconfigs under $K8S_STATE/pki: one CA,
# the serving certificates of the apiserver and the kubelets, the client
# certificates of every component, and the service-account key pair. The
# kubeconfigs name the apiserver at the first node's address, where the
# second node reaches it too.
# Existing files are kept, so a rerun changes nothing.
set -euo pipefail
. "$(dirname "$0")/env.sh"

pki=$K8S_STATE/pki
mkdir -p "$pki" && chmod 700 "$pki"
node_ip=${K8S_POD_CIDR%.*/*}.1

# leaf NAME SUBJECT USAGE [SANS]: an EC key and a certificate signed by the CA.
leaf() {
  local name=$1 subj=$2 usage=$3 sans=${4:-}
  [ -s "$pki/$name.crt" ] && return
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/$name.key" 2>/dev/null
  openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    if [ -n "$sans" ]; then echo "subjectAltName=$sans"; fi
  } >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

# kubeconfig NAME CERT: a kubeconfig for the client certificate CERT.
kubeconfig() {
  local name=$1 cert=$2
  [ -s "$K8S_STATE/$name.kubeconfig" ] && return
  cat >"$K8S_STATE/$name.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: cairn
  cluster:
    server: https://$node_ip:$K8S_APISERVER_PORT
    certificate-authority-data: $(base64 -w0 "$pki/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 "$pki/$cert.crt")
    client-key-data: $(base64 -w0 "$pki/$cert.key")
contexts:
- name: cairn
  context: {cluster: cairn, user: $name}
current-context: cairn
YAML
  chmod 600 "$K8S_STATE/$name.kubeconfig"
}

if [ ! -s "$pki/ca.crt" ]; then
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=cairn-k8s-ca" -days 365 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$pki/ca.crt" 2>/dev/null
fi
if [ ! -s "$pki/sa.key" ]; then
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/sa.key" 2>/dev/null
  openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
fi

leaf apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,IP:$node_ip,IP:${K8S_SERVICE_CIDR%.*/*}.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
leaf apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
leaf kubelet-serving "/CN=$K8S_NODE" serverAuth "IP:$node_ip,DNS:$K8S_NODE"
leaf kubelet "/O=system:nodes/CN=system:node:$K8S_NODE" clientAuth
if [ "$K8S_NODES" = 2 ]; then
  leaf kubelet-serving-b "/CN=$K8S_NODE_B" serverAuth "IP:$K8S_LINK_B.2,DNS:$K8S_NODE_B"
  leaf kubelet-b "/O=system:nodes/CN=system:node:$K8S_NODE_B" clientAuth
fi
leaf controller-manager "/CN=system:kube-controller-manager" clientAuth
leaf scheduler "/CN=system:kube-scheduler" clientAuth
leaf admin "/O=system:masters/CN=cairn-admin" clientAuth

kubeconfig admin admin
kubeconfig kubelet kubelet
if [ "$K8S_NODES" = 2 ]; then kubeconfig kubelet-b kubelet-b; fi
kubeconfig controller-manager controller-manager
kubeconfig scheduler scheduler
