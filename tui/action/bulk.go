package action

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/bulkresult"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// A bulk action acts on every marked row: one typed confirmation naming the
// count, the requests at most ops.BulkLimit at a time, and a result for
// each row — a refusal names its row and reason, and the rest proceed. The
// server decides each row; nothing is pre-filtered but what cannot be asked
// at all (a download of a MISSING object).

// bulkAction starts the confirmation of a bulk action on a.Marked.
func (act *Flow) bulkAction(a screen.ActionMsg) tea.Cmd {
	n := termkit.Count(int64(len(a.Marked)))
	in := intent{kind: intentBulk, bulk: a.ID, marked: a.Marked, wsID: a.WorkspaceID}
	switch a.ID {
	case keys.ArtDelete:
		act.openTyped(in, "Delete "+n+" artifacts", fmt.Sprintf(
			"Delete the %s marked artifacts of %s? Their objects are reclaimed later by the maintainer.", n, act.wsName(a.WorkspaceID)),
			"delete "+n)
	case keys.WsDelete:
		act.openTyped(in, "Delete "+n+" workspaces", fmt.Sprintf(
			"Delete the %s marked workspaces with their artifact records?%s", n, act.readyNote(a.Marked)), "delete "+n)
	case keys.WsTeardown:
		act.openTyped(in, "Tear down "+n+" volumes", fmt.Sprintf(
			"Tear down the volumes of the %s marked workspaces? Their files are deleted; artifacts stay. "+
				"A volume still mounted is refused.", n), "tear down "+n)
	case keys.ArtDownload:
		in.kind = intentBulkDownload
		act.openModal(form.New(act.c.Theme, "Download "+n+" artifacts",
			form.Field{Key: "path", Label: "Into directory", Limit: 4096, Value: act.c.Config.DownloadDir,
				Complete: dialog.Complete("path"), Note: "each as <directory>/<name>; an existing file is not overwritten"}), in)
	}
	return nil
}

func (act *Flow) wsName(id string) string {
	if w, ok := act.st.Workspace(id); ok {
		return w.Name
	}
	return "the workspace"
}

// readyNote warns that workspaces with a volume are refused.
func (act *Flow) readyNote(ids []string) string {
	ready := 0
	for _, id := range ids {
		if w, ok := act.st.Workspace(id); ok && w.VolumeState == cairn.VolumeReady {
			ready++
		}
	}
	if ready == 0 {
		return ""
	}
	return fmt.Sprintf(" %s still %s a volume and will be refused — V tears the marked volumes down first.",
		termkit.Count(int64(ready)), termkit.Plural(int64(ready), "has", "have"))
}

// runBulk sends the confirmed bulk action's requests.
func (act *Flow) runBulk(in intent) tea.Cmd {
	kind, word := ops.DeleteArtifact, "deleting"
	switch in.bulk {
	case keys.WsDelete:
		kind = ops.DeleteWorkspace
	case keys.WsTeardown:
		kind, word = ops.Teardown, "tearing down"
	}
	list := make([]ops.Op, 0, len(in.marked))
	for _, id := range in.marked {
		if kind == ops.DeleteArtifact {
			list = append(list, act.artOp(kind, id))
		} else {
			list = append(list, act.wsOp(kind, id))
		}
	}
	noun := "artifacts"
	if kind != ops.DeleteArtifact {
		noun = "workspaces"
	}
	label := fmt.Sprintf("%s %s %s…", word, termkit.Count(int64(len(list))), noun)
	return tea.Batch(act.ops.Bulk(act.host.NextID(), label, list, ops.BulkLimit), clearMarks)
}

func clearMarks() tea.Msg { return screen.ClearMarksMsg{} }

// onBulkDone settles a bulk action: the store takes every answer, and the
// results open in one modal.
func (act *Flow) onBulkDone(m ops.BulkDoneMsg) tea.Cmd {
	act.ops.SettleBulk(m)
	var ch store.Changes
	for _, d := range m.Results {
		if d.Err != nil {
			ch.Merge(act.dropGone(d.Op, d.Err))
		} else {
			ch.Merge(act.stored(d))
		}
	}
	act.host.OpenModal(act.bulkResults(m))
	return act.host.Changed(ch, feed.OriginResync)
}

// bulkDir checks the directory a bulk download goes into.
func bulkDir(opID int, raw string) dialog.LocalStat {
	p := dialog.ExpandHome(strings.TrimSpace(raw))
	msg := dialog.LocalStat{OpID: opID, Path: p}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg.Err = "the directory " + raw + " does not exist"
	case err != nil:
		msg.Err = "cannot use " + raw + ": " + errors.Unwrap(err).Error()
	case !fi.IsDir():
		msg.Err = raw + " is not a directory"
	}
	return msg
}

// submitBulkDownload checks the directory, busy, as the transfer forms do.
func (act *Flow) submitBulkDownload(f *form.Model, res screen.Result) tea.Cmd {
	id := act.host.NextID()
	act.intent.opID = id
	raw := res.Values["path"]
	f.BusyWith(act.host.Frame(), "checking "+raw+"…")
	return func() tea.Msg { return bulkDirMsg(bulkDir(id, raw)) }
}

// bulkDirMsg is the checked directory of a bulk download.
type bulkDirMsg dialog.LocalStat

// onBulkDir queues one download per marked RECORDED artifact into the
// directory; a file there of the artifact's name is left alone (that
// transfer fails and says so).
func (act *Flow) onBulkDir(s bulkDirMsg) tea.Cmd {
	f, ok := act.host.Modal().(*form.Model)
	if !ok || act.intent.opID != s.OpID {
		return nil
	}
	if s.Err != "" {
		f.Fail("path", s.Err)
		return nil
	}
	in := act.intent
	act.closeModal()
	var cmds []tea.Cmd
	skipped := 0
	for _, id := range in.marked {
		a, ok := act.st.Artifact(id)
		if !ok || a.State != cairn.ArtifactRecorded {
			skipped++
			continue
		}
		cmds = append(cmds, act.host.Queue().Enqueue(transfer.Spec{Kind: transfer.Download, WSID: a.WorkspaceID, ArtID: a.ID,
			Name: a.Name, Path: filepath.Join(s.Path, a.Name), Size: a.Size}))
	}
	text := fmt.Sprintf("%s downloads queued into %s — t shows each", termkit.Count(int64(len(cmds))), s.Path)
	if skipped > 0 {
		text += fmt.Sprintf("; %s skipped (MISSING_OBJECT or gone)", termkit.Count(int64(skipped)))
	}
	return tea.Batch(append(cmds, clearMarks, act.host.Toast(toast.LevelInfo, text))...)
}

// bulkResults is the modal of a bulk action's results, row by row.
func (act *Flow) bulkResults(m ops.BulkDoneMsg) screen.Modal {
	verb, noun := "deleted", "artifacts"
	if len(m.Results) > 0 {
		switch m.Results[0].Op.Kind {
		case ops.Teardown:
			verb, noun = "torn down", "volumes"
		case ops.DeleteWorkspace:
			noun = "workspaces"
		}
	}
	rows := bulkresult.Rows(m.Results)
	for i, d := range m.Results {
		if d.Err != nil { // each row's sentence names its own subject
			rows[i].Err = errors.New(errtext.Sentence(d.Err, d.Op.ErrSubject(0)))
		}
	}
	title := fmt.Sprintf("%s %s %s", strings.ToUpper(verb[:1])+verb[1:], termkit.Count(int64(len(m.Results))), noun)
	return bulkresult.New(act.c.Theme, title, verb, rows, func(err error) string { return err.Error() })
}
