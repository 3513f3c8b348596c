package action

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

func (act *Flow) wsOp(kind ops.Kind, wsID string) ops.Op {
	return ops.Op{ID: act.host.NextID(), Kind: kind, WSID: wsID, WSName: act.host.WorkspaceName(wsID)}
}

func (act *Flow) artOp(kind ops.Kind, artID string) ops.Op {
	o := ops.Op{ID: act.host.NextID(), Kind: kind, ArtID: artID}
	if a, ok := act.st.Artifact(artID); ok {
		o.ArtName, o.WSID, o.WSName = a.Name, a.WorkspaceID, act.host.WorkspaceName(a.WorkspaceID)
	}
	return o
}

// submitForm turns a form's values into its op; the form stays open and
// busy until the reply.
func (act *Flow) submitForm(f *form.Model, in intent, res screen.Result) tea.Cmd {
	o, changed := act.formOp(in, res)
	if !changed {
		act.closeModal()
		return act.host.Toast(toast.LevelInfo, "nothing changed")
	}
	act.intent.opID = o.ID
	f.Busy(act.host.Frame())
	return act.ops.Run(o)
}

func (act *Flow) formOp(in intent, res screen.Result) (ops.Op, bool) {
	name, desc := res.Values["name"], dialog.MultiLine(act.c.Theme, res.Values["description"])
	switch in.kind {
	case intentCreate:
		o := ops.Op{ID: act.host.NextID(), Kind: ops.Create, Name: name, Provision: res.Checks["provision"]}
		o.SizeBytes, _ = dialog.VolumeSize(res.Values["size"]) // the form let only a valid size through
		if desc != "" {
			o.Desc = &desc
		}
		return o, true
	case intentEditWorkspace:
		w, _ := act.st.Workspace(in.wsID)
		return ops.EditFields(act.wsOp(ops.EditWorkspace, in.wsID), w.Name, w.Description, name, desc)
	}
	a, _ := act.st.Artifact(in.artID)
	return ops.EditFields(act.artOp(ops.EditArtifact, in.artID), a.Name, a.Description, name, desc)
}

// onOpDone settles an op: its object obeys the store's order, a form
// shows field errors under the field, anything else is a toast.
func (act *Flow) onOpDone(d ops.DoneMsg) tea.Cmd {
	act.ops.Settle(d.Op)
	if act.ownsEdit(d.Op) {
		return act.onEditSaved(d)
	}
	if d.Err != nil {
		if cmd, offered := act.offerLive(d); offered {
			return cmd
		}
		return tea.Batch(act.opFailed(d.Op, d.Err, 0), act.relistRefused(d.Op))
	}
	act.closeFormOf(d.Op)
	d.Now = act.host.Now()
	ch := act.stored(d)
	return tea.Batch(act.host.Changed(ch, feed.OriginResync), act.host.Toast(toast.LevelOK, ops.DoneText(d)), act.next(d))
}

// stored puts a successful op's answer into the store.
func (act *Flow) stored(d ops.DoneMsg) store.Changes {
	var ch store.Changes
	switch {
	case d.WS != nil:
		ch = act.st.PutWorkspace(d.WS, act.host.Now())
		if d.Op.Kind == ops.Provision || d.Op.Kind == ops.Teardown {
			act.st.SetMounts(d.WS.ID, d.Mounts)
		}
	case d.Art != nil:
		ch = act.st.PutArtifact(d.Art, act.host.Now())
	case d.Op.Kind == ops.DeleteWorkspace:
		ch = act.st.DropWorkspace(d.Op.WSID)
	case d.Op.Kind == ops.DeleteArtifact:
		ch = act.st.DropArtifact(d.Op.ArtID)
	}
	return ch
}

// dropGone removes the row a 404 says is gone.
func (act *Flow) dropGone(o ops.Op, err error) store.Changes {
	switch cairn.ErrorReason(err) {
	case cairn.ReasonWorkspaceNotFound:
		return act.st.DropWorkspace(o.WSID)
	case cairn.ReasonArtifactNotFound:
		return act.st.DropArtifact(o.ArtID)
	}
	return store.Changes{}
}

// next starts what follows an op: provisioning after a create, the delete
// after a teardown, a new listing of the volume after cairn wrote it, and
// of the snapshots after they changed.
func (act *Flow) next(d ops.DoneMsg) tea.Cmd {
	switch {
	case d.Op.Kind == ops.Create && d.Op.Provision && d.WS != nil:
		return act.ops.Run(act.wsOp(ops.Provision, d.WS.ID))
	case d.Op.Kind == ops.Teardown && d.Op.ThenDelete:
		return act.ops.Run(act.wsOp(ops.DeleteWorkspace, d.Op.WSID))
	case d.Op.Kind == ops.VolLoad || d.Op.Kind == ops.Unpack || d.Op.ChangesFiles():
		return act.host.VolumeChanged(d.Op.WSID, d.Op.Left())
	case d.Op.Kind == ops.RestoreSnapshot:
		return act.host.VolumeChanged(d.Op.WSID, "")
	case d.Op.IsSnapshot(): // a take, a delete, a fork's snapshot of its source
		return act.host.SnapshotsChanged(d.Op.WSID)
	}
	return nil
}

// relistRefused lists the volume again after a refused change of its
// files: a change is never repeated, and what refused it (a file made
// or removed meanwhile) shows in the listing. A refused snapshot action
// lists the snapshots again the same way (one deleted meanwhile goes).
func (act *Flow) relistRefused(o ops.Op) tea.Cmd {
	switch {
	case o.ChangesFiles():
		return act.host.VolumeChanged(o.WSID, "")
	case o.IsSnapshot():
		return act.host.SnapshotsChanged(o.WSID)
	}
	return nil
}

// opFailed reports an op's error: under the form field it belongs to, or
// as a toast (naming the step of a two-step delete); a 404 removes the row.
func (act *Flow) opFailed(o ops.Op, err error, mounts int) tea.Cmd {
	sentence := errtext.Sentence(err, o.ErrSubject(mounts))
	if f, ok := act.host.Modal().(*form.Model); ok && act.intent.opID == o.ID {
		if field, isField := errtext.FieldError(err); isField {
			f.Fail(field, sentence)
			return nil
		}
		act.closeModal()
	}
	var cmd tea.Cmd
	if ch := act.dropGone(o, err); !ch.Empty() {
		cmd = act.host.Changed(ch, feed.OriginResync)
	}
	if o.ThenDelete {
		sentence = "tear down refused: " + sentence
	}
	return tea.Batch(cmd, act.host.ErrorToast(sentence, err))
}

// closeFormOf closes the busy form waiting for o.
func (act *Flow) closeFormOf(o ops.Op) {
	if _, ok := act.host.Modal().(*form.Model); ok && act.intent.opID == o.ID {
		act.closeModal()
	}
}
