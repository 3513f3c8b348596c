package tui

import (
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// fleetLifecycle gives the fleet lifecycles at the epoch, three hours
// before it is shown: ws-alpha a ttl of a day and an idle bound of a
// week, ws-gamma a fixed expiry an hour on (due when shown), and ws-beta a
// volume the maintainer archived.
func fleetLifecycle(h *harness) (alpha, beta *cairn.Workspace) {
	alpha, beta = seedFleet(h)
	w, ctx := h.b.World, ctxBackground()
	ws, err := h.b.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{"ws-gamma"}})
	if err != nil || len(ws) != 1 {
		h.t.Fatal("no ws-gamma", err)
	}
	steps := []error{
		func() error {
			_, err := h.b.SetWorkspaceLifecycle(ctx, alpha.ID, cairn.Lifecycle{TTLSecs: ptr(int64(86400)), ArchiveIdleAfterSecs: ptr(int64(7 * 86400))})
			return err
		}(),
		func() error {
			_, err := h.b.SetWorkspaceLifecycle(ctx, ws[0].ID, cairn.Lifecycle{ExpiresAt: ptr(tuitest.Epoch().Add(time.Hour))})
			return err
		}(),
		func() error {
			w.UpdateWorkspace(beta.ID, func(x *cairn.Workspace) { x.VolumeState = cairn.VolumeReady })
			_, err := w.ArchiveVolume(beta.ID)
			return err
		}(),
	}
	for _, err := range steps {
		if err != nil {
			h.t.Fatal(err)
		}
	}
	w.UpdateWorkspace(alpha.ID, func(x *cairn.Workspace) { x.LastActiveAt = tuitest.Epoch() })
	showFleet(h)
	return alpha, beta
}

// partSix are the lifecycle's scenes: the EXPIRES column, an archived
// volume, the warnings and a touch.
func partSix() []scene {
	return []scene{
		{name: "workspaces_lifecycle", setup: func(h *harness) { fleetLifecycle(h) }},
		{name: "workspaces_archived", setup: func(h *harness) { fleetLifecycle(h); h.key("j") }},
		{name: "toast_expiring", setup: func(h *harness) {
			alpha, _ := fleetLifecycle(h)
			h.warnings(nil, h.warning(cairn.EventWorkspaceExpiring, alpha.ID))
		}},
		{name: "modal_messages_warnings", setup: func(h *harness) {
			alpha, _ := fleetLifecycle(h)
			h.warnings(nil, h.warning(cairn.EventWorkspaceExpiring, alpha.ID), h.warning(cairn.EventWorkspaceArchiving, alpha.ID))
			h.key("!")
		}},
		{name: "toast_touched", setup: func(h *harness) { fleetLifecycle(h); h.key("T") }},
	}
}
