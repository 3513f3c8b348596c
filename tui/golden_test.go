package tui

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// fleet seeds three workspaces (one READY with artifacts, one MISSING),
// lists them three hours later and lets the cursor rest so counts show.
func fleet(h *harness) (alpha, beta *cairn.Workspace) {
	alpha, beta = seedFleet(h)
	showFleet(h)
	return alpha, beta
}

// seedFleet adds fleet's workspaces and artifacts.
func seedFleet(h *harness) (alpha, beta *cairn.Workspace) {
	w := h.b.World
	alpha = w.AddWorkspace("ws-alpha", cairn.VolumeReady, "Nightly ETL outputs\nkept for a week")
	beta = w.AddWorkspace("ws-beta", cairn.VolumeNone, "")
	w.AddWorkspace("ws-gamma", cairn.VolumeNone, "scratch space for experiments with a long description that will be cut")
	w.AddArtifact(alpha.ID, "report_csv", cairn.ArtifactRecorded, 14336, "daily report")
	w.AddArtifact(alpha.ID, "model_bin", cairn.ArtifactMissingObject, 3355443, "")
	w.AddArtifact(alpha.ID, "notes_md", cairn.ArtifactRecorded, 512, "")
	w.SetMounts(alpha.ID, 2)
	return alpha, beta
}

// showFleet lists the fleet three hours after it was made.
func showFleet(h *harness) {
	h.clock.Advance(3*time.Hour + time.Minute)
	h.size(120, 40).hello()
	h.fire(isMsg[screen.RestMsg])
}

type scene struct {
	name  string
	edit  func(*config.Config)
	setup func(h *harness)
}

