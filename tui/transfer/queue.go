// Package transfer is cairn-tui's transfers: the Transfer as the screens
// read it and the line it shows as, and the queue that runs uploads,
// replaces and downloads through the client, at most
// transfer.max_parallel at a time, with their progress from the hub, the
// tray under the body and the focus it takes with tab. The queue owns its
// state; the root model routes its messages to Update and hands it a Host
// for what crosses into the rest of the program (the store, toasts,
// pending marks, timers).
package transfer

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// lingerFor is how long a finished transfer stays in the tray.
const lingerFor = 5 * time.Second

// Backend moves file content between this machine and the store through
// presigned URLs. Progress callbacks run on the goroutine moving the
// bytes.
type Backend interface {
	// Upload hashes, stages, PUTs and registers the file as a new artifact.
	Upload(ctx context.Context, workspaceID, path string, o client.UploadOptions) (*cairn.Artifact, error)
	// Replace uploads the file as the artifact's new content (repairing a
	// MISSING_OBJECT artifact).
	Replace(ctx context.Context, artifactID, path string, o client.UploadOptions) (*cairn.Artifact, error)
	// Download writes the content to dest through dest.part, verified.
	Download(ctx context.Context, artifactID, dest string, o client.DownloadOptions) (*cairn.Artifact, error)
	// Resumer finds the uploads an earlier run left unfinished.
	Resumer
}

// Host is what the queue asks of the root model, synchronously, from
// Update.
type Host interface {
	// NextID is a fresh ID for a transfer.
	NextID() int
	// Now is the model's time.
	Now() time.Time
	// Toast shows a message; ErrorToast an error's sentence, keeping the
	// server's detail for the log.
	Toast(level toast.Level, text string) tea.Cmd
	ErrorToast(sentence string, err error) tea.Cmd
	// PutArtifact applies an artifact a transfer returned.
	PutArtifact(a *cairn.Artifact) tea.Cmd
	// SetPending marks a row busy with word (on), or clears the mark if it
	// is still word's (off).
	SetPending(id, word string, on bool)
	// Changed says the transfers moved: the tray's height may differ and
	// screens redraw.
	Changed()
	// After returns a Cmd that delivers msg() after d.
	After(d time.Duration, msg func() tea.Msg) tea.Cmd
}

// Settings are the configuration's transfer settings a queue runs by.
type Settings struct {
	MaxParallel int // transfers running at once (transfer.max_parallel)
	Options         // what every transfer runs with
}

// SettingsOf reads the transfer settings of cfg.
func SettingsOf(cfg *config.Config) Settings {
	return Settings{MaxParallel: cfg.MaxParallel, Options: Options{RateLimit: cfg.RateLimit, PresignTTL: cfg.PresignTTL}}
}

// Spec is what a transfer's Cmd needs, captured by value.
type Spec struct {
	ID          int
	Kind        Kind
	WSID, ArtID string
	Name        string
	Desc        *string
	Path        string
	Overwrite   bool
	Repair      bool  // replace: the artifact was MISSING_OBJECT
	Size        int64 // known before the start: the file's or the artifact's

	// backend and epoch are the server the transfer was queued against:
	// after a context switch it still runs there, and its artifact is not
	// put into the new server's store.
	backend Backend
	epoch   int
}

type (
	// DoneMsg settles a transfer.
	DoneMsg struct {
		ID  int
		Art *cairn.Artifact
		Err error
	}
	// LingerMsg takes a finished transfer out of the tray.
	LingerMsg struct{ id int }
)

// Queue is every transfer since start, oldest first, with the running
// ones' cancels.
type Queue struct {
	set     Settings
	theme   *theme.Theme
	host    Host
	backend Backend
	hub     *live.Hub
	ctx     context.Context
	running *Inflight
	epoch   int // bumped by SetBackend

	list    []*Transfer
	specs   map[int]Spec
	cancels map[int]context.CancelFunc
	tray    tray
}

