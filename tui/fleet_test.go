package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screens/artifacts"
	"github.com/cairn-dev/cairn/tui/screens/audit"
	"github.com/cairn-dev/cairn/tui/screens/files"
	"github.com/cairn-dev/cairn/tui/screens/shells"
	"github.com/cairn-dev/cairn/tui/screens/workspaces"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/tuitest"
	"github.com/cairn-dev/cairn/tui/widgets/bulkresult"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/palette"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

// markFleet is a workspace with n artifacts, its artifacts screen open.
func markFleet(t *testing.T, n int) (*harness, *cairn.Workspace) {
	t.Helper()
	h := newHarness(t)
	ws := h.seed("ws-alpha", "ws-beta")
	for i := range n {
		a := h.b.World.AddArtifact(ws[0].ID, fmt.Sprintf("art_%02d", i), cairn.ArtifactRecorded, int64(i+1), "")
		h.b.World.SetContent(a.ID, bytes.Repeat([]byte("x"), i+1))
	}
	h.key("enter")
	require.IsType(t, &artifacts.Screen{}, h.m.stack.Top())
	return h, ws[0]
}

// command runs a palette line.
func (h *harness) command(line string) *harness {
	h.key(":")
	require.IsType(h.t, &palette.Model{}, h.m.modal)
	return h.typeText(line).key("enter")
}

func TestPaletteCommands(t *testing.T) {
	t.Parallel()
	t.Run("WsOpensTheArtifactsAndIsKeptInHistory", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ws := h.seed("ws-alpha", "ws-beta")
		h.command("ws ws-beta")
		require.Nil(t, h.m.modal)
		a, ok := h.m.stack.Top().(*artifacts.Screen)
		require.True(t, ok)
		require.Equal(t, ws[1].ID, a.WorkspaceID())
		require.Equal(t, []string{"ws ws-beta"}, h.m.history.Lines())
		h.key(":", "up")
		require.Equal(t, "ws ws-beta", h.m.modal.(*palette.Model).Value(), "up recalls the last command")
		h.key("esc")
		require.Nil(t, h.m.modal)
	})
	t.Run("ArtSelectsTheArtifact", func(t *testing.T) {
		t.Parallel()
		h, ws := markFleet(t, 3)
		h.key("1").command("art ws-alpha/art_02")
		a := h.m.stack.Top().(*artifacts.Screen)
		require.Equal(t, ws.ID, a.WorkspaceID())
		sel, ok := a.Selected()
		require.True(t, ok)
		require.Equal(t, "art_02", sel.Name)
	})
	t.Run("ArtCandidatesAreTheCachedArtifacts", func(t *testing.T) {
		t.Parallel()
		h, _ := markFleet(t, 2)
		var got []string
		for _, c := range h.m.paletteSource("art", 0) {
			got = append(got, c.Value)
		}
		slices.Sort(got)
		require.Equal(t, []string{"ws-alpha/art_00", "ws-alpha/art_01"}, got)
	})
	t.Run("UnknownWorkspaceSaysSo", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.command("audit nope")
		require.Contains(t, h.statusLine(), "no workspace named nope")
		require.IsType(t, &workspaces.Screen{}, h.m.stack.Top())
	})
	t.Run("FilesOpensAtAPath", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		w := h.b.World.AddWorkspace("ws-ready", cairn.VolumeReady, "")
		h.size(120, 40).hello()
		var asked []string
		h.b.ListFilesFunc = func(_ context.Context, _ string, p cairn.FileListParams) (*cairn.FileListing, error) {
			asked = append(asked, p.Path)
			return &cairn.FileListing{Path: p.Path, Entries: []cairn.FileEntry{}}, nil
		}
		h.command("files ws-ready out/logs")
		f, ok := h.m.stack.Top().(*files.Screen)
		require.True(t, ok)
		require.Equal(t, w.ID, f.WorkspaceID())
		require.Equal(t, "/mnt/cairn/ws/out/logs", f.Dir())
		require.Equal(t, []string{"/mnt/cairn/ws/out/logs"}, asked)
		h.key("1").command("files ws-ready ../../etc")
		require.Contains(t, h.statusLine(), "not a volume path")
	})
	t.Run("SweepAll", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		var swept []string
		h.b.SweepFunc = func(_ context.Context, id string) (*cairn.SweepResult, error) {
			swept = append(swept, id)
			return &cairn.SweepResult{}, nil
		}
		h.command("sweep")
		require.Contains(t, h.statusLine(), "swept every workspace")
		h.command("sweep ws-alpha")
		require.Len(t, swept, 2)
		require.Empty(t, swept[0], "a full pass")
		require.NotEmpty(t, swept[1])
	})
}

