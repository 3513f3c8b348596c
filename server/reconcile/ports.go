package reconcile

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// Store is the metadata database as the reconciler reads and corrects it.
// Every error it returns is an SQL failure and stops the pass.
type Store interface {
	// LockPass takes the pass lock of app, waiting until ctx is done.
	// Reasons: sweep_busy.
	LockPass(ctx context.Context, app string) (release func(), err error)
	// TryLeader takes the leader lock of app on a dedicated session if it
	// is free right now; ok is false when another session holds it.
	TryLeader(ctx context.Context, app string) (lease Lease, ok bool, err error)

	// FindWorkspace reads a row. Reasons: workspace_not_found.
	FindWorkspace(ctx context.Context, id string) (*cairn.Workspace, error)
	// WorkspacePage lists up to limit rows after the cursor, in
	// (created_at, id) order; a nil cursor starts at the beginning.
	WorkspacePage(ctx context.Context, after *cairn.Workspace, limit int) ([]*cairn.Workspace, error)

	// ObjectRefs looks keys up: referenced holds the keys an artifact row
	// (in any state) names, released the release times of those with a
	// released_objects row.
	ObjectRefs(ctx context.Context, keys []string) (referenced map[string]bool, released map[string]time.Time, err error)
	// DeleteReleased deletes the released_objects rows of keys.
	DeleteReleased(ctx context.Context, keys []string) error
	// PruneReleased deletes the released_objects rows released before
	// cutoff (of one workspace, when workspaceID is set) and counts them.
	PruneReleased(ctx context.Context, cutoff time.Time, workspaceID string) (int, error)

	// OpenKeySet starts recording a listing on a dedicated session.
	OpenKeySet(ctx context.Context) (KeySet, error)
	// FlagMissing turns a RECORDED row whose object key is still key into
	// MISSING_OBJECT at the given time, with its ARTIFACT_MISSING_OBJECT
	// audit row (actor maintainer), in one transaction. ok is false when
	// the row changed or went meanwhile.
	FlagMissing(ctx context.Context, a *cairn.Artifact, at time.Time) (ok bool, err error)

	// ReapSnapshotContent and ClaimDoomedSnapshotObjects are
	// service.SnapshotStore's.
	ReapSnapshotContent(ctx context.Context, cutoff time.Time) (int, error)
	ClaimDoomedSnapshotObjects(ctx context.Context, cutoff, pendingCutoff time.Time, limit int) ([]string, error)
}

// Lease is a held leader lock. The lock lives as long as the session.
type Lease interface {
	// Alive checks that the session, and so the lock, still exists.
	Alive(ctx context.Context) error
	// Release gives the lock up and returns the session.
	Release()
}

// KeySet is a completed or growing store listing, kept in the database so
// that memory does not grow with the number of objects.
type KeySet interface {
	// Add records listed keys.
	Add(ctx context.Context, keys []string) error
	// Missing lists up to limit RECORDED rows with content_written_at before
	// written whose key starts with prefix and is not in the set, in id order
	// after afterID (of one workspace, when workspaceID is set).
	Missing(ctx context.Context, prefix, workspaceID string, cutoff time.Time, afterID string, limit int) ([]*cairn.Artifact, error)
	// Close drops the set and returns the session.
	Close()
}

// Objects is the bucket as the reconciler lists and empties it.
type Objects interface {
	// List returns up to max objects whose key starts with prefix, in key
	// order, after startAfter.
	List(ctx context.Context, prefix, startAfter string, max int) ([]service.ObjectInfo, error)
	// DeleteMany deletes keys in one bulk call; an absent key counts as
	// deleted. failed are the keys the store refused.
	DeleteMany(ctx context.Context, keys []string) (failed []string, err error)
	// Stat reads one object; an absent one is service.ErrObjectNotFound.
	Stat(ctx context.Context, key string) (*service.ObjectInfo, error)
	// ListUploads returns up to max unfinished multipart uploads whose key
	// starts with prefix, in key order, with keys after after.Key.
	ListUploads(ctx context.Context, prefix string, after service.Upload, max int) ([]service.Upload, error)
	// ListParts lists an upload's parts; an unknown upload is
	// service.ErrUploadNotFound.
	ListParts(ctx context.Context, key, uploadID string) ([]service.Part, error)
	// AbortUpload discards an upload; an unknown one is not an error.
	AbortUpload(ctx context.Context, key, uploadID string) error
}

// Container is a container of the app, as the leak sweep sees it.
type Container struct {
	ID          string
	Created     time.Time
	Instance    string // its cairn.instance label, if any
	WorkspaceID string // its cairn.workspace label
}

// Containers is the container engine as the leak sweep sees it.
type Containers interface {
	// ListSidecars lists the containers labelled as sidecars of app.
	ListSidecars(ctx context.Context, app string) ([]Container, error)
	// RemoveContainer force-removes a container; an absent one is no error.
	RemoveContainer(ctx context.Context, id string) error
}

// VolumeLister lists the engine's volumes; server/docker.Runtime is one.
type VolumeLister interface {
	ListVolumes(ctx context.Context, prefix string) ([]string, error)
}

// VolumeReconciler corrects one workspace; *service.Service is one.
type VolumeReconciler interface {
	ReconcileVolume(ctx context.Context, id string) (service.VolumeCorrection, error)
}

// Volumes is what the volume-state sweep needs; see JoinVolumes.
type Volumes interface {
	VolumeLister
	VolumeReconciler
}

// JoinVolumes pairs an engine's volume listing with the service's
// per-workspace correction.
func JoinVolumes(l VolumeLister, r VolumeReconciler) Volumes {
	return joinedVolumes{l, r}
}

type joinedVolumes struct {
	VolumeLister
	VolumeReconciler
}
