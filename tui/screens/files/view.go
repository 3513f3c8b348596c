package files

import (
	"fmt"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
)

// Crumbs is the workspace, then "files /mnt/cairn/ws/out (12)": the
// directory listed and how many entries (a + while more remain), and the
// filter.
func (s *Screen) Crumbs() []string {
	count := termkit.Count(int64(s.loaded))
	switch {
	case !s.listed && s.err == nil:
		count = "listing" + s.c.Theme.Glyphs.Ellipsis
	case !s.listed:
		count = "not listed"
	case s.next != "":
		count += "+"
	}
	crumb := "files " + termkit.Sanitize(s.dir) + " (" + count + ")"
	if f := s.list.FilterCrumb(); f != "" {
		crumb += " " + f
	}
	return []string{s.wsName, crumb}
}

// Keys is the navigation and files bindings with their state for the
// entry under the cursor.
func (s *Screen) Keys() keys.Context {
	km := s.c.Keys
	ctx := keys.Context{Name: "files", Bindings: append(km.Enabled(keys.ScopeNav), km.Enabled(keys.ScopeFiles)...)}
	for i := range ctx.Bindings {
		b := &ctx.Bindings[i]
		switch b.ID {
		case keys.Open:
			b.Help = "enter the directory; preview a file"
		case keys.BackNav:
			b.Short, b.Help = "up", "up to the parent directory (never above "+cairn.MountPath+")"
		case keys.Filter:
			b.Help = "filter the listed entries by name; enter keeps, esc clears"
		case keys.SortNext:
			b.Help = "cycle the sort: name → size → modified"
		case keys.CopyName:
			b.Help = "copy the entry's name"
		case keys.CopyID:
			b.Short, b.Help = "copy path", "copy the entry's full path"
		}
	}
	if s.AtRoot() {
		ctx.Disable(keys.BackNav, "already at the volume root "+cairn.MountPath+" — esc goes back")
		ctx.Disable(keys.FilesParent, "already at the volume root "+cairn.MountPath+" — esc goes back")
	}
	if r, ok := s.list.Table.Cursor(); ok {
		guardEntry(ctx, r)
	} else {
		for _, id := range []keys.ID{keys.Open, keys.FilesPreview, keys.FilesSave, keys.CopyName, keys.CopyID} {
			ctx.Disable(id, "no entry selected")
		}
	}
	s.guardVolume(ctx)
	if !s.list.Split() {
		ctx.Disable(keys.Zoom, "nothing to zoom at this width")
	}
	if s.c.Config.ReadOnly {
		ctx.ReadOnly()
	}
	return ctx
}

// guardEntry disables what the entry's type forbids: links are shown,
// never followed; only a regular file previews; a name the API cannot
// address can only be renamed in a shell.
func guardEntry(ctx keys.Context, r *row) {
	name := termkit.Sanitize(r.e.Name)
	var reason string
	switch {
	case !r.addressable():
		reason = name + ": the name holds a control character the API cannot address — rename it in a shell"
	case r.isLink():
		reason = name + " is a symlink to " + termkit.Sanitize(optional.String(r.e.LinkTarget)) + " — links are shown, never followed"
	case !r.isDir() && !r.isFile():
		reason = name + " is not a regular file (a FIFO, socket or device)"
	case r.isDir():
		ctx.Disable(keys.FilesPreview, name+" is a directory — enter opens it")
		return
	default:
		return
	}
	for _, id := range []keys.ID{keys.Open, keys.FilesPreview, keys.FilesSave} {
		ctx.Disable(id, reason)
	}
}

// guardVolume disables what needs the volume READY and the workspace
// present and idle.
func (s *Screen) guardVolume(ctx keys.Context) {
	writes := []keys.ID{keys.FilesSave, keys.FilesLoad, keys.FilesUnpack}
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
	case s.err != nil && s.listed:
		return "cannot list " + termkit.Sanitize(s.dir) + ": " + s.sentence() + " — r retries"
	}
	return ""
}

func (s *Screen) sentence() string {
	return errtext.Sentence(s.err, errtext.Subject{Workspace: s.wsName, Scope: "read"})
}

func (s *Screen) empty() string {
	dir := termkit.Sanitize(s.dir)
	switch {
	case s.list.Table.Total() > 0:
		return "no entry matches the filter — esc clears it"
	case s.err != nil:
		text := "cannot list " + dir + ": " + s.sentence() + "\nr retries"
		if !s.AtRoot() {
			text += " · h goes up"
		}
		return text
	case !s.listed:
		return "listing " + dir + s.c.Theme.Glyphs.Ellipsis
	case s.c.Config.ReadOnly:
		return dir + " is empty."
	}
	return dir + " is empty — L loads an artifact here, X unpacks one."
}

// footer is the line under the list while the directory has more entries
// than are listed.
func (s *Screen) footer() string {
	e := s.c.Theme.Glyphs.Ellipsis
	switch {
	case s.next == "":
		return ""
	case s.loaded >= MaxEntries:
		return fmt.Sprintf("%s only the first %s entries are listed here — a shell lists the rest", e, termkit.Count(MaxEntries))
	case s.loading:
		return fmt.Sprintf("%s listing more (%s so far)%s", e, termkit.Count(int64(s.loaded)), e)
	}
	return fmt.Sprintf("%s more entries: moving down lists the next %s", e, termkit.Count(PageSize))
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
