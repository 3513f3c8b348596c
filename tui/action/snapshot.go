package action

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// A workspace's snapshots: take one (a form), restore one into the
// workspace (its typed name: everything in the volume is replaced), fork
// the workspace (a form) and delete one (y). Taking, restoring and forking
// run a sidecar on the server over the whole volume, so they are
// operations the busy form or the task line waits for, like the volume
// transfers.

// Snapshot runs an action of the snapshots screen of workspace wsID:
// guards first (the server still decides), then its form or question.
// snap is the snapshot under the cursor, nil for a take or a fork.
func (act *Flow) Snapshot(id keys.ID, wsID string, snap *cairn.Snapshot) tea.Cmd {
	if act.c.Config.ReadOnly {
		return act.host.Toast(toast.LevelInfo, "read-only mode")
	}
	w, ok := act.st.Workspace(wsID)
	if !ok {
		return act.host.Toast(toast.LevelInfo, "the workspace is gone")
	}
	if id == keys.SnapDelete {
		return act.askDeleteSnapshot(w, snap)
	}
	switch p := act.ops.Pending(w.ID); {
	case p != "":
		return act.host.Toast(toast.LevelInfo, "busy: "+p)
	case w.VolumeState != cairn.VolumeReady:
		return act.host.Toast(toast.LevelInfo, "needs volume READY — v provisions it")
	}
	switch id {
	case keys.SnapTake:
		act.openModal(dialog.Snapshot(act.c.Theme, w), intent{kind: intentSnapshot, wsID: w.ID})
	case keys.SnapFork:
		act.openModal(dialog.Fork(act.c.Theme, act.st, w), intent{kind: intentFork, wsID: w.ID})
	case keys.SnapRestore:
		act.askRestore(w, snap)
	}
	return nil
}

// snapshotOp is an op on the snapshots of workspace wsID, snap's (nil for
// a take or a fork), with the names its task line and toasts show
// sanitised.
func (act *Flow) snapshotOp(kind ops.Kind, wsID string, snap *cairn.Snapshot) ops.Op {
	o := act.wsOp(kind, wsID)
	o.WSName = termkit.Sanitize(o.WSName)
	if snap != nil {
		o.SnapID, o.SnapName = snap.ID, termkit.Sanitize(snap.Name)
	}
	return o
}

// askRestore asks for the workspace's typed name: a restore replaces
// everything in its volume.
func (act *Flow) askRestore(w *cairn.Workspace, snap *cairn.Snapshot) {
	o := act.snapshotOp(ops.RestoreSnapshot, w.ID, snap)
	text := fmt.Sprintf("Replace everything in the volume of %s with snapshot %s (%s; taken %s)? What the volume holds now "+
		"and no snapshot has is lost. No container may mount the volume meanwhile.",
		o.WSName, o.SnapName, ops.Entries(int64(snap.Entries), snap.Bytes), termkit.Stamp(act.host.Now(), snap.CreatedAt))
	act.openTyped(intent{kind: intentRestore, wsID: w.ID, change: o}, "Restore snapshot", text, typedName(w.Name))
}

// askDeleteSnapshot asks before a snapshot goes.
func (act *Flow) askDeleteSnapshot(w *cairn.Workspace, snap *cairn.Snapshot) tea.Cmd {
	if p := act.ops.Pending(snap.ID); p != "" {
		return act.host.Toast(toast.LevelInfo, "busy: "+p)
	}
	o := act.snapshotOp(ops.DeleteSnapshot, w.ID, snap)
	act.openConfirm(intent{kind: intentDeleteSnapshot, wsID: w.ID, change: o}, "Delete snapshot", fmt.Sprintf(
		"Delete snapshot %s of %s (%s)? Content no other snapshot holds is reclaimed later by the maintainer.",
		o.SnapName, o.WSName, ops.Entries(int64(snap.Entries), snap.Bytes)))
	return nil
}

// submitSnapshotForm starts the take or the fork a form asks for; the form
// stays open and busy until the server answers, whose refusals of the name
// go under the field.
func (act *Flow) submitSnapshotForm(f *form.Model, in intent, res screen.Result) tea.Cmd {
	o := act.snapshotOp(ops.TakeSnapshot, in.wsID, nil)
	busy := "the server reads every file of the volume into the snapshot (this can take a while; esc closes the form)…"
	if in.kind == intentFork {
		o.Kind = ops.Fork
		if d := dialog.MultiLine(act.c.Theme, res.Values["description"]); d != "" {
			o.Desc = &d
		}
		busy = "the server snapshots " + o.WSName + " and fills the new volume from it (this can take a while; esc closes the form)…"
	}
	o.Name, o.Live = res.Values["name"], res.Checks["live"]
	act.intent.opID = o.ID
	f.BusyWith(act.host.Frame(), busy)
	return act.ops.Run(o)
}

// offerLive answers a take or a fork that a container mounting the volume
// refused: while its form still waits, the form gives way to the question
// of taking the snapshot live; otherwise the toast says that it can be.
// offered is false for any other refusal.
func (act *Flow) offerLive(d ops.DoneMsg) (cmd tea.Cmd, offered bool) {
	o := d.Op
	if (o.Kind != ops.TakeSnapshot && o.Kind != ops.Fork) || o.Live || cairn.ErrorReason(d.Err) != cairn.ReasonVolumeInUse {
		return nil, false
	}
	question, hint := "Take it live?", ", or take the snapshot live"
	if o.Kind == ops.Fork {
		question, hint = "Fork it from a live snapshot?", ", or fork from a live snapshot"
	}
	cmd = act.host.ErrorToast(errtext.Sentence(d.Err, o.ErrSubject(0))+hint, d.Err)
	if _, waiting := act.host.Modal().(*form.Model); !waiting || act.intent.opID != o.ID {
		return cmd, true // no question the operator is not waiting for
	}
	act.closeModal()
	live := o
	live.ID, live.Live = act.host.NextID(), true
	act.openConfirm(intent{kind: intentLive, wsID: o.WSID, change: live}, "Volume in use", fmt.Sprintf(
		"A container (a shell, an exec, a tool run) mounts the volume of %s, so no point-in-time snapshot can be taken. %s "+
			"Each file is whole, but the files may come from different instants; one that changes while it is read fails the snapshot.",
		o.WSName, question))
	return cmd, true
}
