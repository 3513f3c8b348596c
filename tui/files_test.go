package tui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/screens/files"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/tuitest"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/picker"
)

// filesPane is the files pane on top of the stack.
func filesPane(t *testing.T, h *harness) *files.Screen {
	t.Helper()
	f, ok := h.m.stack.Top().(*files.Screen)
	require.True(t, ok, "the top screen is %T, not the files pane", h.m.stack.Top())
	return f
}

// listed are the paths the pane asked to list, in order.
func listed(b *tuitest.Backend) []string {
	var out []string
	for _, c := range b.VolumeCallsOf("ListFiles") {
		out = append(out, c.Path)
	}
	return out
}

func selectedEntry(t *testing.T, h *harness) string {
	t.Helper()
	e, _ := filesPane(t, h).Selected()
	return e.Name
}

func TestFilesOpenNeedsReady(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fleet(h)
	h.key("j", "f") // ws-beta: NONE
	require.Equal(t, 1, h.m.stack.Depth())
	require.Equal(t, "i files need volume READY — v provisions it", h.statusLine())
	require.Empty(t, h.b.VolumeCalls(), "nothing asked of the server")
	h.key("k", "f")
	require.Equal(t, 2, h.m.stack.Depth())
	require.Equal(t, []string{cairn.MountPath}, listed(h.b), "the mount root, listed once")
	require.Contains(t, h.header(), "cairn ▸ ws-alpha ▸ files /mnt/cairn/ws (0)")
}

func TestFilesNavigation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	volumeFleet(h)
	h.key("f")
	require.Contains(t, h.header(), "files /mnt/cairn/ws (7)")

	t.Log("h at the root goes no higher")
	h.key("h")
	require.Equal(t, cairn.MountPath, filesPane(t, h).Dir())
	require.Equal(t, "i already at the volume root /mnt/cairn/ws — esc goes back", h.statusLine())
	h.key("backspace", "left")
	require.Equal(t, []string{cairn.MountPath}, listed(h.b), "nothing above the mount root is ever listed")

	t.Log("enter goes into a directory, h back up with the cursor on it")
	filesCursorOn(h, "out")
	h.key("enter")
	require.Equal(t, "/mnt/cairn/ws/out", filesPane(t, h).Dir())
	require.Contains(t, h.header(), "cairn ▸ ws-alpha ▸ files /mnt/cairn/ws/out (2)")
	filesCursorOn(h, "logs")
	h.key("l") // open's other key
	require.Contains(t, h.header(), "files /mnt/cairn/ws/out/logs (2)")
	require.Contains(t, h.view(), "run-1.log")
	h.key("h")
	require.Equal(t, "/mnt/cairn/ws/out", filesPane(t, h).Dir())
	require.Equal(t, "logs", selectedEntry(t, h), "the cursor is back on the directory left")
	h.key("backspace")
	require.Equal(t, cairn.MountPath, filesPane(t, h).Dir())
	require.Equal(t, "out", selectedEntry(t, h))
	require.Equal(t, []string{cairn.MountPath, "/mnt/cairn/ws/out", "/mnt/cairn/ws/out/logs", "/mnt/cairn/ws/out", cairn.MountPath},
		listed(h.b), "each directory listed by its path exactly")

	t.Log("a symlink is shown with its target and never entered")
	filesCursorOn(h, "latest")
	require.Contains(t, h.view(), "▸ latest -> out/logs")
	h.key("enter")
	require.Equal(t, cairn.MountPath, filesPane(t, h).Dir())
	require.Equal(t, "i latest is a symlink to out/logs — links are shown, never followed", h.statusLine())
	filesCursorOn(h, "pipe")
	h.key("enter")
	require.Equal(t, "i pipe is not a regular file (a FIFO, socket or device)", h.statusLine())
	require.Len(t, listed(h.b), 5, "neither was listed nor read")
	require.Empty(t, h.b.VolumeCallsOf("ReadFile"))

	t.Log("esc goes back to the workspaces")
	h.key("esc")
	require.Equal(t, 1, h.m.stack.Depth())
}

func TestFilesSanitisesNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.b.World.PutVolumeLink(alpha.ID, "/mnt/cairn/ws/"+tuiHostile("link"), tuiHostile("target"))
	h.size(160, 50).key("f")
	filesCursorOn(h, "evil\x1b[31mname")
	v := h.view()
	require.Contains(t, v, "▸ evil^[[31mname ")
	require.Contains(t, v, tuiShown("link")+" -> "+tuiShown("target"))
	require.Contains(t, v, "Path        /mnt/cairn/ws/evil^[[31mname")
	for _, raw := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		require.NotContains(t, v, raw, "a raw control reached the view")
	}
	h.key("enter")
	require.Equal(t, "i evil^[[31mname: the name holds a control character the API cannot address — rename it in a shell", h.statusLine())
	require.Empty(t, h.b.VolumeCallsOf("ReadFile"), "an unaddressable name is never sent")
}

// tuiHostile is a name with controls as an answer's JSON can carry them: BEL,
// the C1 CSI as a character and U+202E (right-to-left override).
func tuiHostile(s string) string { return s + "\x07\u009b\u202e" }
func tuiShown(s string) string   { return s + `^G\x9b\u202e` }

func TestFilesPaging(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	for i := range 2500 {
		h.b.World.PutVolumeFile(alpha.ID, fmt.Sprintf("/mnt/cairn/ws/many/part-%05d.csv", i), nil)
	}
	openFilesAt(h, "/mnt/cairn/ws/many")
	pages := func() []tuitest.VolumeCall {
		var out []tuitest.VolumeCall
		for _, c := range h.b.VolumeCallsOf("ListFiles") {
			if c.Path == "/mnt/cairn/ws/many" {
				out = append(out, c)
			}
		}
		return out
	}
	require.Len(t, pages(), 1, "one page until the cursor comes near its end")
	require.Equal(t, tuitest.VolumeCall{Method: "ListFiles", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/many", Limit: files.PageSize}, pages()[0])
	require.Contains(t, h.header(), "(1 000+)")
	require.Contains(t, h.view(), "… more entries: moving down lists the next 1 000")
	h.key("j", "j")
	require.Len(t, pages(), 1, "moving near the top asks for nothing")
	h.key("G")
	require.Len(t, pages(), 2)
	require.Equal(t, "part-00999.csv", pages()[1].After, "the next page starts after the last name listed")
	require.Equal(t, "part-00999.csv", selectedEntry(t, h), "the cursor stays where it was")
	h.key("G")
	require.Len(t, pages(), 3)
	require.Contains(t, h.header(), "(2 500)")
	require.NotContains(t, h.view(), "more entries")
	h.key("G")
	require.Len(t, pages(), 3, "the directory is complete")
}

func TestFilesPagingStopsAtTheBound(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	served := 0
	h.b.ListFilesFunc = func(ctx context.Context, ws string, p cairn.FileListParams) (*cairn.FileListing, error) {
		if p.Path != "/mnt/cairn/ws/huge" {
			return h.b.Client.ListFiles(ctx, ws, p)
		}
		served++
		l := &cairn.FileListing{Path: p.Path, NextAfter: fmt.Sprintf("n%06d", served*p.Limit-1)}
		for i := range p.Limit {
			l.Entries = append(l.Entries, cairn.FileEntry{Name: fmt.Sprintf("n%06d", (served-1)*p.Limit+i), Type: cairn.FileTypeFile, Mode: "0644"})
		}
		return l, nil // endless
	}
	h.b.World.PutVolumeDir(alpha.ID, "/mnt/cairn/ws/huge")
	openFilesAt(h, "/mnt/cairn/ws/huge")
	for range 20 {
		h.key("G")
	}
	require.Equal(t, files.MaxEntries/files.PageSize, served, "never more than MaxEntries listed")
	require.Contains(t, h.header(), "(10 000+)")
	require.Contains(t, h.view(), "… only the first 10 000 entries are listed here — a shell lists the rest")
}

func TestFilesPreview(t *testing.T) {
	t.Parallel()
	t.Run("Text", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		alpha := volumeFleet(h)
		h.key("f")
		filesCursorOn(h, "notes.md")
		h.key("enter")
		_, ok := h.m.stack.Top().(*preview.Screen)
		require.True(t, ok)
		require.Equal(t, []tuitest.VolumeCall{{Method: "ReadFile", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/notes.md", Length: preview.FileBytes}},
			h.b.VolumeCallsOf("ReadFile"), "one read of the first 64 KiB")
		require.Contains(t, h.header(), "files /mnt/cairn/ws (7) ▸ notes.md ▸ preview")
		require.Contains(t, h.view(), "      indented by a tab", "tabs expand to 4 columns")
		h.key("d")
		require.Equal(t, "i a volume file leaves through an artifact — i in the files pane saves it", h.statusLine())
		h.key("Y")
		require.Equal(t, []string{"/mnt/cairn/ws/notes.md"}, h.clip.Copies())
		h.key("esc")
		require.Equal(t, cairn.MountPath, filesPane(t, h).Dir())
	})
	t.Run("TruncatedAndEscaped", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		alpha := volumeFleet(h)
		// The escape past the bytes a type sniffer reads: the file is text.
		body := strings.Repeat("text\n", 1000) + "\x1b]52;c;cm0gLXJmIC8=\x07 ok\n" + strings.Repeat("x", 65<<10)
		h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/big.txt", []byte(body))
		h.key("f")
		filesCursorOn(h, "big.txt")
		h.key("p")
		v := h.view()
		require.Contains(t, v, "first 64.0 KiB of 69.9 KiB — i in the files pane saves it whole")
		h.key("/").typeText("ok").key("enter")
		v = h.view()
		require.Contains(t, v, "^[]52;c;cm0gLXJmIC8=^G ok")
		require.NotContains(t, v, "\x1b]52")
	})
	t.Run("BinaryCard", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		volumeFleet(h)
		h.key("f")
		filesCursorOn(h, "model.bin")
		h.key("enter")
		v := h.view()
		require.Contains(t, v, "its type application/octet-stream is not shown as text — i in the files pane saves it")
		require.Contains(t, v, "00000000  89 48 44 46 0d 0a 1a 0a  00 00 00 00 00 00 00 00  |.HDF............|")
	})
	t.Run("DirectoryIsEntered", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		volumeFleet(h)
		h.key("f")
		filesCursorOn(h, "out")
		h.key("p")
		require.Equal(t, "i out is a directory — enter opens it", h.statusLine())
	})
	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		volumeFleet(h)
		h.b.World.FailNext("GET /v1/workspaces/{id}/files/content", http.StatusNotFound, cairn.ReasonPathNotFound)
		h.key("f")
		filesCursorOn(h, "notes.md")
		h.key("enter")
		require.Contains(t, h.view(), "cannot preview notes.md: no such file or directory in the volume")
	})
}

func TestFilesSaveFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out/logs")
	filesCursorOn(h, "run-1.log")
	lists := len(listed(h.b))
	h.key("i")
	require.IsType(t, &form.Model{}, h.m.modal)
	v := flat(h.view())
	require.Contains(t, v, "File in the volume > /mnt/cairn/ws/out/logs/run-1.log_", "the path filled in")
	require.Contains(t, v, "Name > run-1_log", "the name from the file's")
	h.key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, []tuitest.VolumeCall{{Method: "ArtifactFromVolume", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/logs/run-1.log", Name: "run-1_log"}},
		h.b.VolumeCallsOf("ArtifactFromVolume"))
	require.Equal(t, "✓ saved /mnt/cairn/ws/out/logs/run-1.log as run-1_log (17 B)", h.statusLine())
	require.Len(t, listed(h.b), lists, "a save writes no volume: no listing again")
	arts, _ := h.m.Store().Artifacts(alpha.ID)
	require.True(t, hasArtifact(arts, "run-1_log"), "the new artifact is in the store")
}

func hasArtifact(arts []*cairn.Artifact, name string) bool {
	for _, a := range arts {
		if a.Name == name {
			return true
		}
	}
	return false
}

func TestFilesSaveDirectoryPacks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.key("f")
	filesCursorOn(h, "out")
	h.key("i")
	v := flat(h.view())
	require.Contains(t, v, "Pack a volume directory of ws-alpha as a new artifact")
	require.Contains(t, v, "Directory in the volume > /mnt/cairn/ws/out_")
	require.Contains(t, v, "Pack a directory as > tar.gz")
	require.Contains(t, v, "Name > out_tar_gz")
	h.key("down", "ctrl+u").typeText("zip")
	require.Contains(t, flat(h.view()), "Name > out_zip", "the name follows the format")
	h.key("ctrl+u").typeText("tar.gz").key("enter")
	require.Equal(t, []tuitest.VolumeCall{{Method: "ArtifactFromVolume", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out", Name: "out_tar_gz", Format: cairn.ArchiveTarGz}},
		h.b.VolumeCallsOf("ArtifactFromVolume"))
	require.Contains(t, h.statusLine(), "✓ packed /mnt/cairn/ws/out as out_tar_gz (")
	packed := artifactNamed(t, h, alpha.ID, "out_tar_gz")
	require.Equal(t, cairn.MIMEGzip, packed.MIMEType)
}

func TestFilesLoad(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	before := len(listed(h.b))
	h.key("L")
	p, ok := h.m.modal.(*picker.Model)
	require.True(t, ok, "L opens the picker of the workspace's artifacts")
	require.Contains(t, h.view(), "Load an artifact into /mnt/cairn/ws/out")

	t.Log("a MISSING_OBJECT artifact is refused with a sentence")
	h.typeText("model")
	h.key("enter")
	require.Same(t, p, h.m.modal, "the picker stays")
	require.Contains(t, flat(h.view()), "model_bin is MISSING_OBJECT — nothing to load")

	t.Log("the target is the directory and the artifact's name, editable")
	h.key("backspace", "backspace", "backspace", "backspace", "backspace").typeText("report").key("enter")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "Target in the volume > /mnt/cairn/ws/out/report_csv_")
	h.key("backspace", "backspace", "backspace", "backspace").typeText(".csv") // over report.csv
	require.Contains(t, flat(h.view()), "report.csv exists (1.2 KiB) — its content is replaced")
	h.key("backspace", "backspace", "backspace", "backspace").typeText("_csv")
	h.key("enter")
	require.Nil(t, h.m.modal)
	report := artifactNamed(t, h, alpha.ID, "report_csv")
	require.Equal(t, []tuitest.VolumeCall{{Method: "LoadIntoVolume", ArtifactID: report.ID, Path: "/mnt/cairn/ws/out/report_csv"}},
		h.b.VolumeCallsOf("LoadIntoVolume"))
	require.Equal(t, "✓ loaded report_csv into /mnt/cairn/ws/out/report_csv", h.statusLine())
	require.Equal(t, []string{"/mnt/cairn/ws/out"}, listed(h.b)[before:], "the directory is listed again after the write")
	require.Contains(t, h.view(), "report_csv ", "the loaded file shows")
}

