package tui

import (
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/ops"
)

// The root model's own messages (TUI.md §4.4). Each Cmd returns one of
// them, success or error.
type (
	// hubMsg is one coalesced batch from the event hub.
	hubMsg struct{ batch live.Batch }
	// mountCheckMsg is the fresh mount count a teardown needs.
	mountCheckMsg struct {
		op     ops.Op
		detail *cairn.WorkspaceDetail
		err    error
	}
	tickMsg struct {
		gen int
		now time.Time
	}
	toastExpireMsg struct{ id int }
	copyDoneMsg    struct {
		label, value string
		err          error
	}
)
