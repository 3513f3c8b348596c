package cairn

import (
	"context"
	"time"
)

// EventType names a frame of the live events stream.
type EventType string

const (
	// EventHello is the first frame of every connection.
	EventHello EventType = "hello"
	// EventResync says changes may have been missed: list again.
	EventResync EventType = "resync"

	EventWorkspaceUpserted EventType = "workspace.upserted"
	EventWorkspaceDeleted  EventType = "workspace.deleted"
	EventArtifactUpserted  EventType = "artifact.upserted"
	EventArtifactDeleted   EventType = "artifact.deleted"
	// A snapshot was taken or deleted; a created frame carries the
	// snapshot, a deleted one its ID and workspace ID.
	EventSnapshotCreated EventType = "snapshot.created"
	EventSnapshotDeleted EventType = "snapshot.deleted"
	// The maintainer will delete (expiring) or archive (archiving) the
	// workspace once lifecycle.warnBeforeSecs have passed, unless it is
	// touched; both carry the workspace.
	EventWorkspaceExpiring  EventType = "workspace.expiring"
	EventWorkspaceArchiving EventType = "workspace.archiving"

	// EventFilesChanged is a batch of file changes of a watched
	// workspace; EventFilesResync says file changes were missed: list
	// the files again. Both carry a Cursor to resume from.
	EventFilesChanged EventType = "files.changed"
	EventFilesResync  EventType = "files.resync"
)

// Why a files.resync frame was sent, besides the watcher's own reasons
// (overflow, too_large).
const (
	// ResyncCursorUnknown: a reconnect's cursor the server no longer knows.
	ResyncCursorUnknown = "cursor_unknown"
	// ResyncWatcherReplaced: a watcher pod handing over to its successor
	// did not pass on everything it held in time.
	ResyncWatcherReplaced = "watcher_replaced"
)

// FileChangeNote is one path of a files.changed frame: its op (created,
// written, removed, moved_from, moved_to) and whether it is a directory.
type FileChangeNote struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	Dir  bool   `json:"dir,omitempty"`
}

// Event is one frame of the events stream. Change frames carry Seq
// (contiguous from 1 per connection), ID and At; an upsert also carries the
// row as REST shows it. Hello carries ServerTime.
type Event struct {
	Seq        int64      `json:"seq,omitempty"`
	Type       EventType  `json:"type"`
	ID         string     `json:"id,omitempty"`
	Workspace  *Workspace `json:"workspace,omitempty"`
	Artifact   *Artifact  `json:"artifact,omitempty"`
	Snapshot   *Snapshot  `json:"snapshot,omitempty"`
	At         time.Time  `json:"at,omitzero"`
	ServerTime time.Time  `json:"server_time,omitzero"`

	// The files frames'.
	WorkspaceID string           `json:"workspace_id,omitempty"`
	Cursor      string           `json:"cursor,omitempty"`
	Changes     []FileChangeNote `json:"changes,omitempty"`
	Reason      string           `json:"reason,omitempty"`
}

// IsChange reports whether e is a change frame (upsert or delete).
func (e Event) IsChange() bool {
	switch e.Type {
	case EventWorkspaceUpserted, EventWorkspaceDeleted, EventArtifactUpserted, EventArtifactDeleted:
		return true
	}
	return e.IsSnapshot() || e.IsWarning()
}

// IsWarning reports a lifecycle warning frame.
func (e Event) IsWarning() bool {
	return e.Type == EventWorkspaceExpiring || e.Type == EventWorkspaceArchiving
}

// IsSnapshot reports a snapshot change frame.
func (e Event) IsSnapshot() bool {
	return e.Type == EventSnapshotCreated || e.Type == EventSnapshotDeleted
}

// WorkspaceOf returns the workspace a change frame concerns, when the frame
// says it (upserts do; a workspace delete is its own ID).
func (e Event) WorkspaceOf() string {
	switch {
	case e.Workspace != nil:
		return e.Workspace.ID
	case e.Artifact != nil:
		return e.Artifact.WorkspaceID
	case e.IsSnapshot():
		return e.WorkspaceID
	case e.Type == EventWorkspaceDeleted:
		return e.ID
	}
	return ""
}

// EventFilter narrows a subscription; an empty WorkspaceID means every
// workspace.
type EventFilter struct {
	WorkspaceID string
	// Files, with WorkspaceID, adds the files frames of the changes
	// under that path of its volume; Cursor resumes them.
	Files  string
	Cursor string
}

// EventStream is one subscription. Next blocks for the next frame. When the
// connection is lost or a dial fails, Next returns that error once (a
// *DisconnectedError); the following call waits out the backoff, dials
// again and, on success, returns the server's hello followed by a resync
// frame, so a consumer that lists again on resync misses nothing. An error
// that retrying cannot mend (401, 403) is a *Error and is returned by every
// later call. Close ends the subscription and unblocks Next.
type EventStream interface {
	Next(ctx context.Context) (Event, error)
	Close() error
}

// EventService opens subscriptions to the live events stream.
type EventService interface {
	// Events subscribes. It returns at once; the first dial happens in the
	// first Next.
	Events(ctx context.Context, f EventFilter) (EventStream, error)
}

// DisconnectedError reports that an events connection was lost or could not
// be made; the stream retries after RetryIn.
type DisconnectedError struct {
	RetryIn time.Duration
	Err     error
}

func (e *DisconnectedError) Error() string {
	return "events: disconnected (retrying in " + e.RetryIn.String() + "): " + e.Err.Error()
}

func (e *DisconnectedError) Unwrap() error { return e.Err }
