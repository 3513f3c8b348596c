//go:build kube

// Package kubernetes_test applies deploy/kubernetes, through an overlay
// made for the test, to the local cluster CAIRN_K8S_STATE names (a
// `make k8s-up` cluster; the test never starts or stops one), with the
// locally built server image, a real PostgreSQL and versitygw, and checks
// what the manifests promise: two Ready replicas that serve, a Role that
// is enough and no more, and the sidecars' network.
//
// The local cluster has neither kube-proxy nor CoreDNS, and its API server
// and the test's services listen on loopback. Pods on the pod network
// reach the host at the node's address (the bridge's), so the test relays
// three ports there to loopback: the API server (the overlay points the
// in-cluster config at it with KUBERNETES_SERVICE_HOST and _PORT, which
// the Service 10.96.0.1 would serve on a real cluster), PostgreSQL and the
// store. The replicas stay on the pod network, as the base has them:
// hostNetwork would make two replicas on one node collide on their ports.
package kubernetes_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/kube"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// Images the deployment runs: the server, the sidecar its pods run (it
// carries the shells' holder), the busybox shell image the network probe
// runs, and the same image under the name the deployment's shells run.
var images = []string{"cairn:latest", stacktest.SidecarImage, stacktest.ShellImage, shellImage}

// shellImage is shell.image of the test's deployment.
const shellImage = "cairn-shell:latest"

const apiPort = 44123 // api.service.appPort of the base's cairn.yaml

// kubectl runs the cluster's kubectl with its admin kubeconfig.
type kubectl struct {
	bin, kubeconfig string
}

