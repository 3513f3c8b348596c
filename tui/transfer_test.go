package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screens/transfers"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// readyArtifacts opens a READY workspace holding report_csv (RECORDED,
// text) and model_bin (MISSING_OBJECT).
func readyArtifacts(t *testing.T, h *harness) (ws, report, missing *cairn.Artifact) {
	t.Helper()
	w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
	report = h.b.World.AddArtifact(w.ID, "report_csv", cairn.ArtifactRecorded, 0, "")
	h.b.World.SetContent(report.ID, []byte("id,name\n1,alpha\n"))
	missing = h.b.World.AddArtifact(w.ID, "model_bin", cairn.ArtifactMissingObject, 3355443, "")
	h.size(120, 40).hello()
	h.key("enter")
	require.True(t, h.m.Store().Cached(w.ID))
	return &cairn.Artifact{WorkspaceID: w.ID}, report, missing
}

// flat is the frame's words, box borders gone: wrapped modal text reads
// as one line.
func flat(v string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(v, "│", " ")), " ")
}

func tempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// cursorOn moves the artifacts cursor to the row named name.
func cursorOn(t *testing.T, h *harness, name string) {
	t.Helper()
	for range 10 {
		if a, ok := h.m.stack.Top().(interface {
			Selected() (*cairn.Artifact, bool)
		}).Selected(); ok && a.Name == name {
			return
		}
		h.key("j")
	}
	t.Fatalf("no row %s", name)
}

func only(t *testing.T, h *harness) *transfer.Transfer {
	t.Helper()
	require.Len(t, h.m.xfer.All(), 1)
	return h.m.xfer.All()[0]
}

func samples(h *harness, ss ...live.Sample) *harness {
	return h.send(hubMsg{batch: live.Batch{At: h.clock.Now(), Progress: ss}})
}

func TestUploadToDone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws, _, _ := readyArtifacts(t, h)
	src := tempFile(t, "daily report.csv", "a,b\n1,2\n")
	h.key("u")
	f, ok := h.m.modal.(*form.Model)
	require.True(t, ok)
	h.typeText(src)
	require.Contains(t, h.view(), "daily_report_csv", "the name follows the file name")
	h.key("enter")
	require.Nil(t, h.m.modal)
	_ = f
	tr := only(t, h)
	require.Equal(t, transfer.PhaseDone, tr.Phase)
	require.Equal(t, "daily_report_csv", tr.Name)
	require.Equal(t, "✓ uploaded daily_report_csv (8 B)", h.statusLine())
	arts, _ := h.m.Store().Artifacts(ws.WorkspaceID)
	require.Len(t, arts, 3)
	require.Contains(t, h.view(), "↑ daily_report_csv ✓ done", "the tray lingers")
	require.Equal(t, 1, h.m.trayRows)
	require.Equal(t, 36, h.m.bodyHeight())
	require.Equal(t, 1, h.fire(isMsg[transfer.LingerMsg]))
	require.Zero(t, h.m.trayRows, "gone from the tray after 5 s")
	require.Equal(t, 37, h.m.bodyHeight())
	require.Len(t, h.m.xfer.All(), 1, "the transfers screen keeps it")
}

func TestUploadNameStopsFollowingOnceEdited(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	h.key("u").typeText("a.txt").key("down").key("ctrl+u").typeText("mine").key("up").typeText("x")
	require.Contains(t, h.view(), "a.txtx")
	require.Contains(t, h.view(), "mine")
	require.NotContains(t, h.view(), "a_txtx")
}

func TestUploadFormRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	dir := t.TempDir()
	h.key("u").typeText(filepath.Join(dir, "nope.csv")).key("enter")
	require.IsType(t, &form.Model{}, h.m.modal, "the form stays open")
	require.Contains(t, flat(h.view()), "no such file: "+filepath.Join(dir, "nope.csv"))
	h.key("ctrl+u").typeText(dir).key("enter")
	require.Contains(t, flat(h.view()), dir+" is a directory — name a file")
	require.Empty(t, h.m.xfer.All())
}

