package notice_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/notice"
)

var now = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// A warning says when as far as the workspace says it, "soon" otherwise,
// and offers the touch only where it helps.
func TestWarning(t *testing.T) {
	t.Parallel()
	ttl, idle := int64(86400), int64(7*86400)
	in59 := now.Add(59 * time.Minute)
	past := now.Add(-time.Minute)
	expiring := func(w *cairn.Workspace) cairn.Event {
		return cairn.Event{Type: cairn.EventWorkspaceExpiring, ID: "w", Workspace: w}
	}
	archiving := func(w *cairn.Workspace) cairn.Event {
		return cairn.Event{Type: cairn.EventWorkspaceArchiving, ID: "w", Workspace: w}
	}
	for name, c := range map[string]struct {
		ev    cairn.Event
		touch string
		want  string
	}{
		"TTL":            {expiring(&cairn.Workspace{ExpiresAt: &in59, TTLSecs: &ttl}), "T", "workspace ws-a expires in 59m — T postpones it by its ttl (1d)"},
		"Fixed":          {expiring(&cairn.Workspace{ExpiresAt: &in59}), "T", "workspace ws-a expires in 59m"},
		"Passed":         {expiring(&cairn.Workspace{ExpiresAt: &past}), "T", "workspace ws-a expires soon"},
		"ReadOnly":       {expiring(&cairn.Workspace{ExpiresAt: &in59, TTLSecs: &ttl}), "", "workspace ws-a expires in 59m"},
		"ArchiveKnown":   {archiving(&cairn.Workspace{ArchiveIdleAfterSecs: &idle, LastActiveAt: now.Add(-7*24*time.Hour + 40*time.Minute)}), "T", "workspace ws-a's idle volume will be archived in 40m unless touched — T touches it"},
		"ArchiveDefault": {archiving(&cairn.Workspace{LastActiveAt: now.Add(-time.Hour)}), "", "workspace ws-a's idle volume will be archived soon unless touched"},
	} {
		require.Equal(t, c.want, notice.Warning(c.ev, "ws-a", now, c.touch), name)
	}
}
