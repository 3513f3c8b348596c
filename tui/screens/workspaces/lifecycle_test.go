package workspaces

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

// The EXPIRES column shows only while a workspace expires: the time left,
// "due" once it passed, the dash for one that does not expire. An
// archived volume is ARCHIVED in the volume column, the detail pane
// names its snapshot (made safe) and says the setup restores it, and v
// is offered as the restore.
func TestLifecycleShown(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	at := func(d time.Duration) *time.Time { t := screentest.Epoch.Add(d); return &t }
	ttl, idle := int64(86400), int64(0)
	snap := "snap-1" + h
	soon := &cairn.Workspace{ID: "w1", Name: "soon", VolumeName: "v1", VolumeState: cairn.VolumeReady, ExpiresAt: at(3*time.Hour + 5*time.Minute),
		TTLSecs: &ttl, ArchiveIdleAfterSecs: &idle, LastActiveAt: screentest.Epoch.Add(-21 * time.Hour),
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	due := &cairn.Workspace{ID: "w2", Name: "due", VolumeName: "v2", VolumeState: cairn.VolumeNone, ExpiresAt: at(-time.Minute),
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	archived := &cairn.Workspace{ID: "w3", Name: "archived", VolumeName: "v3", VolumeState: cairn.VolumeNone, ArchivedSnapshotID: &snap,
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	plain := &cairn.Workspace{ID: "w4", Name: "plain", VolumeName: "v4", VolumeState: cairn.VolumeNone,
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	d.SeedWorkspaces(plain)
	s := New(c)
	s.SetSize(200, 30)
	require.NotContains(t, s.list.Table.View(true), "EXPIRES", "no workspace expires: no column")

	d.SeedWorkspaces(plain, soon, due, archived)
	s = New(c)
	s.SetSize(200, 30)
	view := s.list.Table.View(true)
	rows := strings.Split(view, "\n")
	require.Contains(t, rows[0], "EXPIRES")
	require.Contains(t, rowOf(t, rows, "soon"), " in 3h ")
	require.Contains(t, rowOf(t, rows, "due"), " due ")
	require.Contains(t, rowOf(t, rows, "plain"), c.Theme.Glyphs.None+" NONE")
	require.Contains(t, rowOf(t, rows, "plain"), " "+c.Theme.Glyphs.Dash+" ")
	require.Contains(t, rowOf(t, rows, "archived"), c.Theme.Glyphs.Archived+" ARCHIVED")

	detail := strings.Join(Detail(c, soon, 100), "\n")
	screentest.RequireShown(t, detail, "Expires     2026-08-14 15:05 (in 3h)", "TTL         1d · a touch moves the expiry",
		"Idle bound  never archived", "Last active 2026-08-13 15:00 (21h)")
	require.NotContains(t, detail, "Archive")
	detail = strings.Join(Detail(c, archived, 100), "\n")
	screentest.RequireShown(t, detail, "Volume      "+c.Theme.Glyphs.Archived+" ARCHIVED",
		"Archived    setup (v) restores it", "Archive     snapshot snap-1"+shown)
	require.NotContains(t, detail, "Expires")

	s.list.Table.SetCursor(archived.ID)
	st, _ := s.Keys().Find(keys.WsProvision)
	require.True(t, st.Enabled)
	require.Equal(t, "restore volume", st.Short)
	st, _ = s.Keys().Find(keys.Files)
	require.Equal(t, "files need volume READY — v restores its archived volume", st.Reason)
	st, _ = s.Keys().Find(keys.WsTouch)
	require.True(t, st.Enabled)
}

// o cycles to the expiry order: the soonest first, those that do not
// expire last.
func TestSortByExpiry(t *testing.T) {
	c, d := screentest.New(t)
	at := func(d time.Duration) *time.Time { t := screentest.Epoch.Add(d); return &t }
	mk := func(id, name string, exp *time.Time) *cairn.Workspace {
		return &cairn.Workspace{ID: id, Name: name, VolumeState: cairn.VolumeNone, ExpiresAt: exp, CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	}
	d.SeedWorkspaces(mk("w1", "a-never", nil), mk("w2", "b-later", at(5*time.Hour)), mk("w3", "c-sooner", at(time.Hour)))
	s := New(c)
	s.SetSize(200, 30)
	for range 4 {
		s.action(keys.SortNext)
	}
	require.Equal(t, "expires", sortName(s.sortBy))
	var names []string
	for _, l := range strings.Split(s.list.Table.View(true), "\n")[1:] {
		if f := strings.Fields(strings.TrimLeft(l, "▸ ")); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	require.Equal(t, []string{"c-sooner", "b-later", "a-never"}, names)
}
