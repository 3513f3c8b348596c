package files

import (
	"slices"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
)

// Crumbs is the workspace, then "files /mnt/cairn/ws/out (12)": the
// directory listed and how many entries (a + while more remain), the
// watch's state and the filter.
func (s *Screen) Crumbs() []string {
	count := s.pages.Count()
	switch {
	case !s.pages.Listed() && s.pages.Err() == nil:
		count = "listing" + s.c.Theme.Glyphs.Ellipsis
	case !s.pages.Listed():
		count = "not listed"
	}
	return s.list.Crumbs(s.wsName, "files "+termkit.Sanitize(s.dir)+" ("+count+")"+s.liveMark())
}

// liveMark is the watch's state after the title: "● watching" while
// changes arrive, "◌ watching" while the watch reconnects, nothing
// without one.
func (s *Screen) liveMark() string {
	g := s.c.Theme.Glyphs
	switch s.live {
	case LiveOn:
		return " " + g.Live + " watching"
	case LiveWaiting:
		return " " + g.Connecting + " watching"
	}
	return ""
}

// Keys is the navigation and files bindings with their state for the
// entry under the cursor.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "files", map[keys.ID]pane.Help{
		keys.Open:     {Long: "enter the directory; preview a file"},
		keys.BackNav:  {Short: "up", Long: "up to the parent directory (never above " + cairn.MountPath + ")"},
		keys.Filter:   {Long: "filter the listed entries by name; enter keeps, esc clears"},
		keys.SortNext: {Long: "cycle the sort: name → size → modified"},
		keys.CopyName: {Long: "copy the entry's name"},
		keys.CopyID:   {Short: "copy path", Long: "copy the entry's full path"},
	}, keys.ScopeNav, keys.ScopeFiles)
	if s.AtRoot() {
		ctx.Disable(keys.BackNav, "already at the volume root "+cairn.MountPath+" — esc goes back")
		ctx.Disable(keys.FilesParent, "already at the volume root "+cairn.MountPath+" — esc goes back")
	}
	if r, ok := s.list.Table.Cursor(); ok {
		guardEntry(ctx, r)
	} else {
		for _, id := range slices.Concat(entryActions, []keys.ID{keys.CopyName, keys.CopyID}) {
			ctx.Disable(id, "no entry selected")
		}
	}
	s.guardVolume(ctx)
	s.list.Restrict(ctx)
	if s.c.Remote {
		ctx.Hide(keys.FilesUpload, keys.FilesEdit) // this machine's disk and editor are not the operator's
	}
	return ctx
}

// entryActions act on the entry under the cursor.
var entryActions = []keys.ID{keys.Open, keys.FilesPreview, keys.FilesSave, keys.FilesEdit, keys.FilesMove, keys.FilesDelete}

// guardEntry disables what the entry's type forbids: links are shown,
// never followed, but may be renamed or deleted (the link itself); only
// a regular file previews, and one that one read returns whole is
// edited; a name the API cannot address can only be changed in a shell.
func guardEntry(ctx keys.Context, r *row) {
	name := termkit.Sanitize(r.e.Name)
	var reason string
	switch {
	case !r.addressable():
		for _, id := range entryActions {
			ctx.Disable(id, name+": the name holds a control character the API cannot address — rename it in a shell")
		}
		return
	case r.isLink():
		reason = name + " is a symlink to " + termkit.Sanitize(optional.String(r.e.LinkTarget)) + " — links are shown, never followed"
	case !r.isDir() && !r.isFile():
		reason = name + " is not a regular file (a FIFO, socket or device)"
	case r.isDir():
		ctx.Disable(keys.FilesPreview, name+" is a directory — enter opens it")
		ctx.Disable(keys.FilesEdit, name+" is a directory — enter opens it")
		return
	case r.e.Size > cairn.MaxFileReadBytes:
		ctx.Disable(keys.FilesEdit, errtext.TooLargeToEdit(name, r.e.Size))
		return
	default:
		return
	}
	for _, id := range []keys.ID{keys.Open, keys.FilesPreview, keys.FilesSave, keys.FilesEdit} {
		ctx.Disable(id, reason)
	}
}

