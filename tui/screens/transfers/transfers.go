// Package transfers is the screen of every upload, replace and download
// since start, newest first, with a detail pane: x cancels, c clears the
// finished ones, enter goes to the artifact, y copies the local path.
package transfers

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// ActionMsg asks the root to act on a transfer.
type ActionMsg struct {
	ID       keys.ID // tr_cancel, tr_clear, open (go to the artifact)
	Transfer int
}

// row is one transfer with its filter text and the name and local path its
// cells show, sanitised once when the row is built (each TransfersMsg
// rebuilds the rows; a transfer's name and path never change).
type row struct {
	t          *transfer.Transfer
	key        string
	name, path string
}

func newRow(t *transfer.Transfer) *row {
	return &row{t: t, key: strings.ToLower(t.Name + "\n" + t.Path), name: termkit.Sanitize(t.Name), path: termkit.Sanitize(t.Path)}
}

func (r *row) RowID() string     { return fmt.Sprint(r.t.ID) }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.RowID() }

// Screen lists the transfers.
type Screen struct {
	c    *deps.Deps
	list *pane.List[*row]
}

// New returns the screen, filled from the model's transfers.
func New(c *deps.Deps) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c))
	tbl.Stamp = func(r *row) string { return stamp(c, r.t) }
	tbl.SetSort(func(r *row) table.Key { return table.Key{N: -int64(r.t.ID)} }, false)
	s := &Screen{c: c, list: pane.New(c, tbl)}
	s.reload()
	return s
}

// stamp is what a row's cells read: everything that moves.
func stamp(c *deps.Deps, t *transfer.Transfer) string {
	return fmt.Sprintf("%d|%d|%d|%.0f|%t|%s|%d|%s|%d/%d", t.Phase, t.Done, t.Total, t.Rate, t.Cancelling, t.Name,
		c.Data.Frame(), transfer.Short(t.Duration(c.Data.Now())), t.Parts, t.PartsTotal)
}

func (s *Screen) reload() { s.list.Table.SetRows(pane.Rows(s.c.Data.Transfers(), newRow)) }

// Selected is the transfer under the cursor.
func (s *Screen) Selected() (*transfer.Transfer, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil, false
	}
	return r.t, true
}

// Update handles keys and transfer changes.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s, s.key(msg)
	case screen.TransfersMsg:
		s.reload()
	case screen.ClickMsg:
		s.list.Click(msg.X, msg.Y, 0)
	case screen.BackMsg:
		return s, s.list.Back()
	}
	return s, nil
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeTransfers)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, _ := s.list.Nav(id); handled {
		return nil
	}
	t, _ := s.Selected()
	switch id {
	case keys.BackNav:
		return screen.Send(screen.NavMsg{Kind: screen.NavPop})
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "path", Value: t.Path})
	case keys.TrCancel, keys.Open:
		return screen.Send(ActionMsg{ID: id, Transfer: t.ID})
	case keys.TrClear:
		return screen.Send(ActionMsg{ID: id})
	}
	return nil
}

// Keys is the navigation and transfer bindings with their state.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "transfers", map[keys.ID]pane.Help{
		keys.Open:     {Short: "artifact", Long: "go to the artifact"},
		keys.CopyName: {Short: "copy path", Long: "copy the local path"},
	}, keys.ScopeNav, keys.ScopeTransfers)
	for i := range ctx.Bindings {
		switch b := &ctx.Bindings[i]; b.ID {
		case keys.CopyID, keys.SortNext, keys.SortReverse:
			b.Enabled, b.Hidden, b.Reason = false, true, "not on this screen"
		}
	}
	t, ok := s.Selected()
	switch {
	case !ok:
		for _, id := range []keys.ID{keys.Open, keys.CopyName, keys.TrCancel} {
			ctx.Disable(id, "no transfer selected")
		}
	case t.Phase.Finished():
		ctx.Disable(keys.TrCancel, "the transfer is "+t.Phase.String())
	}
	if ok && t.ArtifactID == "" {
		ctx.Disable(keys.Open, "the artifact is not registered yet")
	}
	finished := false
	for _, x := range s.c.Data.Transfers() {
		finished = finished || x.Phase.Finished()
	}
	if !finished {
		ctx.Disable(keys.TrClear, "no finished transfers")
	}
	s.list.Restrict(ctx)
	return ctx
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is nothing to list: transfers are the model's own.
func (s *Screen) Scopes() []store.Scope { return nil }

// Crumbs is "transfers (3 · 1 running)" plus the filter.
func (s *Screen) Crumbs() []string {
	running := 0
	for _, t := range s.c.Data.Transfers() {
		if !t.Phase.Finished() {
			running++
		}
	}
	crumb := "transfers (" + termkit.Count(int64(s.list.Table.Total()))
	if running > 0 {
		crumb += " " + s.c.Theme.Glyphs.Dot + " " + termkit.Count(int64(running)) + " active"
	}
	return s.list.Crumbs("", crumb+")")
}
