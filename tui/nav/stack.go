// Package nav is cairn-tui's screen stack: the workspaces at its root, then
// what the operator opened — a workspace's artifacts or files, a preview, the
// transfers. It sizes the screens, routes to the top one, broadcasts data and
// time to all of them and keeps the artifact sets on the stack from eviction.
package nav

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/artifacts"
	"github.com/cairn-dev/cairn/tui/screens/files"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/screens/snapshots"
	"github.com/cairn-dev/cairn/tui/screens/transfers"
	"github.com/cairn-dev/cairn/tui/screens/workspaces"
	"github.com/cairn-dev/cairn/tui/store"
)

// Stack is the screens, root first.
type Stack struct {
	c       *deps.Deps
	st      *store.Store
	screens []screen.Screen
	width   int
	height  int
}

// New returns the stack holding the workspaces screen.
func New(c *deps.Deps, st *store.Store) *Stack {
	return &Stack{c: c, st: st, screens: []screen.Screen{workspaces.New(c)}}
}

// Top is the active screen.
func (s *Stack) Top() screen.Screen { return s.screens[len(s.screens)-1] }

// Screens is the stack, root first.
func (s *Stack) Screens() []screen.Screen { return s.screens }

// Depth is how many screens are open.
func (s *Stack) Depth() int { return len(s.screens) }

// SetSize lays out every screen in a body of width × height.
func (s *Stack) SetSize(width, height int) {
	s.width, s.height = width, height
	for _, sc := range s.screens {
		sc.SetSize(width, height)
	}
}

// Push opens sc on top and returns what it starts with (a screen with an
// Init, such as the artifacts' first cursor rest).
func (s *Stack) Push(sc screen.Screen) tea.Cmd {
	sc.SetSize(s.width, s.height)
	s.screens = append(s.screens, sc)
	s.pin()
	if i, ok := sc.(interface{ Init() tea.Cmd }); ok {
		return i.Init()
	}
	return nil
}

// OpenArtifacts pushes the artifacts of workspace wsID.
func (s *Stack) OpenArtifacts(wsID string) tea.Cmd {
	s.st.Viewed(wsID)
	return s.Push(artifacts.New(s.c, wsID))
}

// Pop keeps the first n screens (at least the root) and returns what the
// screen on top again starts (a screen with a Revisit, such as the shells'
// refresh loop, which stops while covered).
func (s *Stack) Pop(n int) tea.Cmd {
	if n = max(1, n); n < len(s.screens) {
		s.screens = s.screens[:n]
		s.pin()
		if r, ok := s.Top().(interface{ Revisit() tea.Cmd }); ok {
			return r.Revisit()
		}
	}
	return nil
}

// pin protects the artifact sets of the screens on the stack from
// eviction: a workspace's artifacts, and its files pane's (the pickers).
func (s *Stack) pin() {
	var ids []string
	for _, sc := range s.screens {
		if a, ok := sc.(interface{ WorkspaceID() string }); ok {
			ids = append(ids, a.WorkspaceID())
		}
	}
	s.st.Pin(ids...)
}

// JumpArtifacts goes back to the artifacts on the stack; without any, it
// names the workspace under the root's cursor, whose artifacts the caller
// opens ("" for none).
func (s *Stack) JumpArtifacts() (open string) {
	for i, sc := range s.screens {
		if _, ok := sc.(*artifacts.Screen); ok {
			s.Pop(i + 1) // an artifacts screen has nothing to revisit
			return ""
		}
	}
	if w, ok := s.Selected(); ok {
		return w
	}
	return ""
}

// Selected is the workspace under the root screen's cursor.
func (s *Stack) Selected() (string, bool) {
	w, ok := s.screens[0].(*workspaces.Screen).Selected()
	if !ok {
		return "", false
	}
	return w.ID, true
}

// OpenTransfers goes back to the transfers screen on the stack, else
// pushes it.
func (s *Stack) OpenTransfers() {
	for i, sc := range s.screens {
		if _, ok := sc.(*transfers.Screen); ok {
			s.Pop(i + 1) // nor has the transfers screen
			return
		}
	}
	s.Push(transfers.New(s.c))
}

// Select puts the top artifacts screen's cursor on an artifact.
func (s *Stack) Select(artifactID string) {
	if a, ok := s.Top().(*artifacts.Screen); ok {
		a.Select(artifactID)
	}
}

// ToTop forwards msg to the active screen.
func (s *Stack) ToTop(msg tea.Msg) tea.Cmd {
	next, cmd := s.Top().Update(msg)
	s.screens[len(s.screens)-1] = next
	return cmd
}

// Broadcast gives msg to every screen (data, time, transfers moved).
func (s *Stack) Broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(s.screens))
	for i, sc := range s.screens {
		next, cmd := sc.Update(msg)
		s.screens[i] = next
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// Preview gives a preview's bytes to the preview that asked; any other
// answer (it was closed, or another opened) is dropped.
func (s *Stack) Preview(msg preview.Msg) {
	for i, sc := range s.screens {
		if p, ok := sc.(*preview.Screen); ok && p.Matches(msg) {
			s.screens[i], _ = p.Update(msg)
		}
	}
}

// Files gives a page of a directory to the files pane that asked; an
// answer for a pane no longer open is dropped.
func (s *Stack) Files(msg files.PageMsg) tea.Cmd {
	for i, sc := range s.screens {
		if f, ok := sc.(*files.Screen); ok && f.ID() == msg.Screen {
			next, cmd := f.Update(msg)
			s.screens[i] = next
			return cmd
		}
	}
	return nil
}

// Snapshots gives a snapshots list to the screen that asked, wherever it
// is on the stack: a screen lists again only once its answer came. An
// answer for a screen no longer open is dropped.
func (s *Stack) Snapshots(msg snapshots.ListedMsg) tea.Cmd {
	for i, sc := range s.screens {
		if sn, ok := sc.(*snapshots.Screen); ok && sn.ID() == msg.Screen {
			next, cmd := sn.Update(msg)
			s.screens[i] = next
			return cmd
		}
	}
	return nil
}

// Scopes are the scopes of every screen on the stack: what resync and
// polling re-list.
func (s *Stack) Scopes() []store.Scope {
	var out []store.Scope
	for _, sc := range s.screens {
		out = append(out, sc.Scopes()...)
	}
	return out
}

// Crumbs is the breadcrumb: "cairn ▸ ws-alpha ▸ artifacts (…)", the root
// list's count only while it is on top.
func (s *Stack) Crumbs() []string {
	out := []string{"cairn"}
	for i, sc := range s.screens {
		if i == 0 && len(s.screens) > 1 {
			continue
		}
		out = append(out, sc.Crumbs()...)
	}
	return out
}
