package snapshots

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

// Crumbs is the workspace's name, then "snapshots (3)" once listed
// ("snapshots" before) and the filter.
func (s *Screen) Crumbs() []string {
	crumb := "snapshots"
	if s.listed {
		crumb += " (" + termkit.Count(int64(len(s.snaps))) + ")"
	}
	return s.list.Crumbs(s.wsName, crumb)
}

// Keys is the navigation and snapshot bindings with their state for the
// row under the cursor and the workspace's volume.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "snapshots", map[keys.ID]pane.Help{
		keys.Filter:   {Long: "filter by name or by whom took it; enter keeps, esc clears"},
		keys.CopyName: {Long: "copy the snapshot's name"},
		keys.CopyID:   {Long: "copy the snapshot's ID"},
	}, keys.ScopeNav, keys.ScopeSnapshots)
	ctx.Disable(keys.Open, "a snapshot has nothing to open — the detail pane shows all of it")
	ctx.Disable(keys.SortNext, "snapshots are listed oldest first")
	ctx.Disable(keys.SortReverse, "snapshots are listed oldest first")
	snap, ok := s.Selected()
	switch {
	case !ok:
		for _, id := range []keys.ID{keys.SnapRestore, keys.SnapDelete, keys.CopyName, keys.CopyID} {
			ctx.Disable(id, "no snapshot selected")
		}
	case s.c.Data.Pending(snap.ID) != "":
		ctx.Disable(keys.SnapRestore, "busy: "+s.c.Data.Pending(snap.ID))
		ctx.Disable(keys.SnapDelete, "busy: "+s.c.Data.Pending(snap.ID))
	}
	s.guardVolume(ctx)
	s.list.Restrict(ctx)
	return ctx
}

// guardVolume disables what needs the workspace's volume READY and not
// busy: taking, restoring and forking all run a sidecar on it.
func (s *Screen) guardVolume(ctx keys.Context) {
	ids := []keys.ID{keys.SnapTake, keys.SnapRestore, keys.SnapFork}
	w, ok := s.c.Data.Store().Workspace(s.wsID)
	reason := ""
	switch {
	case !ok || w.VolumeState != cairn.VolumeReady:
		reason = "needs volume READY — v provisions it"
	case s.c.Data.Pending(w.ID) != "":
		reason = "busy: " + s.c.Data.Pending(w.ID)
	}
	if reason != "" {
		for _, id := range ids {
			ctx.Disable(id, reason)
		}
	}
}

// View draws the banner, the list (or why there is none) and the detail
// pane.
func (s *Screen) View() string {
	return s.list.View(s.banner(), s.empty(), s.detail())
}

// banner is a failed list above the last one, else what runs on the
// workspace's volume (a take, a restore, a fork), else why the volume
// cannot take containers.
func (s *Screen) banner() string {
	if s.err != nil && s.listed {
		return "cannot list snapshots: " + s.sentence() + " — the last list shows; r retries"
	}
	w, ok := s.c.Data.Store().Workspace(s.wsID)
	if !ok {
		return ""
	}
	if p := s.c.Data.Pending(w.ID); p != "" {
		return s.c.Theme.Glyphs.Frame(s.c.Data.Frame()) + " " + s.wsName + ": " + p + s.c.Theme.Glyphs.Ellipsis
	}
	return pane.VolumeIssue(w)
}

func (s *Screen) sentence() string {
	return errtext.Sentence(s.err, errtext.Subject{Workspace: s.wsName, Scope: "read"})
}

func (s *Screen) empty() string {
	switch {
	case s.list.Table.Total() > 0:
		return "no snapshot matches the filter — esc clears it"
	case s.err != nil:
		return "cannot list snapshots: " + s.sentence() + "\nr retries"
	case !s.listed:
		return "listing snapshots" + s.c.Theme.Glyphs.Ellipsis
	case s.c.Config.ReadOnly:
		return "No snapshots of " + s.wsName + "."
	}
	return "No snapshots of " + s.wsName + " yet — " + s.c.Keys.Action(keys.SnapTake).FirstKey() + " takes one."
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	snap, ok := s.Selected()
	if !ok {
		return nil
	}
	return Detail(s.c, snap)
}

// Detail renders every field of a snapshot, each untrusted text
// sanitised.
func Detail(c *deps.Deps, s *cairn.Snapshot) []string {
	th := c.Theme
	by := termkit.Sanitize(optional.String(s.CreatedBy))
	if by == "" {
		by = th.Glyphs.Dash
	}
	return []string{
		" " + th.Bold.Render("snapshot "+termkit.Sanitize(s.Name)),
		pane.Field(th, "ID", termkit.Sanitize(s.ID)),
		pane.Field(th, "Workspace", workspaceName(c, s.WorkspaceID)),
		pane.Field(th, "Taken", pane.Stamped(c.Data.Now(), s.CreatedAt)),
		pane.Field(th, "By", by),
		pane.Field(th, "Live", liveText(s.Live)),
		pane.Field(th, "Entries", termkit.Count(int64(s.Entries))),
		pane.Field(th, "Size", termkit.Size(s.Bytes)),
		pane.Field(th, "Uploaded", termkit.Size(s.UploadedBytes)+" (new to the store)"),
		pane.Field(th, "Skipped", skipped(s.Skipped)),
		pane.Field(th, "Manifest", "sha256 "+termkit.Sanitize(s.ManifestSHA256)),
	}
}

func liveText(live bool) string {
	if live {
		return "yes: files whole, not one instant"
	}
	return "no: one point in time"
}

// skipped says what the snapshot left out: special files, which it does
// not record.
func skipped(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%s special %s (devices, fifos, sockets) not recorded", termkit.Count(int64(n)),
		termkit.Plural(int64(n), "file", "files"))
}
