package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/tuitest"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/help"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

// The files pane's changes run against the fake server's client, whose
// writes each test scripts as the server would answer them (the fake
// server serves no writes); a scripted write that succeeds also puts what
// it made into the fake volume, so the listing after it shows it.

// changes are the volume's change calls so far, oldest first.
func changes(b *tuitest.Backend) []tuitest.VolumeCall {
	var out []tuitest.VolumeCall
	for _, c := range b.VolumeCalls() {
		switch c.Method {
		case "WriteFile", "RemovePath", "MakeDir", "MovePath":
			out = append(out, c)
		}
	}
	return out
}

func refusal(reason cairn.Reason) error {
	status, _ := reason.HTTPStatus()
	return &cairn.Error{Reason: reason, Status: status, RequestID: "req-1"}
}

// madeHere is a change's answer naming the path acted on.
func madeHere(p string) *cairn.FileChange { return &cairn.FileChange{Path: p} }

func TestFilesMakeDir(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	h.b.MakeDirFunc = func(_ context.Context, ws string, p cairn.MakeDirParams) (*cairn.FileChange, error) {
		if strings.HasSuffix(p.Path, "/taken") {
			return nil, refusal(cairn.ReasonTargetExists)
		}
		h.b.World.PutVolumeDir(ws, p.Path)
		return madeHere(p.Path), nil
	}
	h.key("n")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, h.view(), "New directory in /mnt/cairn/ws/out")

	t.Log("a name is checked as it is typed: one name, addressable, a listed one warned of")
	for typed, says := range map[string]string{
		"a/b":  "one name, without / — R on an entry moves it elsewhere",
		"..":   ".. is not a new name",
		"logs": "logs exists already here",
	} {
		h.key("ctrl+u").typeText(typed)
		require.Contains(t, flat(h.view()), says, typed)
	}
	h.key("ctrl+u", "enter")
	require.Contains(t, flat(h.view()), "give a name")
	require.Empty(t, changes(h.b), "nothing invalid is sent")

	t.Log("the server's refusal goes under the field; the form stays")
	h.typeText("taken").key("enter")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "it exists already in the volume — choose a new name")

	t.Log("made: a toast, the directory listed again, the cursor on the new one")
	before := len(listed(h.b))
	h.key("ctrl+u").typeText("reports").key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, []tuitest.VolumeCall{
		{Method: "MakeDir", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/taken"},
		{Method: "MakeDir", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/reports"},
	}, changes(h.b))
	require.Equal(t, "✓ made the directory /mnt/cairn/ws/out/reports", h.statusLine())
	require.Equal(t, []string{"/mnt/cairn/ws/out", "/mnt/cairn/ws/out"}, listed(h.b)[before-1:],
		"listed again after the refusal and after the change")
	require.Equal(t, "reports", selectedEntry(t, h), "the cursor is on what was made")
}

