package tui

import (
	"path"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/files"
)

// openFiles pushes the files pane of a workspace and lists its artifacts
// unless cached: the load and unpack pickers offer them.
func (m *Model) openFiles(wsID string) tea.Cmd {
	m.sh.st.Viewed(wsID)
	return tea.Batch(m.stack.Push(files.New(m.c, wsID, m.id())), m.feed.Open(wsID, feed.OriginPrefetch))
}

// listFiles runs a files pane's request for one page of a directory.
func (m *Model) listFiles(r files.ListMsg) tea.Cmd {
	b, ctx := m.backend, m.connCtx
	return func() tea.Msg {
		l, err := b.ListFiles(ctx, r.WorkspaceID, cairn.FileListParams{Path: r.Path, Limit: files.PageSize, After: r.After})
		return files.PageMsg{Screen: r.Screen, Req: r.Req, After: r.After, Listing: l, Err: err}
	}
}

// volumeChanged tells every screen that cairn may have written a
// workspace's volume ("" for any): its files panes list again, the one
// listing the directory of at ("" for none) with the cursor going there.
func (m *Model) volumeChanged(wsID, at string) tea.Cmd {
	return m.stack.Broadcast(screen.RefreshMsg{WorkspaceID: wsID, At: at})
}

// volumeEntry is the entry at p as the files pane of the workspace that
// lists p's directory has it, the one nearest the top first.
func (m *Model) volumeEntry(wsID, p string) (cairn.FileEntry, bool) {
	screens := m.stack.Screens()
	for i := len(screens) - 1; i >= 0; i-- {
		if f, ok := screens[i].(*files.Screen); ok && f.WorkspaceID() == wsID && f.Dir() == path.Dir(p) {
			return f.Listed(path.Base(p))
		}
	}
	return cairn.FileEntry{}, false
}