func artifactNamed(t *testing.T, h *harness, wsID, name string) *cairn.Artifact {
	t.Helper()
	arts, _ := h.m.Store().Artifacts(wsID)
	for _, a := range arts {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no artifact %s", name)
	return nil
}

func TestFilesUnpack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.key("f")
	packedOut(h, alpha)
	filesCursorOn(h, "empty")
	h.key("enter")
	before := len(listed(h.b))

	t.Log("a non-archive is refused with a sentence")
	h.key("X").typeText("notes").key("enter")
	require.IsType(t, &picker.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "notes_md is text/plain, not an archive — X unpacks tar.gz and zip artifacts (i on a directory packs one)")

	t.Log("the target is a new directory named after the archive")
	for range 5 {
		h.key("backspace")
	}
	h.typeText("out_").key("enter")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "New directory in the volume > /mnt/cairn/ws/empty/out_")
	h.key("enter")
	packed := artifactNamed(t, h, alpha.ID, "out_tar_gz")
	require.Equal(t, []tuitest.VolumeCall{{Method: "UnpackArtifact", ArtifactID: packed.ID, Path: "/mnt/cairn/ws/empty/out"}},
		h.b.VolumeCallsOf("UnpackArtifact"))
	require.Equal(t, "✓ unpacked out_tar_gz into /mnt/cairn/ws/empty/out (4 entries, 1.2 KiB)", h.statusLine())
	require.Equal(t, []string{"/mnt/cairn/ws/empty"}, listed(h.b)[before:], "listed again after the write")
	filesCursorOn(h, "out")
	h.key("enter")
	require.Contains(t, h.view(), "report.csv", "the archive's entries are there")

	t.Log("an existing target is refused under the field")
	h.key("h", "X").typeText("out_").key("enter", "enter")
	require.Contains(t, flat(h.view()), "it exists already in the volume — choose a new name")
	require.IsType(t, &form.Model{}, h.m.modal, "the form stays")
	h.typeText("2").key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, "/mnt/cairn/ws/empty/out2", h.b.VolumeCallsOf("UnpackArtifact")[2].Path)
}

