package tui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// The edit in $EDITOR runs in a teatest program, so that tea.ExecProcess
// really hands the terminal to an editor: a sh script standing in for
// one, which logs the modes of the private copy and its directory and
// changes the copy as its body says.

const notesPath = "/mnt/cairn/ws/notes.txt"

// editBench is a flow on the files pane of ws-alpha's root, whose volume
// holds notes.txt, and the editor script's log.
type editBench struct {
	*flow
	ws  *cairn.Workspace
	log string
}

// versionOf is the ETag the scripted server gives a content: its hash, so
// that any other content is another version.
func versionOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// newEditBench scripts the reads and writes of notes.txt as the server
// answers them: a read carries the content's version, a write with
// If-Match is refused (file_changed) unless that is still the version.
// meanwhile, when set, is what another writer puts there right after the
// first read.
func newEditBench(t *testing.T, editorBody string, meanwhile []byte) *editBench {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "editor.log")
	script := filepath.Join(dir, "editor.sh")
	require.NoError(t, os.WriteFile(script, []byte(`stat -c '%a %n' "$(dirname "$1")" "$1" >> `+log+"\n"+editorBody+"\n"), 0o600))
	eb := &editBench{log: log}
	var once sync.Once
	eb.flow = newFlowWith(t, func(b *tuitest.Backend) {
		eb.ws = b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		b.World.PutVolumeFile(eb.ws.ID, notesPath, []byte("first line\nsecond line\n"))
		b.ReadFileFunc = func(ctx context.Context, ws string, p cairn.FileReadParams) (*cairn.FileContent, error) {
			fc, err := b.Client.ReadFile(ctx, ws, p)
			if err == nil {
				fc.ETag = versionOf(fc.Data)
			}
			if meanwhile != nil {
				once.Do(func() { b.World.PutVolumeFile(ws, p.Path, meanwhile) })
			}
			return fc, err
		}
		b.WriteFileFunc = func(_ context.Context, ws string, p cairn.FileWriteParams) (*cairn.FileChange, error) {
			now, _ := b.World.VolumeFile(ws, p.Path)
			if p.IfMatch != "" && p.IfMatch != versionOf(now) {
				return nil, refusal(cairn.ReasonFileChanged)
			}
			b.World.PutVolumeFile(ws, p.Path, p.Data)
			return madeHere(p.Path), nil
		}
	}, func(o *Options) { o.Editor = "sh " + script })
	eb.waitFor("ws-alpha", "● READY")
	eb.keys("f")
	eb.waitFor("files /mnt/cairn/ws (1)", "notes.txt")
	return eb
}