func TestFilesDeleteDirectoryAsksItsName(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	h.b.RemovePathFunc = func(_ context.Context, _ string, p cairn.FileRemoveParams) (*cairn.FileChange, error) {
		return madeHere(p.Path), nil
	}
	filesCursorOn(h, "logs")

	t.Log("esc cancels, nothing is sent")
	h.key("D")
	require.IsType(t, &typed.Model{}, h.m.modal)
	v := flat(h.view())
	require.Contains(t, v, "Delete /mnt/cairn/ws/out/logs and everything in it? The volume keeps no copy.")
	require.Contains(t, v, "Type logs to confirm")
	h.key("esc")
	require.Equal(t, "i cancelled", h.statusLine())

	t.Log("only the exact name confirms")
	h.key("D").typeText("log").key("enter")
	require.IsType(t, &typed.Model{}, h.m.modal, "a wrong name keeps the question")
	require.Contains(t, h.view(), "does not match")
	h.typeText("S").key("enter")
	require.IsType(t, &typed.Model{}, h.m.modal, "case counts")
	h.key("backspace").typeText("s").key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, []tuitest.VolumeCall{{Method: "RemovePath", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/logs", Recursive: true}},
		changes(h.b), "a directory goes with everything in it")
	require.Equal(t, "✓ deleted /mnt/cairn/ws/out/logs", h.statusLine())
}

func TestFilesDeleteFileOrLinkAsksYN(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.key("f")
	h.b.RemovePathFunc = func(_ context.Context, _ string, p cairn.FileRemoveParams) (*cairn.FileChange, error) {
		return madeHere(p.Path), nil
	}
	filesCursorOn(h, "notes.md")
	h.key("D")
	require.IsType(t, &confirm.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "Delete /mnt/cairn/ws/notes.md (57 B)? The volume keeps no copy. (y/N)")
	h.key("n")
	require.Empty(t, changes(h.b), "any key but y cancels")
	h.key("D", "y")
	filesCursorOn(h, "latest")
	h.key("delete")
	require.Contains(t, flat(h.view()), "Delete the symlink /mnt/cairn/ws/latest? Only the link goes; what it points to stays.")
	h.key("y")
	require.Equal(t, []tuitest.VolumeCall{
		{Method: "RemovePath", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/notes.md"},
		{Method: "RemovePath", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/latest"},
	}, changes(h.b), "neither recursive")
}

func TestFilesMove(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	h.b.MovePathFunc = func(_ context.Context, ws string, p cairn.MoveParams) (*cairn.FileChange, error) {
		h.b.World.PutVolumeFile(ws, p.To, []byte("moved"))
		return madeHere(p.To), nil
	}
	filesCursorOn(h, "report.csv")

	t.Log("the form holds the entry's path; unchanged, nothing is sent")
	h.key("R")
	require.Contains(t, flat(h.view()), "Rename or move report.csv")
	require.Contains(t, flat(h.view()), "New path in the volume > /mnt/cairn/ws/out/report.csv_")
	h.key("enter")
	require.Equal(t, "i nothing changed", h.statusLine())

	t.Log("a listed path is warned of; outside the mount refused as typed")
	h.key("R", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
	h.typeText("logs")
	require.Contains(t, flat(h.view()), "logs exists — a move never replaces it; name a new path")
	h.key("ctrl+u").typeText("/etc/report.csv").key("enter")
	require.Contains(t, flat(h.view()), "the path must be inside /mnt/cairn/ws")
	require.Empty(t, changes(h.b))

	t.Log("renamed: a toast, the cursor on the new name")
	h.key("ctrl+u").typeText("/mnt/cairn/ws/out/summary.csv").key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, []tuitest.VolumeCall{{Method: "MovePath", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/report.csv", To: "/mnt/cairn/ws/out/summary.csv"}},
		changes(h.b))
	require.Equal(t, "✓ renamed /mnt/cairn/ws/out/report.csv to summary.csv", h.statusLine())
	require.Equal(t, "summary.csv", selectedEntry(t, h))

	t.Log("moved elsewhere: the toast names both paths")
	h.key("R", "ctrl+u").typeText("/mnt/cairn/ws/summary.csv").key("enter")
	require.Equal(t, "✓ moved /mnt/cairn/ws/out/summary.csv to /mnt/cairn/ws/summary.csv", h.statusLine())
}

func TestFilesChangeRefusalIsAToast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	h.b.RemovePathFunc = func(context.Context, string, cairn.FileRemoveParams) (*cairn.FileChange, error) {
		return nil, refusal(cairn.ReasonVolumeFull)
	}
	before := len(listed(h.b))
	filesCursorOn(h, "report.csv")
	h.key("D", "y")
	require.Equal(t, "✕ error: the volume is full — free some room and retry; nothing was changed", h.statusLine())
	require.Equal(t, []string{"/mnt/cairn/ws/out"}, listed(h.b)[before:], "listed again: the listing shows what is there")
	h.key("!")
	require.Contains(t, h.view(), "req-1", "the log keeps the request ID")
}

// TestFilesEntryGuards: what cannot be changed through the API is said
// when pressed, before anything is asked.
func TestFilesEntryGuards(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/huge.log", make([]byte, 2*cairn.MaxFileReadBytes))
	h.key("f")
	for _, c := range []struct{ entry, key, says string }{
		{"out", "e", "out is a directory — enter opens it"},
		{"latest", "e", "latest is a symlink to out/logs — links are shown, never followed"},
		{"pipe", "e", "pipe is not a regular file (a FIFO, socket or device)"},
		{"huge.log", "e", "huge.log is 2.0 MiB, more than one read returns (1.0 MiB) — i saves it as an artifact to edit elsewhere"},
		{"evil\x1b[31mname", "R", "evil^[[31mname: the name holds a control character the API cannot address — rename it in a shell"},
		{"evil\x1b[31mname", "D", "evil^[[31mname: the name holds a control character the API cannot address — rename it in a shell"},
	} {
		filesCursorOn(h, c.entry)
		h.key(c.key)
		require.Nil(t, h.m.modal, c.entry)
		require.Equal(t, "i "+c.says, h.statusLine(), c.entry)
	}
	require.Empty(t, h.b.VolumeCallsOf("ReadFile"))
}

func TestFilesUpload(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	h.b.WriteFileFunc = func(_ context.Context, ws string, p cairn.FileWriteParams) (*cairn.FileChange, error) {
		h.b.World.PutVolumeFile(ws, p.Path, p.Data)
		return madeHere(p.Path), nil
	}
	local := tempFile(t, "data.json", `{"ok":true}`)

	t.Log("the target follows the local file's name until edited")
	h.key("u")
	require.Contains(t, h.view(), "Upload a local file into /mnt/cairn/ws/out")
	h.typeText(local)
	require.Contains(t, flat(h.view()), "Into the volume > /mnt/cairn/ws/out/data.json")

	t.Log("a new name is written only while nothing is there")
	h.key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, []tuitest.VolumeCall{{Method: "WriteFile", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/data.json", Data: `{"ok":true}`, CreateOnly: true}},
		changes(h.b))
	require.Equal(t, "✓ uploaded "+local+" to /mnt/cairn/ws/out/data.json (11 B)", h.statusLine())
	require.Equal(t, "data.json", selectedEntry(t, h))

	t.Log("a local path that is no file is refused under its field")
	h.key("u").typeText(filepath.Dir(local)).key("enter")
	require.Contains(t, flat(h.view()), "is a directory — name a file")
	h.key("esc")
	require.Len(t, changes(h.b), 1)
}

// TestFilesUploadOverAFile: a file listed at the target is replaced only
// after y, and only as it was listed (If-Match its ETag).
func TestFilesUploadOverAFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha := volumeFleet(h)
	h.b.ListFilesFunc = func(ctx context.Context, ws string, p cairn.FileListParams) (*cairn.FileListing, error) {
		l, err := h.b.Client.ListFiles(ctx, ws, p)
		for i := range l.Entries {
			l.Entries[i].ETag = "etag-" + l.Entries[i].Name // the fake server gives none
		}
		return l, err
	}
	h.b.WriteFileFunc = func(_ context.Context, _ string, p cairn.FileWriteParams) (*cairn.FileChange, error) {
		return madeHere(p.Path), nil
	}
	openFilesAt(h, "/mnt/cairn/ws/out")
	local := tempFile(t, "report.csv", "a,b\n")
	h.key("u").typeText(local)
	require.Contains(t, flat(h.view()), "report.csv exists (1.2 KiB) — you are asked before its content is replaced")
	h.key("enter")
	require.IsType(t, &confirm.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "/mnt/cairn/ws/out/report.csv exists (1.2 KiB). Replace its content with "+local+" (4 B)?")
	h.key("y")
	require.Equal(t, []tuitest.VolumeCall{{Method: "WriteFile", WorkspaceID: alpha.ID, Path: "/mnt/cairn/ws/out/report.csv", Data: "a,b\n", IfMatch: "etag-report.csv"}},
		changes(h.b))

	t.Log("a directory there refuses the upload under the target")
	h.key("u").typeText(local).key("down", "ctrl+u").typeText("/mnt/cairn/ws/out/logs").key("enter")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()), "logs exists and is no regular file — name another path")
	require.Len(t, changes(h.b), 1)
}

// TestFilesUploadPastTheBound: a file past the server's bound of one
// write is refused before a byte is sent, pointing to an artifact.
func TestFilesUploadPastTheBound(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	volumeFleet(h)
	h.b.InfoFunc = func(context.Context) (*cairn.Info, error) {
		return &cairn.Info{Bounds: cairn.InfoBounds{FileWriteMaxBytes: 8}}, nil
	}
	openFilesAt(h, "/mnt/cairn/ws/out")
	local := tempFile(t, "big.txt", "nine byte")
	h.key("u").typeText(local).key("enter")
	require.IsType(t, &form.Model{}, h.m.modal, "the form stays")
	require.Contains(t, flat(h.view()),
		local+" is 9 B, past the 8 B one file write takes (files.write.maxBytes) — upload it as an artifact (u on the artifacts), then L loads it here")
	require.Empty(t, changes(h.b))

	t.Log("the server's own refusal reads the same way")
	h.b.InfoFunc = func(context.Context) (*cairn.Info, error) { return nil, refusal(cairn.ReasonInternal) }
	h.b.WriteFileFunc = func(context.Context, string, cairn.FileWriteParams) (*cairn.FileChange, error) {
		return nil, refusal(cairn.ReasonBodyTooLarge)
	}
	h.key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, "✕ error: larger than one request may be — past files.write.maxBytes a file goes in as an artifact (u), then L", h.statusLine())
}

// TestFilesChangesOverSSH: the upload reads a local disk and the edit runs
// a local editor, neither the operator's over SSH: not hinted, and said
// when pressed; the volume-side changes stay.
func TestFilesChangesOverSSH(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.m.c.Remote = true
	volumeFleet(h)
	openFilesAt(h, "/mnt/cairn/ws/out")
	filesCursorOn(h, "report.csv")
	require.NotContains(t, h.view(), "e edit")
	require.NotContains(t, h.view(), "u upload")
	h.key("u")
	require.IsType(t, &help.Model{}, h.m.modal)
	require.Contains(t, h.view(), "No local disk over SSH")
	h.key("esc", "e")
	require.Nil(t, h.m.modal)
	require.Equal(t, "i no editor over SSH: the workbench runs on the server — i saves the file as an artifact to edit elsewhere", h.statusLine())
	require.Empty(t, h.b.VolumeCallsOf("ReadFile"))
	h.key("n")
	require.IsType(t, &form.Model{}, h.m.modal, "a new directory is the volume's, offered")
}

// TestFilesEditRefusals: a file is edited only as UTF-8 text read whole
// with its version; otherwise e says why, no editor runs and no copy is
// made, and the next e starts afresh.
func TestFilesEditRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	volumeFleet(h)
	h.key("f")
	for _, c := range []struct {
		name, entry string
		read        func(*cairn.FileContent) (*cairn.FileContent, error)
		says        string
	}{
		{"NoVersion", "notes.md", func(fc *cairn.FileContent) (*cairn.FileContent, error) { return fc, nil },
			"i the server gave no version (ETag) of notes.md, so a change meanwhile could not be told — it is not edited"},
		{"Binary", "model.bin", versioned,
			"i model.bin is not UTF-8 text — e edits text files only"},
		{"GrewPastOneRead", "notes.md", func(fc *cairn.FileContent) (*cairn.FileContent, error) {
			fc, _ = versioned(fc)
			fc.Size = 3 * cairn.MaxFileReadBytes
			return fc, nil
		}, "i notes.md is 3.0 MiB, more than one read returns (1.0 MiB) — i saves it as an artifact to edit elsewhere"},
		{"ReadRefused", "notes.md", func(*cairn.FileContent) (*cairn.FileContent, error) { return nil, refusal(cairn.ReasonPathNotFound) },
			"✕ error: cannot edit notes.md: no such file or directory in the volume"},
	} {
		h.b.ReadFileFunc = func(ctx context.Context, ws string, p cairn.FileReadParams) (*cairn.FileContent, error) {
			fc, err := h.b.Client.ReadFile(ctx, ws, p)
			require.NoError(t, err)
			return c.read(fc)
		}
		filesCursorOn(h, c.entry)
		h.key("e")
		require.Equal(t, c.says, h.statusLine(), c.name)
		require.Nil(t, h.m.modal, c.name)
		require.Empty(t, h.m.ops.Tasks(), c.name)
	}
	require.Len(t, h.b.VolumeCallsOf("ReadFile"), 4, "each e read afresh: no edit was left in progress")
	require.Empty(t, changes(h.b))
}

// versioned is a read as the server answers it, with the version.
func versioned(fc *cairn.FileContent) (*cairn.FileContent, error) {
	fc.ETag = "v1"
	return fc, nil
}