func TestFilesArchiveRefusalIsAToast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.key("f")
	packedOut(h, alpha)
	h.b.UnpackArtifactFunc = func(context.Context, string, string) (*cairn.UnpackResult, error) {
		return nil, &cairn.Error{Reason: cairn.ReasonArchiveUnsafePath, Status: 400}
	}
	h.key("X").typeText("out_").key("enter", "ctrl+u").typeText("/mnt/cairn/ws/new").key("enter")
	require.Nil(t, h.m.modal, "not the path's fault: the form closes")
	require.Equal(t, "✕ error: the archive holds an unsafe path (absolute, .., or through a link) — nothing was written", h.statusLine())
}

// TestFilesPackRefusalNamesTheEntry: a pack refused for a name no unpack
// would take says which file, in the server's words, escaped.
func TestFilesPackRefusalNamesTheEntry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	volumeFleet(h)
	detail := `"/mnt/cairn/ws/src/bad\x1bname" in the source directory cannot be packed: its name holds a control character, which cairn refuses when it unpacks`
	h.b.ArtifactFromVolumeFunc = func(context.Context, string, cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
		return nil, &cairn.Error{Reason: cairn.ReasonArchiveUnsafePath, Status: 400, Detail: detail}
	}
	h.key("f")
	filesCursorOn(h, "out")
	h.key("i", "down", "enter")
	require.Contains(t, h.statusLine(), "cannot be packed: its name holds a control character")
	require.NotContains(t, h.statusLine(), "\x1b", "no raw escape reaches the screen")
}

func TestFilesRefresh(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	filesCursorOn(h, "report.csv")
	h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/out/added.txt", []byte("behind the TUI's back"))
	require.NotContains(t, h.view(), "added.txt", "the volume sends no events")
	before := len(listed(h.b))
	h.key("r")
	require.Equal(t, []string{"/mnt/cairn/ws/out"}, listed(h.b)[before:])
	require.Contains(t, h.view(), "added.txt")
	require.Equal(t, "report.csv", selectedEntry(t, h), "the cursor is an entry, kept")

	t.Log("a shell's return lists again: it may have written the volume")
	h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/out/from-shell.txt", nil)
	h.send(shell.ExitedMsg{WSID: alpha.ID, WSName: "ws-alpha"})
	require.Contains(t, h.view(), "from-shell.txt")
}

func TestFilesReadOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.ReadOnly = true })
	volumeFleet(h)
	h.key("f")
	filesCursorOn(h, "notes.md")
	for _, k := range []string{"i", "L", "X"} {
		h.key(k)
		require.Nil(t, h.m.modal, k)
	}
	require.Empty(t, h.b.VolumeCallsOf("ArtifactFromVolume"))
	hints := hintLine(h)
	require.NotContains(t, hints, "save")
	require.NotContains(t, hints, "load here")
	h.key("enter")
	_, ok := h.m.stack.Top().(*preview.Screen)
	require.True(t, ok, "browsing and preview stay")
}

