//go:build kube

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/kube"
)

// kubeStack is one real `cairn server` running its engine on the local
// cluster (workspace.volumeType: kubernetes) in a namespace of its own,
// with every change it publishes collected from its event stream.
type kubeStack struct {
	srv    *stacktest.Server
	cli    *cliServer
	api    *client.Client
	kube   *kubernetes.Clientset
	ns     string
	events *eventLog
}

// startKubeStack starts the stack; kubernetes, if given, adds keys to its
// kubernetes section (", key: value…").
func startKubeStack(t *testing.T, kubernetes ...string) *kubeStack {
	t.Helper()
	kubeconfig := stacktest.Kubeconfig(t)
	cs := stacktest.KubeClient(t, kubeconfig)
	ns := stacktest.KubeNamespace(t, cs)
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true, Tokens: []string{shellAdminToken},
		PresignEndpoint: stacktest.KubeStoreEndpoint(t, kubeconfig), Config: fmt.Sprintf(`
workspace: {volumeType: kubernetes}
kubernetes: {kubeconfig: %s, namespace: %s, storageClass: cairn-local, transferHostNetwork: true%s}
shell: {enable: true, image: %s, instanceName: %s, reapIntervalSecs: 1}
`, kubeconfig, ns, strings.Join(kubernetes, ""), stacktest.Shell(t), "kube-"+ns)})
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	k := &kubeStack{srv: srv, api: api, kube: cs, ns: ns,
		cli: &cliServer{url: srv.URL, token: srv.Token, bin: stacktest.Binary(t, "cairn")}}
	k.events = followEvents(t, api)
	// Whatever the flows did, the server's own objects are gone by the
	// end: no pod, and no claim but those of workspaces still set up.
	t.Cleanup(func() { k.requireNoPods(t) })
	return k
}

// requireNoPods waits for the namespace's pods to be gone (a sidecar pod
// is deleted as its run ends, a shell's when the shell ends).
func (k *kubeStack) requireNoPods(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := k.kube.CoreV1().Pods(k.ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		if len(list.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range list.Items {
				t.Errorf("pod left: %s (%s, %v)", p.Name, p.Status.Phase, p.Labels)
			}
			return
		}
		time.Sleep(100 * time.Millisecond) // polls the API; a watch would be more code for a test's cleanup
	}
}

// claims returns the workspace volumes' claims, by cairn volume name.
func (k *kubeStack) claims(t *testing.T) map[string]string {
	t.Helper()
	list, err := k.kube.CoreV1().PersistentVolumeClaims(k.ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	claims := map[string]string{}
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			claims[c.Annotations[kube.AnnotationVolume]] = c.Name
		}
	}
	return claims
}

// eventLog is every change frame of one event stream, in order.
type eventLog struct {
	mu      sync.Mutex
	frames  []cairn.Event
	changed chan struct{}
}

func followEvents(t *testing.T, api *client.Client) *eventLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := api.Events(ctx, cairn.EventFilter{})
	require.NoError(t, err)
	l := &eventLog{changed: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := stream.Next(ctx)
			if err != nil {
				return
			}
			if !e.IsChange() {
				continue
			}
			l.mu.Lock()
			l.frames = append(l.frames, e)
			l.mu.Unlock()
			select {
			case l.changed <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { cancel(); _ = stream.Close(); <-done })
	return l
}

// await waits for a change frame what matches, and returns it.
func (l *eventLog) await(t *testing.T, what string, match func(cairn.Event) bool) cairn.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for _, e := range l.frames {
			if match(e) {
				l.mu.Unlock()
				return e
			}
		}
		l.mu.Unlock()
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("no event for %s", what)
		}
	}
}

func (l *eventLog) awaitVolume(t *testing.T, wsID, state string) {
	t.Helper()
	l.await(t, "workspace "+wsID+" "+state, func(e cairn.Event) bool {
		return e.Type == cairn.EventWorkspaceUpserted && e.Workspace.ID == wsID && string(e.Workspace.VolumeState) == state
	})
}

