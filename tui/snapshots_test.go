package tui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screens/artifacts"
	"github.com/cairn-dev/cairn/tui/screens/snapshots"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

// The routes of the fake server a snapshots test counts.
const (
	takeRoute    = "POST /v1/workspaces/{id}/snapshots"
	restoreRoute = "POST /v1/workspaces/{id}/restore"
	deleteRoute  = "DELETE /v1/snapshots/{id}"
)

// openSnapshots is the snapshots screen of ws-alpha, whose READY volume
// holds notes.txt ("v1") and the snapshots named, taken in that order.
func openSnapshots(t *testing.T, names ...string) (*harness, *cairn.Workspace) {
	t.Helper()
	return openSnapshotsWith(t, nil, names...)
}

func openSnapshotsWith(t *testing.T, edit func(*config.Config), names ...string) (*harness, *cairn.Workspace) {
	t.Helper()
	var edits []func(*config.Config)
	if edit != nil {
		edits = append(edits, edit)
	}
	h := newHarness(t, edits...)
	ws := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
	h.b.World.PutVolumeFile(ws.ID, "/mnt/cairn/ws/notes.txt", []byte("v1"))
	for _, n := range names {
		h.takeSnapshot(ws.ID, n)
	}
	h.size(120, 40).hello().key("P")
	require.IsType(t, &snapshots.Screen{}, h.m.stack.Top())
	return h, ws
}

// takeSnapshot takes one as another client would: no event reaches the
// TUI unless the test sends it.
func (h *harness) takeSnapshot(wsID, name string) *cairn.Snapshot {
	h.t.Helper()
	s, err := h.b.CreateSnapshot(ctxBackground(), wsID, cairn.SnapshotCreate{Name: name})
	require.NoError(h.t, err)
	return s
}

// lastLog is the newest entry of the messages log: its text and what the
// server said.
func (h *harness) lastLog() (string, string) {
	log := h.m.notes.Toasts().Log()
	require.NotEmpty(h.t, log)
	return log[len(log)-1].Text, log[len(log)-1].Detail
}

func TestSnapshotsScreenLists(t *testing.T) {
	t.Parallel()
	h, ws := openSnapshots(t, "before", "after")
	view := h.view()
	require.Contains(t, h.header(), "ws-alpha ▸ snapshots (2)")
	for _, col := range []string{"NAME", "AGE", "ENTRIES", "SIZE", "UPLOADED", "LIVE"} {
		require.Contains(t, view, col)
	}
	require.Less(t, strings.Index(view, "before"), strings.Index(view, "after"), "oldest first")
	require.Contains(t, rowWith(view, "before"), "2 B", "its size")

	t.Log("a snapshot taken or deleted elsewhere shows on its event")
	other := h.takeSnapshot(ws.ID, "elsewhere")
	require.NotContains(t, h.view(), "elsewhere")
	h.events(cairn.Event{Type: cairn.EventSnapshotCreated, ID: other.ID, WorkspaceID: ws.ID, Snapshot: other})
	require.Contains(t, h.view(), "elsewhere")
	require.NoError(t, h.b.DeleteSnapshot(ctxBackground(), other.ID))
	h.events(cairn.Event{Type: cairn.EventSnapshotDeleted, ID: other.ID, WorkspaceID: ws.ID})
	require.NotContains(t, h.view(), "elsewhere")

	t.Log("another workspace's events list nothing; a resync lists again")
	lists := h.b.World.Hits("GET /v1/workspaces/{id}/snapshots")
	h.events(cairn.Event{Type: cairn.EventSnapshotDeleted, ID: "x", WorkspaceID: "w-other"})
	require.Equal(t, lists, h.b.World.Hits("GET /v1/workspaces/{id}/snapshots"))
	h.send(hubMsg{batch: live.Batch{At: h.clock.Now(), Epoch: h.m.epoch, Resync: []string{"seq gap"}}})
	require.Equal(t, lists+1, h.b.World.Hits("GET /v1/workspaces/{id}/snapshots"))

	t.Log("the artifacts screen opens them too")
	h.key("1", "enter")
	require.IsType(t, &artifacts.Screen{}, h.m.stack.Top())
	h.key("P")
	require.Equal(t, ws.ID, h.m.stack.Top().(*snapshots.Screen).WorkspaceID())
}

