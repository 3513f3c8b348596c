//go:build kube

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell"
)

// spreadWorkspaces is how many workspaces TestKubernetesAcrossNodes sets
// up at once; their first pods, and so their volumes, are spread over the
// nodes by the scheduler. It may leave a node without one (it weighs what
// else runs there): a node left out then gets one placed on it.
const spreadWorkspaces = 20

// TestKubernetesAcrossNodes runs cairn on a cluster of several nodes with
// node-local volumes (make test's cluster has two): workspaces are set up
// until their volumes sit on every node (the scheduler's spread, then one
// placed on any node it left out), then each runs a shell, an exec
// and a volume → store transfer at the same time — and every pod cairn made
// for a workspace, checked pod by pod from the API, sat on the node of its
// workspace's volume.
func TestKubernetesAcrossNodes(t *testing.T) {
	k := startKubeStack(t)
	nodes := k.requireNodes(t)
	placed := k.watchPlacement(t)

	wss := make([]*cairn.Workspace, spreadWorkspaces)
	seeds := make([]string, spreadWorkspaces)
	dir := t.TempDir()
	setup, ctx := errgroup.WithContext(t.Context())
	setup.SetLimit(4)
	for i := range wss {
		setup.Go(func() (err error) {
			wss[i], seeds[i], err = k.setUpSeeded(ctx, fmt.Sprintf("spread-%02d", i), dir)
			return err
		})
	}
	require.NoError(t, setup.Wait())

	volumeNodes := map[string]string{} // claim → the node its volume's affinity names
	perNode := map[string]int{}
	onNode := func(ws *cairn.Workspace) {
		claim := k.claims(t)[ws.VolumeName]
		node := k.volumeNode(t, claim)
		volumeNodes[claim] = node
		perNode[node]++
	}
	for _, ws := range wss {
		onNode(ws)
	}
	for _, n := range nodes {
		if perNode[n] == 0 {
			ws := k.workspaceOn(t, "spread-on-"+n, n)
			seed, err := k.seed(t.Context(), ws, dir)
			require.NoError(t, err)
			wss, seeds = append(wss, ws), append(seeds, seed)
			onNode(ws)
		}
	}
	t.Logf("workspaces per node: %v", perNode)
	for _, n := range nodes {
		require.NotZero(t, perNode[n], "no workspace's volume is on node %s: %v", n, perNode)
	}

	work, ctx := errgroup.WithContext(t.Context())
	work.SetLimit(5)
	for i, ws := range wss {
		work.Go(func() error { return k.shellExecAndSave(ctx, ws, seeds[i]) })
	}
	require.NoError(t, work.Wait())

	pods := placed.byClaim()
	for claim, node := range volumeNodes {
		require.GreaterOrEqual(t, len(pods[claim]), 5, "claim %s: prep, the seed's download, shell, exec and put pods", claim)
		for pod, on := range pods[claim] {
			require.Equal(t, node, on, "pod %s of claim %s ran on %s, its volume is on %s", pod, claim, on, node)
		}
	}
}

// setUpSeeded creates a workspace, sets up its volume and seeds it.
func (k *kubeStack) setUpSeeded(ctx context.Context, name, dir string) (*cairn.Workspace, string, error) {
	ws, err := k.api.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: name})
	if err != nil {
		return nil, "", err
	}
	if err := k.api.SetupVolume(ctx, ws.ID); err != nil {
		return nil, "", fmt.Errorf("set up %s: %w", ws.Name, err)
	}
	seed, err := k.seed(ctx, ws, dir)
	return ws, seed, err
}

// seed puts a line naming the workspace into its seed.txt through the
// store: an upload from here (a file in dir), then a download sidecar into
// the volume. It returns the line.
func (k *kubeStack) seed(ctx context.Context, ws *cairn.Workspace, dir string) (string, error) {
	body := fmt.Sprintf("seed of %s\n", ws.Name)
	src := filepath.Join(dir, ws.Name)
	if err := os.WriteFile(src, []byte(body), 0o600); err != nil {
		return "", err
	}
	art, err := k.api.Upload(ctx, ws.ID, src, client.UploadOptions{Name: "seed"})
	if err != nil {
		return "", fmt.Errorf("upload the seed of %s: %w", ws.Name, err)
	}
	return body, k.api.LoadIntoVolume(ctx, art.ID, cairn.MountPath+"/seed.txt")
}

// workspaceOn sets up a workspace whose volume is on node: every other
// node is cordoned while its first pod is scheduled, as the scheduler
// alone may pick the same node many times over.
func (k *kubeStack) workspaceOn(t *testing.T, name, node string) *cairn.Workspace {
	t.Helper()
	var others []string
	for _, n := range k.requireNodes(t) {
		if n != node {
			others = append(others, n)
		}
	}
	uncordon := func() {
		for _, n := range others {
			stacktest.Cordon(t, k.kube, n, false)
		}
	}
	t.Cleanup(uncordon) // when the test fails before the uncordon below
	for _, n := range others {
		stacktest.Cordon(t, k.kube, n, true)
	}
	ws := k.readyWorkspace(t, name)
	uncordon()
	require.Equal(t, node, k.volumeNode(t, k.claims(t)[ws.VolumeName]), "the only node that took pods")
	return ws
}

