package tui

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// wire runs the model as Run wires it, over a real *client.Client against
// clienttest's in-memory server, in a teatest program at 120×40 with real
// timers and the real event pump.
type wire struct {
	t  *testing.T
	tm *teatest.TestModel
	m  *Model
	s  *clienttest.Server
	ws *cairn.Workspace
}

func newWire(t *testing.T, seed func(s *clienttest.Server, ws *cairn.Workspace), opts ...func(*Options)) *wire {
	t.Helper()
	s := clienttest.New(t)
	ws := s.AddWorkspace("ws-alpha", cairn.VolumeReady)
	if seed != nil {
		seed(s, ws)
	}
	cfg := tuitest.Config()
	cfg.Server = s.URL
	o := Options{Config: cfg, Backend: s.Client(t), Theme: tuitest.Theme(false), Clipboard: &tuitest.Clipboard{}}
	for _, f := range opts {
		f(&o)
	}
	m, err := New(o)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	w := &wire{t: t, tm: teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40)), m: m, s: s, ws: ws}
	w.waitFor("ws-alpha", "● live")
	return w
}

func withConfig(edit func(*config.Config)) func(*Options) {
	return func(o *Options) { edit(o.Config) }
}

// waitFor synchronises on texts appearing in the output drawn since the
// last wait; it asserts nothing itself.
func (w *wire) waitFor(texts ...string) {
	w.t.Helper()
	teatest.WaitFor(w.t, w.tm.Output(), func(out []byte) bool {
		for _, s := range texts {
			if !bytes.Contains(out, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

func (w *wire) keys(ks ...string) {
	for _, k := range ks {
		w.tm.Send(modeltest.Key(k))
	}
}

func (w *wire) typeText(s string) { w.tm.Type(s) }

// final quits (confirming when transfers still run) and returns the
// model as the program left it.
func (w *wire) final() *Model {
	w.t.Helper()
	w.tm.Send(modeltest.Key("ctrl+c"))
	w.tm.Send(modeltest.Key("y")) // a quit question, if transfers run; otherwise a harmless key
	return w.tm.FinalModel(w.t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
}

func transferOf(m *Model) *transfer.Transfer {
	if len(m.xfer.All()) == 0 {
		return nil
	}
	return m.xfer.All()[len(m.xfer.All())-1]
}

func TestWireUploadToDone(t *testing.T) {
	w := newWire(t, nil)
	src := filepath.Join(t.TempDir(), "report.csv")
	require.NoError(t, os.WriteFile(src, []byte("id,name\n1,alpha\n"), 0o600))
	w.keys("enter")
	w.waitFor("No artifacts in ws-alpha yet")
	w.keys("u")
	w.waitFor("Upload to ws-alpha")
	w.typeText(src)
	w.waitFor("report_csv")
	w.keys("enter")
	w.waitFor("✓ uploaded report_csv (16 B)", "✓ RECORDED")
	m := w.final()
	require.Equal(t, transfer.PhaseDone, transferOf(m).Phase)
	arts, _ := m.Store().Artifacts(w.ws.ID)
	require.Len(t, arts, 1)
	body, ok := w.s.Object(arts[0].ID)
	require.True(t, ok)
	require.Equal(t, "id,name\n1,alpha\n", string(body), "the store holds the file's bytes")
}

func TestWireUploadCancelled(t *testing.T) {
	w := newWire(t, nil, withConfig(func(c *config.Config) { c.RateLimit = 64 << 10 }))
	src := filepath.Join(t.TempDir(), "big.bin")
	require.NoError(t, os.WriteFile(src, bytes.Repeat([]byte("cairn "), 400_000), 0o600))
	w.keys("enter")
	w.waitFor("No artifacts in ws-alpha yet")
	w.keys("u")
	w.waitFor("Upload to ws-alpha")
	w.typeText(src)
	w.keys("enter")
	w.waitFor("uploading")
	w.keys("t")
	w.waitFor("transfers (1")
	w.keys("x")
	w.waitFor("cancelled the upload of big_bin")
	m := w.final()
	require.Equal(t, transfer.PhaseCancelled, transferOf(m).Phase)
	arts, _ := m.Store().Artifacts(w.ws.ID)
	require.Empty(t, arts)
	require.Zero(t, w.s.Hits("POST /v1/workspaces/{id}/artifacts"), "nothing was registered")
}

func TestWireDownloadViaPart(t *testing.T) {
	var a *cairn.Artifact
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		a = s.AddArtifact(ws.ID, "report_csv", []byte("id,name\n1,alpha\n"))
	})
	release := w.s.Hold("GET /store/{key...}")
	dest := filepath.Join(t.TempDir(), "out.csv")
	w.keys("enter")
	w.waitFor("✓ RECORDED")
	w.keys("d")
	w.waitFor("Download report_csv")
	w.keys("ctrl+u")
	w.typeText(dest)
	w.keys("enter")
	w.waitFor("downloading")
	require.Eventually(t, func() bool { _, err := os.Stat(dest + ".part"); return err == nil }, 10*time.Second, time.Millisecond,
		"the bytes go to the part file")
	require.NoFileExists(t, dest)
	release()
	w.waitFor("✓ downloaded report_csv → " + dest + " (16 B)")
	w.final()
	b, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.Equal(t, "id,name\n1,alpha\n", string(b))
	require.NoFileExists(t, dest+".part")
	_ = a
}

// startRangedDownload opens a download of an artifact above
// client.DefaultRangedAbove, which the client fetches in ranges into
// DEST.part beside a ranges file kept for a resume, and returns once both
// are on disk, the range GETs held.
func startRangedDownload(t *testing.T) (*wire, string) {
	t.Helper()
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		s.AddArtifact(ws.ID, "big_bin", make([]byte, client.DefaultRangedAbove+1))
	})
	t.Cleanup(w.s.Hold("GET /store/{key...}"))
	dest := filepath.Join(t.TempDir(), "big.bin")
	w.keys("enter")
	w.waitFor("✓ RECORDED")
	w.keys("d")
	w.waitFor("Download big_bin")
	w.keys("ctrl+u")
	w.typeText(dest)
	w.keys("enter")
	w.waitFor("downloading")
	require.Eventually(t, func() bool {
		_, errPart := os.Stat(dest + ".part")
		_, errRanges := os.Stat(dest + ".part.json")
		return errPart == nil && errRanges == nil
	}, 10*time.Second, time.Millisecond, "the ranges go to the part file, recorded beside it")
	return w, dest
}

// A cancelled download leaves nothing behind, a large one's part file
// and ranges file included: the operator asked for none of it.
func TestWireRangedDownloadCancelledLeavesNoPart(t *testing.T) {
	w, dest := startRangedDownload(t)
	w.keys("t")
	w.waitFor("transfers (1")
	w.keys("x")
	w.waitFor("cancelled the download of big_bin")
	require.NoFileExists(t, dest+".part")
	require.NoFileExists(t, dest+".part.json")
	require.NoFileExists(t, dest)
	require.Equal(t, transfer.PhaseCancelled, transferOf(w.final()).Phase)
}

// Quitting while a large download runs removes its part file and ranges
// file before the program is gone.
func TestWireRangedDownloadQuitLeavesNoPart(t *testing.T) {
	w, dest := startRangedDownload(t)
	w.final().Close() // as Run closes the model once the program ended
	require.NoFileExists(t, dest+".part")
	require.NoFileExists(t, dest+".part.json")
	require.NoFileExists(t, dest)
}

func TestWireDownloadOfChangedBytesFailsVerification(t *testing.T) {
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		a := s.AddArtifact(ws.ID, "report_csv", []byte("id,name\n1,alpha\n"))
		s.CorruptObject(a.ID, []byte("id,name\n1,ALPHA\n"))
	})
	dest := filepath.Join(t.TempDir(), "out.csv")
	w.keys("enter")
	w.waitFor("✓ RECORDED")
	w.keys("d")
	w.waitFor("Download report_csv")
	w.keys("ctrl+u")
	w.typeText(dest)
	w.keys("enter")
	w.waitFor("not the artifact's")
	m := w.final()
	require.Equal(t, transfer.PhaseFailed, transferOf(m).Phase)
	require.NoFileExists(t, dest, "nothing is kept")
	require.NoFileExists(t, dest+".part")
}

