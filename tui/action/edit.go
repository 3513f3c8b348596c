package action

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Editing a volume file: it is read whole (one read, so at most
// cairn.MaxFileReadBytes) with its version, its ETag; copied into a
// private temporary directory; the terminal is handed to the editor
// (tea.ExecProcess) on the copy; and when the editor returns, a changed
// copy is written back only over the version read (If-Match). A file
// changed meanwhile is not overwritten unasked: the conflict shows the
// first lines of both and the operator overwrites, keeps editing (the
// next write is checked against the version first read again, so it asks
// again unless theirs went back) or discards. One file is edited at a
// time — the terminal is the editor's — and its copy is removed once the
// edit ends, whichever way.

// DefaultEditor edits when $EDITOR names none.
const DefaultEditor = "vi"

// editing is the file being edited.
type editing struct {
	wsID, path string
	task       int    // the read's task line
	etag       string // the version read: the write goes only over it
	original   []byte // the content read
	dir        string // the private directory (0700) holding the copy
	copy       string // the copy the editor edits (0600), named as the file
	yours      []byte // the copy's content once the editor returned
	opID       int    // the write in flight
	// question is the conflict while it waits for its answer: a modal
	// closed unanswered (ctrl+c) is asked again by the next e.
	question screen.Modal
}

// name is the file's name as the screen shows it.
func (ed *editing) name() string { return termkit.Sanitize(path.Base(ed.path)) }

// removeCopy deletes a private copy's directory ("" for none).
func removeCopy(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir) // in the user's own temporary directory: nothing to do if it fails
	}
}

type (
	// editReadyMsg is the file read and copied, or why it is not edited.
	editReadyMsg struct {
		task     int
		etag     string
		original []byte
		dir      string
		copy     string
		refusal  string // why the file is not edited here
		err      error  // the server's refusal of the read
		local    error  // the private copy could not be made
	}
	// editedMsg is the editor's end.
	editedMsg struct{ err error }
	// editReadBackMsg is the copy's content after the editor.
	editReadBackMsg struct {
		data []byte
		err  error
	}
	// editConflictMsg is the file in the volume now, after the write was
	// refused because it changed.
	editConflictMsg struct {
		theirs *cairn.FileContent
		err    error
	}
	// editEndedMsg is an edit's copy removed: what the toast says of
	// how the edit ended.
	editEndedMsg struct {
		level toast.Level
		text  string
		err   error // the error toast's, when the edit failed
	}
)

// startEdit reads the file and makes its private copy in a Cmd.
func (act *Flow) startEdit(wsID, p string) tea.Cmd {
	if ed := act.edit; ed != nil {
		if ed.question != nil && act.host.Modal() == nil {
			act.openModal(ed.question, intent{kind: intentEditConflict, wsID: ed.wsID})
			return nil
		}
		return act.host.Toast(toast.LevelInfo, "already editing "+ed.name()+" — finish that first")
	}
	ed := &editing{wsID: wsID, path: p, task: act.host.NextID()}
	act.edit = ed
	act.ops.AddTask(ed.task, "reading "+p+" to edit…")
	b, ctx := act.backend, act.ctx
	return func() tea.Msg { return readToEdit(ctx, b, ed.task, wsID, p) }
}

// readToEdit reads the whole file and copies it for the editor; it runs
// in a Cmd.
func readToEdit(ctx context.Context, b Backend, task int, wsID, p string) editReadyMsg {
	msg := editReadyMsg{task: task}
	fc, err := b.ReadFile(ctx, wsID, cairn.FileReadParams{Path: p, Length: cairn.MaxFileReadBytes})
	if err != nil {
		msg.err = err
		return msg
	}
	if msg.refusal = notEditable(p, fc); msg.refusal != "" {
		return msg
	}
	msg.etag, msg.original = fc.ETag, fc.Data
	msg.dir, msg.copy, msg.local = privateCopy(path.Base(p), fc.Data)
	return msg
}

