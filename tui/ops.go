package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
)

// opKind is an operation the TUI runs against the server.
type opKind uint8

const (
	opCreate opKind = iota + 1
	opEditWorkspace
	opEditArtifact
	opProvision
	opTeardown
	opDeleteWorkspace
	opDeleteArtifact
	opVolSave   // a volume file as a new artifact
	opVolLoad   // an artifact into the volume
	opVolUpdate // an artifact's content from a volume file
)

// op is one operation, captured by value in its Cmd.
type op struct {
	id          int
	kind        opKind
	wsID, artID string
	wsName      string // the workspace's name when the op started
	artName     string
	name        string  // create/rename: the new name ("" keeps it)
	desc        *string // describe: the new description
	setDesc     bool
	provision   bool   // create: provision the volume next
	thenDelete  bool   // teardown: delete the workspace next
	path        string // volume transfers: the path inside the mount
	repair      bool   // update from volume: the artifact was MISSING_OBJECT
}

// pendingWord is what a row shows while the op runs ("" for none).
func (o op) pendingWord() string {
	switch o.kind {
	case opProvision:
		return "provisioning"
	case opTeardown:
		return "tearing down"
	case opDeleteWorkspace, opDeleteArtifact:
		return "deleting"
	case opVolLoad:
		return "loading"
	case opVolUpdate:
		return "updating"
	}
	return ""
}

func (o op) target() string {
	if o.artID != "" {
		return o.artID
	}
	return o.wsID
}

func (o op) label() string {
	switch o.kind {
	case opCreate:
		return "creating " + o.name + "…"
	case opEditWorkspace, opEditArtifact:
		return "saving " + o.subject() + "…"
	case opProvision:
		return "provisioning a volume for " + o.wsName + "…"
	case opTeardown:
		return "tearing down the volume of " + o.wsName + "…"
	case opVolSave:
		return "saving " + o.path + " as " + o.name + "…"
	case opVolLoad:
		return "loading " + o.artName + " into " + o.path + "…"
	case opVolUpdate:
		return "updating " + o.artName + " from " + o.path + "…"
	}
	return "deleting " + o.subject() + "…"
}

func (o op) subject() string {
	if o.artName != "" {
		return o.artName
	}
	return o.wsName
}

func (m *Model) wsOp(kind opKind, wsID string) op {
	return op{id: m.id(), kind: kind, wsID: wsID, wsName: m.wsName(wsID)}
}

func (m *Model) artOp(kind opKind, artID string) op {
	o := op{id: m.id(), kind: kind, artID: artID}
	if a, ok := m.sh.st.Artifact(artID); ok {
		o.artName, o.wsID, o.wsName = a.Name, a.WorkspaceID, m.wsName(a.WorkspaceID)
	}
	return o
}

// runOp records the op's task and pending mark and returns its Cmd.
func (m *Model) runOp(o op) tea.Cmd {
	m.tasks = append(m.tasks, task{id: o.id, label: o.label()})
	if w := o.pendingWord(); w != "" {
		m.sh.pending[o.target()] = w
	}
	b, ctx := m.backend, m.ctx
	return func() tea.Msg { return perform(ctx, b, o) }
}

// perform runs one op; it runs in a Cmd.
func perform(ctx context.Context, b Backend, o op) opDoneMsg {
	done := opDoneMsg{op: o}
	switch o.kind {
	case opCreate:
		done.ws, done.err = b.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: o.name, Description: o.desc})
	case opEditWorkspace:
		done.ws, done.err = editWorkspace(ctx, b, o)
	case opEditArtifact:
		done.art, done.err = editArtifact(ctx, b, o)
	case opProvision, opTeardown:
		done.err = volume(ctx, b, o)
		if done.err == nil {
			done.ws, done.mounts, done.err = inspected(ctx, b, o.wsID)
		}
	case opDeleteWorkspace:
		done.err = b.DeleteWorkspace(ctx, o.wsID)
	case opDeleteArtifact:
		done.err = b.DeleteArtifact(ctx, o.artID)
	case opVolSave:
		done.art, done.err = b.ArtifactFromVolume(ctx, o.wsID, cairn.VolumeArtifactCreate{SourcePath: o.path, Name: o.name, Description: o.desc})
	case opVolLoad:
		done.err = b.LoadIntoVolume(ctx, o.artID, o.path)
	case opVolUpdate:
		done.art, done.err = b.UpdateFromVolume(ctx, o.artID, o.path)
	}
	return done
}

func volume(ctx context.Context, b Backend, o op) error {
	if o.kind == opProvision {
		return b.SetupVolume(ctx, o.wsID)
	}
	return b.TeardownVolume(ctx, o.wsID)
}

func inspected(ctx context.Context, b Backend, id string) (*cairn.Workspace, int, error) {
	d, err := b.InspectWorkspace(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	return d.Workspace, d.MountCount, nil
}

// editWorkspace sends the name, then the description, each only if it
// changed.
func editWorkspace(ctx context.Context, b Backend, o op) (*cairn.Workspace, error) {
	var w *cairn.Workspace
	var err error
	if o.name != "" {
		if w, err = b.RenameWorkspace(ctx, o.wsID, o.name); err != nil {
			return nil, err
		}
	}
	if o.setDesc {
		return b.SetWorkspaceDescription(ctx, o.wsID, o.desc)
	}
	return w, nil
}

func editArtifact(ctx context.Context, b Backend, o op) (*cairn.Artifact, error) {
	var a *cairn.Artifact
	var err error
	if o.name != "" {
		if a, err = b.RenameArtifact(ctx, o.artID, o.name); err != nil {
			return nil, err
		}
	}
	if o.setDesc {
		return b.SetArtifactDescription(ctx, o.artID, o.desc)
	}
	return a, nil
}

// settle removes an op's task and pending mark.
func (m *Model) settle(o op) {
	for i, t := range m.tasks {
		if t.id == o.id {
			m.tasks = append(m.tasks[:i], m.tasks[i+1:]...)
			break
		}
	}
	if m.sh.pending[o.target()] == o.pendingWord() {
		delete(m.sh.pending, o.target())
	}
}

// subject names what an op's error sentence talks about.
func (o op) errSubject(mounts int) common.Subject {
	s := common.Subject{Workspace: o.wsName, Artifact: o.artName, Name: o.name, Scope: "write", Mounts: mounts}
	switch o.kind {
	case opCreate:
		s.Workspace = o.name
	case opVolSave:
		s.Artifact = o.name
	}
	return s
}