func (k kubectl) run(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (k kubectl) must(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := k.run(ctx, nil, args...)
	require.NoError(t, err)
	return out
}

// localCluster is the running cluster of $CAIRN_K8S_STATE.
func localCluster(t *testing.T) kubectl {
	t.Helper()
	state := os.Getenv("CAIRN_K8S_STATE")
	if state == "" {
		stacktest.Need(t, "the local cluster", errors.New("CAIRN_K8S_STATE is not set (the state dir of make k8s-up)"))
	}
	k := kubectl{kubeconfig: filepath.Join(state, "admin.kubeconfig")}
	_, err := os.Stat(k.kubeconfig)
	stacktest.Need(t, "the local cluster's kubeconfig", err)
	k.bin, err = stacktest.Kubectl()
	stacktest.Need(t, "kubectl", err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = k.run(ctx, nil, "get", "--raw", "/readyz")
	stacktest.Need(t, "the local cluster's API server", err)
	return k
}

// importImages puts the Docker images into the cluster's containerd.
func importImages(t *testing.T) {
	t.Helper()
	for _, img := range images {
		out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", img).CombinedOutput()
		require.NoError(t, err, "image %s is not in Docker (make images builds it): %s", img, out)
	}
	stacktest.ImportImages(t, images...)
}

// deployment is the base applied in a namespace of the test's own.
type deployment struct {
	k      kubectl
	ns     string
	nodeIP string
	token  string
	s3Port int
	// pgRelay is the node's address relaying to PostgreSQL, which a
	// sidecar must not reach.
	pgRelay string
	pods    []pod // the Ready replicas
}

type pod struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

func (p pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func (d *deployment) list(t *testing.T, selector string) []pod {
	t.Helper()
	var list struct{ Items []pod }
	require.NoError(t, json.Unmarshal([]byte(d.k.must(t, "get", "pods", "-n", d.ns, "-l", selector, "-o", "json")), &list))
	return list.Items
}

// deploy applies the base through an overlay in t.TempDir() and waits for
// both replicas to be Ready. The namespace goes when the test ends, and
// with it every pod, claim and volume.
func deploy(t *testing.T) *deployment {
	t.Helper()
	k := localCluster(t)
	importImages(t)

	d := &deployment{k: k, ns: "cairn-deploy-" + strings.ToLower(ulid.Make().String()[18:])}
	d.nodeIP = stacktest.KubeHostAddr(t, k.kubeconfig)

	dsn, err := url.Parse(stacktest.Database(t))
	require.NoError(t, err)
	sqlPassword, _ := dsn.User.Password()
	store := stacktest.S3(t)
	bucket := stacktest.Bucket(t)

	apiServer := strings.TrimSpace(k.must(t, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"))
	apiURL, err := url.Parse(apiServer)
	require.NoError(t, err)
	apiRelay := stacktest.Relay(t, d.nodeIP, apiURL.Host)
	pgRelay := stacktest.Relay(t, d.nodeIP, dsn.Host)
	d.s3Port = stacktest.Relay(t, d.nodeIP, store.Endpoint)
	d.pgRelay = net.JoinHostPort(d.nodeIP, strconv.Itoa(pgRelay))

	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	d.token = hex.EncodeToString(raw)
	sum := sha256.Sum256([]byte(d.token))

	dir := t.TempDir()
	base, err := filepath.Abs(".")
	require.NoError(t, err)
	rel, err := filepath.Rel(dir, base) // kustomize takes no absolute base
	require.NoError(t, err)
	storeAddr := net.JoinHostPort(d.nodeIP, strconv.Itoa(d.s3Port))
	files := map[string]string{
		"kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %[1]s
resources: [%[2]s]
configMapGenerator:
- {name: cairn, namespace: cairn, behavior: replace, files: [cairn.yaml]}
secretGenerator:
- {name: cairn, envs: [secret.env], files: [tokens.yaml]}
patches:
- target: {kind: NetworkPolicy, name: cairn-sidecar}
  patch: |-
    - {op: replace, path: /spec/egress/0/to/0/ipBlock/cidr, value: %[3]s/32}
    - {op: replace, path: /spec/egress/0/ports/0/port, value: %[4]d}
- target: {kind: Deployment, name: cairn}
  patch: |-
    - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_HOST, value: "%[3]s"}}
    - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_PORT, value: "%[5]d"}}
`, d.ns, rel, d.nodeIP, d.s3Port, apiRelay),
		"cairn.yaml": fmt.Sprintf(`appName: cairn
persistence:
  sql:
    app: {host: %[1]s, port: %[2]d, db: %[3]s, user: %[4]s}
api:
  service: {listenOn: 0.0.0.0, appPort: %[9]d}
metrics:
  service: {listenOn: 0.0.0.0, appPort: 3001}
auth:
  tokensFile: /etc/cairn/secret/tokens.yaml
artifact:
  s3: {endpoint: "%[5]s", presignEndpoint: "http://%[5]s", useTLS: false, region: %[6]s}
  store: {bucket: %[7]s}
  sidecar: {image: %[8]s}
workspace: {volumeType: kubernetes}
shell: {enable: true, image: %[11]s}
kubernetes:
  inCluster: true
  namespace: %[10]s
  accessMode: ReadWriteOnce
  volumeSize: 64Mi
  imagePullPolicy: Never
  podStartTimeoutSecs: 120
`, d.nodeIP, pgRelay, strings.TrimPrefix(dsn.Path, "/"), dsn.User.Username(),
			storeAddr, store.Region, bucket, stacktest.SidecarImage, apiPort, d.ns, shellImage),
		"secret.env": fmt.Sprintf("sql-password=%s\ns3-access-key=%s\ns3-secret-key=%s\n",
			sqlPassword, store.AccessKey, store.SecretKey),
		"tokens.yaml": fmt.Sprintf("- {name: deploy-test, sha256: %x, scopes: [read, write, admin, shell]}\n", sum),
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}

	// Registered before the apply, so that a half-made deployment goes too.
	t.Cleanup(func() { d.remove(t) })
	k.must(t, "apply", "-k", dir)

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	if _, err := k.run(ctx, nil, "rollout", "status", "deployment/cairn", "-n", d.ns, "--timeout=4m"); err != nil {
		d.dump(t)
		require.NoError(t, err)
	}
	d.pods = d.list(t, "app.kubernetes.io/name=cairn")
	return d
}

// dump logs what explains a deployment that did not become Ready: the
// pods' state and their last log lines (the server logs no secrets).
func (d *deployment) dump(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := d.k.run(ctx, nil, "get", "pods,events", "-n", d.ns, "-o", "wide")
	t.Logf("pods and events:\n%s", out)
	out, _ = d.k.run(ctx, nil, "logs", "-n", d.ns, "-l", "app.kubernetes.io/name=cairn", "--all-containers", "--tail=30", "--prefix")
	t.Logf("logs:\n%s", out)
}

// remove deletes the namespace and waits until it, and every volume its
// claims had, are gone.
func (d *deployment) remove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := d.k.run(ctx, nil, "delete", "namespace", d.ns, "--ignore-not-found", "--wait=true", "--timeout=2m"); err != nil {
		t.Errorf("delete namespace %s: %v\n%s", d.ns, err, out)
		return
	}
	for {
		out, err := d.k.run(ctx, nil, "get", "pv", "-o",
			`jsonpath={range .items[?(@.spec.claimRef.namespace=="`+d.ns+`")]}{.metadata.name}{"\n"}{end}`)
		if err == nil && strings.TrimSpace(out) == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("volumes of %s left behind: %s %v", d.ns, out, err)
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// demoClient makes the demo client's calls through replica p.
func (d *deployment) demoClient(t *testing.T, p pod) {
	ok := func(code int, env map[string]json.RawMessage) map[string]json.RawMessage {
		t.Helper()
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
		require.JSONEq(t, "true", string(env["success"]))
		return env
	}
	var ws struct {
		ID string `json:"id"`
	}
	env := ok(d.call(t, p, http.MethodPost, "/v1/workspaces", map[string]string{"name": "demo-" + p.Spec.NodeName}, d.token))
	require.NoError(t, json.Unmarshal(env["workspace"], &ws))
	ok(d.call(t, p, http.MethodPost, "/v1/workspaces/"+ws.ID+"/volume", nil, d.token))

	body := []byte("made through " + p.Spec.NodeName + "\n")
	sum := sha256.Sum256(body)
	sumB64 := base64.StdEncoding.EncodeToString(sum[:])
	var staging struct {
		Key    string `json:"staging_object_key"`
		PutURL string `json:"put_url"`
	}
	env = ok(d.call(t, p, http.MethodPost, "/v1/workspaces/"+ws.ID+"/new-staging",
		map[string]any{"size": len(body), "sha256_b64": sumB64}, d.token))
	require.NoError(t, json.Unmarshal(env["staging"], &staging))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, staging.PutURL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("x-amz-checksum-sha256", sumB64)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Less(t, res.StatusCode, 400)
	ok(d.call(t, p, http.MethodPost, "/v1/workspaces/"+ws.ID+"/artifacts",
		map[string]string{"staging_object_key": staging.Key, "name": "report", "description": "d"}, d.token))

	var found []struct {
		ID string `json:"id"`
	}
	env = ok(d.call(t, p, http.MethodGet, "/v1/workspaces/"+ws.ID+"/artifacts?name=report&state=RECORDED&state=MISSING_OBJECT", nil, d.token))
	require.NoError(t, json.Unmarshal(env["artifacts"], &found))
	require.Len(t, found, 1)
	var getURL string
	env = ok(d.call(t, p, http.MethodGet, "/v1/artifacts/"+found[0].ID+"?presign=true&ttl=60", nil, d.token))
	require.NoError(t, json.Unmarshal(env["get_url"], &getURL))
	req, err = http.NewRequestWithContext(t.Context(), http.MethodGet, getURL, nil)
	require.NoError(t, err)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, body, got)

	ok(d.call(t, p, http.MethodDelete, "/v1/workspaces/"+ws.ID+"/volume", nil, d.token))
	ok(d.call(t, p, http.MethodDelete, "/v1/workspaces/"+ws.ID, nil, d.token))
}

// call makes one API request to a replica's pod address.
func (d *deployment) call(t *testing.T, p pod, method, path string, body any, token string) (int, map[string]json.RawMessage) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	u := "http://" + net.JoinHostPort(p.Status.PodIP, strconv.Itoa(apiPort)) + path
	req, err := http.NewRequestWithContext(t.Context(), method, u, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 3 * time.Minute}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var env map[string]json.RawMessage
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &env), "%s %s: %s", method, path, raw)
	return res.StatusCode, env
}

func TestDeploy(t *testing.T) {
	d := deploy(t)

	t.Run("TwoReplicasReady", func(t *testing.T) {
		require.Len(t, d.pods, 2)
		for _, p := range d.pods {
			require.True(t, p.ready(), "pod %s", p.Metadata.Name)
			require.NotEmpty(t, p.Status.PodIP)
		}
		require.NotEqual(t, d.pods[0].Status.PodIP, d.pods[1].Status.PodIP)
		require.NotEqual(t, d.pods[0].Spec.NodeName, d.pods[1].Spec.NodeName,
			"the replicas are spread over the suite's two nodes")
	})

	// The first cairn's demo client's calls, unchanged, through the replica
	// on each node: a workspace with its volume, a staged upload PUT to the
	// store with its checksum, the artifact registered, found by name and
	// state, and read back through a presigned GET.
	t.Run("DemoClientThroughEachNode", func(t *testing.T) {
		for _, p := range d.pods {
			t.Run(p.Spec.NodeName, func(t *testing.T) { d.demoClient(t, p) })
		}
	})

	t.Run("NoTokenRefused", func(t *testing.T) {
		code, _ := d.call(t, d.pods[0], http.MethodGet, "/v1/workspaces", nil, "")
		require.Equal(t, http.StatusUnauthorized, code)
	})

	// A workspace made on one replica gets its volume — a claim and the
	// prep sidecar, made in-cluster by the service account — and is seen
	// on the other; the sidecar pods the server made are recorded for the
	// network policy's check.
	var sidecars []pod
	t.Run("WorkspaceOK", func(t *testing.T) {
		a, b := d.pods[0], d.pods[1]
		stop := d.watchPods(t, &sidecars)
		code, env := d.call(t, a, http.MethodPost, "/v1/workspaces", map[string]string{"name": "deploy-test"}, d.token)
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
		var ws struct {
			ID          string `json:"id"`
			VolumeState string `json:"volume_state"`
		}
		require.NoError(t, json.Unmarshal(env["workspace"], &ws))
		code, env = d.call(t, a, http.MethodPost, "/v1/workspaces/"+ws.ID+"/volume", nil, d.token)
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
		code, env = d.call(t, b, http.MethodGet, "/v1/workspaces/"+ws.ID, nil, d.token)
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
		require.NoError(t, json.Unmarshal(env["workspace"], &ws))
		require.Equal(t, "READY", ws.VolumeState)
		claims := d.k.must(t, "get", "pvc", "-n", d.ns, "-o", "name")
		require.Contains(t, claims, strings.ToLower(ws.ID))
		code, env = d.call(t, b, http.MethodDelete, "/v1/workspaces/"+ws.ID+"/volume", nil, d.token)
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
		code, env = d.call(t, a, http.MethodDelete, "/v1/workspaces/"+ws.ID, nil, d.token)
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
		stop()
		require.NotEmpty(t, sidecars, "the volume's prep sidecar was never seen")
	})

	t.Run("RoleLeastPrivilege", func(t *testing.T) { d.checkRole(t) })

	t.Run("SidecarPolicySelectsSidecars", func(t *testing.T) {
		var np struct {
			Spec struct {
				PodSelector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"podSelector"`
				PolicyTypes []string          `json:"policyTypes"`
				Ingress     []json.RawMessage `json:"ingress"`
				Egress      []struct {
					To []struct {
						IPBlock *struct {
							CIDR string `json:"cidr"`
						} `json:"ipBlock"`
						NamespaceSelector json.RawMessage `json:"namespaceSelector"`
					} `json:"to"`
					Ports []struct {
						Protocol string `json:"protocol"`
						Port     int    `json:"port"`
					} `json:"ports"`
				} `json:"egress"`
			} `json:"spec"`
		}
		raw := d.k.must(t, "get", "networkpolicy", "cairn-sidecar", "-n", d.ns, "-o", "json")
		require.NoError(t, json.Unmarshal([]byte(raw), &np))
		require.ElementsMatch(t, []string{"Ingress", "Egress"}, np.Spec.PolicyTypes)
		require.Empty(t, np.Spec.Ingress, "nothing may reach a sidecar")
		require.Len(t, np.Spec.Egress, 2, "the store and DNS, nothing else")
		require.Equal(t, d.nodeIP+"/32", np.Spec.Egress[0].To[0].IPBlock.CIDR)
		require.Equal(t, d.s3Port, np.Spec.Egress[0].Ports[0].Port)
		for _, port := range np.Spec.Egress[1].Ports {
			require.Equal(t, 53, port.Port)
		}
		sel := np.Spec.PodSelector.MatchLabels
		require.NotEmpty(t, sel)
		for _, p := range sidecars {
			require.True(t, selects(sel, p.Metadata.Labels), "the policy misses sidecar %s %v", p.Metadata.Name, p.Metadata.Labels)
		}
		for _, p := range d.pods {
			require.False(t, selects(sel, p.Metadata.Labels), "the policy selects the server %s", p.Metadata.Name)
		}
	})

	t.Run("SidecarReachesStore", func(t *testing.T) { d.probeNetwork(t) })

	// Last: they replace or evict replicas.
	t.Run("RolloutRestartKeepsShells", func(t *testing.T) { d.rolloutKeepsShells(t) })
	t.Run("ABudgetKeepsOneReplicaServing", func(t *testing.T) { d.evictBoth(t) })
}

