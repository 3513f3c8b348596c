// Package common holds what every cairn-tui component shares: the Common
// dependencies, the Screen and Modal interfaces, the read-only data view and
// the messages screens use to reach the root model (TUI.md §4.2–4.4).
package common

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Common is the read-only dependencies of every component. Only the root
// model writes what Data shows.
type Common struct {
	Theme  *theme.Theme
	Keys   *keys.Map
	Config *config.Config
	Data   Data
	// Remote is set over SSH: the operator's disk is not this machine's,
	// so what would read or write it is not offered (the root explains it
	// when pressed anyway).
	Remote bool
	// After returns a Cmd that delivers msg() after d: tea.Tick, or a
	// test's recorder.
	After func(d time.Duration, msg func() tea.Msg) tea.Cmd
}

// Tick is the production After.
func Tick(d time.Duration, msg func() tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg() })
}

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

// Store is the read side of the entity store.
type Store interface {
	Workspace(id string) (*cairn.Workspace, bool)
	Workspaces() []*cairn.Workspace
	Artifact(id string) (*cairn.Artifact, bool)
	Artifacts(workspaceID string) ([]*cairn.Artifact, bool)
	Cached(workspaceID string) bool
	Seeded(sc store.Scope) bool
	ChangedAt(id string) time.Time
	Deleted(id string) bool
	Mounts(id string) (int, bool)
	Counts(workspaceID string) (store.Counts, bool)
	MissingTotal() (int64, bool)
}

// ListStatus is the state of a scope's list as the body reports it.
type ListStatus struct {
	Loading bool
	Loaded  int // rows received so far
	Err     error
	RetryAt time.Time
}

// Data is what screens read: the store plus the root's per-row marks.
type Data interface {
	Store() Store
	// Pending is the word of an operation in flight on id, or "".
	Pending(id string) string
	// Now is the model's time, corrected by the server clock offset.
	Now() time.Time
	// Frame is the spinner step.
	Frame() int
	List(sc store.Scope) ListStatus
	// Transfers is every transfer since start, oldest first.
	Transfers() []*Transfer
	// ShellBlocked is why no shell can open on this server ("" when it
	// can, as far as is known): disabled, refused before.
	ShellBlocked() string
	// Head is the sanitised first lines of a small text artifact's
	// content at updatedAt, once read for the detail pane.
	Head(artifactID string, updatedAt time.Time) ([]string, bool)
}

// TextType reports a MIME type shown as text: text/*, or one of allow
// (preview.mime_allow).
func TextType(mime string, allow []string) bool {
	t, _, _ := strings.Cut(mime, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	if strings.HasPrefix(t, "text/") {
		return true
	}
	for _, a := range allow {
		if strings.EqualFold(a, t) {
			return true
		}
	}
	return false
}

// Inlined reports an artifact whose first lines the detail pane shows: a
// RECORDED text artifact of at most preview.inline_max_bytes (TUI.md
// §1.3).
func (c *Common) Inlined(a *cairn.Artifact) bool {
	max := c.Config.PreviewInlineMaxBytes
	return max > 0 && a.State == cairn.ArtifactRecorded && a.Size <= max && TextType(a.MIMEType, c.Config.PreviewMIMEAllow)
}

// Changed reports whether a row shows as recently changed.
func (c *Common) Changed(id string) bool {
	if c.Config.Highlight <= 0 {
		return false
	}
	at := c.Data.Store().ChangedAt(id)
	return !at.IsZero() && c.Data.Now().Sub(at) < c.Config.Highlight
}
