package action

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// The files pane's changes of the volume: a new directory, a delete, a
// rename or move, a local file written in. Each is one request to the
// server's writer, never repeated; the pane lists again after it, made or
// refused, since the volume sends no events and a refused change may have
// met something the listing does not show yet.

// changeAction opens the form or the confirmation of a change; the pane
// sends a directory's path for what goes into it, an entry's for what
// acts on it.
func (act *Flow) changeAction(a screen.ActionMsg, w *cairn.Workspace) tea.Cmd {
	switch a.ID {
	case keys.FilesMkdir:
		act.openModal(dialog.MakeDir(act.c.Theme, a.Path, act.takenIn(w.ID, a.Path)), intent{kind: intentMkdir, wsID: w.ID, dir: a.Path})
		return nil
	case keys.FilesUpload:
		act.openModal(dialog.PutFile(act.c.Theme, act.volPath(w.ID, a.Path), act.putWarning(w.ID)), intent{kind: intentPutFile, wsID: w.ID, dir: a.Path})
		return nil
	case keys.FilesEdit:
		return act.startEdit(w.ID, a.Path)
	}
	e, ok := act.host.VolumeEntry(w.ID, a.Path)
	if !ok {
		return act.host.Toast(toast.LevelInfo, termkit.Sanitize(path.Base(a.Path))+" is no longer listed — r lists again")
	}
	if a.ID == keys.FilesMove {
		act.openModal(dialog.Move(act.c.Theme, act.volPath(w.ID, a.Path), act.moveWarning(w.ID, a.Path)),
			intent{kind: intentMove, wsID: w.ID, target: a.Path})
		return nil
	}
	act.askRemove(w.ID, a.Path, e)
	return nil
}

// askRemove asks before a delete: the typed name for a directory, which
// goes with everything in it; y for a file or a link, of which only the
// link goes.
func (act *Flow) askRemove(wsID, p string, e cairn.FileEntry) {
	o := act.wsOp(ops.RemovePath, wsID)
	o.Path, o.Recursive = p, e.Type == cairn.FileTypeDir
	in := intent{kind: intentRemove, wsID: wsID, change: o}
	shown := termkit.Sanitize(p)
	switch e.Type {
	case cairn.FileTypeDir:
		act.openTyped(in, "Delete directory", "Delete "+shown+" and everything in it? The volume keeps no copy.", typedName(e.Name))
	case cairn.FileTypeSymlink:
		act.openConfirm(in, "Delete symlink", fmt.Sprintf("Delete the symlink %s? Only the link goes; what it points to stays.", shown))
	case cairn.FileTypeFile:
		act.openConfirm(in, "Delete file", fmt.Sprintf("Delete %s (%s)? The volume keeps no copy.", shown, termkit.Size(e.Size)))
	default:
		act.openConfirm(in, "Delete", fmt.Sprintf("Delete %s (not a regular file)? The volume keeps no copy.", shown))
	}
}

// typedName is what a directory's delete asks to be typed: its name, or
// "delete" when the name does not show as it is (it holds a character
// the screen escapes) and so cannot be typed from what is shown.
func typedName(name string) string {
	if termkit.Sanitize(name) != name {
		return "delete"
	}
	return name
}

// submitChangeForm starts the change a form asks for; the form stays
// open and busy until the server answers, whose refusals of the path go
// under the field. An upload first reads its local file in a Cmd.
func (act *Flow) submitChangeForm(f *form.Model, in intent, res screen.Result) tea.Cmd {
	var o ops.Op
	switch in.kind {
	case intentPutFile:
		return act.checkPut(f, res)
	case intentMkdir:
		o = act.wsOp(ops.MakeDir, in.wsID)
		o.Path = path.Join(in.dir, res.Values["name"])
	default:
		to := path.Clean(res.Values["path"])
		if to == in.target {
			act.closeModal()
			return act.host.Toast(toast.LevelInfo, "nothing changed")
		}
		o = act.wsOp(ops.MovePath, in.wsID)
		o.Path, o.To = in.target, to
	}
	act.intent.opID = o.ID
	f.Busy(act.host.Frame())
	return act.ops.Run(o)
}

// checkPut reads the upload's local file in a Cmd, held to the server's
// bound of one file write.
func (act *Flow) checkPut(f *form.Model, res screen.Result) tea.Cmd {
	id := act.host.NextID()
	act.intent.opID, act.intent.target = id, path.Clean(res.Values["path"])
	local := res.Values["local"]
	f.BusyWith(act.host.Frame(), "reading "+local+"…")
	b, ctx := act.backend, act.ctx
	return func() tea.Msg { return readPut(ctx, b, id, local) }
}

// putReadMsg is an upload's local file: its bytes, or the sentence under
// the local field.
type putReadMsg struct {
	opID  int
	local string // ~ expanded
	data  []byte
	err   string
}

