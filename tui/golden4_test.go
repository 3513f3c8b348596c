package tui

import (
	"context"

	"github.com/cairn-dev/cairn"
)

// fleetShells answers two live shells, one of them idle a while.
func fleetShells(h *harness, alpha *cairn.Workspace) {
	started := h.clock.Now().Add(-42 * 60e9)
	idle := h.clock.Now().Add(-3 * 60e9)
	detached := true
	h.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
		return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{
			{ID: "01JSHELL000000000000000001", WorkspaceID: alpha.ID, Container: "5f3c2a1e9b7d", Instance: "cairn-a",
				State: "running", StartedAt: started, TokenName: "ops", Local: true, LastInputAt: &idle, ClientAddr: "10.0.0.7:51234",
				Detached: &detached, Watchers: 1},
			{ID: "01JSHELL000000000000000002", WorkspaceID: alpha.ID, Container: "9a8b7c6d5e4f", Instance: "cairn-b",
				State: "running", StartedAt: started, TokenName: "agent"},
		}}, nil
	}
}

// fleetAudit answers a short trail, newest first.
func fleetAudit(h *harness, alpha *cairn.Workspace) {
	ops, maint := "ops", "maintainer"
	at := h.clock.Now()
	h.b.AuditFunc = func(context.Context, cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
		return []*cairn.AuditEvent{
			{ID: "01JAUDIT000000000000000003", Type: cairn.AuditShellClosed, Actor: &ops, CreatedAt: at.Add(-60e9),
				Metadata: map[string]any{"workspace_id": alpha.ID, "reason": "terminated", "killed_by": "ops", "request_id": "01JREQ00000000000000000042"}},
			{ID: "01JAUDIT000000000000000002", Type: cairn.AuditArtifactMissing, Actor: &maint, CreatedAt: at.Add(-600e9),
				Metadata: map[string]any{"workspace_id": alpha.ID, "artifact_name": "model_bin"}},
			{ID: "01JAUDIT000000000000000001", Type: cairn.AuditNewWorkspace, CreatedAt: at.Add(-3 * 3600e9),
				Metadata: map[string]any{"workspace_id": alpha.ID, "name": "ws-alpha"}},
		}, nil
	}
}

// partFour are the fleet console's scenes.
func partFour() []scene {
	return []scene{
		{name: "palette_open", setup: func(h *harness) { fleet(h); h.key(":") }},
		{name: "palette_ws", setup: func(h *harness) { fleet(h); h.key(":").typeText("ws al") }},
		{name: "palette_unknown", setup: func(h *harness) { fleet(h); h.key(":").typeText("frob").key("enter") }},
		{name: "marks", setup: func(h *harness) { fleet(h); h.key("enter", " ", " ") }},
		{name: "marks_typed_delete", setup: func(h *harness) { fleet(h); h.key("enter", "ctrl+a", "D") }},
		{name: "bulk_results", setup: func(h *harness) {
			alpha, _ := fleet(h)
			arts, _ := h.b.FindArtifacts(ctxBackground(), cairn.ArtifactFilter{WorkspaceID: alpha.ID,
				States: []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}})
			h.b.DeleteArtifactFunc = func(_ context.Context, id string) error {
				if id == arts[1].ID {
					return cairn.Errorf(cairn.ReasonArtifactNotFound, "gone")
				}
				h.b.World.DeleteArtifact(id)
				return nil
			}
			h.key("enter", "ctrl+a", "D").typeText("delete 3").key("enter")
		}},
		{name: "shells", setup: func(h *harness) { alpha, _ := fleet(h); fleetShells(h, alpha); h.command("shells") }},
		{name: "shells_kill_confirm", setup: func(h *harness) { alpha, _ := fleet(h); fleetShells(h, alpha); h.key("w", "D") }},
		{name: "audit", setup: func(h *harness) { alpha, _ := fleet(h); fleetAudit(h, alpha); h.key("a") }},
		{name: "audit_forbidden", setup: func(h *harness) {
			fleet(h)
			h.b.AuditFunc = func(context.Context, cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
				return nil, cairn.Errorf(cairn.ReasonForbidden, "token 'ci' lacks scope 'admin'")
			}
			h.command("audit")
		}},
		{name: "context_header", setup: func(h *harness) {
			h.m.c.Config.Context = "prod-eu"
			fleet(h)
		}},
	}
}
