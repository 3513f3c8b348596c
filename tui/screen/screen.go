// Package screen is the contract between cairn-tui's root model and what
// fills its body: the Screen interface every entry of the screen stack
// implements, the Modal interface of what covers a screen (a confirmation,
// a form, help), the Result a modal ends with, and the messages screens
// and the root send each other. Screens read data from deps.Deps and reach
// the root only by these messages.
package screen

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/store"
)

// Screen is one entry of the screen stack.
type Screen interface {
	Update(msg tea.Msg) (Screen, tea.Cmd)
	View() string
	SetSize(width, height int)
	Crumbs() []string      // breadcrumb segments added by this screen
	Keys() keys.Context    // bindings with enabled state and reason
	Scopes() []store.Scope // what resync and polling re-list
	Capturing() bool       // an input has focus; globals are inert
}

// Modal occupies the body in place of the screen: a confirmation, a typed
// confirmation, a form, help or the messages log.
type Modal interface {
	Update(msg tea.Msg) (Modal, tea.Cmd)
	View() string
	SetSize(width, height int)
	Hint() string
	// Result reports that the modal finished: OK is false when cancelled.
	Result() (Result, bool)
}

// Result is how a modal ended.
type Result struct {
	OK     bool
	Values map[string]string
	Checks map[string]bool
}

// Send is a Cmd that delivers msg: how a screen asks the root for
// something from Update, which does no I/O itself.
func Send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
