package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/transferline"
)

// lingerFor is how long a finished transfer stays in the tray.
const lingerFor = 5 * time.Second

// transferSpec is what a transfer's Cmd needs, captured by value.
type transferSpec struct {
	id          int
	kind        common.TransferKind
	wsID, artID string
	name        string
	desc        *string
	path        string
	overwrite   bool
	repair      bool  // replace: the artifact was MISSING_OBJECT
	size        int64 // known before the start: the file's or the artifact's
	rate        int64
}

type (
	// transferDoneMsg settles a transfer.
	transferDoneMsg struct {
		id  int
		art *cairn.Artifact
		err error
	}
	// lingerDoneMsg takes a finished transfer out of the tray.
	lingerDoneMsg struct{ id int }
)

// transferTasks holds the cancels of running transfers and the spec of
// every transfer.
type transferTasks struct {
	cancels map[int]context.CancelFunc
	specs   map[int]transferSpec
}

// enqueue adds a transfer in the queued phase and starts what may run.
func (m *Model) enqueue(s transferSpec) tea.Cmd {
	s.id, s.rate = m.id(), m.c.Config.RateLimit
	t := &common.Transfer{ID: s.id, Kind: s.kind, WorkspaceID: s.wsID, ArtifactID: s.artID, Name: s.name,
		Path: s.path, Phase: common.PhaseQueued, Queued: m.sh.now, Total: s.size}
	m.sh.transfers = append(m.sh.transfers, t)
	m.xfer.specs[s.id] = s
	return tea.Batch(m.startQueued(), m.transfersChanged())
}

