package transfer_test

import (
	"os"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/transfer"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func TestBar(t *testing.T) {
	t.Parallel()
	uni, ascii := theme.New("dark", theme.Unicode()), theme.New("dark", theme.ASCII())
	cases := []struct {
		name        string
		th          *theme.Theme
		phase       transfer.Phase
		done, total int64
		width       int
		want        string
	}{
		{"Empty", uni, transfer.PhaseUploading, 0, 100, 8, "░░░░░░░░   0%"},
		{"Half", uni, transfer.PhaseDownloading, 50, 100, 8, "████░░░░  50%"},
		{"Rounds", uni, transfer.PhaseUploading, 64, 100, 16, "██████████░░░░░░  64%"},
		{"PercentRoundsDown", uni, transfer.PhaseUploading, 999, 1000, 10, "██████████  99%"},
		{"Done", uni, transfer.PhaseDone, 0, 0, 4, "████ 100%"},
		{"ASCII", ascii, transfer.PhaseUploading, 25, 100, 8, "##......  25%"},
		{"NoRoom", uni, transfer.PhaseUploading, 50, 100, 0, "  50%"},
		{"NoBytesYet", uni, transfer.PhaseHashing, 10, 100, 8, ""},
		{"Queued", uni, transfer.PhaseQueued, 0, 100, 8, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := &transfer.Transfer{Kind: transfer.Upload, Name: "report_csv", Phase: c.phase, Meter: termkit.Meter{Done: c.done, Total: c.total}}
			require.Equal(t, c.want, transfer.Bar(c.th, tr, c.width))
		})
	}
}

// A transfer in parts shows its count beside the bytes while it runs, and
// gives it up before the bar when the line is short.
func TestParts(t *testing.T) {
	t.Parallel()
	th := theme.New("dark", theme.Unicode())
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	tr := &transfer.Transfer{Kind: transfer.Upload, Name: "big_bin", Phase: transfer.PhaseUploading,
		Meter: termkit.Meter{Done: 24 << 20, Total: 80 << 20, Sampled: at, FirstSample: at}, Parts: 3, PartsTotal: 10}
	require.Equal(t, "3/10 parts", transfer.Parts(tr))
	wide := transfer.Line(th, tr, at, 0, 100)
	require.Contains(t, wide, " 30%  3/10 parts  ")
	require.NotContains(t, transfer.Line(th, tr, at, 0, 64), "parts", "dropped before the bar")
	require.Contains(t, transfer.Line(th, tr, at, 0, 64), "30%")

	for _, c := range []struct {
		name  string
		phase transfer.Phase
		total int
		want  string
	}{
		{"OnePiece", transfer.PhaseUploading, 0, ""},
		{"Hashing", transfer.PhaseHashing, 10, ""},
		{"Registering", transfer.PhaseRegistering, 10, "3/10 parts"},
		{"Done", transfer.PhaseDone, 10, ""},
		{"Cancelled", transfer.PhaseCancelled, 10, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := &transfer.Transfer{Kind: transfer.Upload, Phase: c.phase, Parts: 3, PartsTotal: c.total}
			require.Equal(t, c.want, transfer.Parts(tr))
		})
	}
}
