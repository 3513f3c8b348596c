// Package notice is cairn-tui's toasts as the program raises them: timed
// by level and expired by ID, errors as one sentence with what the server
// said kept for the log, the MISSING_OBJECT alerts, and the
// configuration's warnings.
package notice

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/help"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Board raises toasts and keeps them and their log.
type Board struct {
	c      *deps.Deps
	now    func() time.Time       // the model's time
	name   func(id string) string // a workspace's name, for alerts
	toasts toast.Model
}

// New returns an empty board; now is the model's clock and name names a
// workspace by ID.
func New(c *deps.Deps, now func() time.Time, name func(id string) string) *Board {
	return &Board{c: c, now: now, name: name}
}

// expireMsg ends a toast's life; an old timer never removes a newer one.
type expireMsg struct{ id int }

// Update handles the board's timers; ok is false for any other message.
func (b *Board) Update(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	if e, is := msg.(expireMsg); is {
		b.toasts.Expire(e.id)
		return nil, true
	}
	return nil, false
}

// Toasts is the active toasts and the log, for the status line, the
// messages log and esc.
func (b *Board) Toasts() *toast.Model { return &b.toasts }

// Show raises a toast of level; its expiry timer names it by ID.
func (b *Board) Show(level toast.Level, text string) tea.Cmd {
	_, cmd := b.push(level, text, "")
	return cmd
}

func (b *Board) push(level toast.Level, text, requestID string) (int, tea.Cmd) {
	t := b.toasts.Push(level, text, b.now(), requestID)
	id, life := t.ID, toast.Lifetime(level)
	if life == 0 {
		return id, nil
	}
	return id, b.c.After(life, func() tea.Msg { return expireMsg{id: id} })
}

// ErrorFor shows err as its one sentence about s.
func (b *Board) ErrorFor(err error, s errtext.Subject) tea.Cmd {
	return b.Error(errtext.Sentence(err, s), err)
}

// Error shows sentence as an error; the log keeps err's request ID and
// what the server said.
func (b *Board) Error(sentence string, err error) tea.Cmd {
	id, cmd := b.push(toast.LevelError, sentence, cairn.ErrorRequestID(err))
	if e, ok := errors.AsType[*cairn.Error](err); ok {
		b.toasts.Attach(id, serverSaid(e))
	}
	return cmd
}

// serverSaid is the server's message and detail, each once: "conflict:
// volume is mounted by shells 4f3c, 9a1b".
func serverSaid(e *cairn.Error) string {
	switch {
	case e.Message == "" || e.Message == e.Detail:
		return e.Detail
	case e.Detail == "":
		return e.Message
	}
	return e.Message + ": " + e.Detail
}

// Warnings shows the configuration's warnings as one toast; each goes to
// the log.
func (b *Board) Warnings(ws []string) {
	now := b.now()
	switch len(ws) {
	case 0:
		return
	case 1:
		b.toasts.Push(toast.LevelWarn, ws[0], now, "")
		return
	}
	for _, w := range ws {
		b.toasts.Note(toast.LevelWarn, w, now)
	}
	b.toasts.Push(toast.LevelWarn, fmt.Sprintf("%d configuration warnings — ! lists them", len(ws)), now, "")
}

// Alert raises the warnings for artifacts that turned MISSING_OBJECT: up
// to three one by one, more (or any a resync found, summarise) as one
// summary; each goes to the log.
func (b *Board) Alert(ch store.Changes, summarise bool) tea.Cmd {
	lines, workspaces := b.alertLines(ch)
	switch {
	case len(lines) == 0:
		return nil
	case len(lines) <= 3 && !summarise:
		cmds := make([]tea.Cmd, len(lines))
		for i, l := range lines {
			cmds[i] = b.Show(toast.LevelWarn, l.text)
		}
		return tea.Batch(cmds...)
	}
	for _, l := range lines {
		b.toasts.Note(toast.LevelWarn, l.text, b.now())
	}
	n := countArtifacts(lines)
	return b.Show(toast.LevelWarn, fmt.Sprintf("%d %s MISSING_OBJECT in %d %s — ! for details",
		n, termkit.Plural(n, "artifact became", "artifacts became"),
		workspaces, termkit.Plural(workspaces, "workspace", "workspaces")))
}

type alertLine struct {
	text string
	n    int64
}

func (b *Board) alertLines(ch store.Changes) ([]alertLine, int) {
	var lines []alertLine
	seen := make(map[string]bool)
	for _, t := range ch.Missing {
		seen[t.WorkspaceID] = true
		text := fmt.Sprintf("%s in %s is MISSING_OBJECT", t.Name, b.name(t.WorkspaceID))
		if !b.c.Config.ReadOnly {
			text += " — U replaces its content"
		}
		lines = append(lines, alertLine{text: text, n: 1})
	}
	for _, r := range ch.Rises {
		seen[r.WorkspaceID] = true
		lines = append(lines, alertLine{text: fmt.Sprintf("%d %s in %s became MISSING_OBJECT",
			r.By, termkit.Plural(r.By, "artifact", "artifacts"), b.name(r.WorkspaceID)), n: r.By})
	}
	return lines, len(seen)
}

func countArtifacts(lines []alertLine) int64 {
	var n int64
	for _, l := range lines {
		n += l.n
	}
	return n
}

// Log is the messages log as a modal: the last toasts, newest first, with
// time, request ID and what the server said.
func (b *Board) Log(th *theme.Theme) screen.Modal {
	log := b.toasts.Log()
	lines := make([]string, 0, len(log))
	for i := len(log) - 1; i >= 0; i-- {
		t := log[i]
		line := t.At.Local().Format("15:04:05") + " " + word(th, t.Level) + " " + t.Text
		if t.RequestID != "" && !strings.Contains(t.Text, t.RequestID) {
			line += fmt.Sprintf("  (request ID %s)", t.RequestID)
		}
		lines = append(lines, line)
		if t.Detail != "" && !strings.Contains(t.Text, t.Detail) {
			lines = append(lines, "         "+th.Dim.Render("server: "+termkit.Sanitize(t.Detail)))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "no messages yet")
	}
	return help.NewLog(th, "Messages", lines)
}

func word(th *theme.Theme, l toast.Level) string {
	g := th.Glyphs
	switch l {
	case toast.LevelOK:
		return g.OK
	case toast.LevelInfo:
		return g.Info
	case toast.LevelWarn:
		return g.Warn
	}
	return g.Error
}