// New builds an empty queue whose transfers live within ctx; th draws its
// tray.
func New(ctx context.Context, set Settings, th *theme.Theme, host Host, b Backend, hub *live.Hub) *Queue {
	return &Queue{set: set, theme: th, host: host, backend: b, hub: hub, ctx: ctx, running: NewInflight(),
		specs: make(map[int]Spec), cancels: make(map[int]context.CancelFunc)}
}

// SetBackend makes b the server of transfers queued from now on; those
// queued before keep theirs.
func (q *Queue) SetBackend(b Backend) {
	if q.backend != b {
		q.epoch++
	}
	q.backend = b
}

// All is every transfer since start, oldest first.
func (q *Queue) All() []*Transfer { return q.list }

// Spec is the spec a transfer was queued with.
func (q *Queue) Spec(id int) Spec { return q.specs[id] }

// Get is the transfer with id, or nil.
func (q *Queue) Get(id int) *Transfer {
	for _, t := range q.list {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Enqueue adds a transfer in the queued phase and starts what may run.
func (q *Queue) Enqueue(s Spec) tea.Cmd {
	s.ID = q.host.NextID()
	s.backend, s.epoch = q.backend, q.epoch
	q.list = append(q.list, &Transfer{ID: s.ID, Kind: s.Kind, WorkspaceID: s.WSID, ArtifactID: s.ArtID,
		Name: s.Name, Path: s.Path, Phase: PhaseQueued, Queued: q.host.Now(), Meter: termkit.Meter{Total: s.Size}})
	q.specs[s.ID] = s
	return q.changed(q.startQueued())
}

// Update handles the queue's own messages; ok is false for any other.
func (q *Queue) Update(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case DoneMsg:
		return q.onDone(msg), true
	case LingerMsg:
		return q.onLingerDone(msg.id), true
	case DiscardedMsg:
		return q.onDiscarded(msg), true
	}
	return nil, false
}

// Running counts the transfers moving bytes or waiting on the server.
func (q *Queue) Running() int {
	n := 0
	for _, t := range q.list {
		if t.Phase.Running() {
			n++
		}
	}
	return n
}

// Active counts the transfers quitting would cancel.
func (q *Queue) Active() int {
	n := 0
	for _, t := range q.list {
		if !t.Phase.Finished() {
			n++
		}
	}
	return n
}

// Samples applies the latest progress sample of each transfer.
func (q *Queue) Samples(samples []live.Sample) {
	for _, s := range samples {
		if t := q.Get(s.Transfer); t != nil {
			t.Sample(s.Hashing, s.Done, s.Total, s.At)
			t.SampleParts(s.Parts, s.PartsTotal)
		}
	}
	q.host.Changed()
}

// Notes shows what the client said about transfers resuming or starting
// over, one info toast each, named after the transfer.
func (q *Queue) Notes(notes []live.Note) tea.Cmd {
	var cmds []tea.Cmd
	for _, n := range notes {
		name := "a transfer"
		if t := q.Get(n.Transfer); t != nil {
			name = t.Name
		}
		cmds = append(cmds, q.host.Toast(toast.LevelInfo, name+": "+n.Text))
	}
	return tea.Batch(cmds...)
}

// Cancel cancels a queued or running transfer; the running one ends with
// its reply.
func (q *Queue) Cancel(id int) tea.Cmd {
	t := q.Get(id)
	if t == nil || t.Phase.Finished() {
		return nil
	}
	if t.Phase == PhaseQueued {
		t.Phase, t.Ended, t.Lingering = PhaseCancelled, q.host.Now(), true
		return q.changed(q.linger(id), q.host.Toast(toast.LevelInfo, "cancelled the "+KindWord(t.Kind)+" of "+t.Name))
	}
	t.Cancelling = true
	if cancel, ok := q.cancels[id]; ok {
		cancel()
	}
	return q.changed()
}

// CancelAll cancels every transfer: quitting.
func (q *Queue) CancelAll() {
	for _, t := range q.list {
		if !t.Phase.Finished() {
			t.Cancelling = true
		}
	}
	for _, cancel := range q.cancels {
		cancel()
	}
}

// ClearFinished forgets the finished transfers.
func (q *Queue) ClearFinished() tea.Cmd {
	kept := q.list[:0]
	for _, t := range q.list {
		if t.Phase.Finished() {
			delete(q.specs, t.ID)
			continue
		}
		kept = append(kept, t)
	}
	q.list = kept
	return q.changed()
}

// Close refuses new transfer goroutines and waits at most d for the
// running ones to remove their part files.
func (q *Queue) Close(d time.Duration) { q.running.CloseWithin(d) }

// startQueued starts queued transfers, oldest first, while fewer than
// transfer.max_parallel run.
func (q *Queue) startQueued() tea.Cmd {
	var cmds []tea.Cmd
	for _, t := range q.list {
		if q.Running() >= q.set.MaxParallel {
			break
		}
		if t.Phase == PhaseQueued {
			cmds = append(cmds, q.start(t))
		}
	}
	return tea.Batch(cmds...)
}

// start records the running transfer (its cancel, the replace's pending
// mark) and returns the Cmd that moves the bytes.
func (q *Queue) start(t *Transfer) tea.Cmd {
	s := q.specs[t.ID]
	t.Started = q.host.Now()
	t.Phase = PhaseHashing
	if s.Kind == Download {
		t.Phase = PhaseDownloading
	}
	if s.Kind == Replace {
		q.host.SetPending(s.ArtID, "replacing", true)
	}
	ctx, cancel := context.WithCancel(q.ctx)
	q.cancels[t.ID] = cancel
	b, hub, track, o := s.backend, q.hub, q.running, q.set.Options
	return func() tea.Msg {
		if !track.enter() {
			return DoneMsg{ID: s.ID, Err: context.Canceled} // the program is ending
		}
		defer track.leave()
		return Run(ctx, b, hub, s, o)
	}
}

// onDone settles a transfer: its row, its toast, its place in the tray
// for 5 s more, and the next queued one.
func (q *Queue) onDone(d DoneMsg) tea.Cmd {
	t := q.Get(d.ID)
	if t == nil {
		return nil
	}
	s := q.specs[d.ID]
	if cancel, ok := q.cancels[d.ID]; ok {
		cancel()
		delete(q.cancels, d.ID)
	}
	if s.Kind == Replace {
		q.host.SetPending(s.ArtID, "replacing", false)
	}
	t.Ended, t.Lingering = q.host.Now(), true
	var cmd tea.Cmd
	switch {
	case d.Err == nil:
		cmd = q.succeeded(t, s, d.Art)
	case t.Cancelling || errors.Is(d.Err, context.Canceled):
		t.Phase = PhaseCancelled
		cmd = q.host.Toast(toast.LevelInfo, "cancelled the "+KindWord(t.Kind)+" of "+t.Name)
	default:
		t.Phase, t.Err = PhaseFailed, Sentence(t, d.Err)
		cmd = q.host.ErrorToast(t.Err, d.Err)
	}
	return q.changed(cmd, q.linger(d.ID), q.startQueued())
}

func (q *Queue) succeeded(t *Transfer, s Spec, a *cairn.Artifact) tea.Cmd {
	t.Phase = PhaseDone
	var put tea.Cmd
	if a != nil {
		t.ArtifactID, t.Name, t.Total, t.Done = a.ID, a.Name, a.Size, a.Size
		if s.epoch == q.epoch {
			put = q.host.PutArtifact(a)
		}
	}
	return tea.Batch(put, q.host.Toast(toast.LevelOK, doneText(t, s)))
}

func (q *Queue) onLingerDone(id int) tea.Cmd {
	if t := q.Get(id); t != nil && t.Lingering {
		t.Lingering = false
		return q.changed()
	}
	return nil
}

func (q *Queue) linger(id int) tea.Cmd {
	return q.host.After(lingerFor, func() tea.Msg { return LingerMsg{id: id} })
}

// changed tells the host the transfers moved and batches cmds.
func (q *Queue) changed(cmds ...tea.Cmd) tea.Cmd {
	q.tray.clamp(len(q.Tray()))
	q.host.Changed()
	return tea.Batch(cmds...)
}
