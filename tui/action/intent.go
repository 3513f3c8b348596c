package action

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

// intentKind is what a modal's answer leads to.
type intentKind uint8

const (
	intentNone intentKind = iota
	intentCreate
	intentEditWorkspace
	intentEditArtifact
	intentProvision
	intentTeardown
	intentDeleteReady // step 1 of deleting a READY workspace
	intentDeleteWorkspace
	intentDeleteArtifact
	intentUpload
	intentReplace        // the path form of a replace
	intentReplaceConfirm // its (y/N)
	intentDownload
	intentOverwrite // the download target exists
	intentVolSave
	intentVolLoad
	intentVolUpdate
	intentCancelTransfer // past 50 %
	intentResume         // the offer of the interrupted uploads
	intentPickLoad       // the picker of the artifact to load into a directory
	intentPickUnpack     // the picker of the archive to unpack into one
	intentUnpack         // the form of the new directory
	intentBulk           // the typed confirmation of a bulk action
	intentBulkDownload   // the directory form of a bulk download
	intentKillShell      // the (y/N) of a shell kill
	intentMkdir          // the name form of a new volume directory
	intentMove           // the path form of a rename or move in the volume
	intentPutFile        // the form of a local file written into the volume
	intentPutOverwrite   // its (y/N) when a file is there
	intentRemove         // the (y/N) or typed name of a volume delete
	intentEditConflict   // what becomes of an edit whose file changed meanwhile
	intentSnapshot       // the form of a new snapshot
	intentFork           // the form of a fork
	intentRestore        // the typed name of a snapshot's restore
	intentDeleteSnapshot // the (y/N) of a snapshot's delete
	intentLive           // the (y/N) of a take or fork refused while mounted, again live
)

// intent is the pending purpose of the open modal.
type intent struct {
	kind  intentKind
	wsID  string
	artID string
	// teardownFirst: the typed delete of a READY workspace.
	teardownFirst bool
	// opID is the operation a busy form waits for.
	opID int
	// A transfer's local path, its size, and what the form asked.
	path       string
	size       int64
	name, desc string
	repair     bool
	transfer   int                // intentCancelTransfer
	pending    []transfer.Pending // intentResume
	// dir is the files pane's directory a load or unpack goes into.
	dir string
	// bulk is the action a bulk confirmation is for, marked its rows.
	bulk   keys.ID
	marked []string
	// shellID is the shell a kill ends.
	shellID string
	// change is the op a confirmation runs (a files-pane change, a
	// snapshot's restore or delete, a take or fork again live); target the
	// volume path a files-pane form acts on (the entry moved, an upload's
	// path once its form was submitted).
	change ops.Op
	target string
}

func (act *Flow) openModal(md screen.Modal, in intent) {
	act.host.OpenModal(md)
	act.intent = in
}

func (act *Flow) openConfirm(in intent, title, text string) {
	act.openModal(confirm.New(act.c.Theme, title, text), in)
}

func (act *Flow) openTyped(in intent, title, text, expect string) {
	act.openModal(typed.New(act.c.Theme, title, text, expect), in)
}

func (act *Flow) closeModal() {
	act.host.CloseModal()
	act.intent = intent{}
}

// Settle acts on the flow's modal that finished with res: a form's submit
// starts its operation (the form stays open, busy), anything else closes.
func (act *Flow) Settle(res screen.Result) tea.Cmd {
	in := act.intent
	switch in.kind {
	case intentResume:
		return act.settleResume(res)
	case intentPickLoad, intentPickUnpack:
		act.closeModal()
		if !res.OK {
			return nil
		}
		in.artID = res.Values["id"]
		return act.picked(in)
	case intentEditConflict:
		act.closeModal()
		return act.settleConflict(res.Values["choice"])
	}
	if f, isForm := act.host.Modal().(*form.Model); isForm && res.OK {
		switch in.kind {
		case intentUpload, intentReplace, intentDownload:
			return act.submitTransferForm(f, in, res)
		case intentVolSave, intentVolLoad, intentVolUpdate, intentUnpack:
			return act.submitVolumeForm(f, in, res)
		case intentBulkDownload:
			return act.submitBulkDownload(f, res)
		case intentMkdir, intentMove, intentPutFile:
			return act.submitChangeForm(f, in, res)
		case intentSnapshot, intentFork:
			return act.submitSnapshotForm(f, in, res)
		}
		return act.submitForm(f, in, res)
	}
	act.closeModal()
	if !res.OK {
		if in.kind != intentNone && !isForm(in.kind) {
			return act.host.Toast(toast.LevelInfo, "cancelled")
		}
		return nil
	}
	return act.confirmed(in)
}

func isForm(k intentKind) bool {
	switch k {
	case intentCreate, intentEditWorkspace, intentEditArtifact, intentUpload, intentReplace, intentDownload,
		intentVolSave, intentVolLoad, intentVolUpdate, intentUnpack, intentPickLoad, intentPickUnpack, intentBulkDownload,
		intentMkdir, intentMove, intentPutFile, intentSnapshot, intentFork:
		return true
	}
	return false
}

// confirmed runs what a confirmation was for.
func (act *Flow) confirmed(in intent) tea.Cmd {
	switch in.kind {
	case intentProvision:
		return act.ops.Run(act.wsOp(ops.Provision, in.wsID))
	case intentTeardown:
		return act.ops.Run(act.wsOp(ops.Teardown, in.wsID))
	case intentDeleteReady:
		act.typedDelete(in.wsID, true)
	case intentDeleteWorkspace:
		o := act.wsOp(ops.DeleteWorkspace, in.wsID)
		if in.teardownFirst {
			o = act.wsOp(ops.Teardown, in.wsID)
			o.ThenDelete = true
		}
		return act.ops.Run(o)
	case intentDeleteArtifact:
		return act.ops.Run(act.artOp(ops.DeleteArtifact, in.artID))
	case intentReplaceConfirm:
		return act.enqueueReplace(in)
	case intentOverwrite:
		return act.enqueueDownload(in, true)
	case intentCancelTransfer:
		return act.host.Queue().Cancel(in.transfer)
	case intentBulk:
		return act.runBulk(in)
	case intentKillShell:
		return act.killShell(in)
	case intentRemove, intentPutOverwrite, intentRestore, intentDeleteSnapshot, intentLive:
		return act.ops.Run(in.change)
	}
	return nil
}