func TestUploadPhasesFromSamples(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	src := tempFile(t, "big.bin", strings.Repeat("x", 1000))
	h.key("u").typeText(src)
	h.hop(modeltest.Key("enter")) // the stat answers; the upload's Cmd stays in flight
	tr := only(t, h)
	require.Equal(t, transfer.PhaseHashing, tr.Phase)
	require.Equal(t, int64(1000), tr.Total, "the size is known from the stat")
	require.Contains(t, h.view(), "hashing")

	at := h.clock.Now().Add(-3 * time.Second) // the hash pass ran before
	samples(h, live.Sample{Transfer: tr.ID, Hashing: true, Done: 0, Total: 1000, At: at})
	samples(h, live.Sample{Transfer: tr.ID, Hashing: true, Done: 250, Total: 1000, At: at.Add(time.Second)})
	samples(h, live.Sample{Transfer: tr.ID, Hashing: true, Done: 500, Total: 1000, At: at.Add(2 * time.Second)})
	require.Equal(t, transfer.PhaseHashing, tr.Phase)
	hashETA, ok := tr.ETA()
	require.True(t, ok, "hashing has its own ETA")
	require.Equal(t, 2*time.Second, hashETA, "500 bytes left at 250 B/s")
	v := h.view()
	require.Contains(t, v, "hashing")
	require.Contains(t, v, " 50%", "the hash pass shows its percent")
	require.Contains(t, v, "250 B/s")

	at = h.clock.Now()
	samples(h, live.Sample{Transfer: tr.ID, Done: 100, Total: 1000, At: at})
	require.Equal(t, transfer.PhaseUploading, tr.Phase)
	require.Equal(t, int64(100), tr.Done, "the PUT counts its bytes from zero")
	require.Zero(t, tr.Rate, "the PUT's rate starts over")
	samples(h, live.Sample{Transfer: tr.ID, Done: 300, Total: 1000, At: at.Add(500 * time.Millisecond)})
	require.InDelta(t, 400, tr.Rate, 0.01, "200 bytes in 0.5 s")
	_, ok = tr.ETA()
	require.False(t, ok, "no ETA in the first second")
	samples(h, live.Sample{Transfer: tr.ID, Done: 700, Total: 1000, At: at.Add(1500 * time.Millisecond)})
	eta, ok := tr.ETA()
	require.True(t, ok)
	require.Greater(t, eta, time.Duration(0))
	require.Contains(t, h.view(), "uploading")
	require.Contains(t, h.view(), " 70%")
	require.Contains(t, h.view(), "B/s")
	samples(h, live.Sample{Transfer: tr.ID, Done: 1000, Total: 1000, At: at.Add(2 * time.Second)})
	require.Equal(t, transfer.PhaseRegistering, tr.Phase, "every byte sent: the server registers")

	a := h.b.World.AddArtifact(tr.WorkspaceID, "big_bin", cairn.ArtifactRecorded, 1000, "")
	h.send(transfer.DoneMsg{ID: tr.ID, Art: a})
	require.Equal(t, transfer.PhaseDone, tr.Phase)
	samples(h, live.Sample{Transfer: tr.ID, Done: 10, Total: 1000})
	require.Equal(t, transfer.PhaseDone, tr.Phase, "a late sample changes nothing")
	require.Equal(t, int64(1000), tr.Done)
}

func TestReplaceNamesBothSizes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	cursorOn(t, h, "report_csv")
	src := tempFile(t, "report.csv", strings.Repeat("y", 15565))
	h.key("U").typeText(src).key("enter")
	require.IsType(t, &confirm.Model{}, h.m.modal)
	require.Contains(t, flat(h.view()),
		"Replace the content of report_csv (16 B, text/csv) with "+src+" (15.2 KiB)?")
	h.key("n")
	require.Equal(t, "i cancelled", h.statusLine())
	require.Empty(t, h.m.xfer.All())
}

