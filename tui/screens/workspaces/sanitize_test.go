package workspaces

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

func TestMain(m *testing.M) { screentest.Main(m) }

// Untrusted text reaches the terminal as visible escapes: the name and the
// description's first line in a row; the name, volume name and every
// description line in the detail pane; the name in a key's reason.
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
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: s.list.Table.View(true), Want: []string{" " + shown + " ", " 1" + shown + " "}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, w, 60), "\n"), Want: []string{" " + shown + "\n", "v/" + shown + "\n",
			" 1" + shown + " ", " 2" + shown + " "}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{shown}},
		screentest.Shown{Name: "KeyReason", Text: st.Reason, Want: []string{shown + " has no volume"}},
	)
}
