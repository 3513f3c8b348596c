package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screens/files"
)

// volumeFleet seeds ws-alpha's volume three hours before fleet lists it:
// a directory with a file and a log directory, a text and a binary file, a
// symlink, a FIFO and a name holding an escape sequence; then lists the
// fleet.
func volumeFleet(h *harness) *cairn.Workspace {
	w := h.b.World
	alpha, _ := seedFleet(h)
	alphaID := alpha.ID
	w.PutVolumeFile(alphaID, "/mnt/cairn/ws/out/report.csv", []byte(strings.Repeat("2025-03-13,1204,ok\n", 64)))
	w.PutVolumeFile(alphaID, "/mnt/cairn/ws/out/logs/run-1.log", []byte("started\nfinished\n"))
	w.PutVolumeFile(alphaID, "/mnt/cairn/ws/out/logs/run-2.log", []byte("started\n"))
	w.PutVolumeFile(alphaID, "/mnt/cairn/ws/notes.md", []byte("# Notes\n\nThe nightly run writes out/.\n\tindented by a tab\n"))
	w.PutVolumeFile(alphaID, "/mnt/cairn/ws/model.bin", append([]byte("\x89HDF\r\n\x1a\n\x00\x00"), make([]byte, 3000)...))
	w.PutVolumeLink(alphaID, "/mnt/cairn/ws/latest", "out/logs")
	w.PutVolumeOther(alphaID, "/mnt/cairn/ws/pipe")
	w.PutVolumeFile(alphaID, "/mnt/cairn/ws/evil\x1b[31mname", []byte("x"))
	showFleet(h)
	w.PutVolumeDir(alpha.ID, "/mnt/cairn/ws/empty")
	return alpha
}

// openFilesAt opens ws-alpha's files and walks into dir, one name at a
// time, as the operator would.
func openFilesAt(h *harness, dir string) {
	h.key("f")
	for _, name := range strings.Split(strings.Trim(strings.TrimPrefix(dir, cairn.MountPath), "/"), "/") {
		if name == "" {
			continue
		}
		filesCursorOn(h, name)
		h.key("enter")
	}
}

// filesCursorOn moves the files pane's cursor to the entry named name.
func filesCursorOn(h *harness, name string) {
	h.t.Helper()
	f, ok := h.m.stack.Top().(*files.Screen)
	if !ok {
		h.t.Fatalf("the top screen is %T, not the files pane", h.m.stack.Top())
	}
	h.key("g")
	for range 40 {
		if e, ok := f.Selected(); ok && e.Name == name {
			return
		}
		h.key("j")
	}
	h.t.Fatalf("no entry %s in %s", name, f.Dir())
}

