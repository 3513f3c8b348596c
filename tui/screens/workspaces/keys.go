package workspaces

import (
	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
)

// Keys is the navigation and workspace bindings with their state for the
// row under the cursor.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "workspaces", nil, keys.ScopeNav, keys.ScopeLists, keys.ScopeWorkspaces)
	ctx.Disable(keys.BackNav, "already at the top")
	w, ok := s.Selected()
	if !ok {
		for _, id := range []keys.ID{keys.Open, keys.CopyName, keys.CopyID, keys.WsEdit, keys.WsProvision, keys.WsTeardown, keys.WsDelete, keys.WsTouch,
			keys.Shell, keys.VolSave, keys.WsSweep, keys.Files, keys.ShellsOf, keys.AuditOf, keys.Snapshots, keys.Mark, keys.MarkAll} {
			ctx.Disable(id, "no workspace selected")
		}
	} else {
		s.guard(ctx, w)
	}
	s.list.Restrict(ctx)
	s.list.BulkKeys(ctx)
	return ctx
}

// guard disables what the workspace's state forbids.
func (s *Screen) guard(ctx keys.Context, w *cairn.Workspace) {
	if p := s.c.Data.Pending(w.ID); p != "" {
		for _, id := range []keys.ID{keys.WsEdit, keys.WsProvision, keys.WsTeardown, keys.WsDelete, keys.WsTouch, keys.Shell, keys.VolSave, keys.WsSweep,
			keys.Files} {
			ctx.Disable(id, "busy: "+p)
		}
	}
	if w.VolumeState == cairn.VolumeReady {
		ctx.Disable(keys.WsProvision, termkit.Sanitize(w.Name)+" already has a volume")
		if r := s.c.Data.ShellBlocked(); r != "" {
			ctx.Disable(keys.Shell, r)
		}
	} else {
		provision, one := "v provisions it", "v provisions one"
		if optional.Archived(w) {
			provision, one = "v restores its archived volume", "its volume is archived — v restores it"
			ctx.Relabel(keys.WsProvision, "restore volume")
		}
		ctx.Disable(keys.WsTeardown, termkit.Sanitize(w.Name)+" has no volume — "+one)
		ctx.Disable(keys.Shell, "shell needs volume READY — "+provision)
		ctx.Disable(keys.VolSave, "needs volume READY — "+provision)
		ctx.Disable(keys.Files, "files need volume READY — "+provision)
	}
}
