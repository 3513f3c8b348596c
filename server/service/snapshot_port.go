package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
)

// SnapshotStore keeps snapshots, their content by digest and the objects
// that hold it (server/postgres).
type SnapshotStore interface {
	// PendSnapshotObject records, before its upload URL goes out, an
	// object a snapshot run may write; the reaper takes it by age unless
	// a commit marks it stored.
	PendSnapshotObject(ctx context.Context, key string, size int64) error
	// PresentContent returns which of digests the store holds content for,
	// and marks that content used now, so the reaper spares it while the
	// run that asked goes on.
	PresentContent(ctx context.Context, digests []string) (map[string]bool, error)
	// LocateContent returns where each digest's content is, marking it
	// used; a digest with no content is left out.
	LocateContent(ctx context.Context, digests []string) (map[string]ContentLocation, error)
	// CommitSnapshot records, in one transaction, the objects of the run as
	// stored, their content, the snapshot row, its references and the
	// audit event. Reasons: name_taken, too_many_snapshots, snapshot_corrupt
	// (a digest it refers to has no content).
	CommitSnapshot(ctx context.Context, snap *cairn.Snapshot, c SnapshotCommit, audit *cairn.AuditEvent) error
	// DropSnapshotObjects forgets PENDING objects a failed run removed.
	DropSnapshotObjects(ctx context.Context, keys []string) error
	// FindSnapshot reads one. Reasons: snapshot_not_found.
	FindSnapshot(ctx context.Context, id string) (*SnapshotRow, error)
	// LatestSnapshot reads the workspace's newest snapshot, nil when it
	// has none.
	LatestSnapshot(ctx context.Context, workspaceID string) (*SnapshotRow, error)
	// FindSnapshots lists a workspace's, in creation order.
	FindSnapshots(ctx context.Context, workspaceID string) ([]*cairn.Snapshot, error)
	// SnapshotsByID reads the snapshots of ids that exist, in no order.
	SnapshotsByID(ctx context.Context, ids []string) ([]*cairn.Snapshot, error)
	// DeleteSnapshot deletes one with its audit event, in one
	// transaction. Reasons: snapshot_not_found.
	DeleteSnapshot(ctx context.Context, id string, audit *cairn.AuditEvent) error
	// ReapSnapshotContent deletes content no snapshot refers to that was
	// last used before cutoff, and returns how many rows went.
	ReapSnapshotContent(ctx context.Context, cutoff time.Time) (int, error)
	// ClaimDoomedSnapshotObjects deletes the rows of, and returns, up to
	// limit objects the reaper may delete: PENDING ones created before
	// pendingCutoff, and STORED ones created before cutoff that no content
	// and no snapshot names. A commit naming a claimed object fails.
	ClaimDoomedSnapshotObjects(ctx context.Context, cutoff, pendingCutoff time.Time, limit int) ([]string, error)
}

// ContentLocation is where one digest's content is: a byte range of an
// object, which holds other content too when Bundled.
type ContentLocation struct {
	ObjectKey string
	Offset    int64
	Size      int64
	Bundled   bool
}

// SnapshotCommit is what a snapshot run stored and refers to.
type SnapshotCommit struct {
	Objects     []string // keys of the run's objects, the manifest's included
	ManifestKey string
	Content     map[string]ContentLocation // digests the run uploaded
	Refs        []string                   // every digest the manifest names
}

// SnapshotRow is a snapshot with what only the server needs: where its
// manifest is.
type SnapshotRow struct {
	cairn.Snapshot
	ManifestKey string
}
