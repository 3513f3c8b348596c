package tui

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/transfer"
)

// partTwo are the scenes of transfers, preview, volume transfers and the
// shell.
func partTwo() []scene {
	return []scene{
		{name: "transfer_queued", setup: func(h *harness) { fleetTransfers(h, 3) }},
		{name: "transfer_hashing", setup: func(h *harness) { fleetTransfers(h, 1) }},
		{name: "transfer_uploading", setup: func(h *harness) {
			t := fleetTransfers(h, 1)[0]
			progress(h, t, 2<<20, 4<<20, 64<<20)
		}},
		{name: "transfer_registering", setup: func(h *harness) {
			t := fleetTransfers(h, 1)[0]
			progress(h, t, 64<<20, 64<<20, 64<<20)
		}},
		{name: "transfer_downloading", setup: func(h *harness) {
			t := fleetDownload(h)
			progress(h, t, 1<<20, 3<<20, 14<<20)
		}},
		{name: "transfer_done", setup: func(h *harness) {
			t := fleetTransfers(h, 1)[0]
			progress(h, t, 32<<20, 64<<20, 64<<20)
			h.clock.Advance(4 * time.Second)
			h.send(tickMsg{gen: h.m.tick.gen, now: h.clock.Now()})
			a := &cairn.Artifact{ID: "01JDONE", WorkspaceID: t.WorkspaceID, Name: t.Name, Size: 64 << 20, State: cairn.ArtifactRecorded,
				MIMEType: "application/octet-stream", CreatedAt: h.clock.Now(), UpdatedAt: h.clock.Now()}
			h.m.Update(transfer.DoneMsg{ID: t.ID, Art: a})
		}},
		{name: "transfer_failed", setup: func(h *harness) {
			t := fleetTransfers(h, 1)[0]
			progress(h, t, 1<<20, 2<<20, 64<<20)
			h.m.Update(transfer.DoneMsg{ID: t.ID, Err: &cairn.Error{Reason: cairn.ReasonSourceChanged}})
		}},
		{name: "transfer_cancelled", setup: func(h *harness) {
			t := fleetTransfers(h, 1)[0]
			progress(h, t, 1<<20, 2<<20, 64<<20)
			h.m.xfer.Cancel(t.ID)
			h.m.Update(transfer.DoneMsg{ID: t.ID, Err: contextCanceled()})
		}},
		{name: "transfer_parts", setup: func(h *harness) {
			t := fleetTransfers(h, 1)[0]
			at := h.clock.Now()
			h.send(hubMsg{batch: live.Batch{At: at, Notes: []live.Note{{Transfer: t.ID, Text: "resumed: 3 of 8 parts already stored"}},
				Progress: []live.Sample{{Transfer: t.ID, Done: 24 << 20, Total: 64 << 20, Parts: 3, PartsTotal: 8, At: at}}}})
			samples(h, live.Sample{Transfer: t.ID, Done: 32 << 20, Total: 64 << 20, Parts: 4, PartsTotal: 8, At: at.Add(1500 * time.Millisecond)})
		}},
		{name: "modal_resume", setup: func(h *harness) { pendingFleet(h); fleet(h) }},
		{name: "modal_resume_ascii", edit: func(c *config.Config) { c.Glyphs = "ascii" }, setup: func(h *harness) {
			pendingFleet(h)
			fleet(h)
		}},
		{name: "tray_more", setup: func(h *harness) { fleetTransfers(h, 5) }},
		{name: "transfers_screen", setup: func(h *harness) {
			ts := fleetTransfers(h, 3)
			progress(h, ts[0], 2<<20, 4<<20, 64<<20)
			h.m.Update(transfer.DoneMsg{ID: ts[1].ID, Err: &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 502}})
			h.key("t")
		}},
		{name: "transfers_empty", setup: func(h *harness) { fleet(h); h.key("t") }},

		{name: "preview_text", setup: func(h *harness) {
			previewScene(h, "date,rows,status\n2025-03-13,1204,ok\n2025-03-14,1187,ok\n\tindented\tby tabs\n")
		}},
		{name: "preview_truncated", edit: func(c *config.Config) { c.PreviewMaxBytes = 24 }, setup: func(h *harness) {
			previewScene(h, "date,rows,status\n2025-03-13,1204,ok\n2025-03-14,1187,ok\n")
		}},
		{name: "preview_binary", setup: func(h *harness) {
			previewScene(h, "PK\x03\x04\x14\x00\x00\x00\x08\x00report.csv\x00\x00binary body follows")
		}},
		{name: "preview_escaped", setup: func(h *harness) {
			previewScene(h, "ok line\n\x1b[31mred?\x1b[0m \x1b]52;c;cm0gLXJmIC8=\x07\nbidi \u202eevil\u202c here\ncarriage\rreturn\x7f\u009b\n")
		}},
		{name: "preview_search", setup: func(h *harness) {
			previewScene(h, "alpha one\nbeta\nalpha two\ngamma\n")
			h.key("/").typeText("alpha").key("enter", "n")
		}},

		{name: "modal_upload", setup: func(h *harness) { fleet(h); h.key("enter", "u").typeText("./reports/daily report.csv") }},
		{name: "modal_replace_confirm", setup: func(h *harness) {
			fleet(h)
			h.key("enter")
			selectArt(h, "report_csv")
			h.key("U").typeText("./report.csv").key("enter") // no such file here: the form stays, waiting
			h.send(dialog.LocalStat{OpID: h.m.act.Waiting(), Path: "./report.csv", Exists: true, Size: 15565})
		}},
		{name: "modal_repair_confirm", setup: func(h *harness) {
			fleet(h)
			h.key("enter")
			selectArt(h, "model_bin")
			h.key("U").typeText("./model.bin").key("enter")
			h.send(dialog.LocalStat{OpID: h.m.act.Waiting(), Path: "./model.bin", Exists: true, Size: 3 << 20})
		}},
		{name: "modal_download", setup: func(h *harness) { fleet(h); h.key("enter", "j", "j", "d") }},
		{name: "modal_overwrite", setup: func(h *harness) {
			fleet(h)
			h.key("enter", "j", "j", "d", "ctrl+u").typeText("./no-such-dir/report_csv").key("enter")
			h.send(dialog.LocalStat{OpID: h.m.act.Waiting(), Path: "./report_csv", Exists: true, Size: 14000})
		}},
		{name: "modal_vol_save", setup: func(h *harness) { fleet(h); h.key("i").typeText("out/probe.txt") }},
		{name: "modal_vol_save_error", setup: func(h *harness) { fleet(h); h.key("i").typeText("out/probe.txt").key("enter") }},
		{name: "modal_vol_save_outside", setup: func(h *harness) { fleet(h); h.key("i", "ctrl+u").typeText("/etc/passwd").key("enter") }},
		{name: "modal_vol_load", setup: func(h *harness) { fleet(h); h.key("enter", "j", "j", "L") }},
		{name: "modal_vol_load_error", setup: func(h *harness) {
			fleet(h)
			h.b.LoadIntoVolumeFunc = func(ctxT, string, string) error {
				return &cairn.Error{Reason: cairn.ReasonTargetDirMissing, Status: 400}
			}
			h.key("enter", "j", "j", "L", "enter")
		}},
		{name: "modal_vol_update", setup: func(h *harness) { fleet(h); h.key("enter", "I") }},
		{name: "modal_vol_busy", setup: func(h *harness) {
			fleet(h)
			h.key("i").typeText("probe.txt")
			h.m.Update(modeltest.Key("enter"))
		}},

		{name: "shell_dialing", setup: func(h *harness) { fleet(h); h.hop(modeltest.Key("s")) }},
		{name: "shell_refused", setup: func(h *harness) {
			fleet(h)
			h.b.ShellFunc = func(ctxT, string, ptyshell.Size, string) (*ptyshell.Session, error) {
				return nil, &cairn.Error{Reason: cairn.ReasonVolumeNotReady, Status: 409}
			}
			h.key("s")
		}},
		{name: "shell_exited", setup: func(h *harness) {
			alpha, _ := fleet(h)
			h.send(shell.ExitedMsg{WSID: alpha.ID, WSName: alpha.Name,
				Result: ptyshell.Result{Ending: ptyshell.EndExit, Exit: ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited}}})
		}},
		{name: "shell_lost", setup: func(h *harness) {
			alpha, _ := fleet(h)
			h.send(shell.ExitedMsg{WSID: alpha.ID, WSName: alpha.Name, Result: ptyshell.Result{Ending: ptyshell.EndLost}})
		}},
		{name: "shell_needs_ready", setup: func(h *harness) { fleet(h); h.key("j", "s") }},
	}
}