// TestVolumePathsComplete: the volume path fields complete from the
// volume's listing, like a shell's tab.
func TestVolumePathsComplete(t *testing.T) {
	t.Parallel()
	t.Run("SaveFromWorkspaces", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		alpha := volumeFleet(h)
		h.key("i").typeText("o").key("tab")
		require.Contains(t, flat(h.view()), "> /mnt/cairn/ws/out/_", "one match, a directory: taken whole with its slash")
		h.key("tab")
		require.Contains(t, flat(h.view()), "logs/ report.csv", "several: listed under the field")
		h.typeText("r").key("tab")
		require.Contains(t, flat(h.view()), "> /mnt/cairn/ws/out/report.csv_")
		require.Contains(t, flat(h.view()), "Name > report_csv", "the name follows the completed path")
		require.Equal(t, []tuitest.VolumeCall{
			{Method: "ListFiles", WorkspaceID: alpha.ID, Path: cairn.MountPath, Limit: cairn.MaxFileListLimit},
			{Method: "ListFiles", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out", Limit: cairn.MaxFileListLimit},
			{Method: "ListFiles", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out", Limit: cairn.MaxFileListLimit},
		}, h.b.VolumeCalls())
	})
	t.Run("LoadTarget", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		volumeFleet(h)
		h.key("enter")
		cursorOn(t, h, "notes_md")
		h.key("L", "ctrl+u").typeText("/mnt/cairn/ws/out/l").key("tab")
		require.Contains(t, flat(h.view()), "> /mnt/cairn/ws/out/logs/_")
	})
	t.Run("UpdateSource", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		volumeFleet(h)
		h.key("enter")
		cursorOn(t, h, "notes_md")
		h.key("I").typeText("no").key("tab")
		require.Contains(t, flat(h.view()), "> /mnt/cairn/ws/notes.md_")
	})
	t.Run("NothingOutsideTheMount", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		volumeFleet(h)
		h.key("i", "ctrl+u").typeText("/etc/pa").key("tab")
		require.Contains(t, flat(h.view()), "> /etc/pa_")
		require.Empty(t, h.b.VolumeCalls(), "no listing asked outside the mount")
	})
}

// TestFilesHintsAndHelp pins the files pane's hints at 120 and 60 columns,
// as TestHintCounts does the other screens', and finds its keys in help.
func TestFilesHintsAndHelp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	require.Equal(t, "enter open · h up · / filter · i save · L load here · X unpack here · n new dir · u upload here · ? help · q quit",
		strings.TrimSpace(hintLine(h)), "on a directory: no edit")
	filesCursorOn(h, "report.csv")
	require.Equal(t, "enter open · h up · / filter · i save · L load here · X unpack here · e edit · n new dir · ? help · q quit",
		strings.TrimSpace(hintLine(h)), "on a file: edit first of the changes")
	h.size(60, 16)
	require.Equal(t, "enter open · h up · i save · e edit · ? help · q quit", strings.TrimSpace(hintLine(h)))
	h.size(120, 40).key("?")
	helpTo(h, "This screen (files)")
	for _, line := range []string{
		"backspace     up to the parent directory (h and left too; never above /mnt/cairn/ws)",
		"p             preview the file's first 64 KiB (enter too)",
		"i             save the file — or the directory, packed as tar.gz — as a new artifact",
		"L             load an artifact into this directory (overwrites a file of its name)",
		"X             unpack an archive artifact (tar.gz, zip) into a new directory here",
		"e             edit a text file (up to 1 MiB) in $EDITOR; written back only over the version read",
		"n             make a new directory here",
		"u             upload a local file into this directory (up to the server's files.write.maxBytes)",
		"R             rename or move the entry (its path, edited)",
		"D/delete      delete the entry: a file or link after y, a directory and all in it after its typed name",
	} {
		helpTo(h, line)
	}
}