// packedOut adds an artifact holding out/ packed as tar.gz, as i on it
// would have made.
func packedOut(h *harness, alpha *cairn.Workspace) {
	_, err := h.b.ArtifactFromVolume(context.Background(), alpha.ID,
		cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/out", Name: "out_tar_gz", Format: cairn.ArchiveTarGz})
	if err != nil {
		h.t.Fatal(err)
	}
	h.key("r")
}

// partThree are the scenes of the files pane.
func partThree() []scene {
	return []scene{
		{name: "files_root", setup: func(h *harness) { volumeFleet(h); h.key("f") }},
		{name: "files_subdir", setup: func(h *harness) { volumeFleet(h); openFilesAt(h, "/mnt/cairn/ws/out"); filesCursorOn(h, "report.csv") }},
		{name: "files_symlink", setup: func(h *harness) { volumeFleet(h); h.key("f"); filesCursorOn(h, "latest"); h.key("enter") }},
		{name: "files_detail_focus", setup: func(h *harness) { volumeFleet(h); h.key("f"); filesCursorOn(h, "latest"); h.key("tab") }},
		{name: "files_filtered", setup: func(h *harness) { volumeFleet(h); h.key("f", "/").typeText("o").key("enter") }},
		{name: "files_empty", setup: func(h *harness) { volumeFleet(h); openFilesAt(h, "/mnt/cairn/ws/empty") }},
		{name: "files_listing", setup: func(h *harness) {
			volumeFleet(h)
			h.hop(modeltest.Key("f")) // the first page's request never runs
		}},
		{name: "files_more", setup: func(h *harness) {
			alpha := volumeFleet(h)
			for i := range 2500 {
				h.b.World.PutVolumeFile(alpha.ID, fmt.Sprintf("/mnt/cairn/ws/many/part-%05d.csv", i), []byte("a,b\n"))
			}
			openFilesAt(h, "/mnt/cairn/ws/many")
		}},
		{name: "files_capped", setup: func(h *harness) {
			alpha := volumeFleet(h)
			for i := range files.MaxEntries + 5 {
				h.b.World.PutVolumeFile(alpha.ID, fmt.Sprintf("/mnt/cairn/ws/many/part-%05d.csv", i), nil)
			}
			openFilesAt(h, "/mnt/cairn/ws/many")
			h.key("G", "G", "G", "G", "G", "G", "G", "G", "G", "G")
		}},
		{name: "files_failed", setup: func(h *harness) {
			volumeFleet(h)
			h.b.ListFilesFunc = func(context.Context, string, cairn.FileListParams) (*cairn.FileListing, error) {
				return nil, &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Status: 503}
			}
			h.key("f")
		}},
		{name: "files_refresh_failed", setup: func(h *harness) {
			volumeFleet(h)
			h.key("f")
			h.b.ListFilesFunc = func(context.Context, string, cairn.FileListParams) (*cairn.FileListing, error) {
				return nil, &cairn.Error{Reason: cairn.ReasonSidecarTimeout, Status: 504}
			}
			h.key("r")
		}},
		{name: "files_readonly", edit: func(c *config.Config) { c.ReadOnly = true }, setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
		}},
		{name: "files_preview_text", setup: func(h *harness) { volumeFleet(h); h.key("f"); filesCursorOn(h, "notes.md"); h.key("enter") }},
		{name: "files_preview_binary", setup: func(h *harness) { volumeFleet(h); h.key("f"); filesCursorOn(h, "model.bin"); h.key("enter") }},
		{name: "files_preview_truncated", setup: func(h *harness) {
			alpha := volumeFleet(h)
			h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/big.log", []byte(strings.Repeat("line of a long log\n", 6000)))
			h.key("f")
			filesCursorOn(h, "big.log")
			h.key("p")
		}},
		{name: "modal_files_save_file", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			filesCursorOn(h, "report.csv")
			h.key("i")
		}},
		{name: "modal_files_save_dir", setup: func(h *harness) { volumeFleet(h); h.key("f"); filesCursorOn(h, "out"); h.key("i") }},
		{name: "modal_files_pick_load", setup: func(h *harness) { volumeFleet(h); openFilesAt(h, "/mnt/cairn/ws/out"); h.key("L") }},
		{name: "modal_files_pick_refused", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			h.key("X").typeText("report").key("enter")
		}},
		{name: "modal_files_load_overwrite", setup: func(h *harness) {
			alpha := volumeFleet(h)
			h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/out/report_csv", []byte("old"))
			openFilesAt(h, "/mnt/cairn/ws/out")
			h.key("L").typeText("report").key("enter")
		}},
		{name: "modal_files_unpack_exists", setup: func(h *harness) {
			alpha := volumeFleet(h)
			h.key("f")
			packedOut(h, alpha)
			h.key("X").typeText("out_tar").key("enter", "enter")
		}},
		{name: "modal_vol_save_candidates", setup: func(h *harness) {
			volumeFleet(h)
			h.key("i", "tab")
		}},
		{name: "modal_files_mkdir", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			h.key("n").typeText("logs")
		}},
		{name: "modal_files_upload", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			h.key("u").typeText("~/exports/report.csv")
		}},
		{name: "modal_files_move", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			filesCursorOn(h, "report.csv")
			h.key("R")
		}},
		{name: "modal_files_delete_dir", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			filesCursorOn(h, "logs")
			h.key("D")
		}},
		{name: "modal_files_delete_file", setup: func(h *harness) {
			volumeFleet(h)
			openFilesAt(h, "/mnt/cairn/ws/out")
			filesCursorOn(h, "report.csv")
			h.key("D")
		}},
	}
}