// guardVolume disables what needs the volume READY and the workspace
// present and idle.
func (s *Screen) guardVolume(ctx keys.Context) {
	writes := []keys.ID{keys.FilesSave, keys.FilesLoad, keys.FilesUnpack, keys.FilesEdit, keys.FilesMkdir, keys.FilesUpload,
		keys.FilesMove, keys.FilesDelete}
	w, ok := s.c.Data.Store().Workspace(s.wsID)
	switch {
	case s.deleted || !ok:
		for _, id := range append(writes, keys.Open, keys.FilesPreview, keys.FilesParent, keys.BackNav, keys.Filter, keys.SortNext, keys.SortReverse) {
			ctx.Disable(id, "workspace deleted")
		}
	case w.VolumeState != cairn.VolumeReady:
		for _, id := range append(writes, keys.FilesPreview) {
			ctx.Disable(id, "needs volume READY — v provisions it")
		}
	default:
		if p := s.c.Data.Pending(w.ID); p != "" {
			for _, id := range writes {
				ctx.Disable(id, "busy: "+p)
			}
		}
	}
}

// View draws the banner, the list (or what it waits for) and the detail
// pane, and the line saying more entries remain.
func (s *Screen) View() string {
	return s.list.View(s.banner(), s.empty(), s.detail())
}

func (s *Screen) banner() string {
	switch {
	case s.deleted:
		return "workspace deleted — only back and copy remain"
	case s.pages.Err() != nil && s.pages.Listed():
		return "cannot list " + termkit.Sanitize(s.dir) + ": " + s.sentence() + " — r retries"
	}
	return ""
}

func (s *Screen) sentence() string {
	return errtext.Sentence(s.pages.Err(), errtext.Subject{Workspace: s.wsName, Scope: "read"})
}

func (s *Screen) empty() string {
	dir := termkit.Sanitize(s.dir)
	switch {
	case s.list.Table.Total() > 0:
		return "no entry matches the filter — esc clears it"
	case s.pages.Err() != nil:
		text := "cannot list " + dir + ": " + s.sentence() + "\nr retries"
		if !s.AtRoot() {
			text += " · h goes up"
		}
		return text
	case !s.pages.Listed():
		return "listing " + dir + s.c.Theme.Glyphs.Ellipsis
	case s.c.Config.ReadOnly:
		return dir + " is empty."
	}
	return dir + " is empty — n makes a directory, L loads an artifact here, X unpacks one."
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil
	}
	return Detail(s.c, s.pathOf(r), r.e, s.list.DetailWidth())
}

// Detail renders an entry's detail lines: name, path, type, link target,
// size, mode and modification time, each untrusted text sanitised.
func Detail(c *deps.Deps, p string, e cairn.FileEntry, width int) []string {
	th := c.Theme
	lines := []string{
		" " + th.Bold.Render(termkit.Sanitize(e.Name)),
		pane.Field(th, "Path", termkit.Sanitize(p)),
		pane.Field(th, "Type", typeWord(e.Type)),
	}
	if e.LinkTarget != nil {
		lines = append(lines, pane.Field(th, "Target", termkit.Sanitize(*e.LinkTarget)+" (never followed)"))
	}
	if e.Type == cairn.FileTypeFile {
		lines = append(lines, pane.Field(th, "Size", termkit.Size(e.Size)+" ("+termkit.Count(e.Size)+" bytes)"))
	}
	lines = append(lines,
		pane.Field(th, "Mode", termkit.Sanitize(e.Mode)+" ("+ModeString(e.Type, e.Mode)+")"),
		pane.Field(th, "Modified", pane.Stamped(c.Data.Now(), e.MTime)),
	)
	if !(&row{e: e}).addressable() {
		lines = append(lines, pane.Paragraph(th, "Note",
			"the name holds a control character the API cannot address — rename it in a shell", width)...)
	}
	return lines
}

func typeWord(t string) string {
	switch t {
	case cairn.FileTypeDir:
		return "directory"
	case cairn.FileTypeFile:
		return "file"
	case cairn.FileTypeSymlink:
		return "symlink"
	}
	return "other (a FIFO, socket or device)"
}