func scenes() []scene {
	return []scene{
		{name: "workspaces_loading", setup: func(h *harness) { h.size(120, 40) }},
		{name: "workspaces_empty", setup: func(h *harness) { h.size(120, 40).hello() }},
		{name: "workspaces_loaded", setup: func(h *harness) { fleet(h) }},
		{name: "workspaces_pending", setup: func(h *harness) {
			fleet(h)
			h.key("j", "v")
			h.m.Update(modeltest.Key("y")) // the op's Cmd never runs: it stays pending
		}},
		{name: "workspaces_filtering", setup: func(h *harness) { fleet(h); h.key("/").typeText("al") }},
		{name: "workspaces_filtered", setup: func(h *harness) { fleet(h); h.key("/").typeText("ga").key("enter") }},
		{name: "workspaces_detail_focus", setup: func(h *harness) { fleet(h); h.key("tab") }},
		{name: "workspaces_zoom", setup: func(h *harness) { fleet(h); h.key("z") }},
		{name: "workspaces_failed", setup: func(h *harness) {
			h.b.FindWorkspacesFunc = func(ctxT, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
				return nil, &cairn.Error{Reason: cairn.ReasonUnauthenticated, Status: 401}
			}
			h.size(120, 40).hello()
		}},
		{name: "workspaces_readonly", edit: func(c *config.Config) { c.ReadOnly = true }, setup: func(h *harness) { fleet(h) }},
		{name: "workspaces_ascii", edit: func(c *config.Config) { c.Glyphs = "ascii" }, setup: func(h *harness) {
			fleet(h)
			h.key("j", "v")
			h.m.Update(modeltest.Key("y"))
		}},
		{name: "badge_reconnecting", setup: func(h *harness) {
			fleet(h)
			h.conn(live.Conn{Kind: live.ConnLost, RetryIn: 4 * time.Second})
		}},
		{name: "badge_offline", setup: func(h *harness) {
			fleet(h)
			h.conn(live.Conn{Kind: live.ConnLost, RetryIn: 4 * time.Second})
			h.clock.Advance(2 * time.Minute)
			h.send(tickMsg{gen: h.m.tick.gen, now: h.clock.Now()})
		}},
		{name: "badge_polling", setup: func(h *harness) {
			h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
			h.size(120, 40).conn(live.Conn{Kind: live.ConnLost, Unavailable: true})
		}},
		{name: "badge_events_off", edit: func(c *config.Config) { c.EventsMode = "off" }, setup: func(h *harness) {
			h.size(120, 40).send(feed.StartMsg{})
		}},
		{name: "toast_ok", setup: func(h *harness) { fleet(h); h.key("y") }},
		{name: "toast_info", setup: func(h *harness) { fleet(h); h.key("v") }},
		{name: "toast_warning", setup: func(h *harness) { missingEvent(h) }},
		{name: "toast_error", setup: func(h *harness) {
			fleet(h)
			h.m.notes.ErrorFor(&cairn.Error{Reason: cairn.ReasonDockerUnavailable, Status: 503}, errtext.Subject{})
		}},
		{name: "tasks", setup: func(h *harness) {
			fleet(h)
			h.hop(modeltest.Key("V")) // the mount check's Cmd never runs: it stays a task
		}},
		{name: "artifacts_loaded", setup: func(h *harness) { fleet(h); h.key("enter") }},
		{name: "artifacts_empty", setup: func(h *harness) { fleet(h); h.key("j", "enter") }},
		{name: "artifacts_missing_only", setup: func(h *harness) { fleet(h); h.key("enter", "m") }},
		{name: "artifacts_filtered", setup: func(h *harness) { fleet(h); h.key("enter", "/").typeText("rep").key("enter") }},
		{name: "artifacts_detail_focus", setup: func(h *harness) { fleet(h); h.key("enter", "j", "tab") }},
		{name: "artifacts_deleting", setup: func(h *harness) {
			fleet(h)
			h.key("enter", "D")
			h.m.Update(modeltest.Key("y"))
		}},
		{name: "artifacts_workspace_deleted", setup: func(h *harness) {
			alpha, _ := fleet(h)
			h.key("enter")
			h.events(cairn.Event{Type: cairn.EventWorkspaceDeleted, ID: alpha.ID})
		}},
		{name: "missing_alert_artifacts", setup: func(h *harness) {
			alpha, _ := fleet(h)
			h.key("enter")
			a := h.b.World.AddArtifact(alpha.ID, "fresh_json", cairn.ArtifactRecorded, 2048, "")
			h.events(artUpserted(a), upserted(h.worldWS(alpha.ID)))
			h.events(artUpserted(h.b.World.UpdateArtifact(a.ID, func(a *cairn.Artifact) { a.State = cairn.ArtifactMissingObject })),
				upserted(h.worldWS(alpha.ID)))
		}},
		{name: "modal_create", setup: func(h *harness) { fleet(h); h.key("n").typeText("ws-delta") }},
		{name: "modal_create_error", setup: func(h *harness) { fleet(h); h.key("n").typeText("ws-beta").key("enter") }},
		{name: "modal_create_invalid", setup: func(h *harness) { fleet(h); h.key("n").typeText("no spaces").key("enter") }},
		{name: "modal_edit", setup: func(h *harness) { fleet(h); h.key("e", "tab") }},
		{name: "modal_provision", setup: func(h *harness) { fleet(h); h.key("j", "v") }},
		{name: "modal_teardown", setup: func(h *harness) {
			alpha, _ := fleet(h)
			h.b.World.SetMounts(alpha.ID, 0)
			h.key("V").typeText("ws-al")
		}},
		{name: "modal_typed_mismatch", setup: func(h *harness) { fleet(h); h.key("j", "D").typeText("ws-bet").key("enter") }},
		{name: "modal_delete_ready", setup: func(h *harness) { fleet(h); h.key("D") }},
		{name: "modal_delete_ready_typed", setup: func(h *harness) { fleet(h); h.key("D", "y") }},
		{name: "modal_artifact_delete", setup: func(h *harness) { fleet(h); h.key("enter", "D") }},
		{name: "modal_help", setup: func(h *harness) { fleet(h); h.key("?") }},
		{name: "modal_messages", setup: func(h *harness) { missingEvent(h); h.key("y", "!") }},
	}
}

