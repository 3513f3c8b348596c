package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// TestViewGoldensVolumeIssue renders the fleet after the maintainer found
// ws-alpha's volume node cordoned: the row marked, the detail pane saying
// why, and the banner over its artifacts.
func TestViewGoldensVolumeIssue(t *testing.T) {
	for _, name := range []string{"workspaces", "artifacts"} {
		for _, size := range tuitest.Layouts() {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size.W, size.H), func(t *testing.T) {
				h := newHarness(t)
				alpha, _ := fleet(h)
				stuck := *h.worldWS(alpha.ID)
				stuck.VolumeIssue = &cairn.VolumeIssue{Reason: cairn.ReasonVolumeNodeUnavailable,
					Detail: "the workspace's volume is on node kind-worker2, which is cordoned; its pods can run only there, once it takes pods again"}
				stuck.UpdatedAt = h.clock.Now() // the maintainer's write
				h.events(upserted(&stuck))
				if name == "artifacts" {
					h.key("enter")
				}
				h.size(size.W, size.H)
				golden.RequireEqual(t, []byte(h.view()))
			})
		}
	}
}
