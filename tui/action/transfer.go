package action

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// submitTransferForm checks the local path in a Cmd; the form stays open
// and busy until the answer.
func (act *Flow) submitTransferForm(f *form.Model, in intent, res screen.Result) tea.Cmd {
	id := act.host.NextID()
	act.intent.opID = id
	act.intent.name, act.intent.desc = res.Values["name"], dialog.MultiLine(act.c.Theme, res.Values["description"])
	f.BusyWith(act.host.Frame(), "checking "+res.Values["path"]+"…")
	path := res.Values["path"]
	source := in.kind != intentDownload
	return func() tea.Msg { return dialog.StatLocal(id, path, source) }
}

// onLocalStat answers a transfer form: an error goes under the path
// field; otherwise the form closes and the transfer is queued, or its
// confirmation asked.
func (act *Flow) onLocalStat(s dialog.LocalStat) tea.Cmd {
	f, ok := act.host.Modal().(*form.Model)
	if !ok || act.intent.opID != s.OpID {
		return nil // the form was closed meanwhile
	}
	if s.Err != "" {
		f.Fail("path", s.Err)
		return nil
	}
	in := act.intent
	in.path, in.size = s.Path, s.Size
	act.closeModal()
	switch in.kind {
	case intentUpload:
		var desc *string
		if in.desc != "" {
			desc = &in.desc
		}
		return act.host.Queue().Enqueue(transfer.Spec{Kind: transfer.Upload, WSID: in.wsID, Name: in.name, Desc: desc, Path: in.path, Size: s.Size})
	case intentReplace:
		return act.confirmReplace(in)
	case intentDownload:
		if s.Exists {
			in.kind = intentOverwrite
			act.openConfirm(in, "Overwrite", fmt.Sprintf("%s exists (%s). Overwrite it?", in.path, termkit.Size(s.Size)))
			return nil
		}
		return act.enqueueDownload(in, false)
	}
	return nil
}

// confirmReplace names both sizes, or asks to repair a MISSING artifact.
func (act *Flow) confirmReplace(in intent) tea.Cmd {
	a, ok := act.st.Artifact(in.artID)
	if !ok {
		return act.host.Toast(toast.LevelInfo, "the artifact is gone")
	}
	in.kind = intentReplaceConfirm
	if a.State == cairn.ArtifactMissingObject {
		in.repair = true
		act.openConfirm(in, "Repair", fmt.Sprintf("Repair %s: upload %s as its content?", a.Name, in.path))
		return nil
	}
	act.openConfirm(in, "Replace content", fmt.Sprintf("Replace the content of %s (%s, %s) with %s (%s)?",
		a.Name, termkit.Size(a.Size), mimeOf(a), in.path, termkit.Size(in.size)))
	return nil
}

func mimeOf(a *cairn.Artifact) string {
	t, _, _ := strings.Cut(a.MIMEType, ";")
	return strings.TrimSpace(t)
}

func (act *Flow) enqueueDownload(in intent, overwrite bool) tea.Cmd {
	a, ok := act.st.Artifact(in.artID)
	if !ok {
		return act.host.Toast(toast.LevelInfo, "the artifact is gone")
	}
	return act.host.Queue().Enqueue(transfer.Spec{Kind: transfer.Download, WSID: a.WorkspaceID, ArtID: a.ID, Name: a.Name,
		Path: in.path, Overwrite: overwrite, Size: a.Size})
}

func (act *Flow) enqueueReplace(in intent) tea.Cmd {
	a, ok := act.st.Artifact(in.artID)
	if !ok {
		return act.host.Toast(toast.LevelInfo, "the artifact is gone")
	}
	return act.host.Queue().Enqueue(transfer.Spec{Kind: transfer.Replace, WSID: a.WorkspaceID, ArtID: a.ID, Name: a.Name,
		Path: in.path, Repair: in.repair, Size: in.size})
}
