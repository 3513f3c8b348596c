package notice

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Lifecycle raises the maintainer's warnings (workspace.expiring,
// workspace.archiving; docs/api.md#expiry-and-archiving): up to three as
// toasts one by one, more as one summary toast; each goes to the log. A
// frame without its workspace says nothing and is skipped. touch names
// the key that touches a workspace ("" offers none: read-only).
func (b *Board) Lifecycle(evs []cairn.Event, touch string) tea.Cmd {
	var lines []string
	var expiring, archiving int
	now := b.now()
	for _, ev := range evs {
		if ev.Workspace == nil {
			continue
		}
		lines = append(lines, Warning(ev, termkit.Sanitize(b.warnedName(ev.Workspace)), now, touch))
		if ev.Type == cairn.EventWorkspaceArchiving {
			archiving++
		} else {
			expiring++
		}
	}
	if len(lines) <= 3 {
		cmds := make([]tea.Cmd, len(lines))
		for i, l := range lines {
			cmds[i] = b.Show(toast.LevelWarn, l)
		}
		return tea.Batch(cmds...)
	}
	for _, l := range lines {
		b.toasts.Note(toast.LevelWarn, l, now)
	}
	var parts []string
	if expiring > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", expiring, termkit.Plural(int64(expiring), "workspace expires soon", "workspaces expire soon")))
	}
	if archiving > 0 {
		parts = append(parts, fmt.Sprintf("%d idle %s", archiving, termkit.Plural(int64(archiving), "volume will be archived", "volumes will be archived")))
	}
	return b.Show(toast.LevelWarn, strings.Join(parts, ", ")+" unless touched — ! lists them")
}

// warnedName names a warned workspace as the store knows it now, else as
// the frame carries it.
func (b *Board) warnedName(w *cairn.Workspace) string {
	if name := b.name(w.ID); name != w.ID {
		return name
	}
	return w.Name
}

// Warning is the sentence of a workspace.expiring or workspace.archiving
// frame at now, the server's time, naming the workspace by name (already
// made safe for the terminal): "workspace ws-a expires in 59m — T
// postpones it by its ttl (1h)". The time is "soon" when the workspace
// does not say it, or it has passed: the maintainer acts no sooner than
// its warning's lead (lifecycle.warnBeforeSecs) after it. touch names the
// key that touches; the hint is left out without it, and for an expiry
// that a touch does not move (a fixed expires_at).
func Warning(ev cairn.Event, name string, now time.Time, touch string) string {
	w := ev.Workspace
	if ev.Type == cairn.EventWorkspaceArchiving {
		when := "soon"
		if at, ok := optional.ArchivesAt(w); ok && at.After(now) {
			when = optional.Until(now, at)
		}
		text := "workspace " + name + "'s idle volume will be archived " + when + " unless touched"
		if touch != "" {
			text += " — " + touch + " touches it"
		}
		return text
	}
	when := "soon"
	if w.ExpiresAt != nil && w.ExpiresAt.After(now) {
		when = optional.Until(now, *w.ExpiresAt)
	}
	text := "workspace " + name + " expires " + when
	if touch != "" && w.TTLSecs != nil {
		text += " — " + touch + " postpones it by its ttl (" + optional.Span(*w.TTLSecs) + ")"
	}
	return text
}