func (l *eventLog) awaitArtifact(t *testing.T, id, state string, after time.Time) {
	t.Helper()
	l.await(t, "artifact "+id+" "+state, func(e cairn.Event) bool {
		return e.Type == cairn.EventArtifactUpserted && e.Artifact.ID == id && string(e.Artifact.State) == state &&
			!e.Artifact.UpdatedAt.Before(after)
	})
}

// TestKubernetesEndToEnd runs cairn's flows against a real server whose
// workspaces, sidecars and shells are claims and pods of the local
// cluster: the first cairn's demo client's commands, an MCP agent, a
// `cairn shell` on a real terminal, the reconciler's sweeps — each change
// seen on the event stream.
func TestKubernetesEndToEnd(t *testing.T) {
	k := startKubeStack(t)
	t.Run("DemoClientCommands", k.demoClientCommands)
	t.Run("AgentOverMCP", k.agentOverMCP)
	t.Run("WatchFiles", k.watchFiles)
	t.Run("ShellRoundTrip", k.shellRoundTrip)
	t.Run("Sweeps", k.sweeps)
	t.Run("HangUps", k.hangUps)
}

// demoClientCommands are the demo client's steps, through the CLI: create,
// setup, volume download/upload/update, teardown, delete.
func (k *kubeStack) demoClientCommands(t *testing.T) {
	c := k.cli
	var ws cairn.Workspace
	require.NoError(t, json.Unmarshal(c.json(t, "ws", "create", "demo")["workspace"], &ws))
	k.events.awaitVolume(t, ws.ID, "NONE")
	c.ok(t, "ws", "setup", "demo")
	k.events.awaitVolume(t, ws.ID, "READY")
	detail, err := k.api.InspectWorkspace(t.Context(), ws.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1<<30, detail.VolumeSizeBytes, "GET shows the size the claim got (kubernetes.volumeSize)")
	claim, ok := k.claims(t)[ws.VolumeName]
	require.True(t, ok, "setup made a claim for %s", ws.VolumeName)

	src := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(src, []byte("first content\n"), 0o600))
	var first cairn.Artifact
	require.NoError(t, json.Unmarshal(c.json(t, "art", "upload", "demo", src, "--name", "notes")["artifact"], &first))
	k.events.awaitArtifact(t, first.ID, "RECORDED", first.UpdatedAt)

	// Volume download: the artifact into the claim, read back through an
	// exec in a pod mounting it.
	c.ok(t, "art", "load", "demo/notes", "/mnt/cairn/ws/notes.txt")
	require.Equal(t, "first content\n", c.ok(t, "exec", "demo", "--", "cat", "/mnt/cairn/ws/notes.txt").stdout)
	// And through the files routes, whose browse pod must not hold up the
	// teardown below.
	require.Equal(t, "first content\n", c.ok(t, "fs", "cat", "demo", "/mnt/cairn/ws/notes.txt").stdout)
	require.Contains(t, c.ok(t, "fs", "ls", "demo", "-o", "json").stdout, `"name": "notes.txt"`)

	// Volume upload and update: a file the tool wrote becomes an artifact,
	// then its new content replaces it.
	c.ok(t, "exec", "demo", "--", "sh", "-c", "echo made in the pod > /mnt/cairn/ws/out.txt")
	var saved cairn.Artifact
	require.NoError(t, json.Unmarshal(c.json(t, "art", "save", "demo", "/mnt/cairn/ws/out.txt", "--name", "out")["artifact"], &saved))
	k.events.awaitArtifact(t, saved.ID, "RECORDED", saved.UpdatedAt)
	require.Equal(t, "made in the pod\n", k.download(t, saved.ID))
	c.ok(t, "exec", "demo", "--", "sh", "-c", "echo changed > /mnt/cairn/ws/out.txt")
	var updated cairn.Artifact
	require.NoError(t, json.Unmarshal(c.json(t, "art", "update", "demo/out", "/mnt/cairn/ws/out.txt")["artifact"], &updated))
	require.Equal(t, saved.ID, updated.ID)
	k.events.awaitArtifact(t, saved.ID, "RECORDED", updated.UpdatedAt)
	require.Equal(t, "changed\n", k.download(t, saved.ID))

	// A path that leaves the volume is refused before any pod runs.
	r := c.cli(t, "art", "save", "demo", "/mnt/cairn/ws/../../etc/passwd", "--name", "escape")
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "path_outside_mount", r.stderr)

	// A teardown straight after an exec finds the volume free: the exec's
	// pod is leaving before its status reaches the CLI, and the teardown
	// waits for a leaving pod instead of answering volume_in_use.
	c.ok(t, "exec", "demo", "--", "true")
	c.ok(t, "ws", "teardown", "demo")
	k.events.awaitVolume(t, ws.ID, "NONE")
	require.NotContains(t, k.claims(t), ws.VolumeName, "teardown deleted claim %s", claim)
	c.ok(t, "ws", "delete", "demo")
	k.events.await(t, "workspace deleted", func(e cairn.Event) bool {
		return e.Type == cairn.EventWorkspaceDeleted && e.ID == ws.ID
	})
}

