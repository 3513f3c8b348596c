package workspaces

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

// A workspace whose volume cannot take containers is marked in its row
// (the warning glyph on READY) and its detail pane says why, in the
// server's words made safe; without an issue neither shows.
func TestVolumeIssueShown(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	stuck := &cairn.Workspace{ID: "w1", Name: "stuck", VolumeName: "v1", VolumeState: cairn.VolumeReady,
		VolumeIssue: &cairn.VolumeIssue{Reason: cairn.ReasonVolumeNodeUnavailable,
			Detail: "the workspace's volume is on node n1" + h + ", which is cordoned"},
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	fine := &cairn.Workspace{ID: "w2", Name: "fine", VolumeName: "v2", VolumeState: cairn.VolumeReady,
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	d.SeedWorkspaces(stuck, fine)
	s := New(c)
	s.SetSize(200, 30)

	rows := strings.Split(s.list.Table.View(true), "\n")
	require.Contains(t, rowOf(t, rows, "stuck"), c.Theme.Glyphs.Missing+" READY")
	require.Contains(t, rowOf(t, rows, "fine"), c.Theme.Glyphs.Ready+" READY")
	detail := strings.Join(Detail(c, stuck, 80), "\n")
	screentest.RequireShown(t, detail, "Volume issue", "node n1"+shown+", which is cordoned")
	require.NotContains(t, strings.Join(Detail(c, fine, 80), "\n"), "Volume issue")
}

func rowOf(t *testing.T, rows []string, name string) string {
	t.Helper()
	for _, r := range rows {
		if strings.Contains(r, " "+name+" ") {
			return r
		}
	}
	require.Failf(t, "no row", "no row names %s in %q", name, rows)
	return ""
}