// startQueued starts queued transfers, oldest first, while fewer than
// transfer.max_parallel run.
func (m *Model) startQueued() tea.Cmd {
	var cmds []tea.Cmd
	for _, t := range m.sh.transfers {
		if m.runningTransfers() >= m.c.Config.MaxParallel {
			break
		}
		if t.Phase == common.PhaseQueued {
			cmds = append(cmds, m.startTransfer(t))
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) runningTransfers() int {
	n := 0
	for _, t := range m.sh.transfers {
		if t.Phase.Running() {
			n++
		}
	}
	return n
}

// activeTransfers counts the transfers quitting would cancel.
func (m *Model) activeTransfers() int {
	n := 0
	for _, t := range m.sh.transfers {
		if !t.Phase.Finished() {
			n++
		}
	}
	return n
}

// startTransfer records the running transfer (its cancel, the replace's
// pending mark) and returns the Cmd that moves the bytes.
func (m *Model) startTransfer(t *common.Transfer) tea.Cmd {
	s := m.xfer.specs[t.ID]
	t.Started = m.sh.now
	t.Phase = common.PhaseHashing
	if s.kind == common.Download {
		t.Phase = common.PhaseDownloading
	}
	if s.kind == common.Replace {
		m.sh.pending[s.artID] = "replacing"
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.xfer.cancels[t.ID] = cancel
	b, hub, track := m.backend, m.hub, m.running
	return func() tea.Msg {
		if !track.enter() {
			return transferDoneMsg{id: s.id, err: context.Canceled} // the program is ending
		}
		defer track.leave()
		return runTransfer(ctx, b, hub, s)
	}
}

// runTransfer moves the bytes; it runs in a Cmd. Progress goes to the hub,
// never to the program: the program may be blocked inside a shell.
func runTransfer(ctx context.Context, b Backend, hub *live.Hub, s transferSpec) transferDoneMsg {
	progress := func(done, total int64) { hub.Progress(live.Sample{Transfer: s.id, Done: done, Total: total}) }
	done := transferDoneMsg{id: s.id}
	switch s.kind {
	case common.Upload:
		done.art, done.err = b.Upload(ctx, s.wsID, s.path, client.UploadOptions{
			Name: s.name, Description: s.desc, Progress: progress, RateLimit: s.rate})
	case common.Replace:
		done.art, done.err = b.Replace(ctx, s.artID, s.path, client.UploadOptions{Progress: progress, RateLimit: s.rate})
	case common.Download:
		done.art, done.err = b.Download(ctx, s.artID, s.path, client.DownloadOptions{
			Overwrite: s.overwrite, Progress: progress, RateLimit: s.rate})
	}
	return done
}

func (m *Model) transfer(id int) *common.Transfer {
	for _, t := range m.sh.transfers {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// onSamples applies the latest progress sample of each transfer.
func (m *Model) onSamples(samples []live.Sample) {
	for _, s := range samples {
		if t := m.transfer(s.Transfer); t != nil {
			t.Sample(s.Done, s.Total, s.At)
		}
	}
}

// onTransferDone settles a transfer: its row, its toast, its place in the
// tray for 5 s more, and the next queued one.
func (m *Model) onTransferDone(d transferDoneMsg) tea.Cmd {
	t := m.transfer(d.id)
	if t == nil {
		return nil
	}
	s := m.xfer.specs[d.id]
	if cancel, ok := m.xfer.cancels[d.id]; ok {
		cancel()
		delete(m.xfer.cancels, d.id)
	}
	if s.kind == common.Replace && m.sh.pending[s.artID] == "replacing" {
		delete(m.sh.pending, s.artID)
	}
	t.Ended, t.Lingering = m.sh.now, true
	var cmd tea.Cmd
	switch {
	case d.err == nil:
		cmd = m.transferSucceeded(t, s, d.art)
	case t.Cancelling || errors.Is(d.err, context.Canceled):
		t.Phase = common.PhaseCancelled
		cmd = m.toast(common.LevelInfo, "cancelled the "+kindWord(t.Kind)+" of "+t.Name)
	default:
		t.Phase, t.Err = common.PhaseFailed, transferSentence(t, d.err)
		cmd = m.pushToast(common.LevelError, t.Err, requestID(d.err))
	}
	id := d.id
	return tea.Batch(cmd, m.c.After(lingerFor, func() tea.Msg { return lingerDoneMsg{id: id} }),
		m.startQueued(), m.transfersChanged())
}

func (m *Model) transferSucceeded(t *common.Transfer, s transferSpec, a *cairn.Artifact) tea.Cmd {
	t.Phase = common.PhaseDone
	var ch store.Changes
	if a != nil {
		t.ArtifactID, t.Name, t.Total, t.Done = a.ID, a.Name, a.Size, a.Size
		ch = m.sh.st.PutArtifact(a, m.sh.Now())
	}
	var text string
	switch s.kind {
	case common.Upload:
		text = fmt.Sprintf("uploaded %s (%s)", t.Name, common.IEC(t.Total))
	case common.Replace:
		text = "replaced " + t.Name
		if s.repair {
			text = "repaired " + t.Name
		}
	case common.Download:
		text = fmt.Sprintf("downloaded %s → %s (%s)", t.Name, t.Path, common.IEC(t.Total))
	}
	return tea.Batch(m.changed(ch, originResync), m.toast(common.LevelOK, text))
}

func kindWord(k common.TransferKind) string {
	switch k {
	case common.Upload:
		return "upload"
	case common.Replace:
		return "replace"
	}
	return "download"
}

// transferSentence is a failed transfer's one sentence (TUI.md §3.7–3.9).
func transferSentence(t *common.Transfer, err error) string {
	base := filepath.Base(t.Path)
	switch {
	case errors.Is(err, client.ErrVerification):
		return t.Name + ": the downloaded bytes are not the artifact's (size or SHA-256) — nothing was kept"
	case errors.Is(err, fs.ErrExist):
		return t.Path + " exists — download again to overwrite it"
	case errors.Is(err, fs.ErrNotExist):
		return t.Path + " does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "no permission to use " + t.Path
	}
	switch cairn.ErrorReason(err) {
	case cairn.ReasonSourceChanged:
		return base + " changed while uploading — retry"
	case cairn.ReasonObjectMissing:
		return t.Name + " is MISSING_OBJECT — nothing to download"
	}
	if _, ok := errors.AsType[*cairn.Error](err); !ok && !client.IsUnreachable(err) {
		return t.Name + ": " + err.Error() // a local failure: the path is the operator's own
	}
	return common.Sentence(err, common.Subject{Artifact: t.Name, Name: t.Name, Scope: "write"})
}

// cancelTransfer cancels a queued or running transfer; the running one
// ends with its reply.
func (m *Model) cancelTransfer(id int) tea.Cmd {
	t := m.transfer(id)
	if t == nil || t.Phase.Finished() {
		return nil
	}
	if t.Phase == common.PhaseQueued {
		t.Phase, t.Ended, t.Lingering = common.PhaseCancelled, m.sh.now, true
		return tea.Batch(m.c.After(lingerFor, func() tea.Msg { return lingerDoneMsg{id: id} }),
			m.toast(common.LevelInfo, "cancelled the "+kindWord(t.Kind)+" of "+t.Name), m.transfersChanged())
	}
	t.Cancelling = true
	if cancel, ok := m.xfer.cancels[id]; ok {
		cancel()
	}
	return m.transfersChanged()
}

// cancelAll cancels every transfer: quitting.
func (m *Model) cancelAll() {
	for _, t := range m.sh.transfers {
		if !t.Phase.Finished() {
			t.Cancelling = true
		}
	}
	for _, cancel := range m.xfer.cancels {
		cancel()
	}
}

// clearFinished forgets the finished transfers.
func (m *Model) clearFinished() tea.Cmd {
	kept := m.sh.transfers[:0]
	for _, t := range m.sh.transfers {
		if t.Phase.Finished() {
			delete(m.xfer.specs, t.ID)
			continue
		}
		kept = append(kept, t)
	}
	m.sh.transfers = kept
	return m.transfersChanged()
}

func (m *Model) onLingerDone(id int) tea.Cmd {
	if t := m.transfer(id); t != nil && t.Lingering {
		t.Lingering = false
		return m.transfersChanged()
	}
	return nil
}

// transfersChanged re-lays the frame (the tray may have grown or shrunk)
// and tells the screens.
func (m *Model) transfersChanged() tea.Cmd {
	m.layout()
	for i, s := range m.stack {
		m.stack[i], _ = s.Update(common.TransfersMsg{})
	}
	return nil
}

// trayTransfers are the transfers the tray shows: unfinished, or finished
// less than 5 s ago.
func (m *Model) trayTransfers() []*common.Transfer {
	var out []*common.Transfer
	for _, t := range m.sh.transfers {
		if !t.Phase.Finished() || t.Lingering {
			out = append(out, t)
		}
	}
	return out
}

// trayHeight is 0–3 rows: none without transfers, one summary line below
// 24 rows, else a line per transfer up to 3 (TUI.md §1.6).
func (m *Model) trayHeight() int {
	n := len(m.trayTransfers())
	switch {
	case n == 0 || m.tooSmall():
		return 0
	case m.height < 24:
		return 1
	}
	return min(n, 3)
}

// trayLines renders the tray: beyond 3 transfers the third line says how
// many more the transfers screen holds.
func (m *Model) trayLines() []string {
	ts := m.trayTransfers()
	th, now, frame := m.c.Theme, m.sh.now, m.sh.Frame()
	switch h := m.trayHeight(); {
	case h == 0:
		return nil
	case m.height < 24:
		return []string{transferline.Summary(th, ts, m.width)}
	case len(ts) > 3:
		more := fmt.Sprintf("+%d more %s %s", len(ts)-2, th.Glyphs.Dot, th.Key.Render("t"))
		return []string{transferline.View(th, ts[0], now, frame, m.width), transferline.View(th, ts[1], now, frame, m.width),
			m.pad(th.Dim.Render(more))}
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = transferline.View(th, t, now, frame, m.width)
	}
	return out
}

// layout gives the screens the body height the tray leaves, when it
// changed.
func (m *Model) layout() {
	if h := m.trayHeight(); h != m.trayRows {
		m.trayRows = h
		m.resize(m.width, m.height)
	}
}
