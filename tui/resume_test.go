package tui

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/choice"
)

// interrupted is what an earlier run left: an upload of big.bin into
// ws-alpha (3 of 10 parts stored) and a replace of model_bin's content
// from a file that changed since.
type interrupted struct {
	ws     *cairn.Workspace
	model  *cairn.Artifact
	ups    []client.PendingUpload
	listed int // PendingUploads calls

	mu        sync.Mutex
	uploads   []string // name|description|path of each Upload
	replaces  []string // artifact|path of each Replace
	discarded []string // paths discarded
}

func newInterrupted(t *testing.T, h *harness) *interrupted {
	t.Helper()
	w := h.b.World
	in := &interrupted{ws: w.AddWorkspace("ws-alpha", cairn.VolumeReady, "")}
	in.model = w.AddArtifact(in.ws.ID, "model_bin", cairn.ArtifactMissingObject, 3<<20, "")
	desc := "nightly dump"
	started := h.clock.Now().Add(-2 * time.Hour)
	in.ups = []client.PendingUpload{
		{WorkspaceID: in.ws.ID, Path: "/data/exports/big.bin", Name: "big_bin", Description: &desc, Size: 80 << 20,
			PartSize: 8 << 20, PartCount: 10, StartedAt: started},
		{WorkspaceID: in.ws.ID, Path: "/data/model.bin", ArtifactID: in.model.ID, Size: 72 << 20,
			PartSize: 8 << 20, PartCount: 9, StartedAt: started.Add(time.Hour), SourceChanged: true},
	}
	h.b.PendingUploadsFunc = func(string) ([]client.PendingUpload, error) { in.listed++; return in.ups, nil }
	h.b.PendingProgressFunc = func(_ context.Context, p client.PendingUpload) (int, int64, error) {
		if p.ArtifactID != "" {
			return 0, 0, nil
		}
		return 3, 24 << 20, nil
	}
	h.b.DiscardUploadFunc = func(_ context.Context, p client.PendingUpload) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.discarded = append(in.discarded, p.Path)
		return nil
	}
	h.b.UploadFunc = func(_ context.Context, wsID, path string, o client.UploadOptions) (*cairn.Artifact, error) {
		in.mu.Lock()
		in.uploads = append(in.uploads, o.Name+"|"+optional.String(o.Description)+"|"+path)
		in.mu.Unlock()
		return w.AddArtifact(wsID, o.Name, cairn.ArtifactRecorded, 80<<20, optional.String(o.Description)), nil
	}
	h.b.ReplaceFunc = func(_ context.Context, id, path string, _ client.UploadOptions) (*cairn.Artifact, error) {
		in.mu.Lock()
		in.replaces = append(in.replaces, id+"|"+path)
		in.mu.Unlock()
		return w.UpdateArtifact(id, func(a *cairn.Artifact) { a.State, a.Size = cairn.ArtifactRecorded, 72<<20 }), nil
	}
	return in
}

