package screen

import (
	"time"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// DataMsg tells screens that the store changed.
type DataMsg struct{ Changes store.Changes }

// TimeMsg tells screens that the model's time moved (ages, highlights,
// spinners).
type TimeMsg struct{}

// NavKind is a navigation request.
type NavKind uint8

const (
	NavPush NavKind = iota + 1
	NavPop
)

// NavMsg asks the root to push the artifacts of a workspace or to pop.
type NavMsg struct {
	Kind        NavKind
	WorkspaceID string
}

// ActionMsg asks the root to run an action on a row (guards, confirmation
// and the operation itself live in the root).
type ActionMsg struct {
	ID          keys.ID
	WorkspaceID string
	ArtifactID  string
	// Path is the volume path a files-pane action is on: the entry under
	// the cursor, or the directory listed (load, unpack); Dir says it is a
	// directory.
	Path string
	Dir  bool
	// Marked is the marked rows' IDs a bulk action acts on (workspaces or
	// artifacts), in table order; empty acts on the cursor's row.
	Marked []string
}

// ClearMarksMsg tells the screens a bulk action took their marks.
type ClearMarksMsg struct{}

// ClickMsg is a mouse click in the body, at its column and line (mouse:
// true only).
type ClickMsg struct{ X, Y int }

// CopyMsg asks the root to copy a value to the clipboard.
type CopyMsg struct{ Label, Value string }

// ToastMsg asks the root to show a toast.
type ToastMsg struct {
	Level toast.Level
	Text  string
}

// RestMsg is a screen's cursor having rested; Seq names the move.
type RestMsg struct {
	Seq         int
	WorkspaceID string
	Prefetch    bool // the 400 ms rest: prefetch the artifacts
}

// FetchMsg asks the root to fetch a workspace's detail (mount count) and,
// with Prefetch, its artifacts when they are not cached.
type FetchMsg struct {
	WorkspaceID string
	Prefetch    bool
}

// HeadMsg asks the root to read the first lines of an artifact for the
// detail pane; the cursor rested on it.
type HeadMsg struct {
	ArtifactID string
	UpdatedAt  time.Time
}

// BackMsg is esc reaching the screen: it clears its filter, or asks the
// root to pop it.
type BackMsg struct{}

// TransfersMsg tells screens that a transfer was added, moved or ended.
type TransfersMsg struct{}

// RefreshMsg asks screens to read again what sends no events — a volume's
// listing: r gives it to the active screen (WorkspaceID ""), and a load, an
// unpack, a change of the files pane or a shell that may have written a
// volume to every screen, naming the workspace. At is the volume path the
// write left something at: a pane listing its directory puts the cursor
// there once listed.
type RefreshMsg struct{ WorkspaceID, At string }