func TestBulkDelete(t *testing.T) {
	t.Parallel()
	h, ws := markFleet(t, 5)
	refused := ""
	var mu sync.Mutex
	deleted := 0
	h.b.DeleteArtifactFunc = func(_ context.Context, id string) error {
		if a, _ := h.m.Store().Artifact(id); a != nil && a.Name == "art_03" {
			refused = id
			return cairn.Errorf(cairn.ReasonForbidden, "no")
		}
		mu.Lock()
		defer mu.Unlock()
		deleted++
		h.b.World.DeleteArtifact(id)
		return nil
	}
	h.key("ctrl+a")
	require.Contains(t, h.header(), "[5 marked]")
	require.Contains(t, hintLine(h), "d download 5", "the bulk hints name the count")
	h.key("D")
	require.IsType(t, &typed.Model{}, h.m.modal)
	require.Contains(t, h.view(), "Delete the 5 marked artifacts of ws-alpha?")
	h.typeText("delete 4").key("enter")
	require.IsType(t, &typed.Model{}, h.m.modal, "a wrong count does not match")
	require.Zero(t, deleted)
	for range len("delete 4") {
		h.key("backspace")
	}
	h.typeText("delete 5").key("enter")
	res, ok := h.m.modal.(*bulkresult.Model)
	require.True(t, ok, "the results, row by row")
	okN, refusedN := res.Counts()
	require.Equal(t, 4, okN)
	require.Equal(t, 1, refusedN)
	require.Contains(t, h.view(), "art_03")
	require.Contains(t, h.view(), "lacks the write scope", "the refusal names its reason")
	arts, _ := h.m.Store().Artifacts(ws.ID)
	require.Len(t, arts, 1, "the rest went")
	require.Equal(t, refused, arts[0].ID)
	require.NotContains(t, h.header(), "marked", "the marks went with the action")
	h.key("esc")
	require.Nil(t, h.m.modal)
	require.Empty(t, h.m.ops.Tasks())
}

func TestBulkEscClearsMarksFirst(t *testing.T) {
	t.Parallel()
	h, _ := markFleet(t, 3)
	h.key("/").typeText("art_0").key("enter", " ")
	require.Contains(t, h.header(), "[1 marked]")
	h.key("esc")
	require.NotContains(t, h.header(), "marked")
	require.Contains(t, h.header(), "/art_0", "the filter stays until the next esc")
	h.key("esc")
	require.NotContains(t, h.header(), "/art_0")
	require.IsType(t, &artifacts.Screen{}, h.m.stack.Top())
}

func TestBulkTeardownAndDeleteOfWorkspaces(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.b.World.AddWorkspace("ws-a", cairn.VolumeReady, "")
	b := h.b.World.AddWorkspace("ws-b", cairn.VolumeReady, "")
	h.size(120, 40).hello()
	h.b.World.SetMounts(b.ID, 2)
	h.b.TeardownVolumeFunc = func(_ context.Context, id string) error {
		if id == b.ID {
			return cairn.Errorf(cairn.ReasonVolumeInUse, "mounted")
		}
		h.b.World.UpdateWorkspace(id, func(w *cairn.Workspace) { w.VolumeState = cairn.VolumeNone })
		return nil
	}
	h.key("ctrl+a", "V")
	require.Contains(t, h.view(), "Tear down the volumes of the 2 marked workspaces?")
	h.typeText("tear down 2").key("enter")
	res := h.m.modal.(*bulkresult.Model)
	okN, refusedN := res.Counts()
	require.Equal(t, [2]int{1, 1}, [2]int{okN, refusedN})
	require.Contains(t, h.view(), "ws-b")
	w, _ := h.m.Store().Workspace(a.ID)
	require.Equal(t, cairn.VolumeNone, w.VolumeState)
	h.key("esc", "ctrl+a", "D")
	require.Contains(t, h.view(), "1 still has")
	require.Contains(t, h.view(), "will be refused")
}