// evictBoth asks the API to evict both replicas, as a drain of their nodes
// would: the disruption budget lets the first go and refuses the second.
func (d *deployment) evictBoth(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var pods []pod
	require.Eventually(t, func() bool {
		ready, err := d.replicasNow(ctx)
		pods = ready
		return err == nil && len(ready) == 2
	}, time.Minute, 200*time.Millisecond, "both replicas are ready")
	evict := func(p pod) error {
		body := fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q,"namespace":%q}}`,
			p.Metadata.Name, d.ns)
		_, err := d.k.run(ctx, []byte(body), "create", "--raw",
			"/api/v1/namespaces/"+d.ns+"/pods/"+p.Metadata.Name+"/eviction", "-f", "-")
		return err
	}
	// The budget's controller counts the healthy replicas a moment after
	// they are ready; until then every eviction is refused.
	require.Eventually(t, func() bool { return evict(pods[0]) == nil }, time.Minute, 200*time.Millisecond,
		"the first replica may be evicted")
	err := evict(pods[1])
	require.Error(t, err, "the second eviction would leave no replica serving")
	require.Contains(t, err.Error(), "disruption budget")
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// watchPods records every pod the server makes as a sidecar (label
// cairn.sidecar=true) until stop is called.
func (d *deployment) watchPods(t *testing.T, into *[]pod) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, d.k.bin, "get", "pods", "-n", d.ns, "--watch", "-o", "json")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+d.k.kubeconfig)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	seen := map[string]bool{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		dec := json.NewDecoder(out)
		for {
			var p pod
			if dec.Decode(&p) != nil {
				return
			}
			if p.Metadata.Labels[kube.LabelSidecar] != "true" {
				continue
			}
			mu.Lock()
			if !seen[p.Metadata.Name] {
				seen[p.Metadata.Name] = true
				*into = append(*into, p)
			}
			mu.Unlock()
		}
	}()
	return func() {
		cancel()
		_ = cmd.Wait()
		<-done
	}
}

// checkRole asks the API what the server's service account may do.
func (d *deployment) checkRole(t *testing.T) {
	sa := "system:serviceaccount:" + d.ns + ":cairn"
	canI := func(ns string, args ...string) bool {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, err := d.k.run(ctx, nil, append([]string{"auth", "can-i", "--as", sa, "-n", ns}, args...)...)
		// The answer is the last line (warnings come first); can-i exits 1
		// for "no", and anything else is a failed question.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		answer := strings.TrimSpace(lines[len(lines)-1])
		require.Contains(t, []string{"yes", "no"}, answer, "can-i %v -n %s: %v", args, ns, err)
		return answer == "yes"
	}
	for _, q := range [][]string{
		{"create", "pods"}, {"get", "pods"}, {"list", "pods"}, {"watch", "pods"}, {"delete", "pods"},
		{"create", "pods", "--subresource=exec"}, {"create", "pods", "--subresource=attach"},
		{"get", "pods", "--subresource=log"},
		{"create", "persistentvolumeclaims"}, {"get", "persistentvolumeclaims"}, {"watch", "persistentvolumeclaims"},
		{"delete", "persistentvolumeclaims"},
		{"get", "events"}, {"list", "events"}, {"watch", "events"},
	} {
		require.True(t, canI(d.ns, q...), "the server cannot %v in its namespace", q)
	}
	for _, q := range [][]string{
		{"get", "secrets"}, {"list", "secrets"}, {"watch", "secrets"}, {"create", "secrets"},
		{"get", "configmaps"}, {"update", "pods"}, {"patch", "pods"}, {"create", "pods", "--subresource=portforward"},
		{"create", "pods", "--subresource=ephemeralcontainers"}, {"create", "events"}, {"delete", "events"},
		{"create", "serviceaccounts", "--subresource=token"}, {"create", "roles"}, {"create", "rolebindings"},
		{"update", "deployments.apps"}, {"delete", "namespaces"},
	} {
		require.False(t, canI(d.ns, q...), "the server may %v in its namespace", q)
	}
	for _, ns := range []string{"default", "kube-system", "cairn"} {
		for _, q := range [][]string{{"create", "pods"}, {"list", "pods"}, {"create", "pods", "--subresource=exec"},
			{"create", "persistentvolumeclaims"}, {"get", "secrets"}} {
			require.False(t, canI(ns, q...), "the server may %v in namespace %s", q, ns)
		}
	}
	for _, q := range [][]string{{"list", "nodes"}, {"list", "namespaces"}, {"list", "persistentvolumes"},
		{"list", "storageclasses.storage.k8s.io"}, {"create", "clusterrolebindings"}, {"impersonate", "serviceaccounts"}} {
		require.False(t, canI(d.ns, q...), "the server may %v cluster-wide", q)
	}
}

// probeNetwork runs a pod labelled as a sidecar (busybox, not the sidecar
// image, which has no shell) and a control pod without the labels and,
// through execs made as the server's service account, tries addresses
// from both. The store must be reachable from the sidecar. What the policy
// denies is required to be unreachable only with
// CAIRN_K8S_NETPOL_ENFORCED=true (a cluster whose CNI enforces
// NetworkPolicy): the local cluster's bridge CNI enforces none. There,
// pod-to-pod traffic is dropped by the host's FORWARD policy for every
// pod alike (the control shows it), and anything listening on the node's
// address — here the test's PostgreSQL relay — is reachable from a sidecar.
func (d *deployment) probeNetwork(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	probe := func(name, labels string) {
		spec := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {%s}
spec:
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: 0
  restartPolicy: Never
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: probe
    image: %s
    imagePullPolicy: Never
    command: [/bin/sleep, "600"]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
`, name, d.ns, labels, stacktest.ShellImage)
		_, err := d.k.run(ctx, []byte(spec), "apply", "-f", "-")
		require.NoError(t, err)
	}
	probe("netprobe", fmt.Sprintf("%s: cairn, %s: sidecar, %s: \"true\"", kube.LabelApp, kube.LabelRole, kube.LabelSidecar))
	probe("netcontrol", "probe: control")
	_, err := d.k.run(ctx, nil, "wait", "-n", d.ns, "--for=condition=Ready", "pod/netprobe", "pod/netcontrol", "--timeout=2m")
	require.NoError(t, err)

	// reach reports whether from pod a TCP connection to addr was made;
	// busybox's static wget crashes on this image, so it is nc (-w bounds
	// the connect; nc exits 0 once connected and the peer closes).
	reach := func(from, addr string) bool {
		host, port, _ := net.SplitHostPort(addr)
		script := fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | timeout 10 nc -w 3 %s %s >/dev/null 2>&1; echo rc=$?`, host, port)
		out, err := d.k.run(ctx, nil, "exec", "--as", "system:serviceaccount:"+d.ns+":cairn", "-n", d.ns, from, "--",
			"/bin/sh", "-c", script)
		require.NoError(t, err)
		return strings.TrimSpace(out) == "rc=0"
	}
	store := net.JoinHostPort(d.nodeIP, strconv.Itoa(d.s3Port))
	require.True(t, reach("netprobe", store), "a sidecar cannot reach the store at %s", store)

	replica := net.JoinHostPort(d.pods[0].Status.PodIP, strconv.Itoa(apiPort))
	denied := map[string]string{"a replica's API": replica, "the PostgreSQL relay on the node": d.pgRelay}
	if os.Getenv("CAIRN_K8S_NETPOL_ENFORCED") == "true" {
		require.True(t, reach("netcontrol", replica), "the control pod cannot reach %s: the check would prove nothing", replica)
		for what, addr := range denied {
			require.False(t, reach("netprobe", addr), "a sidecar reached %s at %s despite the policy", what, addr)
		}
		return
	}
	t.Logf("NetworkPolicy is NOT enforced here (bridge CNI); what is true on this cluster:")
	t.Logf("  control pod (no sidecar labels) -> replica %s: reached=%v", replica, reach("netcontrol", replica))
	for what, addr := range denied {
		t.Logf("  sidecar pod -> %s %s: reached=%v", what, addr, reach("netprobe", addr))
	}
}

// replicaSelector selects the server's pods, not the pods it makes.
const replicaSelector = "app.kubernetes.io/name=cairn"

// shellSize is the terminal of the rollout's shells.
var shellSize = ptyshell.Size{Cols: 80, Rows: 24}

// rolledShell is a shell kept open across the rollout, and its client.
type rolledShell struct {
	n        int
	info     *cairn.ShellSessionInfo
	sess     *ptyshell.Session
	drops    int
	reattach []time.Duration // from each cut to the attach that followed
}

// rolloutKeepsShells opens three v2 shells through a front that spreads
// connections over the Ready replicas, each running a command that
// outlasts the rollout, and restarts the deployment. Every replica is
// replaced, so every client's connection is cut; each client attaches
// again through the front as `cairn shell` does, sending nothing, and
// reads the command's end — the holder's render of the screen, then live
// output. The shells are then listed and ended through a new replica.
func (d *deployment) rolloutKeepsShells(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			d.dumpShells(t)
		}
	})
	f := newFront(t, d)
	cl, err := client.New("http://"+f.addr(), client.WithToken(d.token))
	require.NoError(t, err)
	ws, err := cl.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "rollout-test"})
	require.NoError(t, err)
	require.NoError(t, cl.SetupVolume(t.Context(), ws.ID))

	shells := make([]*rolledShell, 3)
	for i := range shells {
		shells[i] = openRolledShell(t, cl, ws.ID, i+1)
	}

	results := make(chan error, len(shells))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, s := range shells {
		go func() { results <- s.rideOut(ctx, cl) }()
	}
	old := map[string]bool{}
	for _, p := range d.list(t, replicaSelector) {
		old[p.Metadata.Name] = true
	}
	began := time.Now()
	d.k.must(t, "rollout", "restart", "deployment/cairn", "-n", d.ns)
	if _, err := d.k.run(ctx, nil, "rollout", "status", "deployment/cairn", "-n", d.ns, "--timeout=3m"); err != nil {
		d.dump(t)
		require.NoError(t, err)
	}
	t.Logf("rollout restart: all replicas replaced and Ready in %s", time.Since(began).Round(time.Millisecond))
	for range shells {
		require.NoError(t, <-results)
	}
	for _, s := range shells {
		t.Logf("shell %d (%s): cut %d time(s); reattached after %v", s.n, s.info.ShellID, s.drops, rounded(s.reattach))
		require.NotZero(t, s.drops, "shell %d's connection outlived the replica it went through", s.n)
		require.NoError(t, s.sess.Close())
	}

	fresh := d.readyReplicas(t)
	require.NotEmpty(t, fresh)
	for _, p := range fresh {
		require.False(t, old[p.Metadata.Name], "replica %s was not replaced", p.Metadata.Name)
	}
	d.endShells(t, fresh[0], shells)
	code, env := d.call(t, fresh[0], http.MethodDelete, "/v1/workspaces/"+ws.ID+"/volume", nil, d.token)
	require.Equal(t, http.StatusOK, code, "%s", env["error"])
}

// openRolledShell creates shell n, attaches to it and starts a command
// that prints started-n, sleeps through the rollout and prints done-n.
// The command line computes n, so its echo holds neither word.
func openRolledShell(t *testing.T, cl *client.Client, wsID string, n int) *rolledShell {
	t.Helper()
	info, err := cl.CreateShell(t.Context(), wsID, shellSize, "")
	require.NoError(t, err)
	require.NotZero(t, info.DetachedTimeoutSecs, "the reattach is bounded by the detached timeout")
	sess, err := cl.AttachShell(t.Context(), info.ShellID, info.Secret, shellSize)
	require.NoError(t, err)
	s := &rolledShell{n: n, info: info, sess: sess}
	t.Cleanup(func() { _ = s.sess.Close() })
	_, err = sess.Write(fmt.Appendf(nil, "echo started-$((0+%[1]d)); sleep 25; echo done-$((0+%[1]d))\r", n))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out strings.Builder
	require.NoError(t, readUntil(ctx, sess, fmt.Sprintf("started-%d", n), &out), "shell %d: %q", n, out.String())
	return s
}

// rideOut follows the shell's client until done-n shows: each time its
// connection is cut it attaches again through the front, with the CLI's
// backoff, and never sends a key.
func (s *rolledShell) rideOut(ctx context.Context, cl *client.Client) error {
	want := fmt.Sprintf("done-%d", s.n)
	var out strings.Builder
	for {
		err := readUntil(ctx, s.sess, want, &out)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ptyshell.ErrConnectionLost) {
			return fmt.Errorf("shell %d: %w; its output so far: %q", s.n, err, out.String())
		}
		lostAt := time.Now()
		s.drops++
		_ = s.sess.Close()
		detached := time.Duration(s.info.DetachedTimeoutSecs) * time.Second
		s.sess, err = cl.ReattachShell(ctx, s.info.ShellID, s.info.Secret, lostAt, detached,
			func() (ptyshell.Size, error) { return shellSize, nil })
		if err != nil {
			return fmt.Errorf("shell %d not reattached after cut %d: %w", s.n, s.drops, err)
		}
		s.reattach = append(s.reattach, time.Since(lostAt))
	}
}

// readUntil reads the session's output into out until it holds want. The
// session's end, an EXIT included, is an error.
func readUntil(ctx context.Context, sess *ptyshell.Session, want string, out *strings.Builder) error {
	for !strings.Contains(out.String(), want) {
		m, err := sess.Next(ctx)
		switch {
		case err != nil:
			return err
		case m.Type == ptyshell.FrameExit:
			return fmt.Errorf("the shell ended: %+v", *m.Exit)
		}
		out.Write(m.Output)
	}
	return nil
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// endShells lists the shells through replica p — every one running, its
// holder answering — ends each, and waits until their pods are gone.
func (d *deployment) endShells(t *testing.T, p pod, shells []*rolledShell) {
	code, env := d.call(t, p, http.MethodGet, "/v1/shells", nil, d.token)
	require.Equal(t, http.StatusOK, code, "%s", env["error"])
	var listed []cairn.Shell
	require.NoError(t, json.Unmarshal(env["shells"], &listed))
	require.Len(t, listed, len(shells))
	for _, sh := range listed {
		require.Equal(t, "running", sh.State, "shell %s", sh.ID)
		require.True(t, sh.Local, "shell %s's holder did not answer", sh.ID)
	}
	pods := d.list(t, kube.LabelKind+"="+kube.KindShell)
	require.Len(t, pods, len(shells))
	for _, s := range shells {
		code, env := d.call(t, p, http.MethodDelete, "/v1/shells/"+s.info.ShellID, nil, d.token)
		require.Equal(t, http.StatusOK, code, "%s", env["error"])
	}
	wait := []string{"wait", "-n", d.ns, "--for=delete", "--timeout=2m"}
	for _, sp := range pods {
		wait = append(wait, "pod/"+sp.Metadata.Name)
	}
	d.k.must(t, wait...)
	require.Empty(t, d.list(t, kube.LabelKind+"="+kube.KindShell), "shell pods left behind")
}

// dumpShells logs what explains a shell that did not start or did not
// survive: the shell pods' description, their logs (the holder logs
// nothing of the session) and the replicas' last log lines.
func (d *deployment) dumpShells(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shells := kube.LabelKind + "=" + kube.KindShell
	out, _ := d.k.run(ctx, nil, "describe", "pods", "-n", d.ns, "-l", shells)
	t.Logf("shell pods:\n%s", out)
	out, _ = d.k.run(ctx, nil, "logs", "-n", d.ns, "-l", shells, "--all-containers", "--tail=30", "--prefix")
	t.Logf("shell pods' logs:\n%s", out)
	out, _ = d.k.run(ctx, nil, "logs", "-n", d.ns, "-l", replicaSelector, "--tail=80", "--prefix")
	t.Logf("replicas' logs:\n%s", out)
}

// readyReplicas is the replicas that are Ready and not being deleted.
func (d *deployment) readyReplicas(t *testing.T) []pod {
	t.Helper()
	pods, err := d.replicasNow(t.Context())
	require.NoError(t, err)
	return pods
}

func (d *deployment) replicasNow(ctx context.Context) ([]pod, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := d.k.run(ctx, nil, "get", "pods", "-n", d.ns, "-l", replicaSelector, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct{ Items []pod }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	var ready []pod
	for _, p := range list.Items {
		if p.ready() && p.Metadata.DeletionTimestamp == nil {
			ready = append(ready, p)
		}
	}
	return ready, nil
}

// front sends each new TCP connection to a replica that is Ready and not
// being deleted, looked up when the connection comes, taking them in
// turn: what a Service in front of the replicas does. A replica that
// goes away ends its own connections.
type front struct {
	d    *deployment
	ln   net.Listener
	turn int
	mu   sync.Mutex
	open map[net.Conn]struct{}
	wg   sync.WaitGroup
}

func newFront(t *testing.T, d *deployment) *front {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &front{d: d, ln: ln, open: map[net.Conn]struct{}{}}
	f.wg.Go(f.serve)
	t.Cleanup(func() {
		_ = ln.Close()
		f.mu.Lock()
		for c := range f.open {
			_ = c.Close()
		}
		f.open = nil
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *front) addr() string { return f.ln.Addr().String() }

func (f *front) serve() {
	for {
		in, err := f.ln.Accept()
		if err != nil {
			return // closed with the test
		}
		out, err := f.dial()
		if err != nil {
			_ = in.Close() // no replica answers: the client tries again
			continue
		}
		if !f.track(in, out) {
			_ = in.Close()
			_ = out.Close()
			return
		}
		f.wg.Go(func() {
			var pair sync.WaitGroup
			pair.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
			pair.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
			pair.Wait()
			f.untrack(in, out)
		})
	}
}

// dial connects to the next Ready replica's API.
func (f *front) dial() (net.Conn, error) {
	pods, err := f.d.replicasNow(context.Background())
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, errors.New("no replica is Ready")
	}
	f.turn++
	p := pods[f.turn%len(pods)]
	return net.DialTimeout("tcp", net.JoinHostPort(p.Status.PodIP, strconv.Itoa(apiPort)), 5*time.Second)
}

func (f *front) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		return false
	}
	for _, c := range conns {
		f.open[c] = struct{}{}
	}
	return true
}

func (f *front) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.open, c)
	}
}
