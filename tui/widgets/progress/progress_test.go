package progress_test

import (
	"math"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/progress"
)

func TestViewAs(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	uni, ascii := theme.New("dark", theme.Unicode()), theme.New("dark", theme.ASCII())
	cases := []struct {
		name     string
		th       *theme.Theme
		fraction float64
		width    int
		want     string
	}{
		{"Empty", uni, 0, 8, "░░░░░░░░"},
		{"Half", uni, 0.5, 8, "████░░░░"},
		{"Rounds", uni, 0.64, 16, "██████████░░░░░░"},
		{"Full", uni, 1, 4, "████"},
		{"Clamped", uni, 1.7, 4, "████"},
		{"Negative", uni, -1, 4, "░░░░"},
		{"NaN", uni, math.NaN(), 3, "░░░"},
		{"ASCII", ascii, 0.25, 8, "##......"},
		{"NoRoom", uni, 0.5, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, progress.ViewAs(c.th, c.fraction, c.width))
		})
	}
}
