// Package deps is what every cairn-tui component reads and never writes:
// the theme, the resolved keys, the configuration, the data view over the
// entity store, and the clock that schedules its timers. The root model
// builds one Deps and hands the same pointer to every screen, modal and
// model it holds; only the root writes what Data shows.
package deps

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/transfer"
)

// Deps is the read-only dependencies of every component.
type Deps struct {
	Theme  *theme.Theme
	Keys   *keys.Map
	Config *config.Config
	Data   Data
	// Remote is set over SSH: the operator's disk is not this machine's,
	// so what would read or write it is not offered (the root explains it
	// when pressed anyway).
	Remote bool
	// Editor is the command line a volume file's private copy is edited
	// with, the copy's path appended: $EDITOR, else vi.
	Editor string
	// After returns a Cmd that delivers msg() after d: tea.Tick, or a
	// test's recorder.
	After func(d time.Duration, msg func() tea.Msg) tea.Cmd
}

// Tick is the production After.
func Tick(d time.Duration, msg func() tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg() })
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
	Transfers() []*transfer.Transfer
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
// RECORDED text artifact of at most preview.inline_max_bytes.
func (c *Deps) Inlined(a *cairn.Artifact) bool {
	max := c.Config.PreviewInlineMaxBytes
	return max > 0 && a.State == cairn.ArtifactRecorded && a.Size <= max && TextType(a.MIMEType, c.Config.PreviewMIMEAllow)
}

// Changed reports whether a row shows as recently changed.
func (c *Deps) Changed(id string) bool {
	if c.Config.Highlight <= 0 {
		return false
	}
	at := c.Data.Store().ChangedAt(id)
	return !at.IsZero() && c.Data.Now().Sub(at) < c.Config.Highlight
}
