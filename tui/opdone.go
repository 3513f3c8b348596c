package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/feed"

	"github.com/cairn-dev/cairn/tui/dialog"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

func (m *Model) wsOp(kind ops.Kind, wsID string) ops.Op {
	return ops.Op{ID: m.id(), Kind: kind, WSID: wsID, WSName: m.wsName(wsID)}
}

func (m *Model) artOp(kind ops.Kind, artID string) ops.Op {
	o := ops.Op{ID: m.id(), Kind: kind, ArtID: artID}
	if a, ok := m.sh.st.Artifact(artID); ok {
		o.ArtName, o.WSID, o.WSName = a.Name, a.WorkspaceID, m.wsName(a.WorkspaceID)
	}
	return o
}

// submitForm turns a form's values into its op; the form stays open and
// busy until the reply.
func (m *Model) submitForm(f *form.Model, in intent, res common.Result) tea.Cmd {
	o, changed := m.formOp(in, res)
	if !changed {
		m.closeModal()
		return m.toast(common.LevelInfo, "nothing changed")
	}
	m.intent.opID = o.ID
	f.Busy(m.sh.Frame())
	return m.ops.Run(o)
}

func (m *Model) formOp(in intent, res common.Result) (ops.Op, bool) {
	name, desc := res.Values["name"], dialog.MultiLine(m.c.Theme, res.Values["description"])
	switch in.kind {
	case intentCreate:
		o := ops.Op{ID: m.id(), Kind: ops.Create, Name: name, Provision: res.Checks["provision"]}
		if desc != "" {
			o.Desc = &desc
		}
		return o, true
	case intentEditWorkspace:
		w, _ := m.sh.st.Workspace(in.wsID)
		return ops.EditFields(m.wsOp(ops.EditWorkspace, in.wsID), w.Name, w.Description, name, desc)
	}
	a, _ := m.sh.st.Artifact(in.artID)
	return ops.EditFields(m.artOp(ops.EditArtifact, in.artID), a.Name, a.Description, name, desc)
}

// onOpDone settles an op: its object obeys the store's order, a form
// shows field errors under the field, anything else is a toast.
func (m *Model) onOpDone(d ops.DoneMsg) tea.Cmd {
	m.ops.Settle(d.Op)
	if d.Err != nil {
		return m.opFailed(d.Op, d.Err, 0)
	}
	m.closeFormOf(d.Op)
	var ch store.Changes
	switch {
	case d.WS != nil:
		ch = m.sh.st.PutWorkspace(d.WS, m.sh.Now())
		if d.Op.Kind == ops.Provision || d.Op.Kind == ops.Teardown {
			m.sh.st.SetMounts(d.WS.ID, d.Mounts)
		}
	case d.Art != nil:
		ch = m.sh.st.PutArtifact(d.Art, m.sh.Now())
	case d.Op.Kind == ops.DeleteWorkspace:
		ch = m.sh.st.DropWorkspace(d.Op.WSID)
	case d.Op.Kind == ops.DeleteArtifact:
		ch = m.sh.st.DropArtifact(d.Op.ArtID)
	}
	return tea.Batch(m.changed(ch, feed.OriginResync), m.toast(common.LevelOK, ops.DoneText(d)), m.next(d))
}

// next starts what follows an op: provisioning after a create, the delete
// after a teardown.
func (m *Model) next(d ops.DoneMsg) tea.Cmd {
	switch {
	case d.Op.Kind == ops.Create && d.Op.Provision && d.WS != nil:
		return m.ops.Run(m.wsOp(ops.Provision, d.WS.ID))
	case d.Op.Kind == ops.Teardown && d.Op.ThenDelete:
		return m.ops.Run(m.wsOp(ops.DeleteWorkspace, d.Op.WSID))
	}
	return nil
}

// opFailed reports an op's error: under the form field it belongs to, or
// as a toast (naming the step of a two-step delete); a 404 removes the row.
func (m *Model) opFailed(o ops.Op, err error, mounts int) tea.Cmd {
	sentence := common.Sentence(err, o.ErrSubject(mounts))
	if f, ok := m.modal.(*form.Model); ok && m.intent.opID == o.ID {
		if field, isField := common.FieldError(err); isField {
			f.Fail(field, sentence)
			return nil
		}
		m.closeModal()
	}
	var cmd tea.Cmd
	switch cairn.ErrorReason(err) {
	case cairn.ReasonWorkspaceNotFound:
		cmd = m.changed(m.sh.st.DropWorkspace(o.WSID), feed.OriginResync)
	case cairn.ReasonArtifactNotFound:
		cmd = m.changed(m.sh.st.DropArtifact(o.ArtID), feed.OriginResync)
	}
	if o.ThenDelete {
		sentence = "tear down refused: " + sentence
	}
	return tea.Batch(cmd, m.errorToast(sentence, err))
}

// closeFormOf closes the busy form waiting for o.
func (m *Model) closeFormOf(o ops.Op) {
	if _, ok := m.modal.(*form.Model); ok && m.intent.opID == o.ID {
		m.closeModal()
	}
}