func contextCanceled() error { return context.Canceled }

// pendingFleet leaves two interrupted uploads into ws-alpha for the
// fleet's first list to offer: one with 3 of 8 parts stored, one whose
// file changed since.
func pendingFleet(h *harness) {
	started := h.clock.Now()
	h.b.PendingUploadsFunc = func(string) ([]client.PendingUpload, error) {
		ws, _ := h.b.FindWorkspaces(ctxBackground(), cairn.WorkspaceFilter{Names: []string{"ws-alpha"}})
		return []client.PendingUpload{
			{WorkspaceID: ws[0].ID, Path: "/srv/exports/2025-03-13/nightly_dump.tar", Name: "nightly_dump", Size: 64 << 20,
				PartSize: 8 << 20, PartCount: 8, StartedAt: started},
			{WorkspaceID: ws[0].ID, Path: "/srv/exports/weights.bin", Name: "model_weights", Size: 72 << 20,
				PartSize: 8 << 20, PartCount: 9, StartedAt: started.Add(time.Hour), SourceChanged: true},
		}, nil
	}
	h.b.PendingProgressFunc = func(_ ctxT, p client.PendingUpload) (int, int64, error) {
		if p.SourceChanged {
			return 0, 0, nil
		}
		return 3, 24 << 20, nil
	}
}