func TestBulkDownload(t *testing.T) {
	t.Parallel()
	h, ws := markFleet(t, 3)
	h.b.World.AddArtifact(ws.ID, "gone", cairn.ArtifactMissingObject, 1, "")
	h.key("r")
	dir := t.TempDir()
	h.key("ctrl+a", "d")
	require.IsType(t, &form.Model{}, h.m.modal)
	for range 10 {
		h.key("backspace")
	}
	h.typeText(filepath.Join(dir, "nope")).key("enter")
	require.Contains(t, h.view(), "does not exist", "a missing directory is refused under the field")
	for range len(filepath.Join(dir, "nope")) {
		h.key("backspace")
	}
	h.typeText(dir).key("enter")
	require.Nil(t, h.m.modal)
	var paths []string
	for _, tr := range h.m.xfer.All() {
		paths = append(paths, tr.Path)
	}
	slices.Sort(paths)
	require.Equal(t, []string{filepath.Join(dir, "art_00"), filepath.Join(dir, "art_01"), filepath.Join(dir, "art_02")}, paths,
		"one download per RECORDED artifact, none for the MISSING one")
	h.key("!")
	require.Contains(t, h.view(), "3 downloads queued into", "the messages log keeps the summary")
	require.Contains(t, h.view(), "1 skipped")
	for _, p := range paths {
		_, err := os.Stat(p)
		require.NoError(t, err, "the fake downloads run through the queue")
	}
}

func TestContextSwitch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-here")
	other := tuitest.NewBackend(t, h.clock)
	other.World.AddWorkspace("ws-there", cairn.VolumeNone, "")
	var opened []string
	h.m.connect = func(name string) (Backend, string, error) {
		opened = append(opened, name)
		if name == "broken" {
			return nil, "", fmt.Errorf("context %q: token_env PROD_TOKEN is not set", name)
		}
		return other, "https://other.example:8443", nil
	}
	h.m.c.Config.Contexts = []string{"here", "other", "broken"}
	h.m.c.Config.Context = "here"
	staleOp := ops.DoneMsg{Op: ops.Op{ID: h.m.id(), Kind: ops.Create}, WS: &cairn.Workspace{ID: "ghost", Name: "ghost"}}
	staleHub := live.Batch{At: h.clock.Now(), Epoch: 0, Events: []cairn.Event{upserted(&cairn.Workspace{ID: "ghost2", Name: "ghost2"})}}

	h.command("ctx broken")
	require.Contains(t, h.statusLine(), "token_env PROD_TOKEN is not set")
	require.Equal(t, "here", h.m.c.Config.Context, "a failed open keeps the context")

	h.command("ctx other")
	require.Equal(t, []string{"broken", "other"}, opened)
	require.Equal(t, "other", h.m.c.Config.Context)
	require.Contains(t, h.header(), "ctx other")
	require.Contains(t, h.header(), "other.example:8443")
	require.Empty(t, h.m.Store().Workspaces(), "the old server's rows went with it")
	h.hello()
	names := []string{}
	for _, w := range h.m.Store().Workspaces() {
		names = append(names, w.Name)
	}
	require.Equal(t, []string{"ws-there"}, names)

	h.send(staleOp).send(hubMsg{batch: staleHub})
	_, ghost := h.m.Store().Workspace("ghost")
	_, ghost2 := h.m.Store().Workspace("ghost2")
	require.False(t, ghost || ghost2, "answers and events of the old server are dropped")

	h.command("ctx other")
	require.Contains(t, h.statusLine(), "already on context other")
}

func TestContextSwitchKeepsOldTransfers(t *testing.T) {
	t.Parallel()
	h, ws := markFleet(t, 1)
	arts, _ := h.m.Store().Artifacts(ws.ID)
	a := arts[0]
	oldCalls, newCalls := 0, 0
	h.b.DownloadFunc = func(context.Context, string, string, client.DownloadOptions) (*cairn.Artifact, error) {
		oldCalls++
		return a, nil
	}
	other := tuitest.NewBackend(t, h.clock)
	other.DownloadFunc = func(context.Context, string, string, client.DownloadOptions) (*cairn.Artifact, error) {
		newCalls++
		return a, nil
	}
	h.m.connect = func(string) (Backend, string, error) { return other, "http://b:1", nil }
	h.m.c.Config.Contexts = []string{"a", "b"}
	start := h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Download, WSID: ws.ID, ArtID: a.ID, Name: a.Name,
		Path: filepath.Join(t.TempDir(), a.Name), Size: a.Size})

	h.command("ctx b")
	require.Equal(t, "b", h.m.c.Config.Context)
	for _, msg := range h.run(start) { // the transfer runs on after the switch
		h.send(msg)
	}
	require.Equal(t, [2]int{1, 0}, [2]int{oldCalls, newCalls}, "it ran against the server it was queued on")
	all := h.m.xfer.All()
	require.Len(t, all, 1, "it stays in the tray and the transfers screen")
	require.Equal(t, transfer.PhaseDone, all[0].Phase)
	_, leaked := h.m.Store().Artifact(a.ID)
	require.False(t, leaked, "its artifact is not put into the new server's store")
}

