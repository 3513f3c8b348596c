package tui

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screens/audit"
	"github.com/cairn-dev/cairn/tui/screens/shells"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// TestFlowFleetConsole drives the fleet console in a teatest program, wired
// as Run wires it: the palette opens a workspace, 1 000 marked artifacts go
// with one typed confirmation at most ops.BulkLimit at a time (every row's
// result in the modal, the rows gone), :shells lists and
// kills, :audit shows the kill, and :ctx moves onto another server whose
// events arrive live.
func TestFlowFleetConsole(t *testing.T) {
	var ws *cairn.Workspace
	f := newFlow(t, func(b *tuitest.Backend) {
		ws = b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		b.World.AddWorkspace("ws-beta", cairn.VolumeNone, "")
		for i := range 1000 {
			b.World.AddArtifact(ws.ID, fmt.Sprintf("art_%04d", i), cairn.ArtifactRecorded, 1, "")
		}
	})
	var inFlight, most atomic.Int64
	f.b.DeleteArtifactFunc = func(_ context.Context, id string) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		f.b.World.DeleteArtifact(id)
		return nil
	}
	f.waitFor("ws-alpha", "● live")

	t.Log(":ws opens the workspace")
	f.keys(":")
	f.waitFor("Command")
	f.tm.Type("ws ws-alpha")
	f.keys("enter")
	f.waitFor("artifacts (1 000)")

	t.Log("ctrl+a marks the 1 000, D asks once, the results come row by row")
	f.keys("ctrl+a")
	f.waitFor("[1 000 marked]")
	f.keys("D")
	f.waitFor("Type delete 1 000 to confirm")
	f.tm.Type("delete 1 000")
	f.keys("enter")
	f.waitFor("1 000 deleted")

	t.Log(":shells lists, D kills; :audit shows the kill")
	var mu sync.Mutex
	live := []*cairn.Shell{{ID: "sh-1", WorkspaceID: ws.ID, TokenName: "ops", StartedAt: tuitest.Epoch()}}
	trail := []*cairn.AuditEvent{}
	f.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
		mu.Lock()
		defer mu.Unlock()
		return &cairn.ShellList{Enabled: true, Shells: append([]*cairn.Shell(nil), live...)}, nil
	}
	f.b.KillShellFunc = func(_ context.Context, id string) error {
		mu.Lock()
		defer mu.Unlock()
		live = nil
		trail = append(trail, &cairn.AuditEvent{ID: "01JAUDIT00000000000000KILL", Type: cairn.AuditShellClosed,
			Metadata: map[string]any{"workspace_id": ws.ID, "shell_id": id, "reason": "terminated"}, CreatedAt: tuitest.Epoch()})
		return nil
	}
	f.b.AuditFunc = func(context.Context, cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
		mu.Lock()
		defer mu.Unlock()
		return append([]*cairn.AuditEvent(nil), trail...), nil
	}
	f.keys("esc") // the results
	f.keys(":")
	f.waitFor("Command")
	f.tm.Type("shells")
	f.keys("enter")
	f.waitFor("shells (1)", "sh-1")
	f.keys("D")
	f.waitFor("(y/N)")
	f.keys("y")
	f.waitFor("killed shell sh-1", "No live shells")
	f.keys(":")
	f.waitFor("Command")
	f.tm.Type("audit")
	f.keys("enter")
	f.waitFor("audit (1)", "SHELL_CLOSED")

	t.Log(":ctx moves onto another server; its events arrive live")
	other := tuitest.NewBackend(t, f.clock)
	other.World.AddWorkspace("ws-there", cairn.VolumeNone, "")
	f.m.connect = func(string) (Backend, string, error) { return other, "http://there:8080", nil }
	f.m.c.Config.Contexts = []string{"here", "there"}
	f.keys(":")
	f.waitFor("Command")
	f.tm.Type("ctx there")
	f.keys("enter")
	f.waitFor("ctx there", "ws-there")
	other.World.AddWorkspace("ws-there-2", cairn.VolumeNone, "")
	f.waitFor("ws-there-2")

	m := f.final()
	require.LessOrEqual(t, most.Load(), int64(ops.BulkLimit), "the deletes ran at most BulkLimit at a time")
	arts, err := f.b.FindArtifacts(context.Background(), cairn.ArtifactFilter{WorkspaceID: ws.ID})
	require.NoError(t, err)
	require.Empty(t, arts)
	require.Equal(t, "there", m.c.Config.Context)
	require.Equal(t, feed.Live, m.feed.Conn().Kind, "the new server's events are live")
	_, onShells := m.stack.Top().(*shells.Screen)
	_, onAudit := m.stack.Top().(*audit.Screen)
	require.False(t, onShells || onAudit, "a context switch starts at its workspaces")
	require.Nil(t, m.modal)
}
