package transfers

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/tui/screens/screentest"
	"github.com/cairn-dev/cairn/tui/transfer"
)

func TestMain(m *testing.M) { screentest.Main(m) }

// Untrusted text reaches the terminal as visible escapes: the name and
// local path in a row; the name, path and error in the detail pane.
func TestSanitisedText(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	tr := &transfer.Transfer{ID: 1, Kind: transfer.Upload, Name: h, Path: "/p/" + h, Phase: transfer.PhaseFailed,
		Err: "e" + h + "\nnext " + h, Queued: screentest.Epoch}
	d.Xfers = []*transfer.Transfer{tr}
	s := New(c)
	s.SetSize(200, 30)
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: s.list.Table.View(true), Want: []string{" " + shown + " ", " /p/" + shown + " "}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, tr, 60), "\n"), Want: []string{" " + shown + "\n", "/p/" + shown + "\n",
			" e" + shown + " ", " next " + shown + " "}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{shown}},
	)
}
