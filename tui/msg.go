package tui

import (
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/store"
)

// The root model's own messages (TUI.md §4.4). Each Cmd returns one of
// them, success or error.
type (
	// listPageMsg is one page of a scope's list.
	listPageMsg struct {
		scope  store.Scope
		reqID  int
		gen    int64
		offset int
		ws     []*cairn.Workspace
		arts   []*cairn.Artifact
		err    error
		at     time.Time // when the answer arrived
	}
	// entityMsg is a workspace GET with its mount count.
	entityMsg struct {
		id     string
		reqID  int
		detail *cairn.WorkspaceDetail
		err    error
	}
	// hubMsg is one coalesced batch from the event hub.
	hubMsg struct{ batch live.Batch }
	// pollTickMsg drives polling; a stale loop's gen no longer matches.
	pollTickMsg struct{ gen int }
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
	// startMsg begins listing without waiting for hello (events poll/off).
	startMsg struct{}
	// helloTimeoutMsg: 1.5 s passed without hello; list anyway.
	helloTimeoutMsg struct{}
	// retryListMsg retries a failed list after its backoff.
	retryListMsg struct {
		scope store.Scope
		reqID int
	}
	// inspectTickMsg refreshes the mount count of a READY workspace shown.
	inspectTickMsg struct {
		id  string
		seq int
	}
)