// watchFiles: cairn fs watch reports what a pod mounting the claim
// writes, through a watcher pod, and its end once the volume is torn down.
func (k *kubeStack) watchFiles(t *testing.T) {
	k.readyWorkspace(t, "watched")
	k.cli.ok(t, "fs", "mkdir", "watched", "out")
	w := startFsWatch(t, k.cli, "watched", "out")
	w.subscribed(t, k.cli, "watched", "out")
	k.cli.ok(t, "exec", "watched", "--", "sh", "-c", "echo hi > /mnt/cairn/ws/out/by-tool")
	w.await(t, "created\tout/by-tool")
	k.cli.ok(t, "fs", "rm", "watched", "out/by-tool")
	w.await(t, "removed\tout/by-tool")
	k.cli.ok(t, "ws", "teardown", "watched")
	list, err := k.kube.CoreV1().Pods(k.ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range list.Items {
		require.NotContains(t, p.Name, ".watcher.", "the teardown took the watcher pod")
	}
	k.cli.ok(t, "ws", "delete", "watched")
}

func (k *kubeStack) download(t *testing.T, artifactID string) string {
	t.Helper()
	var b strings.Builder
	_, err := k.api.DownloadTo(t.Context(), artifactID, &b, client.DownloadOptions{})
	require.NoError(t, err)
	return b.String()
}

// agentOverMCP is an agent's flow by name: check the workspace is READY,
// keep a file of the volume, bring it back elsewhere, list.
func (k *kubeStack) agentOverMCP(t *testing.T) {
	ws := k.readyWorkspace(t, "agent")
	k.cli.ok(t, "exec", "agent", "--", "sh", "-c", "mkdir /mnt/cairn/ws/in && echo from the agent > /mnt/cairn/ws/in/result.txt")

	got := k.mcp(t, "get_workspace", `{"workspace_name":"agent"}`)
	require.Contains(t, got, `"volume_state":"READY"`)
	require.Equal(t, "artifact 'result' recorded in workspace 'agent' from '/mnt/cairn/ws/in/result.txt'",
		k.mcp(t, "upload_artifact", `{"workspace_name":"agent","source_path":"/mnt/cairn/ws/in/result.txt","artifact_name":"result"}`))
	require.Equal(t, "artifact 'result' of workspace 'agent' downloaded to '/mnt/cairn/ws/back.txt'",
		k.mcp(t, "download_artifact", `{"workspace_name":"agent","artifact_name":"result","target_path":"/mnt/cairn/ws/back.txt"}`))
	require.Equal(t, "from the agent\n", k.cli.ok(t, "exec", "agent", "--", "cat", "/mnt/cairn/ws/back.txt").stdout)
	require.Contains(t, k.mcp(t, "list_artifacts", `{"workspace_name":"agent"}`), `"name":"result"`)
	k.events.await(t, "the agent's artifact", func(e cairn.Event) bool {
		return e.Type == cairn.EventArtifactUpserted && e.Artifact.WorkspaceID == ws.ID && e.Artifact.Name == "result"
	})
	// The cluster's sidecars report progress to a client that asks.
	const big = 64 << 20
	k.cli.ok(t, "exec", "agent", "--", "sh", "-c", fmt.Sprintf("head -c %d /dev/urandom > /mnt/cairn/ws/in/big", big))
	for _, call := range [][2]string{ // in order: the download needs the upload's artifact
		{"upload_artifact", `{"workspace_name":"agent","source_path":"/mnt/cairn/ws/in/big","artifact_name":"big"}`},
		{"download_artifact", `{"workspace_name":"agent","artifact_name":"big","target_path":"/mnt/cairn/ws/big-back"}`},
	} {
		tool := call[0]
		text, isError, notes := k.callToolReporting(t, tool, call[1], true)
		require.False(t, isError, "%s: %s", tool, text)
		requireProgress(t, notes, big)
		t.Logf("%s of %d MiB: %d progress notifications", tool, big>>20, len(notes))
	}
	// A missing source is the tool's error, not the transport's.
	require.Contains(t, k.mcpError(t, "upload_artifact",
		`{"workspace_name":"agent","source_path":"/mnt/cairn/ws/none.txt","artifact_name":"none"}`), "source")
}

func (k *kubeStack) readyWorkspace(t *testing.T, name string) *cairn.Workspace {
	t.Helper()
	ws, err := k.api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: name})
	require.NoError(t, err)
	require.NoError(t, k.api.SetupVolume(t.Context(), ws.ID))
	k.events.awaitVolume(t, ws.ID, "READY")
	return ws
}

