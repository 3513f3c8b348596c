package workspaces

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // no SGR of the theme's own
	os.Exit(m.Run())
}

// Untrusted text reaches the terminal as visible escapes: the name and the
// description's first line in a row; the name, volume name and every
// description line in the detail pane; the name in a key's reason (TUI.md
// §1.4).
func TestSanitisedText(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	desc := "1" + h + "\n2" + h
	w := &cairn.Workspace{ID: "w1", Name: h, Description: &desc, VolumeName: "v/" + h, VolumeState: cairn.VolumeNone,
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	d.SeedWorkspaces(w)
	s := New(c)
	s.SetSize(200, 30)
	st, _ := s.Keys().Find(keys.WsTeardown)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"Row", s.list.Table.View(true), []string{" " + shown + " ", " 1" + shown + " "}},
		{"Detail", strings.Join(Detail(c, w, 60), "\n"), []string{" " + shown + "\n", "v/" + shown + "\n", " 1" + shown + " ", " 2" + shown + " "}},
		{"View", s.View(), []string{shown}},
		{"KeyReason", st.Reason, []string{shown + " has no volume"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			screentest.RequireShown(t, tc.text, tc.want...)
		})
	}
}
