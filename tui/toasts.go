package tui

import (
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/feed"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// toast shows a message; its expiry timer names it by ID.
func (m *Model) toast(level common.Level, text string) tea.Cmd {
	return m.pushToast(level, text, "")
}

func (m *Model) pushToast(level common.Level, text, requestID string) tea.Cmd {
	_, cmd := m.pushToastID(level, text, requestID)
	return cmd
}

func (m *Model) pushToastID(level common.Level, text, requestID string) (int, tea.Cmd) {
	t := m.toasts.Push(level, text, m.sh.Now(), requestID)
	life := toast.Lifetime(level)
	id := t.ID
	if life == 0 {
		return id, nil
	}
	return id, m.c.After(life, func() tea.Msg { return toastExpireMsg{id: id} })
}

// toastErr shows an error as its one sentence; the request ID and what
// the server said go to the log with it (TUI.md §3.3).
func (m *Model) toastErr(err error, s common.Subject) tea.Cmd {
	return m.errorToast(common.Sentence(err, s), err)
}

// errorToast shows sentence as an error; the log keeps err's request ID,
// message and detail.
func (m *Model) errorToast(sentence string, err error) tea.Cmd {
	id, cmd := m.pushToastID(common.LevelError, sentence, cairn.ErrorRequestID(err))
	if e, ok := errors.AsType[*cairn.Error](err); ok {
		m.toasts.Attach(id, serverSaid(e))
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

// alert raises the MISSING_OBJECT warnings of §2.6: up to three one by
// one, more (or any found by a resync) as one summary; each goes to the log.
func (m *Model) alert(ch store.Changes, o feed.Origin) tea.Cmd {
	lines, workspaces := m.alertLines(ch)
	switch {
	case len(lines) == 0:
		return nil
	case len(lines) <= 3 && o != feed.OriginResync:
		cmds := make([]tea.Cmd, len(lines))
		for i, l := range lines {
			cmds[i] = m.toast(common.LevelWarn, l.text)
		}
		return tea.Batch(cmds...)
	}
	for _, l := range lines {
		m.toasts.Note(common.LevelWarn, l.text, m.sh.Now())
	}
	return m.toast(common.LevelWarn, fmt.Sprintf("%d %s MISSING_OBJECT in %d %s — ! for details",
		countArtifacts(lines), termkit.Plural(countArtifacts(lines), "artifact became", "artifacts became"),
		workspaces, termkit.Plural(workspaces, "workspace", "workspaces")))
}

type alertLine struct {
	text string
	n    int64
}

func (m *Model) alertLines(ch store.Changes) ([]alertLine, int) {
	var lines []alertLine
	seen := make(map[string]bool)
	for _, t := range ch.Missing {
		seen[t.WorkspaceID] = true
		text := fmt.Sprintf("%s in %s is MISSING_OBJECT", t.Name, m.wsName(t.WorkspaceID))
		if !m.c.Config.ReadOnly {
			text += " — U replaces its content"
		}
		lines = append(lines, alertLine{text: text, n: 1})
	}
	for _, r := range ch.Rises {
		seen[r.WorkspaceID] = true
		lines = append(lines, alertLine{text: fmt.Sprintf("%d %s in %s became MISSING_OBJECT",
			r.By, termkit.Plural(r.By, "artifact", "artifacts"), m.wsName(r.WorkspaceID)), n: r.By})
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

func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (m *Model) wsName(id string) string {
	if w, ok := m.sh.st.Workspace(id); ok {
		return w.Name
	}
	return id
}

// copy writes the value to the clipboard in a Cmd.
func (m *Model) copy(c common.CopyMsg) tea.Cmd {
	clip, ctx := m.clip, m.ctx
	return func() tea.Msg {
		return copyDoneMsg{label: c.Label, value: c.Value, err: clip.Copy(ctx, c.Value)}
	}
}

func (m *Model) onCopied(c copyDoneMsg) tea.Cmd {
	if c.err != nil {
		return m.toast(common.LevelError, "copy failed: "+c.err.Error())
	}
	return m.toast(common.LevelOK, "copied "+c.label+" "+c.value)
}
