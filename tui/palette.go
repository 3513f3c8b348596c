package tui

import (
	"path"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screens/audit"
	"github.com/cairn-dev/cairn/tui/screens/files"
	"github.com/cairn-dev/cairn/tui/screens/shells"
	"github.com/cairn-dev/cairn/tui/widgets/palette"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// The command palette (`:`, k9s's prompt): every command is also a key,
// and `?` lists both. Its names come from the store: the workspaces, the
// cached artifacts as WS/NAME, the config file's contexts.

// openPalette opens the palette over the body, its history kept across
// openings, with line typed in (C opens it at "ctx ", its candidates
// shown).
func (m *Model) openPalette(line string) {
	p := palette.New(m.c.Theme, m.history, m.paletteSource)
	for _, r := range line {
		p.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	m.openModal(p, ownedByPalette)
}

// paletteSource gives a command's argument candidates.
func (m *Model) paletteSource(command string, arg int) []palette.Candidate {
	switch {
	case command == "art" && arg == 0:
		return m.artifactCandidates()
	case command == "ctx" && arg == 0:
		out := make([]palette.Candidate, 0, len(m.c.Config.Contexts))
		for _, name := range m.c.Config.Contexts {
			detail := "context"
			if name == m.c.Config.Context {
				detail = "context (current)"
			}
			out = append(out, palette.Candidate{Value: name, Detail: detail})
		}
		return out
	case arg == 0 && slices.Contains([]string{"ws", "files", "audit", "sweep"}, command):
		ws := m.sh.st.Workspaces()
		out := make([]palette.Candidate, len(ws))
		for i, w := range ws {
			out[i] = palette.Candidate{Value: w.Name, Detail: "workspace · " + string(w.VolumeState)}
		}
		return out
	}
	return nil
}

// artifactCandidates is every cached artifact as WS/NAME.
func (m *Model) artifactCandidates() []palette.Candidate {
	var out []palette.Candidate
	for _, w := range m.sh.st.Workspaces() {
		arts, ok := m.sh.st.Artifacts(w.ID)
		if !ok {
			continue
		}
		for _, a := range arts {
			out = append(out, palette.Candidate{Value: w.Name + "/" + a.Name, Detail: "artifact in " + w.Name})
		}
	}
	return out
}

// runCommand does what a palette line says.
func (m *Model) runCommand(c palette.Command, args []string) tea.Cmd {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch c.Name {
	case "ws":
		return m.withWorkspace(arg(0), func(w *cairn.Workspace) tea.Cmd {
			return tea.Batch(m.stack.Pop(1), m.openArtifacts(w.ID))
		})
	case "art":
		return m.openArtifactByPath(arg(0))
	case "files":
		return m.withWorkspace(arg(0), func(w *cairn.Workspace) tea.Cmd { return m.openFilesAt(w, arg(1)) })
	case "audit":
		if arg(0) == "" {
			return m.openAudit("")
		}
		return m.withWorkspace(arg(0), func(w *cairn.Workspace) tea.Cmd { return m.openAudit(w.ID) })
	case "shells":
		return m.openShells("")
	case "transfers":
		m.stack.OpenTransfers()
	case "ctx":
		return m.openContext(arg(0))
	case "sweep":
		if arg(0) == "" {
			return m.ops.Run(ops.Op{ID: m.id(), Kind: ops.Sweep, WSName: "every workspace"}) // a full pass
		}
		return m.withWorkspace(arg(0), func(w *cairn.Workspace) tea.Cmd {
			return m.ops.Run(ops.Op{ID: m.id(), Kind: ops.Sweep, WSID: w.ID, WSName: w.Name})
		})
	case "help":
		m.openModal(helpModal(m.c.Theme, m.stack.Top().Keys(), m.globalKeys()), ownedByRoot)
	case "q":
		return m.quit()
	}
	return nil
}

// withWorkspace runs do on the workspace named name, or says there is none.
func (m *Model) withWorkspace(name string, do func(w *cairn.Workspace) tea.Cmd) tea.Cmd {
	for _, w := range m.sh.st.Workspaces() {
		if w.Name == name {
			return do(w)
		}
	}
	return m.notes.Show(toast.LevelInfo, "no workspace named "+name)
}

// openArtifactByPath opens WS/NAME: the workspace's artifacts, the cursor
// on the artifact (once listed, if it was not cached).
func (m *Model) openArtifactByPath(p string) tea.Cmd {
	wsName, artName, ok := strings.Cut(p, "/")
	if !ok {
		return m.notes.Show(toast.LevelInfo, "name an artifact as WS/NAME")
	}
	return m.withWorkspace(wsName, func(w *cairn.Workspace) tea.Cmd {
		cmd := tea.Batch(m.stack.Pop(1), m.openArtifacts(w.ID))
		arts, _ := m.sh.st.Artifacts(w.ID)
		for _, a := range arts {
			if a.Name == artName {
				m.stack.Select(a.ID)
				return cmd
			}
		}
		return tea.Batch(cmd, m.notes.Show(toast.LevelInfo, "no artifact named "+artName+" in "+w.Name))
	})
}

// openFilesAt opens a workspace's files pane at a volume path: absolute,
// or relative to the mount root.
func (m *Model) openFilesAt(w *cairn.Workspace, p string) tea.Cmd {
	if w.VolumeState != cairn.VolumeReady {
		return m.notes.Show(toast.LevelInfo, "files need volume READY — v provisions it")
	}
	dir := cairn.MountPath
	if p != "" {
		if !strings.HasPrefix(p, "/") {
			p = cairn.MountPath + "/" + p
		}
		dir = path.Clean(p)
	}
	if err := cairn.ValidateListPath(dir); err != nil {
		return m.notes.Show(toast.LevelInfo, "not a volume path: "+p+" — paths are under "+cairn.MountPath)
	}
	m.sh.st.Viewed(w.ID)
	return tea.Batch(m.stack.Push(files.NewAt(m.c, w.ID, m.id(), dir)), m.feed.Open(w.ID, feed.OriginPrefetch))
}

// openShells pushes the live shells, of one workspace or every one.
func (m *Model) openShells(wsID string) tea.Cmd {
	return m.stack.Push(shells.New(m.c, wsID, m.id()))
}

// openAudit pushes the audit trail, of one workspace or every one.
func (m *Model) openAudit(wsID string) tea.Cmd {
	return m.stack.Push(audit.New(m.c, wsID, m.id()))
}
