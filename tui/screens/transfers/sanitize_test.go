package transfers

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // no SGR of the theme's own
	os.Exit(m.Run())
}

// Untrusted text reaches the terminal as visible escapes: the name and
// local path in a row; the name, path and error in the detail pane (TUI.md
// §1.4).
func TestSanitisedText(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	tr := &common.Transfer{ID: 1, Kind: common.Upload, Name: h, Path: "/p/" + h, Phase: common.PhaseFailed,
		Err: "e" + h + "\nnext " + h, Queued: screentest.Epoch}
	d.Xfers = []*common.Transfer{tr}
	s := New(c)
	s.SetSize(200, 30)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"Row", s.list.Table.View(true), []string{" " + shown + " ", " /p/" + shown + " "}},
		{"Detail", strings.Join(Detail(c, tr, 60), "\n"), []string{" " + shown + "\n", "/p/" + shown + "\n",
			" e" + shown + " ", " next " + shown + " "}},
		{"View", s.View(), []string{shown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			screentest.RequireShown(t, tc.text, tc.want...)
		})
	}
}
