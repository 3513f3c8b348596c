package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// shellHost is the root's side of the shell hand-over's Host.
type shellHost struct{ m *Model }

func (h shellHost) NextID() int                  { return h.m.id() }
func (h shellHost) AddTask(id int, label string) { h.m.ops.AddTask(id, label) }
func (h shellHost) EndTask(id int)               { h.m.ops.EndTask(id) }

func (h shellHost) Toast(level toast.Level, text string) tea.Cmd { return h.m.notes.Show(level, text) }

func (h shellHost) ErrorToast(sentence string, err error) tea.Cmd {
	return h.m.notes.Error(sentence, err)
}

// Returned is the way back from a shell: the window size, and a resync —
// the events of the meantime are in the hub, but a long shell may have
// overflowed it — and a new listing of every files pane, since the shell
// may have written any volume and volumes send no events.
func (h shellHost) Returned() tea.Cmd {
	return tea.Batch(tea.WindowSize(), h.m.feed.Resync(), h.m.volumeChanged("", ""))
}

// feedHost is the root's side of the feed's Host.
type feedHost struct{ m *Model }

func (h feedHost) NextID() int    { return h.m.id() }
func (h feedHost) Now() time.Time { return h.m.sh.now }

func (h feedHost) Changed(ch store.Changes, o feed.Origin) tea.Cmd { return h.m.changed(ch, o) }

func (h feedHost) ErrorToast(err error, s errtext.Subject) tea.Cmd { return h.m.notes.ErrorFor(err, s) }

func (h feedHost) Scopes() []store.Scope { return h.m.stack.Scopes() }
func (h feedHost) Paused() bool          { return h.m.modal != nil }
func (h feedHost) FirstList() tea.Cmd    { return tea.Batch(h.m.shell.Check(), h.m.act.OfferResume()) }

// flowHost is the root's side of the action flow's Host.
type flowHost struct{ m *Model }

func (h flowHost) NextID() int    { return h.m.id() }
func (h flowHost) Now() time.Time { return h.m.sh.Now() }
func (h flowHost) Frame() int     { return h.m.sh.Frame() }

func (h flowHost) Changed(ch store.Changes, o feed.Origin) tea.Cmd { return h.m.changed(ch, o) }

func (h flowHost) Toast(level toast.Level, text string) tea.Cmd { return h.m.notes.Show(level, text) }

func (h flowHost) ErrorToast(sentence string, err error) tea.Cmd {
	return h.m.notes.Error(sentence, err)
}

func (h flowHost) OpenModal(md screen.Modal)      { h.m.openModal(md, ownedByFlow) }
func (h flowHost) CloseModal()                    { h.m.closeModal() }
func (h flowHost) Modal() screen.Modal            { return h.m.modal }
func (h flowHost) Queue() *transfer.Queue         { return h.m.xfer }
func (h flowHost) WorkspaceName(id string) string { return h.m.wsName(id) }

func (h flowHost) OpenShell(w *cairn.Workspace) tea.Cmd {
	return h.m.shell.Open(w, ptyshell.Size{Cols: max(1, h.m.width), Rows: max(1, h.m.height)})
}

func (h flowHost) Push(s screen.Screen) tea.Cmd          { return h.m.stack.Push(s) }
func (h flowHost) OpenFiles(wsID string) tea.Cmd         { return h.m.openFiles(wsID) }
func (h flowHost) VolumeChanged(wsID, at string) tea.Cmd { return h.m.volumeChanged(wsID, at) }
func (h flowHost) SnapshotsChanged(wsID string) tea.Cmd  { return h.m.snapshotsChanged(wsID) }

func (h flowHost) VolumeEntry(wsID, p string) (cairn.FileEntry, bool) {
	return h.m.volumeEntry(wsID, p)
}
