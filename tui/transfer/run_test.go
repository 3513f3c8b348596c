package transfer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// Run joins the client's byte and part reports into the hub's one sample
// per transfer, and passes its notices on as notes.
func TestRunReportsPartsAndNotices(t *testing.T) {
	t.Parallel()
	for _, kind := range []transfer.Kind{transfer.Upload, transfer.Replace, transfer.Download} {
		t.Run(transfer.KindWord(kind), func(t *testing.T) {
			t.Parallel()
			hub := live.NewHub(0, 100, time.Now)
			b := tuitest.NewBackend(t, tuitest.NewClock(tuitest.Epoch()))
			var firstSeen []live.Sample
			move := func(pp client.PhaseProgress, parts client.PartProgress, notice func(client.Notice)) {
				parts(2, 10) // before any bytes: held back
				firstSeen = append(firstSeen, drain(hub).Progress...)
				notice(client.Notice{Kind: client.NoticeResumed, Text: "resumed: 2 of 10 parts already stored"})
				pp(client.PhaseUploading, 16, 80)
				parts(3, 10)
			}
			b.UploadFunc = func(_ context.Context, _, _ string, o client.UploadOptions) (*cairn.Artifact, error) {
				move(o.PhaseProgress, o.PartProgress, o.Notice)
				return nil, nil
			}
			b.ReplaceFunc = func(_ context.Context, _, _ string, o client.UploadOptions) (*cairn.Artifact, error) {
				move(o.PhaseProgress, o.PartProgress, o.Notice)
				return nil, nil
			}
			b.DownloadFunc = func(_ context.Context, _, _ string, o client.DownloadOptions) (*cairn.Artifact, error) {
				move(o.PhaseProgress, o.PartProgress, o.Notice)
				return nil, nil
			}
			done := transfer.Run(t.Context(), b, hub, transfer.Spec{ID: 7, Kind: kind, Name: "big_bin"}, transfer.Options{})
			require.NoError(t, done.Err)
			require.Empty(t, firstSeen, "a parts report before the bytes would read as every byte sent")
			got := drain(hub)
			require.Len(t, got.Progress, 1)
			s := got.Progress[0]
			require.Equal(t, [4]int64{16, 80, 3, 10}, [4]int64{s.Done, s.Total, int64(s.Parts), int64(s.PartsTotal)})
			require.Equal(t, []live.Note{{Transfer: 7, Text: "resumed: 2 of 10 parts already stored"}}, got.Notes)
		})
	}
}

// drain is what the hub holds now (an empty batch when nothing).
func drain(h *live.Hub) live.Batch {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	b, _ := h.Wait(ctx)
	return b
}
