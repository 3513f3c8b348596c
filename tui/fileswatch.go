package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/screens/files"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// How often a watched directory is listed again: a burst of changes (an
// unpack, a build) waits watchSettle and costs one listing, and a
// directory that never stops changing is listed at most once per
// watchEvery for each page it holds, so that a large one costs the server
// no more than a small one. The pane's pages add that at most one listing
// runs at once.
const (
	watchSettle = 250 * time.Millisecond
	watchEvery  = time.Second
)

// filesWatch is the root's side of the files subscription (live.FileWatch):
// which pane's directory it follows and the refresh that its changes
// schedule. One per model; attach starts it over for the new server.
type filesWatch struct {
	watch *live.FileWatch
	key   watchKey // what is watched; zero for nothing
	id    int      // the subscription's live.Target ID: older reports are stale
	due   bool     // a refresh is scheduled (filesStaleMsg)
	last  time.Time
	// unavailable: the server said it watches no volume
	// (watch_unavailable), so nothing is subscribed again on it.
	unavailable bool
	// hinted are the refusals already shown, each once per server.
	hinted map[string]bool
}

// watchKey names a watched directory: the pane showing it and where.
type watchKey struct {
	screen  int
	ws, dir string
}

// filesStaleMsg is a scheduled refresh of the watched directory.
type filesStaleMsg struct{ watch int }

// reset forgets the previous server's watch; its subscription ends with
// that server's connection context.
func (w *filesWatch) reset() {
	w.key, w.id, w.due, w.last, w.unavailable, w.hinted = watchKey{}, 0, false, time.Time{}, false, map[string]bool{}
}

// followFiles points the subscription at the directory of the files pane
// nearest the top of the stack, after every message: opening the pane,
// changing its directory, leaving it and switching context all end here.
// It returns the Cmd that moves the subscription.
func (m *Model) followFiles() tea.Cmd {
	key := m.watchKey()
	if key == m.fw.key {
		return nil
	}
	if old := m.filesPane(m.fw.key.screen); old != nil {
		old.SetLive(files.LiveOff)
	}
	m.fw.key, m.fw.id, m.fw.due = key, m.id(), false
	w, svc, ctx := m.fw.watch, m.backend, m.connCtx
	t := live.Target{ID: m.fw.id, WorkspaceID: key.ws, Dir: key.dir}
	return func() tea.Msg {
		w.Watch(ctx, svc, t)
		return nil
	}
}

// watchKey is the directory to watch: the one the files pane nearest the
// top shows, while the events stream is on, the server can watch and the
// workspace's volume is READY (a watch of anything else is refused).
func (m *Model) watchKey() watchKey {
	if m.c.Config.EventsMode != "ws" || m.fw.unavailable {
		return watchKey{}
	}
	screens := m.stack.Screens()
	for i := len(screens) - 1; i >= 0; i-- {
		pane, ok := screens[i].(*files.Screen)
		if !ok {
			continue
		}
		w, found := m.sh.st.Workspace(pane.WorkspaceID())
		if pane.Deleted() || !found || w.VolumeState != cairn.VolumeReady {
			return watchKey{}
		}
		return watchKey{screen: pane.ID(), ws: pane.WorkspaceID(), dir: pane.Dir()}
	}
	return watchKey{}
}

// filesPane is the files pane of that ID on the stack, nil when gone.
func (m *Model) filesPane(id int) *files.Screen {
	for _, sc := range m.stack.Screens() {
		if pane, ok := sc.(*files.Screen); ok && pane.ID() == id {
			return pane
		}
	}
	return nil
}

// onFiles applies what the current subscription reported: its state on
// the pane, a refusal's hint, and a refresh when the listing is stale.
func (m *Model) onFiles(f *live.Files) tea.Cmd {
	pane := m.filesPane(m.fw.key.screen)
	if f == nil || f.Watch != m.fw.id || pane == nil {
		return nil
	}
	var cmds []tea.Cmd
	switch f.State {
	case live.WatchDialing:
		// Nothing shows until hello: a server that refuses the watch
		// leaves no mark that came and went.
	case live.WatchLost:
		pane.SetLive(files.LiveWaiting)
	case live.WatchLive:
		pane.SetLive(files.LiveOn)
	case live.WatchRefused:
		pane.SetLive(files.LiveOff)
		cmds = append(cmds, m.watchRefused(f.Reason))
	}
	if f.Stale {
		cmds = append(cmds, m.refreshWatched(pane))
	}
	return tea.Batch(cmds...)
}

// watchRefused says once per server and reason that the pane is not
// live; r lists it as before. A server without a watcher is not asked
// again.
func (m *Model) watchRefused(reason string) tea.Cmd {
	if reason == string(cairn.ReasonWatchUnavailable) {
		m.fw.unavailable = true
	}
	if m.fw.hinted[reason] {
		return nil
	}
	m.fw.hinted[reason] = true
	// A proxy's status line stands in for a reason: text from the network.
	return m.notes.Show(toast.LevelInfo, "files: live updates unavailable: "+termkit.Sanitize(reason)+" — r lists again")
}

// refreshWatched schedules the refresh of pane, the watched directory,
// unless one is: watchSettle from now, and watchEvery per page after the
// previous one.
func (m *Model) refreshWatched(pane *files.Screen) tea.Cmd {
	if m.fw.due {
		return nil
	}
	m.fw.due = true
	pages := max(1, (pane.Loaded()+files.PageSize-1)/files.PageSize)
	wait := max(watchSettle, m.fw.last.Add(watchEvery*time.Duration(pages)).Sub(m.clock()))
	id := m.fw.id
	return m.c.After(wait, func() tea.Msg { return filesStaleMsg{watch: id} })
}

// onFilesStale lists the watched directory again, the cursor staying on
// its entry while that is still listed.
func (m *Model) onFilesStale(msg filesStaleMsg) tea.Cmd {
	pane := m.filesPane(m.fw.key.screen)
	if msg.watch != m.fw.id || pane == nil {
		return nil
	}
	m.fw.due, m.fw.last = false, m.clock()
	return pane.Refresh()
}