// runs is the editor's runs: the mode of the copy's directory and of the
// copy, and the copy's path, for each.
func (eb *editBench) runs() [][3]string {
	eb.t.Helper()
	raw, err := os.ReadFile(eb.log)
	require.NoError(eb.t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var out [][3]string
	for i := 0; i+1 < len(lines); i += 2 {
		dirMode, _, _ := strings.Cut(lines[i], " ")
		fileMode, copyPath, _ := strings.Cut(lines[i+1], " ")
		out = append(out, [3]string{dirMode, fileMode, copyPath})
	}
	return out
}

// writes are the edit's writes of notes.txt: the If-Match and the content.
func (eb *editBench) writes() [][2]string {
	var out [][2]string
	for _, c := range eb.b.VolumeCallsOf("WriteFile") {
		out = append(out, [2]string{c.IfMatch, c.Data})
	}
	return out
}

func (eb *editBench) volumeFile() string {
	got, _ := eb.b.World.VolumeFile(eb.ws.ID, notesPath)
	return string(got)
}

// requireCopiesGone checks the private copies are gone, and that each was
// private: the directory 0700, the file 0600.
func (eb *editBench) requireCopiesGone(runs int) {
	eb.t.Helper()
	got := eb.runs()
	require.Len(eb.t, got, runs)
	for _, r := range got {
		require.Equal(eb.t, [2]string{"700", "600"}, [2]string{r[0], r[1]}, "a private copy")
		require.Equal(eb.t, "notes.txt", filepath.Base(r[2]), "named as the file, for the editor")
		_, err := os.Stat(filepath.Dir(r[2]))
		require.ErrorIs(eb.t, err, os.ErrNotExist, "the copy is removed")
	}
}

// TestFlowEditWritesBack: e hands the terminal to the editor on a private
// copy; the changed copy is written over the version read.
func TestFlowEditWritesBack(t *testing.T) {
	eb := newEditBench(t, `echo "added by the editor" >> "$1"`, nil)
	eb.keys("e")
	eb.waitFor("saved your edit of /mnt/cairn/ws/notes.txt (43 B)")
	eb.final()
	want := "first line\nsecond line\nadded by the editor\n"
	require.Equal(t, [][2]string{{versionOf([]byte("first line\nsecond line\n")), want}}, eb.writes())
	require.Equal(t, want, eb.volumeFile())
	eb.requireCopiesGone(1)
}

func TestFlowEditUnchangedWritesNothing(t *testing.T) {
	eb := newEditBench(t, `true`, nil)
	eb.keys("e")
	eb.waitFor("no change to notes.txt — nothing was written")
	eb.final()
	require.Empty(t, eb.writes())
	eb.requireCopiesGone(1)
}

// TestFlowEditorFailureWritesNothing: an editor that exits non-zero (as
// vim's :cq does) leaves the file as it was.
func TestFlowEditorFailureWritesNothing(t *testing.T) {
	eb := newEditBench(t, `echo "half an edit" >> "$1"; exit 3`, nil)
	eb.keys("e")
	eb.waitFor("the editor failed (exit status 3) — nothing was written to notes.txt")
	eb.final()
	require.Empty(t, eb.writes())
	eb.requireCopiesGone(1)
}

// TestFlowEditConflict: the file changed after it was read. The write is
// refused, both versions show, and nothing overwrites theirs unasked:
// keeping on editing is checked against the version first read again; o
// overwrites.
func TestFlowEditConflict(t *testing.T) {
	theirs := []byte("their line\n")
	eb := newEditBench(t, `echo "mine" >> "$1"`, theirs)
	read := versionOf([]byte("first line\nsecond line\n"))
	eb.keys("e")
	eb.waitFor("Changed meanwhile: notes.txt", "notes.txt changed in the volume since you opened it.",
		"Theirs, in the volume now (11 B)", "their line", "Yours (28 B)", "second line", "mine",
		"o overwrite theirs · e keep editing · d discard yours")
	eb.keys("x", "esc") // neither answers
	eb.keys("e")
	eb.waitFor("Yours (33 B)")
	require.Equal(t, string(theirs), eb.volumeFile(), "still theirs")
	eb.keys("o")
	eb.waitFor("saved your edit of /mnt/cairn/ws/notes.txt (33 B)")
	eb.final()
	yours := "first line\nsecond line\nmine\nmine\n"
	require.Equal(t, [][2]string{
		{read, "first line\nsecond line\nmine\n"},
		{read, yours},
		{"", yours},
	}, eb.writes())
	require.Equal(t, yours, eb.volumeFile())
	eb.requireCopiesGone(2)
}

func TestFlowEditConflictDiscard(t *testing.T) {
	theirs := []byte("their line\n")
	eb := newEditBench(t, `echo "mine" >> "$1"`, theirs)
	eb.keys("e")
	eb.waitFor("Changed meanwhile: notes.txt")
	eb.keys("ctrl+c") // closes the modal unanswered
	eb.waitFor("e edit")
	eb.keys("e")
	eb.waitFor("Changed meanwhile: notes.txt", "o overwrite theirs")
	eb.keys("d")
	eb.waitFor("discarded your edit of notes.txt — the volume's version stays")
	eb.final()
	require.Len(t, eb.writes(), 1, "the refused write only")
	require.Equal(t, string(theirs), eb.volumeFile())
	eb.requireCopiesGone(1)
}