func TestSnapshotTake(t *testing.T) {
	t.Parallel()
	h, ws := openSnapshots(t)
	require.Contains(t, h.view(), "No snapshots of ws-alpha yet — n takes one.")
	h.key("n")
	require.IsType(t, &form.Model{}, h.m.modal)
	h.typeText("before")
	_, cmd := h.m.Update(modeltest.Key("enter"))
	require.Contains(t, h.view(), "the server reads every file of the volume", "the form waits, busy")
	require.Equal(t, "snapshotting", h.m.ops.Pending(ws.ID))
	require.Contains(t, h.statusLine(), "taking snapshot before of ws-alpha…")
	for _, msg := range h.run(cmd) {
		h.send(msg)
	}
	require.Nil(t, h.m.modal, "closed once taken")
	require.Equal(t, "✓ took snapshot before of ws-alpha (2 entries, 2 B, 2 B uploaded)", h.statusLine())
	require.Contains(t, h.view(), "before", "listed again")
	require.Empty(t, h.m.ops.Pending(ws.ID))

	t.Log("a name the workspace holds is refused under the field")
	h.key("n").typeText("before").key("enter")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, h.view(), "ws-alpha already has a snapshot named before")
}

func TestSnapshotTakeWhileMountedOffersLive(t *testing.T) {
	t.Parallel()
	h, ws := openSnapshots(t)
	h.b.World.SetMounts(ws.ID, 1)
	h.key("n", "enter")
	require.IsType(t, &confirm.Model{}, h.m.modal, "the form gives way to the question")
	require.Contains(t, h.view(), "Take it live?")
	require.Contains(t, h.statusLine(), "volume is mounted by running containers")
	text, detail := h.lastLog()
	require.Contains(t, text, "or take the snapshot live")
	require.Contains(t, detail, "a snapshot may be taken live", "the ! log keeps what the server said")
	require.Equal(t, 1, h.b.World.Hits(takeRoute))

	h.key("y")
	require.Equal(t, 2, h.b.World.Hits(takeRoute))
	require.Contains(t, h.statusLine(), "✓ took live snapshot snap-")
	require.Contains(t, rowWith(h.view(), "snap-"), "live")

	t.Log("a form closed meanwhile is not followed by a question")
	h.key("n")
	_, cmd := h.m.Update(modeltest.Key("enter"))
	h.key("esc")
	for _, msg := range h.run(cmd) {
		h.send(msg)
	}
	require.Nil(t, h.m.modal)
	require.Contains(t, h.statusLine(), "or take the snapshot live")
}

func TestSnapshotRestoreNeedsTheTypedName(t *testing.T) {
	t.Parallel()
	h, ws := openSnapshots(t, "before")
	h.b.World.PutVolumeFile(ws.ID, "/mnt/cairn/ws/notes.txt", []byte("v2"))
	h.b.World.PutVolumeFile(ws.ID, "/mnt/cairn/ws/extra.txt", []byte("new"))

	h.key("R")
	require.IsType(t, &typed.Model{}, h.m.modal)
	require.Contains(t, h.view(), "Type ws-alpha to confirm")
	h.typeText("ws-alph").key("enter")
	require.IsType(t, &typed.Model{}, h.m.modal, "a mismatch stays")
	require.Contains(t, h.view(), "does not match")
	h.key("esc")
	require.Equal(t, "i cancelled", h.statusLine())
	require.Zero(t, h.b.World.Hits(restoreRoute), "nothing is restored before the name is typed")

	h.key("R").typeText("ws-alpha")
	require.Zero(t, h.b.World.Hits(restoreRoute))
	_, cmd := h.m.Update(modeltest.Key("enter"))
	require.Contains(t, h.view(), "ws-alpha: restoring…", "the banner while it runs")
	require.Equal(t, "restoring snapshot before into ws-alpha…", h.m.ops.Tasks()[0].Label, "the task line's")
	h.key("n")
	require.Equal(t, "i busy: restoring", h.statusLine(), "the workspace's other snapshot actions wait")
	for _, msg := range h.run(cmd) {
		h.send(msg)
	}
	require.Equal(t, 1, h.b.World.Hits(restoreRoute))
	require.Equal(t, "✓ restored snapshot before into ws-alpha (2 entries, 2 B)", h.statusLine())
	b, _ := h.b.World.VolumeFile(ws.ID, "/mnt/cairn/ws/notes.txt")
	require.Equal(t, "v1", string(b))
	_, ok := h.b.World.VolumeFile(ws.ID, "/mnt/cairn/ws/extra.txt")
	require.False(t, ok)
}