func TestShellsScreenKill(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha")
	live := []*cairn.Shell{{ID: "sh-1", WorkspaceID: ws[0].ID, Container: "c0ffee", TokenName: "ops", StartedAt: h.clock.Now()}}
	var asked []string
	h.b.FindShellsFunc = func(_ context.Context, id string) (*cairn.ShellList, error) {
		asked = append(asked, id)
		return &cairn.ShellList{Enabled: true, Shells: live}, nil
	}
	var killed []string
	h.b.KillShellFunc = func(_ context.Context, id string) error {
		killed = append(killed, id)
		live = nil
		return nil
	}
	h.key("w")
	s, ok := h.m.stack.Top().(*shells.Screen)
	require.True(t, ok)
	require.Equal(t, ws[0].ID, s.WorkspaceID(), "w lists the workspace's own shells")
	require.Equal(t, []string{ws[0].ID}, asked)
	h.key("1").command("shells")
	require.Empty(t, h.m.stack.Top().(*shells.Screen).WorkspaceID(), ":shells lists every one")
	require.Contains(t, h.view(), "sh-1")
	h.key("D")
	require.IsType(t, &confirm.Model{}, h.m.modal)
	h.key("n")
	require.Empty(t, killed, "only y kills")
	h.key("D", "y")
	require.Equal(t, []string{"sh-1"}, killed)
	require.Contains(t, h.statusLine(), "killed")
	require.Contains(t, h.view(), "No live shells", "the screen lists again after the kill")
}

func TestShellsKillRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha")
	h.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
		return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{{ID: "sh-1", WorkspaceID: ws[0].ID}}}, nil
	}
	h.b.KillShellFunc = func(context.Context, string) error { return cairn.Errorf(cairn.ReasonForbidden, "admin") }
	h.command("shells").key("D", "y")
	require.Contains(t, h.statusLine(), "lacks the admin scope")
}

func TestAuditScreen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha")
	actor := "ops"
	var filters []cairn.AuditFilter
	h.b.AuditFunc = func(_ context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
		filters = append(filters, f)
		return []*cairn.AuditEvent{{ID: "01J0000000000000000000000A", Type: cairn.AuditShellClosed, Actor: &actor,
			Metadata: map[string]any{"workspace_id": ws[0].ID, "reason": "terminated", "request_id": "req-42"}, CreatedAt: h.clock.Now()}}, nil
	}
	h.key("a")
	_, ok := h.m.stack.Top().(*audit.Screen)
	require.True(t, ok)
	require.Len(t, filters, 1)
	require.Equal(t, ws[0].ID, filters[0].WorkspaceID)
	require.True(t, filters[0].Newest, "newest first")
	require.Contains(t, h.view(), "SHELL_CLOSED")
	require.Contains(t, h.view(), "req-42")
	h.events(upserted(h.b.World.UpdateWorkspace(ws[0].ID, func(w *cairn.Workspace) { w.Name = "ws-renamed" })))
	require.Len(t, filters, 2, "an event of its workspace lists again")
}

func TestMouse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Mouse = true })
	h.seed("ws-a", "ws-b", "ws-c")
	root := h.m.stack.Top().(*workspaces.Screen)
	h.send(tea.MouseMsg{X: 3, Y: 4, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	w, _ := root.Selected()
	require.Equal(t, "ws-c", w.Name, "header line, column header, then ws-a at line 2: line 4 is ws-c")
	h.send(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
	w, _ = root.Selected()
	require.Equal(t, "ws-b", w.Name)
	h.send(tea.MouseMsg{X: 3, Y: 30, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	w, _ = root.Selected()
	require.Equal(t, "ws-b", w.Name, "a click below the rows moves nothing")
}
