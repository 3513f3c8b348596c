package cairn

import (
	"context"
	"time"
)

// Snapshot is an immutable record of a workspace volume's whole tree: a
// manifest of every directory, file and symlink (modes, owners, mtimes,
// targets, each file's SHA-256) and the content it names, stored by digest
// so content the store already held is never uploaded again.
type Snapshot struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	// Live is a snapshot taken while other containers could write the
	// volume: each file is whole, but the tree is not one point in time.
	Live bool `json:"live"`
	// Entries counts the manifest's entries (the root included); Bytes is
	// the files' total; UploadedBytes what this snapshot stored that the
	// store did not hold already; Skipped the special files (devices,
	// fifos, sockets) it left out.
	Entries        int       `json:"entries"`
	Bytes          int64     `json:"bytes"`
	UploadedBytes  int64     `json:"uploaded_bytes"`
	Skipped        int       `json:"skipped"`
	ManifestSHA256 string    `json:"manifest_sha256"` // base64
	CreatedBy      *string   `json:"created_by,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// SnapshotCreate is what a caller chooses for a new snapshot: a name
// (unique within the workspace; generated when empty) and whether it may be
// taken while other containers mount the volume.
type SnapshotCreate struct {
	Name string `json:"name,omitempty"`
	Live bool   `json:"live,omitempty"`
}

// Validate checks the name, when given.
func (c SnapshotCreate) Validate() error {
	if c.Name == "" {
		return nil
	}
	return ValidateName("snapshot", c.Name)
}

// MaxSnapshotsPerWorkspace bounds a workspace's snapshots, and so every
// snapshot list.
const MaxSnapshotsPerWorkspace = 1000

// RestoreResult is what a restore wrote into the volume.
type RestoreResult struct {
	SnapshotID string `json:"snapshot_id"`
	Entries    int    `json:"entries"`
	Bytes      int64  `json:"bytes"`
}

// WorkspaceFork names the workspace a fork makes, and whether its snapshot
// may be taken live.
type WorkspaceFork struct {
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	Live        bool    `json:"live,omitempty"`
}

// SnapshotService takes, lists, restores and deletes snapshots. Every
// method returns *Error values; the reasons each can return are listed.
type SnapshotService interface {
	// CreateSnapshot snapshots a READY volume that no other container
	// mounts (unless Live). Reasons: workspace_not_found, invalid_name,
	// name_taken, volume_not_ready, volume_in_use, too_many_snapshots,
	// workspace_busy, store_unavailable, sidecar_failed, sidecar_timeout.
	CreateSnapshot(ctx context.Context, workspaceID string, c SnapshotCreate) (*Snapshot, error)
	// ListSnapshots lists a workspace's snapshots in creation order.
	// Reasons: workspace_not_found.
	ListSnapshots(ctx context.Context, workspaceID string) ([]*Snapshot, error)
	// GetSnapshot reads one. Reasons: snapshot_not_found.
	GetSnapshot(ctx context.Context, id string) (*Snapshot, error)
	// DeleteSnapshot deletes one; its content goes once no snapshot refers
	// to it. Reasons: snapshot_not_found.
	DeleteSnapshot(ctx context.Context, id string) error
	// RestoreSnapshot replaces the contents of an unmounted READY volume
	// with a snapshot's tree (of any workspace). The old contents stay until
	// the new ones are whole and verified. Reasons: workspace_not_found,
	// snapshot_not_found, volume_not_ready, volume_in_use, snapshot_corrupt,
	// volume_full, workspace_busy, store_unavailable, sidecar_failed.
	RestoreSnapshot(ctx context.Context, workspaceID, snapshotID string) (*RestoreResult, error)
	// ForkWorkspace snapshots a workspace and makes a new one, with a READY
	// volume, from that snapshot. Reasons: those of CreateSnapshot and
	// CreateWorkspace.
	ForkWorkspace(ctx context.Context, workspaceID string, f WorkspaceFork) (*Workspace, error)
}