func TestSnapshotRestoreRefusedWhileMounted(t *testing.T) {
	t.Parallel()
	h, ws := openSnapshots(t, "before")
	h.b.World.SetMounts(ws.ID, 2)
	h.key("R").typeText("ws-alpha").key("enter")
	require.Nil(t, h.m.modal, "no live offer: a restore is never live")
	require.Equal(t, "✕ error: volume is mounted by running containers — end their shells or tool runs first", h.statusLine())
	_, detail := h.lastLog()
	require.Contains(t, detail, "2 running containers mount")
}

func TestSnapshotFork(t *testing.T) {
	t.Parallel()
	h, ws := openSnapshots(t)
	h.key("F")
	require.IsType(t, &form.Model{}, h.m.modal)
	h.typeText("ws-fork").key("tab").typeText("an experiment").key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, "✓ forked ws-alpha as ws-fork (snapshot fork-ws-fork kept)", h.statusLine())
	var fork *cairn.Workspace
	for _, w := range h.m.Store().Workspaces() {
		if w.Name == "ws-fork" {
			fork = w
		}
	}
	require.NotNil(t, fork, "the new workspace is in the list")
	require.Equal(t, cairn.VolumeReady, fork.VolumeState)
	require.Equal(t, "an experiment", *fork.Description)
	b, _ := h.b.World.VolumeFile(fork.ID, "/mnt/cairn/ws/notes.txt")
	require.Equal(t, "v1", string(b))
	require.Contains(t, h.view(), "fork-ws-fork", "the source's list shows the fork's snapshot")
	require.Equal(t, ws.ID, h.m.stack.Top().(*snapshots.Screen).WorkspaceID())

	h.key("F").typeText("ws-fork")
	require.Contains(t, h.view(), "a workspace named ws-fork already exists", "warned while typing")
	h.key("enter")
	require.IsType(t, &form.Model{}, h.m.modal, "refused under the field")
}

func TestSnapshotDelete(t *testing.T) {
	t.Parallel()
	h, _ := openSnapshots(t, "before")
	h.key("D")
	require.IsType(t, &confirm.Model{}, h.m.modal)
	require.Contains(t, h.view(), "Delete snapshot before of ws-alpha (2 entries, 2 B)?")
	h.key("n")
	require.Zero(t, h.b.World.Hits(deleteRoute), "only y deletes")
	h.key("D", "y")
	require.Equal(t, 1, h.b.World.Hits(deleteRoute))
	require.Equal(t, "✓ deleted snapshot before", h.statusLine())
	require.Contains(t, h.view(), "No snapshots of ws-alpha yet")
}

func TestSnapshotGuards(t *testing.T) {
	t.Parallel()
	t.Run("NoVolume", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.key("P")
		require.Contains(t, h.view(), "No snapshots of ws-alpha yet")
		for _, k := range []string{"n", "F"} {
			h.key(k)
			require.Nil(t, h.m.modal)
			require.Equal(t, "i needs volume READY — v provisions it", h.statusLine())
		}
		h.key("R")
		require.Equal(t, "i no snapshot selected", h.statusLine())
		require.Zero(t, h.b.World.Hits(takeRoute))
	})
	t.Run("ReadOnly", func(t *testing.T) {
		t.Parallel()
		h, _ := openSnapshotsWith(t, func(c *config.Config) { c.ReadOnly = true }, "before")
		require.Contains(t, h.view(), "before")
		h.key("n", "R", "F", "D")
		require.Nil(t, h.m.modal, "every change is hidden")
		require.NotContains(t, hintLine(h), "restore")
	})
}

// rowWith is the list's part of the first line of view whose list holds
// text: a row, not the detail pane beside it.
func rowWith(view, text string) string {
	for _, line := range strings.Split(view, "\n") {
		if list, _, _ := strings.Cut(line, "│"); strings.Contains(list, text) {
			return list
		}
	}
	return ""
}