func TestResumeOffer(t *testing.T) {
	t.Parallel()
	t.Run("Shown", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		h.size(120, 40).hello()
		require.IsType(t, &choice.Model{}, h.m.modal, "the first list brings the offer")
		v := flat(h.view())
		require.Contains(t, v, "Resume interrupted uploads")
		require.Contains(t, v, "2 uploads did not finish in an earlier run:")
		require.Contains(t, v, "↑ big_bin into ws-alpha · 80.0 MiB · started 2h ago")
		require.Contains(t, v, "/data/exports/big.bin · 3 of 10 parts stored")
		require.Contains(t, v, "↑ replace model_bin in ws-alpha · 72.0 MiB · started 1h ago")
		require.Contains(t, v, "/data/model.bin · ! changed since; starts over")
		require.Contains(t, v, "r resume all · D discard all · esc later")
		require.Contains(t, hintLine(h), "r resume all · D discard all · esc later")
		h.key("j", "y", "enter")
		require.IsType(t, &choice.Model{}, h.m.modal, "other keys do nothing")
		require.Equal(t, 1, in.listed, "asked once")
		h.key("r") // resync: not a second offer
		require.Equal(t, 1, in.listed)
	})
	t.Run("ResumeAll", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		h.size(120, 40).hello().key("r")
		require.Nil(t, h.m.modal)
		require.Equal(t, []string{"big_bin|nightly dump|/data/exports/big.bin"}, in.uploads,
			"the same Upload: name, description, file")
		require.Equal(t, []string{in.model.ID + "|/data/model.bin"}, in.replaces, "the same Replace: artifact, file")
		ts := h.m.xfer.All()
		require.Len(t, ts, 2)
		require.Equal(t, transfer.PhaseDone, ts[0].Phase)
		require.Equal(t, "model_bin", ts[1].Name, "a replace is named after its artifact")
		require.Equal(t, transfer.Replace, ts[1].Kind)
		require.True(t, h.m.xfer.Spec(ts[1].ID).Repair, "the artifact was MISSING_OBJECT")
		require.Equal(t, "✓ repaired model_bin", h.statusLine())
		require.Empty(t, in.discarded)
	})
	t.Run("DiscardAll", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		h.b.DiscardUploadFunc = func(_ context.Context, p client.PendingUpload) error {
			if p.ArtifactID != "" {
				return &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 503}
			}
			in.discarded = append(in.discarded, p.Path)
			return nil
		}
		h.size(120, 40).hello().key("D")
		require.Nil(t, h.m.modal)
		require.Equal(t, []string{"/data/exports/big.bin"}, in.discarded)
		require.Empty(t, in.uploads)
		var texts []string
		for _, e := range h.m.notes.Toasts().Log() {
			texts = append(texts, e.Text)
		}
		require.Contains(t, texts, "discarded the interrupted upload of big_bin")
		require.Contains(t, texts, "discard model_bin: object store unavailable — try again", "each row has its result")
		require.Empty(t, h.m.xfer.All())
	})
	t.Run("LaterChangesNothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		h.size(120, 40).hello().key("esc")
		require.Nil(t, h.m.modal)
		require.Empty(t, in.uploads)
		require.Empty(t, in.discarded)
		require.Empty(t, h.m.xfer.All())
		require.Equal(t, "i kept the interrupted uploads: they are offered again at the next start", h.statusLine())
	})
	t.Run("NoneNoOffer", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		require.Nil(t, h.m.modal)
		require.Empty(t, h.m.notes.Toasts().Log())
	})
	t.Run("ReadOnlyNotLooked", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *config.Config) { c.ReadOnly = true })
		in := newInterrupted(t, h)
		h.size(120, 40).hello()
		require.Nil(t, h.m.modal)
		require.Zero(t, in.listed, "read-only mode resumes nothing, so it does not look")
	})
	t.Run("TokenWithoutWriteNotOffered", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		newInterrupted(t, h)
		h.b.PendingProgressFunc = func(context.Context, client.PendingUpload) (int, int64, error) {
			return 0, 0, &cairn.Error{Reason: cairn.ReasonForbidden, Status: 403}
		}
		h.size(120, 40).hello()
		require.Nil(t, h.m.modal, "resuming would be refused")
		require.Equal(t, "i interrupted uploads are not offered: this token lacks the write scope", h.statusLine())
	})
	t.Run("GoneUploadAndWorkspace", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		in.ups = in.ups[:1]
		in.ups[0].WorkspaceID = "00000000-dead-4000-8000-000000000000"
		h.b.PendingProgressFunc = func(context.Context, client.PendingUpload) (int, int64, error) {
			return 0, 0, &cairn.Error{Reason: cairn.ReasonStagingNotFound, Status: 404}
		}
		h.size(120, 40).hello()
		v := flat(h.view())
		require.Contains(t, v, "Resume an interrupted upload")
		require.Contains(t, v, "↑ big_bin into a deleted workspace")
		require.Contains(t, v, "! gone from the server; starts over")
	})
	t.Run("AnotherModalOpen", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		h.b.PendingUploadsFunc = func(string) ([]client.PendingUpload, error) { return nil, nil }
		h.size(120, 40).hello().key("?")
		h.send(transfer.PendingMsg{Uploads: []transfer.Pending{{PendingUpload: in.ups[0], Shown: "x"}}})
		require.NotContains(t, flat(h.view()), "Resume", "help stays")
		require.Equal(t, "i 1 interrupted upload not offered now: they are offered again at the next start", h.statusLine())
	})
	t.Run("NarrowCutsPathFromTheLeft", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in := newInterrupted(t, h)
		in.ups[0].Path = "/data/a/very/long/directory/tree/that/goes/on/and/on/big.bin"
		in.ups = append(in.ups, in.ups[0])
		h.size(60, 16).hello()
		v := h.view()
		require.Contains(t, v, "│   …hat/goes/on/and/on/big.bin · 3 of 10 parts stored │")
		require.Contains(t, v, "r resume all · D discard all · esc later", "the keys always show")
		require.Contains(t, v, "+1 more", "what does not fit is counted")
	})
}

// A multipart transfer shows its parts beside the bytes, and the client's
// notices about an interrupted run are info toasts named after it.
func TestPartProgressAndNotices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fleet(h)
	h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Upload, WSID: "w", Name: "big_bin", Path: "./big.bin", Size: 80 << 20})
	tr := only(t, h)
	at := h.clock.Now()
	samples(h, live.Sample{Transfer: tr.ID, Done: 24 << 20, Total: 80 << 20, Parts: 3, PartsTotal: 10, At: at})
	h.send(hubMsg{batch: live.Batch{At: at, Notes: []live.Note{{Transfer: tr.ID, Text: "resumed: 3 of 10 parts already stored"}},
		Progress: []live.Sample{{Transfer: tr.ID, Done: 32 << 20, Total: 80 << 20, At: at.Add(time.Second)}}}})
	require.Equal(t, 3, tr.Parts, "a sample without parts keeps the count")
	require.Contains(t, h.view(), "↑ big_bin          uploading      ██████░░░░░░░░░░  40%  3/10 parts")
	require.Equal(t, "i big_bin: resumed: 3 of 10 parts already stored", h.statusLine())
	samples(h, live.Sample{Transfer: tr.ID, Done: 40 << 20, Total: 80 << 20, Parts: 5, PartsTotal: 10, At: at.Add(2 * time.Second)})
	require.Contains(t, h.view(), "50%  5/10 parts")
	h.key("t")
	require.Contains(t, flat(h.view()), "Parts 5 of 10 complete", "the detail pane")
}