// readPut reads the regular file raw names, refusing one past the server's
// bound of a file write before reading it, and one that grew past it
// since.
func readPut(ctx context.Context, b Backend, opID int, raw string) putReadMsg {
	st := dialog.StatLocal(opID, raw, true)
	msg := putReadMsg{opID: opID, local: st.Path, err: st.Err}
	if st.Err != "" {
		return msg
	}
	bound := writeBound(ctx, b)
	if st.Size > bound {
		msg.err = tooLarge(raw, st.Size, bound)
		return msg
	}
	data, err := readAtMost(st.Path, bound+1)
	switch {
	case err != nil:
		msg.err = "cannot read " + raw + ": " + err.Error()
	case int64(len(data)) > bound:
		msg.err = tooLarge(raw, int64(len(data)), bound)
	default:
		msg.data = data
	}
	return msg
}

// writeBound is the most one file write carries, as the server says
// (files.write.maxBytes); its default when the server does not say, and
// then the write itself tells.
func writeBound(ctx context.Context, b Backend) int64 {
	if info, err := b.Info(ctx); err == nil && info.Bounds.FileWriteMaxBytes > 0 {
		return info.Bounds.FileWriteMaxBytes
	}
	return cairn.DefaultMaxFileWriteBytes
}

func tooLarge(raw string, size, bound int64) string {
	return fmt.Sprintf("%s is %s, past the %s one file write takes (files.write.maxBytes) — upload it as an artifact (u on the artifacts), then L loads it here",
		raw, termkit.Size(size), termkit.Size(bound))
}

func readAtMost(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// onPutRead answers an upload's form: a local refusal goes under the
// local field; a file listed at the target is replaced only after y, and
// only as it was listed; anything else there refuses; a new name is
// written only while nothing is there.
func (act *Flow) onPutRead(msg putReadMsg) tea.Cmd {
	f, ok := act.host.Modal().(*form.Model)
	if !ok || act.intent.opID != msg.opID {
		return nil // the form was closed meanwhile
	}
	if msg.err != "" {
		f.Fail("local", msg.err)
		return nil
	}
	in := act.intent
	o := act.wsOp(ops.PutFile, in.wsID)
	o.Path, o.Local, o.Data = in.target, msg.local, msg.data
	e, listed := act.host.VolumeEntry(in.wsID, in.target)
	switch {
	case listed && e.Type == cairn.FileTypeFile:
		o.IfMatch = e.ETag
		act.closeModal()
		act.openConfirm(intent{kind: intentPutOverwrite, wsID: in.wsID, change: o}, "Replace file", fmt.Sprintf(
			"%s exists (%s). Replace its content with %s (%s)?", termkit.Sanitize(in.target), termkit.Size(e.Size), msg.local, termkit.Size(int64(len(msg.data)))))
		return nil
	case listed:
		f.Fail("path", act.putWarning(in.wsID)(in.target))
		return nil
	}
	o.CreateOnly = true
	act.intent.opID = o.ID
	f.BusyWith(act.host.Frame(), "uploading "+msg.local+"…")
	return act.ops.Run(o)
}

// takenIn warns while a new directory's name is one the pane lists in dir.
func (act *Flow) takenIn(wsID, dir string) func(string) string {
	return func(name string) string {
		if !dialog.Addressable(name) {
			return ""
		}
		if _, ok := act.host.VolumeEntry(wsID, path.Join(dir, name)); ok {
			return termkit.Sanitize(name) + " exists already here"
		}
		return ""
	}
}

// putWarning notes what the pane lists at an upload's target.
func (act *Flow) putWarning(wsID string) func(string) string {
	return act.listedWarning(wsID, func(e cairn.FileEntry) string {
		if e.Type == cairn.FileTypeFile {
			return termkit.Sanitize(e.Name) + " exists (" + termkit.Size(e.Size) + ") — you are asked before its content is replaced"
		}
		return termkit.Sanitize(e.Name) + " exists and is no regular file — name another path"
	})
}

// moveWarning notes a new path the pane lists already: a move never
// replaces it.
func (act *Flow) moveWarning(wsID, from string) func(string) string {
	return act.listedWarning(wsID, func(e cairn.FileEntry) string {
		return termkit.Sanitize(e.Name) + " exists — a move never replaces it; name a new path"
	}, from)
}

// listedWarning is warn's note about the entry a files pane lists at a
// volume path the form holds; none for an invalid path, one not listed,
// or one of except.
func (act *Flow) listedWarning(wsID string, warn func(cairn.FileEntry) string, except ...string) func(string) string {
	return func(p string) string {
		if cairn.ValidateVolumePath(p) != nil {
			return ""
		}
		p = path.Clean(p)
		for _, x := range except {
			if p == x {
				return ""
			}
		}
		if e, ok := act.host.VolumeEntry(wsID, p); ok {
			return warn(e)
		}
		return ""
	}
}