func TestWireReplaceRepairsMissing(t *testing.T) {
	var a *cairn.Artifact
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		a = s.AddArtifact(ws.ID, "model_bin", []byte("old weights"))
		s.MarkMissing(a.ID)
	})
	src := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(src, []byte("new weights"), 0o600))
	w.keys("enter")
	w.waitFor("! MISSING")
	w.keys("U")
	w.waitFor("Repair model_bin")
	w.typeText(src)
	w.keys("enter")
	w.waitFor("Repair model_bin: upload")
	w.keys("y")
	w.waitFor("✓ repaired model_bin", "✓ RECORDED")
	w.waitFor("artifacts (1)") // the server's counts, from the workspace's event
	m := w.final()
	got, _ := m.Store().Artifact(a.ID)
	require.Equal(t, cairn.ArtifactRecorded, got.State)
	total, _ := m.Store().MissingTotal()
	require.Zero(t, total, "the badge clears with the server's counts")
	body, _ := w.s.Object(a.ID)
	require.Equal(t, "new weights", string(body))
}

func TestWireQuitBlockedByATransfer(t *testing.T) {
	w := newWire(t, nil)
	release := w.s.Hold("PUT /store/{key...}")
	defer release()
	src := filepath.Join(t.TempDir(), "report.csv")
	require.NoError(t, os.WriteFile(src, []byte("id\n"), 0o600))
	w.keys("enter")
	w.waitFor("No artifacts in ws-alpha yet")
	w.keys("u")
	w.waitFor("Upload to ws-alpha")
	w.typeText(src)
	w.keys("enter")
	w.waitFor("hashing") // the held PUT reads nothing: no byte has moved
	w.keys("q", "q")     // back to the root, then quit
	w.waitFor("1 transfer running — quit and cancel it?")
	w.keys("n")
	w.waitFor("cancelled")
	w.keys("ctrl+c")
	w.waitFor("1 transfer running — quit and cancel it?")
	w.keys("y")
	m := w.tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	require.True(t, m.quitting)
	require.True(t, transferOf(m).Cancelling, "quitting cancels the transfer")
}

