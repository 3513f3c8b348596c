package tui

import (
	"github.com/cairn-dev/cairn"
)

// fleetSnapshots gives ws-alpha a volume of two files and two snapshots of
// it — one taken live while its containers ran — three hours before the
// fleet is shown, and opens its snapshots.
func fleetSnapshots(h *harness) *cairn.Workspace {
	alpha, _ := seedFleet(h)
	w := h.b.World
	w.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/out/report.csv", []byte("id,name\n1,alpha\n"))
	w.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/notes.md", []byte("# notes\n"))
	for _, c := range []cairn.SnapshotCreate{{Name: "nightly-0313", Live: true}, {Name: "before-refactor", Live: true}} {
		_, err := h.b.CreateSnapshot(ctxBackground(), alpha.ID, c)
		if err != nil {
			h.t.Fatal(err)
		}
	}
	showFleet(h)
	h.key("P")
	return alpha
}

// partFive are the snapshots screen's scenes.
func partFive() []scene {
	return []scene{
		{name: "snapshots_loaded", setup: func(h *harness) { fleetSnapshots(h) }},
		{name: "modal_snapshot_take", setup: func(h *harness) { fleetSnapshots(h); h.key("n") }},
		{name: "modal_snapshot_restore_typed", setup: func(h *harness) { fleetSnapshots(h); h.key("j", "R") }},
		{name: "modal_snapshot_live_offer", setup: func(h *harness) { fleetSnapshots(h); h.key("n", "enter") }},
		{name: "modal_fork", setup: func(h *harness) { fleetSnapshots(h); h.key("F").typeText("ws-alpha-exp") }},
	}
}