func TestReplaceRepairsMissing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	cursorOn(t, h, "model_bin")
	require.Contains(t, h.view(), "U uploads new content")
	src := tempFile(t, "model.bin", "weights")
	h.key("U")
	require.Contains(t, h.view(), "Repair model_bin")
	h.typeText(src).key("enter")
	require.Contains(t, flat(h.view()), "Repair model_bin: upload "+src+" as its content?")
	h.m.Update(modeltest.Key("y")) // its Cmd never runs: the transfer stays in flight
	tr := only(t, h)
	require.Equal(t, transfer.Replace, tr.Kind)
	require.Equal(t, "replacing", h.m.ops.Pending(tr.ArtifactID))
	require.Contains(t, h.view(), "⠋ replacing")
	h.send(transfer.Run(context.Background(), h.b, h.m.hub, h.m.xfer.Spec(tr.ID), transfer.Options{}))
	require.Equal(t, "✓ repaired model_bin", h.statusLine())
	require.False(t, h.m.ops.Busy())
	a, _ := h.m.Store().Artifact(tr.ArtifactID)
	require.Equal(t, cairn.ArtifactRecorded, a.State)
	require.NotContains(t, h.view(), "! MISSING")
}

func TestDownload(t *testing.T) {
	t.Parallel()
	t.Run("ToANewFile", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		readyArtifacts(t, h)
		cursorOn(t, h, "report_csv")
		h.key("d")
		require.Contains(t, h.view(), "./report_csv", "the default target is download_dir/name")
		dest := filepath.Join(t.TempDir(), "out.csv")
		h.key("ctrl+u").typeText(dest).key("enter")
		require.Equal(t, "✓ downloaded report_csv → "+dest+" (16 B)", h.statusLine())
		b, err := os.ReadFile(dest)
		require.NoError(t, err)
		require.Equal(t, "id,name\n1,alpha\n", string(b))
	})
	t.Run("OverwriteAsks", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		readyArtifacts(t, h)
		cursorOn(t, h, "report_csv")
		dest := tempFile(t, "old.csv", "old")
		h.key("d", "ctrl+u").typeText(dest).key("enter")
		require.IsType(t, &confirm.Model{}, h.m.modal)
		require.Contains(t, flat(h.view()), dest+" exists (3 B). Overwrite it?")
		h.key("y")
		b, _ := os.ReadFile(dest)
		require.Equal(t, "id,name\n1,alpha\n", string(b))
	})
	t.Run("MissingDirectory", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		readyArtifacts(t, h)
		cursorOn(t, h, "report_csv")
		dest := filepath.Join(t.TempDir(), "no", "such", "x")
		h.key("d", "ctrl+u").typeText(dest).key("enter")
		require.Contains(t, flat(h.view()), "does not exist")
		require.IsType(t, &form.Model{}, h.m.modal)
	})
	t.Run("MissingIsRefused", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		readyArtifacts(t, h)
		cursorOn(t, h, "model_bin")
		h.key("d")
		require.Nil(t, h.m.modal)
		require.Equal(t, "i model_bin is MISSING_OBJECT — nothing to download", h.statusLine())
	})
	t.Run("VerificationFails", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		readyArtifacts(t, h)
		cursorOn(t, h, "report_csv")
		h.b.DownloadFunc = func(context.Context, string, string, client.DownloadOptions) (*cairn.Artifact, error) {
			return nil, fmt.Errorf("artifact x: received 3 bytes, 16 were recorded: %w", client.ErrVerification)
		}
		h.key("d", "enter")
		tr := only(t, h)
		require.Equal(t, transfer.PhaseFailed, tr.Phase)
		require.Equal(t, "✕ error: report_csv: the downloaded bytes are not the artifact's (size or SHA-256) — nothing was kept", h.statusLine())
	})
}

func TestTransferSentences(t *testing.T) {
	t.Parallel()
	up := &transfer.Transfer{Kind: transfer.Upload, Name: "report_csv", Path: "/tmp/report.csv"}
	require.Equal(t, "report.csv changed while uploading — retry",
		transfer.Sentence(up, &cairn.Error{Reason: cairn.ReasonSourceChanged}))
	require.Equal(t, "upload did not reach the store — retry",
		transfer.Sentence(up, &cairn.Error{Reason: cairn.ReasonStagingNotFound, Status: 400}))
	require.Equal(t, "ws-x already has an artifact named report_csv",
		strings.Replace(transfer.Sentence(up, &cairn.Error{Reason: cairn.ReasonNameTaken, Status: 409}), " already", "ws-x already", 1))
	down := &transfer.Transfer{Kind: transfer.Download, Name: "report_csv", Path: "./r"}
	require.Equal(t, "report_csv is MISSING_OBJECT — nothing to download",
		transfer.Sentence(down, &cairn.Error{Reason: cairn.ReasonObjectMissing, Status: 409}))
}