// mcp calls a tool over the MCP endpoint and returns its text; mcpError
// the text of a tool result that is an error.
func (k *kubeStack) mcp(t *testing.T, tool, args string) string {
	t.Helper()
	text, isError := k.callTool(t, tool, args)
	require.False(t, isError, "%s: %s", tool, text)
	return text
}

func (k *kubeStack) mcpError(t *testing.T, tool, args string) string {
	t.Helper()
	text, isError := k.callTool(t, tool, args)
	require.True(t, isError, "%s succeeded: %s", tool, text)
	return text
}

func (k *kubeStack) callTool(t *testing.T, tool, args string) (string, bool) {
	t.Helper()
	text, isError, _ := k.callToolReporting(t, tool, args, false)
	return text, isError
}

// progressNote is the params of a notifications/progress.
type progressNote struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
}

// callToolReporting is callTool, with a progress token when progress is
// set: it also returns the progress notifications the call's stream
// carried before its result.
func (k *kubeStack) callToolReporting(t *testing.T, tool, args string, progress bool) (string, bool, []progressNote) {
	t.Helper()
	meta := ""
	if progress {
		meta = `,"_meta":{"progressToken":"kube"}`
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, tool, args, meta)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, k.srv.URL+"/v1/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+k.srv.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	payload := ""
	var notes []progressNote
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() { // an event stream's data lines, or the JSON itself
		line := sc.Text()
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok && strings.HasPrefix(line, "{") {
			d, ok = line, true
		}
		if !ok {
			continue
		}
		var note struct {
			Method string       `json:"method"`
			Params progressNote `json:"params"`
		}
		if json.Unmarshal([]byte(d), &note) == nil && note.Method == "notifications/progress" {
			notes = append(notes, note.Params)
			continue
		}
		payload = d
	}
	require.NoError(t, sc.Err())
	var rpc struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(payload), &rpc), payload)
	// The sentence comes first; a stored artifact's resource_link follows.
	require.NotEmpty(t, rpc.Result.Content, payload)
	return rpc.Result.Content[0].Text, rpc.Result.IsError, notes
}

// requireProgress checks a transfer's progress notifications: at least
// one, only growing, the last counting all size bytes of a total of size.
func requireProgress(t *testing.T, notes []progressNote, size float64) {
	t.Helper()
	require.NotEmpty(t, notes)
	for i := 1; i < len(notes); i++ {
		require.GreaterOrEqual(t, notes[i].Progress, notes[i-1].Progress, "%v", notes)
	}
	require.Equal(t, progressNote{Progress: size, Total: size}, notes[len(notes)-1])
}