// fleetTransfers is the fleet with n uploads whose Cmds never run.
func fleetTransfers(h *harness, n int) []*transfer.Transfer {
	alpha, _ := fleet(h)
	names := []string{"nightly_dump", "report_csv", "model_weights", "logs_tar_gz", "notes_md"}
	for i := range n {
		h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Upload, WSID: alpha.ID, Name: names[i], Path: "./" + names[i], Size: int64(64<<20) >> i})
	}
	h.m.xfer.Cancel(0) // re-lays the tray (no such transfer)
	return h.m.xfer.All()
}

func fleetDownload(h *harness) *transfer.Transfer {
	alpha, _ := fleet(h)
	h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Download, WSID: alpha.ID, ArtID: "01JX", Name: "report_csv", Path: "./report_csv", Size: 14 << 20})
	return h.m.xfer.All()[0]
}

// progress sends two samples 1.5 s apart: done1, then done2 of total.
func progress(h *harness, t *transfer.Transfer, done1, done2, total int64) {
	at := h.clock.Now()
	samples(h, live.Sample{Transfer: t.ID, Done: done1, Total: total, At: at})
	samples(h, live.Sample{Transfer: t.ID, Done: done2, Total: total, At: at.Add(1500 * time.Millisecond)})
}

// previewScene opens the preview of report_csv holding content.
func previewScene(h *harness, content string) {
	alpha, _ := fleet(h)
	arts, _ := h.b.FindArtifacts(ctxBackground(), cairn.ArtifactFilter{WorkspaceID: alpha.ID})
	for _, a := range arts {
		if a.Name == "report_csv" {
			h.b.World.SetContent(a.ID, []byte(content))
		}
	}
	h.key("r", "enter", "j", "j", "enter")
}

// selectArt moves the artifacts cursor to the row named name.
func selectArt(h *harness, name string) {
	for range 20 {
		if a, ok := h.m.stack.Top().(interface {
			Selected() (*cairn.Artifact, bool)
		}).Selected(); ok && a.Name == name {
			return
		}
		h.key("j")
	}
	h.t.Fatalf("no artifact %s", name)
}
