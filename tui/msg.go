package tui

import (
	"time"

	"github.com/cairn-dev/cairn/tui/live"
)

// The root model's own messages. Each Cmd returns one of them, success
// or error.
type (
	// hubMsg is one coalesced batch from the event hub.
	hubMsg  struct{ batch live.Batch }
	tickMsg struct {
		gen int
		now time.Time
	}
	copyDoneMsg struct {
		label, value string
		err          error
	}
)
