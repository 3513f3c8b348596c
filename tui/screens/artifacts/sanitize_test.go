package artifacts

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

func TestMain(m *testing.M) { screentest.Main(m) }

// Untrusted text reaches the terminal as visible escapes: the name, MIME
// type and the description's first line in a row; the name, MIME type,
// object key and every description line in the detail pane; the
// workspace's name in the crumbs.
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
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: s.list.Table.View(true), Want: []string{" " + shown + " ", " t/" + shown + " ", " 1" + shown + " "}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, a, 60), "\n"), Want: []string{" " + shown + "\n", "t/" + shown + "\n",
			"k/" + shown + "\n", " 1" + shown + " ", " 2" + shown + " "}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{shown}},
		screentest.Shown{Name: "Crumbs", Text: strings.Join(s.Crumbs(), "\n"), Want: []string{"ws" + shown + "\n"}},
	)
}

// The banner says why the workspace's volume cannot take containers, in
// the server's words made safe.
func TestVolumeIssueBanner(t *testing.T) {
	c, d := screentest.New(t)
	h, shown := screentest.Hostile, screentest.HostileShown
	d.SeedWorkspaces(&cairn.Workspace{ID: "w1", Name: "ws", VolumeState: cairn.VolumeReady,
		VolumeIssue: &cairn.VolumeIssue{Reason: cairn.ReasonVolumeNodeUnavailable, Detail: "node n1" + h + " is cordoned"},
		CreatedAt:   screentest.Epoch, UpdatedAt: screentest.Epoch})
	d.SeedArtifacts("w1")
	s := New(c, "w1")
	s.SetSize(200, 30)
	screentest.RequireShown(t, s.View(), "volume cannot take containers: node n1"+shown+" is cordoned")
}