// queue starts n uploads whose Cmds never run: they stay in flight.
func queue(t *testing.T, h *harness, n int) []*transfer.Transfer {
	t.Helper()
	for i := range n {
		h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Upload, WSID: "ws", Name: fmt.Sprintf("file_%d", i), Path: fmt.Sprintf("/tmp/f%d", i), Size: 1000})
	}
	return h.m.xfer.All()
}

func TestAtMostMaxParallelRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed()
	ts := queue(t, h, 3)
	require.Equal(t, []transfer.Phase{transfer.PhaseHashing, transfer.PhaseHashing, transfer.PhaseQueued},
		[]transfer.Phase{ts[0].Phase, ts[1].Phase, ts[2].Phase})
	h.m.Update(transfer.DoneMsg{ID: ts[0].ID, Err: &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 502}})
	require.Equal(t, transfer.PhaseFailed, ts[0].Phase)
	require.Equal(t, "object store unavailable — try again", ts[0].Err)
	require.Equal(t, transfer.PhaseHashing, ts[2].Phase, "the queued one starts when a slot frees")
}

func TestCancel(t *testing.T) {
	t.Parallel()
	t.Run("QueuedAtOnce", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed()
		ts := queue(t, h, 3)
		h.send(transfers.ActionMsg{ID: "tr_cancel", Transfer: ts[2].ID})
		require.Equal(t, transfer.PhaseCancelled, ts[2].Phase)
		require.Equal(t, "i cancelled the upload of file_2", h.statusLine())
	})
	t.Run("RunningCancelsItsContext", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed()
		ts := queue(t, h, 1)
		h.send(transfers.ActionMsg{ID: "tr_cancel", Transfer: ts[0].ID})
		require.True(t, ts[0].Cancelling)
		require.Contains(t, h.view(), "cancelling")
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // what the cancel did to the transfer's context
		h.send(transfer.Run(ctx, blockingUpload(h), h.m.hub, h.m.xfer.Spec(ts[0].ID), transfer.Options{}))
		require.Equal(t, transfer.PhaseCancelled, ts[0].Phase)
	})
	t.Run("PastHalfAsks", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed()
		ts := queue(t, h, 1)
		samples(h, live.Sample{Transfer: ts[0].ID, Done: 640, Total: 1000})
		h.send(transfers.ActionMsg{ID: "tr_cancel", Transfer: ts[0].ID})
		require.Contains(t, flat(h.view()), "file_0 is 64% done. Cancel the upload?")
		require.False(t, ts[0].Cancelling)
		h.key("y")
		require.True(t, ts[0].Cancelling)
	})
}

// blockingUpload waits for its context, as a cancelled upload does.
func blockingUpload(h *harness) *fakeUploads {
	return &fakeUploads{Backend: h.b}
}

type fakeUploads struct{ Backend }

func (f *fakeUploads) Upload(ctx context.Context, _, _ string, _ client.UploadOptions) (*cairn.Artifact, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("upload: %w", ctx.Err())
}

func TestQuitBlockedByTransfers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed()
	ts := queue(t, h, 2)
	h.key("q")
	require.False(t, h.quit)
	require.Contains(t, h.view(), "2 transfers running — quit and cancel them?")
	h.key("n")
	require.False(t, h.quit)
	require.Equal(t, "i cancelled", h.statusLine())
	require.Equal(t, tea.Msg(quitRequestMsg{}), h.m.filter(tea.QuitMsg{}), "a signal's quit asks too")
	h.key("ctrl+c", "y")
	require.True(t, h.quit)
	require.True(t, ts[0].Cancelling && ts[1].Cancelling)
	select {
	case <-h.m.ctx.Done():
		t.Fatal("the program's context ends only in Close")
	default:
	}
}

