package optional_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/optional"
)

var now = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func TestUntil(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		3*time.Hour + 59*time.Minute: "in 3h",
		12 * time.Minute:             "in 12m",
		30 * time.Second:             "in <1m",
		50 * time.Hour:               "in 2d",
		0:                            "due",
		-time.Hour:                   "due",
	} {
		require.Equal(t, want, optional.Until(now, now.Add(d)), d)
	}
}

func TestSpan(t *testing.T) {
	t.Parallel()
	for secs, want := range map[int64]string{86400: "1d", 129600: "36h", 5400: "90m", 45: "45s", 3601: "3601s", 0: "0s"} {
		require.Equal(t, want, optional.Span(secs), secs)
	}
}

func TestArchived(t *testing.T) {
	t.Parallel()
	id := "s1"
	require.True(t, optional.Archived(&cairn.Workspace{VolumeState: cairn.VolumeNone, ArchivedSnapshotID: &id}))
	require.False(t, optional.Archived(&cairn.Workspace{VolumeState: cairn.VolumeReady, ArchivedSnapshotID: &id}), "set up: restored")
	require.False(t, optional.Archived(&cairn.Workspace{VolumeState: cairn.VolumeNone}))
}
