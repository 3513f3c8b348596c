package ops

import (
	"context"
	"slices"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
)

// BulkLimit is how many requests of a bulk action run at once.
const BulkLimit = 8

// BulkDoneMsg settles a bulk action: every op's result, in the order the
// ops were given. A refusal is that row's Err; the rest proceeded.
type BulkDoneMsg struct {
	ID      int
	Label   string
	Results []DoneMsg
}

// Bulk records one task (label, which names the count: "deleting 50
// artifacts…") and every op's pending word, and returns the Cmd that runs
// the ops at most limit at once and answers with one BulkDoneMsg. The
// Cmd holds its own copy of ops.
func (r *Runner) Bulk(id int, label string, ops []Op, limit int) tea.Cmd {
	r.AddTask(id, label)
	for _, o := range ops {
		if w := o.PendingWord(); w != "" {
			r.pending[o.Target()] = w
		}
	}
	b, ctx, list := r.backend, r.ctx, slices.Clone(ops)
	return func() tea.Msg {
		return BulkDoneMsg{ID: id, Label: label, Results: PerformAll(ctx, b, list, limit)}
	}
}

// SettleBulk removes a bulk action's task and each row's pending mark.
func (r *Runner) SettleBulk(m BulkDoneMsg) {
	r.EndTask(m.ID)
	for _, d := range m.Results {
		r.SetPending(d.Op.Target(), d.Op.PendingWord(), false)
	}
}

// PerformAll runs every op through Perform, at most limit (at least one)
// at a time, and returns their results in the ops' order. Once ctx ends
// no op starts: each one left carries ctx's error.
func PerformAll(ctx context.Context, b Backend, ops []Op, limit int) []DoneMsg {
	out := make([]DoneMsg, len(ops))
	slots := make(chan struct{}, max(1, limit))
	var wg sync.WaitGroup
	for i, o := range ops {
		if !acquire(ctx, slots) {
			for j := i; j < len(ops); j++ {
				out[j] = DoneMsg{Op: ops[j], Err: ctx.Err()}
			}
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			out[i] = Perform(ctx, b, o)
		})
	}
	wg.Wait()
	return out
}

// acquire takes a slot, or reports false once ctx has ended (even with a
// slot free: select picks at random between ready cases).
func acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if ctx.Err() != nil {
		<-slots
		return false
	}
	return true
}