func TestTrayHeights(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		height, n int
		rows      int
		last      string
	}{
		{"None", 40, 0, 0, ""},
		{"One", 40, 1, 1, "file_0"},
		{"Three", 40, 3, 3, "file_2"},
		{"MoreThanThree", 40, 5, 3, "+3 more · t"},
		{"ShortWindowSummary", 20, 2, 1, "↑ 2 transfers 0% · t"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.seed("ws-alpha")
			queue(t, h, c.n)
			h.size(120, c.height)
			require.Equal(t, c.rows, h.m.trayRows)
			require.Equal(t, c.height-3-c.rows, h.m.bodyHeight())
			lines := strings.Split(h.view(), "\n")
			require.Len(t, lines, c.height)
			if c.rows > 0 {
				require.Contains(t, lines[c.height-3], c.last)
			}
		})
	}
}

func TestTransfersScreen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	cursorOn(t, h, "report_csv")
	dest := filepath.Join(t.TempDir(), "r.csv")
	h.key("d", "ctrl+u").typeText(dest).key("enter")
	h.key("t")
	_, ok := h.m.stack.Top().(*transfers.Screen)
	require.True(t, ok)
	require.Contains(t, h.header(), "transfers (1)")
	require.Contains(t, h.view(), dest)
	h.key("y")
	require.Equal(t, []string{dest}, h.clip.Copies())
	h.key("enter")
	a, _ := h.m.stack.Top().(interface {
		Selected() (*cairn.Artifact, bool)
	}).Selected()
	require.Equal(t, "report_csv", a.Name, "enter goes to the artifact")
	h.key("3", "c")
	require.Contains(t, h.header(), "transfers (0)")
	require.Contains(t, h.view(), "No transfers yet")
}

func TestCompletionInTheForm(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "alpha.csv"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "alpine.txt"), nil, 0o600))
	h.key("u").typeText(dir + "/al").key("tab")
	v := h.view()
	require.Contains(t, v, dir+"/alp")
	require.Contains(t, v, "alpha.csv  alpine.txt")
	h.typeText("ha").key("tab")
	require.Contains(t, h.view(), dir+"/alpha.csv")
	require.Contains(t, h.view(), "alpha_csv")
}

// TestTabReachesTheTray walks list → detail → tray → list with tab, and
// cancels a transfer from the tray.
func TestTabReachesTheTray(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-alpha")
	ts := queue(t, h, 2)
	require.Equal(t, 2, h.m.trayRows)
	detail := func() bool { return h.m.stack.Top().(interface{ DetailFocused() bool }).DetailFocused() }

	h.key("tab")
	require.True(t, detail())
	require.False(t, h.m.xfer.TrayFocused())
	h.key("tab")
	require.True(t, h.m.xfer.TrayFocused(), "tab past the detail pane enters the tray")
	require.Contains(t, h.view(), "transfers tray: k/j select")
	require.Contains(t, h.view(), "▸ ↑ file_0", "the cursor is on the first transfer")

	h.key("j").key("x")
	require.False(t, ts[0].Cancelling)
	require.True(t, ts[1].Cancelling, "x cancels the transfer under the tray's cursor")
	require.Contains(t, h.view(), "▸ ↑ file_1")

	h.key("tab")
	require.False(t, h.m.xfer.TrayFocused())
	require.False(t, detail(), "tab from the tray goes round to the list")

	h.key("shift+tab")
	require.True(t, h.m.xfer.TrayFocused(), "shift+tab from the list enters the tray")
	h.key("shift+tab")
	require.False(t, h.m.xfer.TrayFocused())
	require.True(t, detail(), "shift+tab from the tray goes back to the detail")
}

// TestDownloadHonoursPresignTTL: transfer.presign_ttl reaches the
// presigned GET's ttl, and a rate limit reaches both ways.
func TestDownloadHonoursPresignTTL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.PresignTTL = 42 * time.Second; c.RateLimit = 1 << 20 })
	h.seed()
	var got client.DownloadOptions
	h.b.DownloadFunc = func(_ context.Context, _, _ string, o client.DownloadOptions) (*cairn.Artifact, error) {
		got = o
		return nil, errors.New("stop here")
	}
	h.run(h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Download, ArtID: "01JX", Name: "report_csv", Path: t.TempDir() + "/r"}))
	require.Equal(t, 42*time.Second, got.TTL)
	require.Equal(t, int64(1<<20), got.RateLimit)
	require.NotNil(t, got.PhaseProgress, "progress reports its phase")
}