// shellRoundTrip runs the built `cairn shell` on a real terminal: it
// types into a shell pod, sees a resize of the terminal inside it, and
// exits with the shell's status; the pod goes with it.
func (k *kubeStack) shellRoundTrip(t *testing.T) {
	ws := k.readyWorkspace(t, "shell")
	t.Cleanup(func() { // a failure mid-session must not leave its pod to fail the next scenarios
		if shells, err := k.api.FindShells(context.Background(), ""); t.Failed() && err == nil {
			for _, sh := range shells.Shells {
				_ = k.api.KillShell(context.Background(), sh.ID)
			}
		}
	})
	run := ptyRunner(&shellStack{bin: k.cli.bin}, &shellServer{url: k.srv.URL}, "v2", t.TempDir())
	out, code := run(t, ws.Name, func(f *os.File, seen func(string) string) {
		seen("detaches; the shell keeps running")
		seen("#")
		_, err := f.Write([]byte("stty size; echo typed > /mnt/cairn/ws/typed.txt\r"))
		require.NoError(t, err)
		seen("30 100")
		require.NoError(t, pty.Setsize(f, &pty.Winsize{Cols: 91, Rows: 23}))
		// The CLI learns of a resize by a signal and of keystrokes by a
		// read, in two goroutines: a line typed at once may reach the
		// shell before its new size does, as with any terminal client.
		// So ask until the shell answers with the new size.
		for asked := 0; ; asked++ {
			require.Less(t, asked, 20, "the shell never saw the new size")
			_, err = f.Write(fmt.Appendf(nil, "stty size; echo asked-$((%d))\r", asked))
			require.NoError(t, err)
			if out := seen(fmt.Sprintf("asked-%d\r", asked)); strings.Contains(out, "23 91") {
				break
			}
		}
		_, err = f.Write([]byte("exit 7\r"))
		require.NoError(t, err)
	})
	require.Equal(t, 7, code, "terminal output: %q", out)
	require.Contains(t, out, "[cairn: shell exited with status 7]")
	require.Equal(t, "typed\n", k.cli.ok(t, "exec", "shell", "--", "cat", "/mnt/cairn/ws/typed.txt").stdout)
	k.requireNoPods(t)
	shells, err := k.api.FindShells(t.Context(), "")
	require.NoError(t, err)
	require.Empty(t, shells.Shells)
}

// sweeps: an object lost from the store is flagged MISSING_OBJECT and
// repaired; a claim deleted behind cairn's back clears the volume state;
// a row that says NONE over a live claim is adopted back to READY.
func (k *kubeStack) sweeps(t *testing.T) {
	ws := k.readyWorkspace(t, "sweeps")
	src := filepath.Join(t.TempDir(), "kept.txt")
	require.NoError(t, os.WriteFile(src, []byte("kept\n"), 0o600))
	var art cairn.Artifact
	require.NoError(t, json.Unmarshal(k.cli.json(t, "art", "upload", "sweeps", src, "--name", "kept")["artifact"], &art))

	k.srv.LoseObject(t, art.ID, art.ObjectKey)
	before := time.Now()
	res, err := k.api.Sweep(t.Context(), "")
	require.NoError(t, err)
	require.Equal(t, 1, res.ArtifactsFlagged, "%+v", res)
	k.events.awaitArtifact(t, art.ID, "MISSING_OBJECT", before.Add(-time.Second))
	before = time.Now()
	k.cli.ok(t, "art", "replace", "sweeps/kept", src)
	k.events.awaitArtifact(t, art.ID, "RECORDED", before.Add(-time.Second))

	// Clear: the claim goes behind cairn's back.
	claim := k.claims(t)[ws.VolumeName]
	require.NotEmpty(t, claim)
	require.NoError(t, k.kube.CoreV1().PersistentVolumeClaims(k.ns).Delete(t.Context(), claim, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, ok := k.claims(t)[ws.VolumeName]
		return !ok
	}, time.Minute, 100*time.Millisecond)
	res, err = k.api.Sweep(t.Context(), ws.ID)
	require.NoError(t, err)
	require.Equal(t, 1, res.VolumesCleared, "%+v", res)
	k.events.awaitVolume(t, ws.ID, "NONE")

	// Adopt: set up again, then the row is made to say NONE.
	require.NoError(t, k.api.SetupVolume(t.Context(), ws.ID))
	conn, err := pgx.Connect(t.Context(), k.srv.Database)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), `UPDATE workspaces SET volume_state = 'NONE' WHERE id = $1`, ws.ID)
	require.NoError(t, err)
	before = time.Now()
	res, err = k.api.Sweep(t.Context(), ws.ID)
	require.NoError(t, err)
	require.Equal(t, 1, res.VolumesAdopted, "%+v", res)
	k.events.await(t, "adopted", func(e cairn.Event) bool {
		return e.Type == cairn.EventWorkspaceUpserted && e.Workspace.ID == ws.ID &&
			e.Workspace.VolumeState == cairn.VolumeReady && !e.Workspace.UpdatedAt.Before(before.Add(-time.Second))
	})
	require.Equal(t, "", k.cli.ok(t, "exec", "sweeps", "--", "ls", "/mnt/cairn/ws").stdout, "the adopted claim is mounted, empty")
}

