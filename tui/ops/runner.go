package ops

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Task is one line of work the status line shows while nothing newer
// does: an op, a mount check, a shell dial.
type Task struct {
	ID    int
	Label string
}

// Runner starts operations and keeps what they show while they run: the
// tasks, oldest first, and the pending word of each busy row.
type Runner struct {
	ctx     context.Context
	backend Backend
	tasks   []Task
	pending map[string]string
}

// NewRunner returns a runner whose operations live within ctx.
func NewRunner(ctx context.Context, b Backend) *Runner {
	return &Runner{ctx: ctx, backend: b, pending: make(map[string]string)}
}

// Run records the op's task and pending mark and returns its Cmd.
func (r *Runner) Run(o Op) tea.Cmd {
	r.AddTask(o.ID, o.Label())
	if w := o.PendingWord(); w != "" {
		r.pending[o.Target()] = w
	}
	b, ctx := r.backend, r.ctx
	return func() tea.Msg { return Perform(ctx, b, o) }
}

// Settle removes an op's task and its pending mark.
func (r *Runner) Settle(o Op) {
	r.EndTask(o.ID)
	r.SetPending(o.Target(), o.PendingWord(), false)
}

// AddTask shows a task until EndTask.
func (r *Runner) AddTask(id int, label string) { r.tasks = append(r.tasks, Task{ID: id, Label: label}) }

// EndTask removes a task; unknown IDs are ignored.
func (r *Runner) EndTask(id int) {
	for i, t := range r.tasks {
		if t.ID == id {
			r.tasks = append(r.tasks[:i], r.tasks[i+1:]...)
			return
		}
	}
}

// Tasks is what runs, oldest first.
func (r *Runner) Tasks() []Task { return r.tasks }

// Pending is the word of an operation in flight on id, or "".
func (r *Runner) Pending(id string) string { return r.pending[id] }

// SetPending marks id busy with word; off clears the mark if it is still
// word's.
func (r *Runner) SetPending(id, word string, on bool) {
	switch {
	case on:
		r.pending[id] = word
	case word != "" && r.pending[id] == word:
		delete(r.pending, id)
	}
}

// Busy reports a task or a pending row: the spinner turns.
func (r *Runner) Busy() bool { return len(r.tasks) > 0 || len(r.pending) > 0 }

// SettleFromEvents ends the pending marks that the changed rows show
// finished: a volume READY after provisioning, NONE after a teardown.
func (r *Runner) SettleFromEvents(st *store.Store, ch store.Changes) {
	for _, ref := range ch.Updated {
		w, ok := st.Workspace(ref.ID)
		if ref.Kind != store.KindWorkspace || !ok {
			continue
		}
		switch r.pending[ref.ID] {
		case "provisioning":
			if w.VolumeState == cairn.VolumeReady {
				delete(r.pending, ref.ID)
			}
		case "tearing down":
			if w.VolumeState == cairn.VolumeNone {
				delete(r.pending, ref.ID)
			}
		}
	}
}

// StatusLine is the spinner, the oldest task and how many more run; ""
// when none does.
func (r *Runner) StatusLine(th *theme.Theme, frame int) string {
	if len(r.tasks) == 0 {
		return ""
	}
	line := th.Glyphs.Frame(frame) + " " + r.tasks[0].Label
	if n := len(r.tasks) - 1; n > 0 {
		line += fmt.Sprintf(" +%d", n)
	}
	return th.Dim.Render(line)
}
