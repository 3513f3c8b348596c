// Package action is what a screen's action does: its guards, then the
// confirmation or form it asks, then the operation or transfer the answer
// starts, and the settling of the operation's reply — the store, the busy
// form's field errors, the toast. The Flow owns the purpose of the open
// modal; the root model owns the modal slot and hands the Flow a Host.
package action

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Host is what the flow asks of the root model from Update.
type Host interface {
	NextID() int
	// Now is the model's time, corrected by the server clock offset.
	Now() time.Time
	Frame() int
	Changed(ch store.Changes, o feed.Origin) tea.Cmd
	Toast(level toast.Level, text string) tea.Cmd
	ErrorToast(sentence string, err error) tea.Cmd
	// OpenModal puts md in the modal slot, sized; CloseModal empties it;
	// Modal is what it holds.
	OpenModal(md screen.Modal)
	CloseModal()
	Modal() screen.Modal
	Queue() *transfer.Queue
	OpenShell(w *cairn.Workspace) tea.Cmd
	// Push opens a screen (the preview) on the stack and returns what it
	// starts with.
	Push(s screen.Screen) tea.Cmd
	WorkspaceName(id string) string
	// OpenFiles pushes the files pane of a workspace (and lists its
	// artifacts for the pickers).
	OpenFiles(wsID string) tea.Cmd
	// VolumeChanged tells the files panes of a workspace that cairn wrote
	// its volume: the volume sends no events, so they list again, the
	// cursor going to the path at when it is listed ("" keeps it).
	VolumeChanged(wsID, at string) tea.Cmd
	// SnapshotsChanged tells the snapshots screens of a workspace that
	// its snapshots changed: they list again.
	SnapshotsChanged(wsID string) tea.Cmd
	// VolumeEntry is the entry at volume path p as a files pane of the
	// workspace lists it, if one does.
	VolumeEntry(wsID, p string) (cairn.FileEntry, bool)
}

// Backend is what the flow asks of the server itself: the operations'
// (a volume file's read for its preview or its edit and the volume
// listing behind path completion among them), the head of an artifact
// for its preview, and the server's bounds (an upload into the volume is
// held to its file write bound).
type Backend interface {
	ops.Backend
	ReadHead(ctx context.Context, artifactID string, n int64) ([]byte, int64, error)
	KillShell(ctx context.Context, id string) error
	Info(ctx context.Context) (*cairn.Info, error)
}

// Flow runs actions.
type Flow struct {
	c       *deps.Deps
	host    Host
	ops     *ops.Runner
	backend Backend
	ctx     context.Context
	st      *store.Store
	intent  intent
	// edit is the volume file being edited in the editor, nil for none.
	edit *editing
}

// New returns the flow of store st; its requests live within ctx.
func New(ctx context.Context, c *deps.Deps, host Host, runner *ops.Runner, b Backend, st *store.Store) *Flow {
	return &Flow{c: c, host: host, ops: runner, backend: b, ctx: ctx, st: st}
}

// Update handles the flow's messages; ok is false for any other.
func (act *Flow) Update(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case ops.DoneMsg:
		return act.onOpDone(msg), true
	case mountCheckMsg:
		return act.onMountCheck(msg), true
	case dialog.LocalStat:
		return act.onLocalStat(msg), true
	case transfer.PendingMsg:
		return act.onPending(msg), true
	case ops.BulkDoneMsg:
		return act.onBulkDone(msg), true
	case bulkDirMsg:
		return act.onBulkDir(msg), true
	case shellKilledMsg:
		return act.onShellKilled(msg), true
	case putReadMsg:
		return act.onPutRead(msg), true
	}
	return act.updateEdit(msg)
}

// updateEdit handles the messages of an edit in the editor.
func (act *Flow) updateEdit(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case editReadyMsg:
		return act.onEditReady(msg), true
	case editedMsg:
		return act.onEdited(msg), true
	case editReadBackMsg:
		return act.onEditReadBack(msg), true
	case editConflictMsg:
		return act.onEditConflict(msg), true
	case editEndedMsg:
		return act.onEditEnded(msg), true
	}
	return nil, false
}

// mountCheckMsg is the fresh mount count a teardown needs.
type mountCheckMsg struct {
	op     ops.Op
	detail *cairn.WorkspaceDetail
	err    error
}

// AskCancel cancels a transfer, asking first past 50 %.
func (act *Flow) AskCancel(id int) tea.Cmd {
	t := act.host.Queue().Get(id)
	if t != nil && t.Phase.Running() && t.Fraction() > 0.5 {
		act.openConfirm(intent{kind: intentCancelTransfer, transfer: t.ID}, "Cancel transfer", fmt.Sprintf(
			"%s is %d%% done. Cancel the %s?", t.Name, int(t.Fraction()*100), transfer.KindWord(t.Kind)))
		return nil
	}
	return act.host.Queue().Cancel(id)
}

// Waiting is the operation a busy form waits for, 0 for none.
func (act *Flow) Waiting() int { return act.intent.opID }