// hangUps: a client that goes while its claim or its transfer pod is
// being made leaves a consistent state behind — a workspace READY exactly
// when its claim exists, an artifact whole or absent — and no pod.
func (k *kubeStack) hangUps(t *testing.T) {
	ws, err := k.api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "hangup"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	go k.cancelWhen(ctx, cancel, func() bool { _, ok := k.claims(t)[ws.VolumeName]; return ok })
	_ = k.api.SetupVolume(ctx, ws.ID) // either outcome is fine; the state after it must agree
	cancel()
	k.requireNoPods(t)
	// The server may still be finishing the setup when the client has
	// gone: it must end either READY with the claim or NONE without it —
	// never a claim the row does not know.
	state, claimed := cairn.VolumeState(""), false
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		detail, err := k.api.InspectWorkspace(t.Context(), ws.ID)
		require.NoError(t, err)
		state = detail.Workspace.VolumeState
		_, claimed = k.claims(t)[ws.VolumeName]
		if claimed == (state == cairn.VolumeReady) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polls the server and the API: the setup's end has no event when it is undone
	}
	require.Equal(t, claimed, state == cairn.VolumeReady, "state %s, claim %t", state, claimed)
	t.Logf("setup hung up on: %s, claim %t", state, claimed)
	require.NoError(t, k.api.SetupVolume(t.Context(), ws.ID), "a setup after the hang-up completes it")

	k.cli.ok(t, "exec", "hangup", "--", "dd", "if=/dev/urandom", "of=/mnt/cairn/ws/big", "bs=1M", "count=16")
	ctx, cancel = context.WithCancel(t.Context())
	go k.cancelWhen(ctx, cancel, func() bool {
		pods, err := k.kube.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelRole + "=sidecar"})
		return err == nil && len(pods.Items) > 0
	})
	_, _ = k.api.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/big", Name: "big"})
	cancel()
	k.requireNoPods(t)
	arts, err := k.api.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID})
	require.NoError(t, err)
	t.Logf("save hung up on: %d artifacts", len(arts))
	if len(arts) == 1 { // finished after all: then all of it
		require.Equal(t, cairn.ArtifactRecorded, arts[0].State)
		require.Equal(t, int64(16<<20), arts[0].Size)
		require.Len(t, k.download(t, arts[0].ID), 16<<20)
	} else {
		require.Empty(t, arts)
	}
	require.NoError(t, k.api.TeardownVolume(t.Context(), ws.ID))
	require.NotContains(t, k.claims(t), ws.VolumeName)
}

// cancelWhen polls the cluster until seen, then hangs the request up.
func (k *kubeStack) cancelWhen(ctx context.Context, cancel context.CancelFunc, seen func() bool) {
	for ctx.Err() == nil {
		if seen() {
			cancel()
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // polls the API; the pod or claim is the signal
		}
	}
}