// notEditable is why a file read is not edited here ("" when it is): more
// than one read returns, not UTF-8 text (an editor would rewrite its
// bytes), or read without a version to write back against.
func notEditable(p string, fc *cairn.FileContent) string {
	name := termkit.Sanitize(path.Base(p))
	switch {
	case fc.Size > int64(len(fc.Data)):
		return errtext.TooLargeToEdit(name, fc.Size)
	case !utf8.Valid(fc.Data) || bytes.IndexByte(fc.Data, 0) >= 0:
		return name + " is not UTF-8 text — e edits text files only"
	case fc.ETag == "":
		return "the server gave no version (ETag) of " + name + ", so a change meanwhile could not be told — it is not edited"
	}
	return ""
}

// privateCopy writes data as name in a new directory only this user may
// enter, the file only they may read: the volume's file may be anyone's
// secret. The name keeps its extension for the editor.
func privateCopy(name string, data []byte) (dir, copyPath string, err error) {
	dir, err = os.MkdirTemp("", "cairn-edit-")
	if err != nil {
		return "", "", err
	}
	copyPath = filepath.Join(dir, name)
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		_ = os.RemoveAll(dir) // the copy failed: nothing of it is kept
		return "", "", err
	}
	return dir, copyPath, nil
}

// onEditReady hands the terminal to the editor on the copy, or says why
// not.
func (act *Flow) onEditReady(msg editReadyMsg) tea.Cmd {
	act.ops.EndTask(msg.task)
	ed := act.edit
	if ed == nil || ed.task != msg.task {
		return func() tea.Msg { removeCopy(msg.dir); return nil } // the program moved on
	}
	ed.etag, ed.original, ed.dir, ed.copy = msg.etag, msg.original, msg.dir, msg.copy
	switch {
	case msg.err != nil:
		act.edit = nil
		return act.host.ErrorToast("cannot edit "+ed.name()+": "+errtext.Sentence(msg.err, act.editSubject(ed)), msg.err)
	case msg.refusal != "":
		act.edit = nil
		return act.host.Toast(toast.LevelInfo, msg.refusal)
	case msg.local != nil:
		act.edit = nil
		return act.host.ErrorToast("cannot make a private copy to edit: "+msg.local.Error(), msg.local)
	}
	return act.runEditor(ed)
}

func (act *Flow) editSubject(ed *editing) errtext.Subject {
	return errtext.Subject{Workspace: act.host.WorkspaceName(ed.wsID), Scope: "read"}
}

// runEditor hands the terminal to the editor on the copy; the program
// waits for it.
func (act *Flow) runEditor(ed *editing) tea.Cmd {
	argv := append(strings.Fields(cmp.Or(act.c.Editor, DefaultEditor)), ed.copy)
	c := exec.CommandContext(act.ctx, argv[0], argv[1:]...)
	return tea.ExecProcess(c, func(err error) tea.Msg { return editedMsg{err: err} })
}

// onEdited reads the copy back once the editor returned; an editor that
// failed (or was told to, as vim's :cq does) writes nothing.
func (act *Flow) onEdited(msg editedMsg) tea.Cmd {
	ed := act.edit
	if ed == nil {
		return nil
	}
	if msg.err != nil {
		return act.endEdit(toast.LevelError, "the editor failed ("+msg.err.Error()+") — nothing was written to "+ed.name(), msg.err)
	}
	copyPath := ed.copy
	return func() tea.Msg {
		data, err := os.ReadFile(copyPath)
		return editReadBackMsg{data: data, err: err}
	}
}

// onEditReadBack writes a changed copy over the version read.
func (act *Flow) onEditReadBack(msg editReadBackMsg) tea.Cmd {
	ed := act.edit
	switch {
	case ed == nil:
		return nil
	case msg.err != nil:
		return act.endEdit(toast.LevelError, "cannot read the edited copy back: "+msg.err.Error(), msg.err)
	case bytes.Equal(msg.data, ed.original):
		return act.endEdit(toast.LevelInfo, "no change to "+ed.name()+" — nothing was written", nil)
	}
	ed.yours = msg.data
	return act.saveEdit(ed, ed.etag)
}