func TestWireVolumeSave(t *testing.T) {
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/probe.txt", []byte("cairn-42\n"))
	})
	w.keys("i")
	w.waitFor("Save a volume file of ws-alpha")
	w.typeText("probe.txt")
	w.keys("enter")
	w.waitFor("✓ saved /mnt/cairn/ws/probe.txt as probe_txt (9 B)")
	w.keys("enter")
	w.waitFor("probe_txt", "✓ RECORDED")
	w.final()
}

// sessionShell is the fake ExecCommand of the shell flows: instead of a
// terminal it types into the real session and waits for its end.
type sessionShell struct {
	s     *ptyshell.Session
	input string // "" detaches
}

func (f *sessionShell) Run() error {
	if f.input == "" {
		return f.s.Close()
	}
	if _, err := f.s.Write([]byte(f.input)); err != nil {
		return err
	}
	<-f.s.Done()
	return nil
}
func (f *sessionShell) SetStdin(io.Reader)      {}
func (f *sessionShell) SetStdout(io.Writer)     {}
func (f *sessionShell) SetStderr(io.Writer)     {}
func (f *sessionShell) Result() ptyshell.Result { return f.s.Result() }

func TestWireShell(t *testing.T) {
	for _, c := range []struct{ name, input, toast string }{
		{"ExitZero", "exit 0\r", "i shell exited: status 0 (ws-alpha)"},
		{"ExitThree", "echo hi\rexit 3\r", "i shell exited: status 3 (ws-alpha)"},
		{"Detach", "", "i left the shell on ws-alpha; the server ends it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWire(t, func(s *clienttest.Server, _ *cairn.Workspace) {
				s.AddWorkspace("ws-beta", cairn.VolumeNone)
			}, func(o *Options) {
				o.ShellCommand = func(s *ptyshell.Session, _ shell.Options) (shell.Command, error) {
					return &sessionShell{s: s, input: c.input}, nil
				}
			})
			lists := w.s.Hits("GET /v1/workspaces")
			w.keys("s")
			w.waitFor(c.toast)
			w.keys("j") // the very next key is handled
			w.waitFor("▸ ws-beta")
			m := w.final()
			require.Greater(t, w.s.Hits("GET /v1/workspaces"), lists, "the return resyncs")
			require.Equal(t, "ws-beta", m.wsName(selectedOf(m)))
			require.Empty(t, m.ops.Tasks())
		})
	}
}

func TestWireShellRefusalStaysOnScreen(t *testing.T) {
	w := newWire(t, func(s *clienttest.Server, _ *cairn.Workspace) { s.SetShellEnabled(false) })
	w.keys("s")
	w.waitFor("the server has the shell turned off (shell.enable)")
	m := w.final()
	require.Equal(t, 1, m.stack.Depth())
	require.True(t, strings.Contains(m.shell.Blocked(), "turned off"))
}