// shellExecAndSave runs, at the same time, a v2 shell that writes a file
// and exits 3, an exec that writes another, and the transfer of the seed
// from the volume into a new artifact; then checks what each did.
func (k *kubeStack) shellExecAndSave(ctx context.Context, ws *cairn.Workspace, seed string) error {
	var g errgroup.Group
	g.Go(func() error {
		size := ptyshell.Size{Cols: 80, Rows: 24}
		info, err := k.api.CreateShell(ctx, ws.ID, size, "")
		if err != nil {
			return fmt.Errorf("%s: create a shell: %w", ws.Name, err)
		}
		sess, err := k.api.AttachShell(ctx, info.ShellID, info.Secret, size)
		if err != nil {
			return fmt.Errorf("%s: attach: %w", ws.Name, err)
		}
		defer func() { _ = sess.Close() }()
		if _, err := sess.Write([]byte("echo typed > " + cairn.MountPath + "/shell.txt; exit 3\r")); err != nil {
			return err
		}
		select {
		case <-sess.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
		if r := sess.Result(); r.Ending != ptyshell.EndExit || r.Exit.ExitCode != 3 {
			return fmt.Errorf("%s: the shell ended %+v, not with EXIT 3", ws.Name, r)
		}
		return nil
	})
	g.Go(func() error {
		var out, errOut bytes.Buffer
		st, err := k.api.Exec(ctx, ws.ID, []string{"sh", "-c", "echo ran > " + cairn.MountPath + "/exec.txt; echo exec-ok"},
			nil, &out, &errOut)
		if err != nil || st.ExitCode != 0 || out.String() != "exec-ok\n" {
			return fmt.Errorf("%s: exec: %v %+v %q %q", ws.Name, err, st, out.String(), errOut.String())
		}
		return nil
	})
	var saved *cairn.Artifact
	g.Go(func() (err error) {
		saved, err = k.api.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{
			SourcePath: cairn.MountPath + "/seed.txt", Name: "saved"})
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	var b strings.Builder
	if _, err := k.api.DownloadTo(ctx, saved.ID, &b, client.DownloadOptions{}); err != nil {
		return err
	}
	if b.String() != seed {
		return fmt.Errorf("%s: the saved artifact holds %q, not the seed", ws.Name, b.String())
	}
	var out bytes.Buffer
	_, err := k.api.Exec(ctx, ws.ID, []string{"cat", cairn.MountPath + "/shell.txt", cairn.MountPath + "/exec.txt"}, nil, &out, &out)
	if err != nil || out.String() != "typed\nran\n" {
		return fmt.Errorf("%s: the shell's and the exec's files: %v %q", ws.Name, err, out.String())
	}
	return nil
}

// requireNodes returns the names of the cluster's nodes, of which the
// suite's cluster has two (CAIRN_K8S_NODES=2).
func (k *kubeStack) requireNodes(t *testing.T) []string {
	t.Helper()
	list, err := k.kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	require.GreaterOrEqual(t, len(names), 2, "the suite's cluster has two nodes (CAIRN_K8S_NODES=2): %v", names)
	return names
}

// volumeNode is the node the affinity of claim's volume names.
func (k *kubeStack) volumeNode(t *testing.T, claim string) string {
	t.Helper()
	pvc, err := k.kube.CoreV1().PersistentVolumeClaims(k.ns).Get(t.Context(), claim, metav1.GetOptions{})
	require.NoError(t, err)
	pv, err := k.kube.CoreV1().PersistentVolumes().Get(t.Context(), pvc.Spec.VolumeName, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, pv.Spec.NodeAffinity, "volume %s is node-local", pv.Name)
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	require.Len(t, terms, 1)
	require.Len(t, terms[0].MatchExpressions, 1)
	require.Len(t, terms[0].MatchExpressions[0].Values, 1)
	return terms[0].MatchExpressions[0].Values[0]
}

// placements records, for every pod of the namespace that mounts a claim,
// the node it was bound to, from a watch started before any pod exists.
type placements struct {
	mu   sync.Mutex
	pods map[string]map[string]string // claim → pod → node
}

func (k *kubeStack) watchPlacement(t *testing.T) *placements {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := k.kube.CoreV1().Pods(k.ns).Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	p := &placements{pods: map[string]map[string]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Error {
				p.record(pod)
			}
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return p
}

func (p *placements) record(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		p.mu.Lock()
		claim := v.PersistentVolumeClaim.ClaimName
		if p.pods[claim] == nil {
			p.pods[claim] = map[string]string{}
		}
		p.pods[claim][pod.Name] = pod.Spec.NodeName
		p.mu.Unlock()
	}
}

func (p *placements) byClaim() map[string]map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]map[string]string{}
	for claim, pods := range p.pods {
		out[claim] = map[string]string{}
		for pod, node := range pods {
			out[claim][pod] = node
		}
	}
	return out
}
