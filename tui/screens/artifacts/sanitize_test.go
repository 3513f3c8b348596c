package artifacts

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // no SGR of the theme's own
	os.Exit(m.Run())
}

// Untrusted text reaches the terminal as visible escapes: the name, MIME
// type and the description's first line in a row; the name, MIME type,
// object key and every description line in the detail pane; the
// workspace's name in the crumbs (TUI.md §1.4).
func TestSanitisedText(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	desc := "1" + h + "\r\n2" + h
	d.SeedWorkspaces(&cairn.Workspace{ID: "w1", Name: "ws" + h, CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch})
	a := &cairn.Artifact{ID: "a1", WorkspaceID: "w1", Name: h, State: cairn.ArtifactRecorded,
		MIMEType: "t/" + h, ObjectKey: "k/" + h, Description: &desc, Size: 3,
		CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}
	d.SeedArtifacts("w1", a)
	s := New(c, "w1")
	s.SetSize(200, 30)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"Row", s.list.Table.View(true), []string{" " + shown + " ", " t/" + shown + " ", " 1" + shown + " "}},
		{"Detail", strings.Join(Detail(c, a, 60), "\n"), []string{" " + shown + "\n", "t/" + shown + "\n", "k/" + shown + "\n",
			" 1" + shown + " ", " 2" + shown + " "}},
		{"View", s.View(), []string{shown}},
		{"Crumbs", strings.Join(s.Crumbs(), "\n"), []string{"ws" + shown + "\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			screentest.RequireShown(t, tc.text, tc.want...)
		})
	}
}