// allScenes are every golden scene.
func allScenes() []scene {
	return append(append(append(append(append(scenes(), partTwo()...), partThree()...), partFour()...), partFive()...), partSix()...)
}

// missingEvent turns report_csv MISSING by an event, on the workspaces
// screen, with the artifacts cached.
func missingEvent(h *harness) {
	alpha, _ := fleet(h)
	arts, _ := h.b.FindArtifacts(ctxBackground(), cairn.ArtifactFilter{WorkspaceID: alpha.ID})
	for _, a := range arts {
		if a.Name == "report_csv" {
			h.events(artUpserted(h.b.World.UpdateArtifact(a.ID, func(a *cairn.Artifact) { a.State = cairn.ArtifactMissingObject })),
				upserted(h.worldWS(alpha.ID)))
		}
	}
}

// TestViewGoldens renders every scene at the three layout sizes; run with
// -update to rewrite testdata/TestViewGoldens/…, and read the diffs.
func TestViewGoldens(t *testing.T) {
	for _, sc := range allScenes() {
		for _, size := range tuitest.Layouts() {
			t.Run(fmt.Sprintf("%s/%dx%d", sc.name, size.W, size.H), func(t *testing.T) {
				h := newHarness(t, func(c *config.Config) {
					if sc.edit != nil {
						sc.edit(c)
					}
				})
				sc.setup(h)
				h.size(size.W, size.H)
				golden.RequireEqual(t, []byte(h.view()))
			})
		}
	}
}

// TestViewGoldensTinySizes covers each screen below the minimum and before
// the first size.
func TestViewGoldensTinySizes(t *testing.T) {
	for _, name := range []string{"workspaces", "artifacts"} {
		for _, size := range []tuitest.Size{{W: 59, H: 15}, {W: 0, H: 0}} {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size.W, size.H), func(t *testing.T) {
				h := newHarness(t)
				if size.W > 0 {
					fleet(h)
					if name == "artifacts" {
						h.key("enter")
					}
					h.size(size.W, size.H)
				}
				golden.RequireEqual(t, []byte(h.view()))
			})
		}
	}
}

// TestViewGoldensTrueColor pins the theme's colours on two screens with a
// TrueColor renderer of their own.
func TestViewGoldensTrueColor(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	for _, kind := range []string{"dark", "light", "high-contrast"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t)
			h.m.c.Theme = theme.NewFor(r, kind, theme.Unicode())
			missingEvent(h)
			h.key("enter")
			h.size(100, 30)
			golden.RequireEqualEscape(t, []byte(h.view()), true)
		})
	}
}

// TestScreenCaptures keeps one 120×40 capture per screen under
// testdata/screens/ for the README (plain text, as tmux capture-pane shows
// it); -update rewrites them.
func TestScreenCaptures(t *testing.T) {
	want := map[string]bool{
		"workspaces_loaded": true, "artifacts_loaded": true, "missing_alert_artifacts": true,
		"modal_create": true, "modal_delete_ready_typed": true, "modal_help": true,
		"badge_polling": true, "workspaces_readonly": true,
		"transfer_uploading": true, "transfers_screen": true, "preview_text": true, "preview_binary": true,
		"preview_escaped": true, "modal_vol_save": true, "modal_replace_confirm": true, "shell_exited": true,
		"files_root": true, "files_preview_text": true, "modal_files_pick_load": true,
		"snapshots_loaded": true, "modal_snapshot_restore_typed": true, "workspaces_lifecycle": true,
	}
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"
	for _, sc := range allScenes() {
		if !want[sc.name] {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			h := newHarness(t, func(c *config.Config) {
				if sc.edit != nil {
					sc.edit(c)
				}
			})
			sc.setup(h)
			h.size(120, 40)
			got := trimRight(h.view()) + "\n"
			path := filepath.Join("testdata", "screens", sc.name+".txt")
			if update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(b), got)
		})
	}
}

// trimRight drops trailing spaces, as a pane capture does.
func trimRight(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