// saveEdit writes the edit; ifMatch "" writes over whatever is there.
func (act *Flow) saveEdit(ed *editing, ifMatch string) tea.Cmd {
	o := act.wsOp(ops.SaveEdit, ed.wsID)
	o.Path, o.Data, o.IfMatch = ed.path, ed.yours, ifMatch
	ed.opID = o.ID
	return act.ops.Run(o)
}

// ownsEdit reports the write of the edit in progress.
func (act *Flow) ownsEdit(o ops.Op) bool { return act.edit != nil && act.edit.opID == o.ID }

// onEditSaved ends the edit once written, or asks what to do when the
// file changed meanwhile; any other refusal is the usual error toast.
func (act *Flow) onEditSaved(d ops.DoneMsg) tea.Cmd {
	ed := act.edit
	relist := act.host.VolumeChanged(ed.wsID, ed.path)
	switch {
	case d.Err == nil:
		return tea.Batch(relist, act.endEdit(toast.LevelOK, ops.DoneText(d), nil))
	case cairn.ErrorReason(d.Err) == cairn.ReasonFileChanged:
		b, ctx, wsID, p := act.backend, act.ctx, ed.wsID, ed.path
		return tea.Batch(relist, func() tea.Msg {
			fc, err := b.ReadFile(ctx, wsID, cairn.FileReadParams{Path: p, Length: cairn.MaxFileReadBytes})
			return editConflictMsg{theirs: fc, err: err}
		})
	}
	return tea.Batch(relist, act.endEdit(toast.LevelError, errtext.Sentence(d.Err, d.Op.ErrSubject(0)), d.Err))
}

// onEditConflict shows both versions and asks.
func (act *Flow) onEditConflict(msg editConflictMsg) tea.Cmd {
	ed := act.edit
	if ed == nil {
		return nil
	}
	theirs := dialog.Version{Err: "(cannot read it: " + errtext.VolumeSentence(msg.err) + ")"}
	if msg.err == nil {
		theirs = dialog.Version{Data: msg.theirs.Data, Size: msg.theirs.Size}
	}
	yours := dialog.Version{Data: ed.yours, Size: int64(len(ed.yours))}
	ed.question = dialog.EditConflict(act.c.Theme, ed.name(), theirs, yours)
	act.openModal(ed.question, intent{kind: intentEditConflict, wsID: ed.wsID})
	return nil
}

// settleConflict acts on the conflict's answer.
func (act *Flow) settleConflict(choice string) tea.Cmd {
	ed := act.edit
	if ed == nil {
		return nil
	}
	ed.question = nil
	switch choice {
	case dialog.ConflictOverwrite:
		return act.saveEdit(ed, "")
	case dialog.ConflictKeepEditing:
		return act.runEditor(ed)
	}
	return act.endEdit(toast.LevelInfo, "discarded your edit of "+ed.name()+" — the volume's version stays", nil)
}

// endEdit ends the edit in progress: its copy is removed, then the toast
// says how it ended — once it shows, nothing of the edit is left.
func (act *Flow) endEdit(level toast.Level, text string, err error) tea.Cmd {
	dir := act.edit.dir
	act.edit = nil
	return func() tea.Msg {
		removeCopy(dir)
		return editEndedMsg{level: level, text: text, err: err}
	}
}

func (act *Flow) onEditEnded(msg editEndedMsg) tea.Cmd {
	if msg.err != nil {
		return act.host.ErrorToast(msg.text, msg.err)
	}
	return act.host.Toast(msg.level, msg.text)
}

// Close removes the copy of an edit the program ends in the middle of.
func (act *Flow) Close() {
	if act.edit != nil {
		removeCopy(act.edit.dir)
	}
}
