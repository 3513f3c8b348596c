package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// submitForm turns a form's values into its op; the form stays open and
// busy until the reply.
func (m *Model) submitForm(f *form.Model, in intent, res common.Result) tea.Cmd {
	o, changed := m.formOp(in, res)
	if !changed {
		m.closeModal()
		return m.toast(common.LevelInfo, "nothing changed")
	}
	m.intent.opID = o.id
	f.Busy(m.sh.Frame())
	return m.runOp(o)
}

func (m *Model) formOp(in intent, res common.Result) (op, bool) {
	name, desc := res.Values["name"], m.multiLine(res.Values["description"])
	switch in.kind {
	case intentCreate:
		o := op{id: m.id(), kind: opCreate, name: name, provision: res.Checks["provision"]}
		if desc != "" {
			o.desc = &desc
		}
		return o, true
	case intentEditWorkspace:
		o := m.wsOp(opEditWorkspace, in.wsID)
		w, _ := m.sh.st.Workspace(in.wsID)
		return editFields(o, w.Name, w.Description, name, desc)
	}
	o := m.artOp(opEditArtifact, in.artID)
	a, _ := m.sh.st.Artifact(in.artID)
	return editFields(o, a.Name, a.Description, name, desc)
}

// editFields keeps only what changed: the name, then the description
// (empty clears it).
func editFields(o op, oldName string, oldDesc *string, name, desc string) (op, bool) {
	if name != oldName {
		o.name = name
	}
	if desc != common.Deref(oldDesc) {
		o.setDesc = true
		if desc != "" {
			o.desc = &desc
		}
	}
	return o, o.name != "" || o.setDesc
}

// onOpDone settles an op: its object obeys the store's order, a form
// shows field errors under the field, anything else is a toast.
func (m *Model) onOpDone(d opDoneMsg) tea.Cmd {
	m.settle(d.op)
	if d.err != nil {
		return m.opFailed(d.op, d.err, 0)
	}
	m.closeFormOf(d.op)
	var ch store.Changes
	switch {
	case d.ws != nil:
		ch = m.sh.st.PutWorkspace(d.ws, m.sh.Now())
		if d.op.kind == opProvision || d.op.kind == opTeardown {
			m.sh.st.SetMounts(d.ws.ID, d.mounts)
		}
	case d.art != nil:
		ch = m.sh.st.PutArtifact(d.art, m.sh.Now())
	case d.op.kind == opDeleteWorkspace:
		ch = m.sh.st.DropWorkspace(d.op.wsID)
	case d.op.kind == opDeleteArtifact:
		ch = m.sh.st.DropArtifact(d.op.artID)
	}
	return tea.Batch(m.changed(ch, originResync), m.toast(common.LevelOK, doneText(d)), m.next(d))
}

// next starts what follows an op: provisioning after a create, the delete
// after a teardown.
func (m *Model) next(d opDoneMsg) tea.Cmd {
	switch {
	case d.op.kind == opCreate && d.op.provision && d.ws != nil:
		return m.runOp(m.wsOp(opProvision, d.ws.ID))
	case d.op.kind == opTeardown && d.op.thenDelete:
		return m.runOp(m.wsOp(opDeleteWorkspace, d.op.wsID))
	}
	return nil
}

func doneText(d opDoneMsg) string {
	o := d.op
	switch o.kind {
	case opCreate:
		return "created " + o.name
	case opEditWorkspace, opEditArtifact:
		if o.name != "" {
			return "renamed " + o.subject() + " to " + o.name
		}
		return "saved the description of " + o.subject()
	case opProvision:
		return "provisioned a volume for " + o.wsName
	case opTeardown:
		return "tore down the volume of " + o.wsName
	case opVolSave:
		size := ""
		if d.art != nil {
			size = " (" + common.IEC(d.art.Size) + ")"
		}
		return "saved " + o.path + " as " + o.name + size
	case opVolLoad:
		return "loaded " + o.artName + " into " + o.path
	case opVolUpdate:
		if o.repair {
			return "repaired " + o.artName + " from " + o.path
		}
		return "updated " + o.artName + " from " + o.path
	}
	return "deleted " + o.subject()
}

// opFailed reports an op's error: under the form field it belongs to, or
// as a toast (naming the step of a two-step delete); a 404 removes the row.
func (m *Model) opFailed(o op, err error, mounts int) tea.Cmd {
	sentence := common.Sentence(err, o.errSubject(mounts))
	if f, ok := m.modal.(*form.Model); ok && m.intent.opID == o.id {
		if field, isField := common.FieldError(err); isField {
			f.Fail(field, sentence)
			return nil
		}
		m.closeModal()
	}
	var cmd tea.Cmd
	switch cairn.ErrorReason(err) {
	case cairn.ReasonWorkspaceNotFound:
		cmd = m.changed(m.sh.st.DropWorkspace(o.wsID), originResync)
	case cairn.ReasonArtifactNotFound:
		cmd = m.changed(m.sh.st.DropArtifact(o.artID), originResync)
	}
	if o.thenDelete {
		sentence = "tear down refused: " + sentence
	}
	return tea.Batch(cmd, m.errorToast(sentence, err))
}

// closeFormOf closes the busy form waiting for o.
func (m *Model) closeFormOf(o op) {
	if _, ok := m.modal.(*form.Model); ok && m.intent.opID == o.id {
		m.closeModal()
	}
}

// settlePending ends pending marks that an event shows finished.
func (m *Model) settlePending(ch store.Changes) {
	for _, r := range ch.Updated {
		w, ok := m.sh.st.Workspace(r.ID)
		if r.Kind != store.KindWorkspace || !ok {
			continue
		}
		switch m.sh.pending[r.ID] {
		case "provisioning":
			if w.VolumeState == cairn.VolumeReady {
				delete(m.sh.pending, r.ID)
			}
		case "tearing down":
			if w.VolumeState == cairn.VolumeNone {
				delete(m.sh.pending, r.ID)
			}
		}
	}
}
