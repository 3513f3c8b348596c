package files

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

func TestMain(m *testing.M) { screentest.Main(m) }

func TestModeString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, mode, want string }{
		{cairn.FileTypeFile, "0644", "-rw-r--r--"},
		{cairn.FileTypeDir, "0755", "drwxr-xr-x"},
		{cairn.FileTypeSymlink, "0777", "lrwxrwxrwx"},
		{cairn.FileTypeOther, "0600", "?rw-------"},
		{cairn.FileTypeFile, "4755", "-rwsr-xr-x"},
		{cairn.FileTypeFile, "2644", "-rw-r-Sr--"},
		{cairn.FileTypeDir, "1777", "drwxrwxrwt"},
		{cairn.FileTypeDir, "1770", "drwxrwx--T"},
		{cairn.FileTypeFile, "0000", "----------"},
		{cairn.FileTypeFile, "rw\x1b", "rw^["},
	} {
		require.Equal(t, tc.want, ModeString(tc.typ, tc.mode), tc.mode)
	}
}

// open is the pane of workspace w1 with the page entries as its first
// listing, at 200×30.
func open(t *testing.T, entries ...cairn.FileEntry) (*Screen, *deps.Deps) {
	t.Helper()
	c, d := screentest.New(t)
	d.SeedWorkspaces(&cairn.Workspace{ID: "w1", Name: "ws-alpha", VolumeState: cairn.VolumeReady,
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch})
	s := New(c, "w1", 7)
	s.SetSize(200, 30)
	msg := s.Init()()
	require.Equal(t, ListMsg{Screen: 7, Req: 0, WorkspaceID: "w1", Path: cairn.MountPath}, msg)
	s.Update(PageMsg{Screen: 7, Listing: &cairn.FileListing{Path: cairn.MountPath, Entries: entries}})
	return s, c
}

// Untrusted text reaches the terminal as visible escapes: a name and a
// link target in a row; the name, path, target and mode in the detail
// pane; the name in a key's reason.
func TestSanitisedText(t *testing.T) {
	h, shown := screentest.Hostile, screentest.HostileShown
	target := "t/" + h
	link := cairn.FileEntry{Name: h, Type: cairn.FileTypeSymlink, Mode: "07" + h, LinkTarget: &target, MTime: screentest.Epoch}
	s, c := open(t, link)
	st, _ := s.Keys().Find(keys.Open)
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: s.list.Table.View(true), Want: []string{" " + shown + " -> t/" + shown + " "}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, "/mnt/cairn/ws/"+h, link, 60), "\n"),
			Want: []string{" " + shown + "\n", "/mnt/cairn/ws/" + shown + "\n", "t/" + shown + " (never followed)", "07" + shown}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{shown}},
		screentest.Shown{Name: "KeyReason", Text: st.Reason, Want: []string{shown + ": the name holds a control character"}},
	)
}

func TestStaleAndOtherPanesPagesAreDropped(t *testing.T) {
	t.Parallel()
	s, _ := open(t, cairn.FileEntry{Name: "a", Type: cairn.FileTypeFile, Mode: "0644"})
	stale := &cairn.FileListing{Entries: []cairn.FileEntry{{Name: "stale", Type: cairn.FileTypeFile, Mode: "0644"}}}
	s.Update(PageMsg{Screen: 8, Listing: stale}) // another pane's
	cmd := s.Refresh()
	require.Equal(t, ListMsg{Screen: 7, Req: 1, WorkspaceID: "w1", Path: cairn.MountPath}, cmd())
	s.Update(PageMsg{Screen: 7, Req: 0, Listing: stale}) // the listing before the refresh
	require.Equal(t, 1, s.list.Table.Total())
	_, ok := s.Listed("a")
	require.True(t, ok, "only the current listing's pages count")
}

func TestEnterAndUp(t *testing.T) {
	t.Parallel()
	s, _ := open(t, cairn.FileEntry{Name: "out", Type: cairn.FileTypeDir, Mode: "0755"}, cairn.FileEntry{Name: "z.txt", Type: cairn.FileTypeFile, Mode: "0644"})
	cmd := modeltest.Press(s.Update, "enter")
	require.Equal(t, ListMsg{Screen: 7, Req: 1, WorkspaceID: "w1", Path: "/mnt/cairn/ws/out"}, cmd())
	require.Contains(t, strings.Join(s.Crumbs(), " "), "files /mnt/cairn/ws/out (listing…)")
	s.Update(PageMsg{Screen: 7, Req: 1, Listing: &cairn.FileListing{Entries: []cairn.FileEntry{{Name: "x", Type: cairn.FileTypeFile, Mode: "0644"}}}})
	cmd = modeltest.Press(s.Update, "backspace")
	require.Equal(t, ListMsg{Screen: 7, Req: 2, WorkspaceID: "w1", Path: cairn.MountPath}, cmd())
	s.Update(PageMsg{Screen: 7, Req: 2, Listing: &cairn.FileListing{Entries: []cairn.FileEntry{
		{Name: "a", Type: cairn.FileTypeFile, Mode: "0644"}, {Name: "out", Type: cairn.FileTypeDir, Mode: "0755"}}}})
	e, _ := s.Selected()
	require.Equal(t, "out", e.Name, "back on the directory left")
	cmd = modeltest.Press(s.Update, "left")
	require.Equal(t, screen.ToastMsg{Level: toast.LevelInfo, Text: "already at the volume root /mnt/cairn/ws — esc goes back"}, cmd())
	require.True(t, s.AtRoot())
}

// A write elsewhere lists again keeping the cursor; one that left
// something in the directory listed puts the cursor there.
func TestRefreshAfterAWrite(t *testing.T) {
	t.Parallel()
	s, _ := open(t, cairn.FileEntry{Name: "a", Type: cairn.FileTypeFile, Mode: "0644"}, cairn.FileEntry{Name: "b", Type: cairn.FileTypeFile, Mode: "0644"})
	page := func(req int, names ...string) {
		l := &cairn.FileListing{}
		for _, n := range names {
			l.Entries = append(l.Entries, cairn.FileEntry{Name: n, Type: cairn.FileTypeFile, Mode: "0644"})
		}
		s.Update(PageMsg{Screen: 7, Req: req, Listing: l})
	}
	_, cmd := s.Update(screen.RefreshMsg{WorkspaceID: "w1", At: "/mnt/cairn/ws/sub/new"})
	require.Equal(t, ListMsg{Screen: 7, Req: 1, WorkspaceID: "w1", Path: cairn.MountPath}, cmd())
	page(1, "a", "b", "new")
	e, _ := s.Selected()
	require.Equal(t, "a", e.Name, "written in another directory: the cursor stays")
	_, cmd = s.Update(screen.RefreshMsg{WorkspaceID: "w2", At: "/mnt/cairn/ws/new"})
	require.Nil(t, cmd, "another workspace's volume")
	s.Update(screen.RefreshMsg{WorkspaceID: "w1", At: "/mnt/cairn/ws/new"})
	page(2, "a", "b", "new")
	e, _ = s.Selected()
	require.Equal(t, "new", e.Name, "on what was written")
}
