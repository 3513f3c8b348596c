package tui

import (
	"errors"
	"fmt"

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
	t := m.toasts.Push(level, text, m.sh.Now(), requestID)
	life := toast.Lifetime(level)
	if life == 0 {
		return nil
	}
	id := t.ID
	return m.c.After(life, func() tea.Msg { return toastExpireMsg{id: id} })
}

// toastErr shows an error as its one sentence; the request ID goes to the
// log with it.
func (m *Model) toastErr(err error, s common.Subject) tea.Cmd {
	return m.pushToast(common.LevelError, common.Sentence(err, s), requestID(err))
}

func requestID(err error) string {
	var e *cairn.Error
	if errors.As(err, &e) {
		return e.RequestID
	}
	return ""
}

// alert raises the MISSING_OBJECT warnings of §2.6: up to three one by
// one, more (or any found by a resync) as one summary; each goes to the log.
func (m *Model) alert(ch store.Changes, o origin) tea.Cmd {
	lines, workspaces := m.alertLines(ch)
	switch {
	case len(lines) == 0:
		return nil
	case len(lines) <= 3 && o != originResync:
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
		countArtifacts(lines), plural(countArtifacts(lines), "artifact became", "artifacts became"),
		workspaces, plural(workspaces, "workspace", "workspaces")))
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
			r.By, plural(r.By, "artifact", "artifacts"), m.wsName(r.WorkspaceID)), n: r.By})
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
