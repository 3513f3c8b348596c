package service

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// Store is the metadata database. Methods return *cairn.Error values for
// the outcomes callers branch on (not found, name taken); anything else is
// an internal failure.
type Store interface {
	// WithTx runs fn in one transaction on a Store bound to it. fn's error
	// rolls it back; a nested call is a savepoint.
	WithTx(ctx context.Context, fn func(Store) error) error

	// Ping answers whether the database serves queries.
	Ping(ctx context.Context) error

	KeyStore

	// InsertWorkspace inserts a row. Reasons: name_taken.
	InsertWorkspace(ctx context.Context, ws *cairn.Workspace) error
	// FindWorkspace reads a row. Reasons: workspace_not_found.
	FindWorkspace(ctx context.Context, id string) (*cairn.Workspace, error)
	// LockWorkspaceRow reads a row and locks it until the transaction ends.
	// Reasons: workspace_not_found.
	LockWorkspaceRow(ctx context.Context, id string) (*cairn.Workspace, error)
	// LockArtifactRows locks every artifact row of a workspace until the
	// transaction ends. Every artifact write locks its own row, then the
	// workspace's (its kept counts); a workspace delete takes them in that
	// order too, or the two would deadlock.
	LockArtifactRows(ctx context.Context, workspaceID string) error
	// FindWorkspaces lists rows in (created_at, id) order. With no limit it
	// returns at most MaxUnpagedListLength+1 rows so the caller can refuse.
	FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	// UpdateWorkspace writes every mutable column of ws.
	// Reasons: workspace_not_found, name_taken.
	UpdateWorkspace(ctx context.Context, ws *cairn.Workspace) error
	// DeleteWorkspace deletes a row; its artifact rows cascade, and their
	// object keys are recorded as released at the given time.
	// Reasons: workspace_not_found.
	DeleteWorkspace(ctx context.Context, id string, releasedAt time.Time) error

	// InsertArtifact inserts a row. Reasons: name_taken.
	InsertArtifact(ctx context.Context, a *cairn.Artifact) error
	// FindArtifact reads a row. Reasons: artifact_not_found.
	FindArtifact(ctx context.Context, id string) (*cairn.Artifact, error)
	// LockArtifactRow reads a row and locks it until the transaction ends.
	// Reasons: artifact_not_found.
	LockArtifactRow(ctx context.Context, id string) (*cairn.Artifact, error)
	// FindArtifacts lists a workspace's rows in (created_at, id) order, with
	// the same unpaged limit rule as FindWorkspaces.
	FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error)
	// ArtifactNameTaken reports whether an artifact of the workspace, in any
	// state, has the name.
	ArtifactNameTaken(ctx context.Context, workspaceID, name string) (bool, error)
	// UpdateArtifact writes every mutable column of a.
	// Reasons: artifact_not_found, name_taken.
	UpdateArtifact(ctx context.Context, a *cairn.Artifact) error
	// ObjectKeyUsed reports whether an artifact row names key or a
	// released_objects row holds it.
	ObjectKeyUsed(ctx context.Context, key string) (bool, error)
	// DeleteArtifact deletes a row; an absent one is artifact_not_found.
	DeleteArtifact(ctx context.Context, id string) error
	// FlagMissing turns a RECORDED row whose object key is still a's into
	// MISSING_OBJECT at the given time, with its audit row, in one
	// transaction; ok is false when the row changed or went meanwhile.
	FlagMissing(ctx context.Context, a *cairn.Artifact, at time.Time) (ok bool, err error)
	// ReleaseObject records that key lost its artifact row at the given time,
	// starting its grace window before the reaper may delete it.
	ReleaseObject(ctx context.Context, key, workspaceID string, at time.Time) error

	// InsertAudit records one audit event.
	InsertAudit(ctx context.Context, ev *cairn.AuditEvent) error
	// FindAuditEvents lists events in (created_at, id) order, with the same
	// unpaged limit rule as FindWorkspaces.
	FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error)

	// LockWorkspace takes the workspace's advisory lock, shared or exclusive,
	// waiting until ctx is done. The lock outlives transactions; release it
	// with the returned function. Reasons: workspace_busy.
	LockWorkspace(ctx context.Context, id string, mode LockMode) (release func(), err error)
	// TryLockWorkspace takes the workspace's lock exclusively if it is free
	// right now; ok is false when another holder has it.
	TryLockWorkspace(ctx context.Context, id string) (release func(), ok bool, err error)

	ShellStore
	ExecStore
}

// LockMode selects how a workspace lock is held: transfers share it, volume
// setup and teardown and workspace delete take it exclusively.
type LockMode int

const (
	LockShared LockMode = iota
	LockExclusive
)

// Runtime is the container engine holding workspace volumes and running
// sidecars. Failures of the engine itself are docker_unavailable.
type Runtime interface {
	// Ping answers whether the engine is reachable.
	Ping(ctx context.Context) error
	// VolumeExists inspects one volume.
	VolumeExists(ctx context.Context, name string) (bool, error)
	// VolumeIssue is why an existing volume cannot take new containers
	// right now (reason volume_node_unavailable), nil when it can or when
	// the engine cannot tell. The error is for an engine that did not
	// answer (docker_unavailable).
	VolumeIssue(ctx context.Context, name string) (*cairn.Error, error)
	// CreateVolume creates a volume with the given labels, of sizeBytes
	// where the engine can size volumes (0: the engine's default size).
	CreateVolume(ctx context.Context, name string, labels map[string]string, sizeBytes int64) error
	// MaxVolumeBytes is the largest size a workspace may ask for; 0 means
	// no bound (an engine that never sizes volumes).
	MaxVolumeBytes() int64
	// VolumeSize is the size the engine gave a volume (a claim's granted
	// capacity); 0 where the engine does not size volumes, or has not yet
	// (a claim not bound), or the volume is absent.
	VolumeSize(ctx context.Context, name string) (int64, error)
	// RemoveVolume removes a volume without force; an absent volume is not an
	// error. Reasons: volume_in_use, docker_unavailable.
	RemoveVolume(ctx context.Context, name string) error
	// MountCounts counts, for each named volume, the running containers
	// that mount it.
	MountCounts(ctx context.Context, volumes []string) (map[string]int, error)
	// RunSidecar runs one sidecar container to completion and always removes
	// it. Reasons: docker_unavailable, sidecar_busy, sidecar_timeout.
	RunSidecar(ctx context.Context, spec SidecarSpec) (*SidecarRun, error)
	// Browse answers one request about a workspace volume's files in that
	// workspace's browse container — its writer for a target that is
	// Writable — started on first use and kept warm for a while. A put's
	// Body follows its line. A request that changes the volume is never
	// sent twice. A reply with OK false is the sidecar's refusal, not an
	// error. Reasons: docker_unavailable, sidecar_busy, sidecar_timeout.
	Browse(ctx context.Context, target BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error)
	// StopBrowse removes a workspace's browse container, if it has one, so
	// that a teardown finds its volume unmounted.
	StopBrowse(ctx context.Context, workspaceID string) error
	// StopWriter removes only a workspace's writer, if it has one, so that
	// the volume's mounts are its users' alone; readers and watchers stay.
	StopWriter(ctx context.Context, workspaceID string) error
	// Watch starts a watcher of the volume: a sidecar mounting it
	// read-only whose lines the stream delivers until Close, or until it
	// ended (StopBrowse ends it too). pollEvery, when set, polls instead
	// of using inotify. Reasons: docker_unavailable, sidecar_busy,
	// watch_unavailable (a runtime that has none).
	Watch(ctx context.Context, target BrowseTarget, pollEvery time.Duration) (WatchStream, error)
}

// WatchStream is one running watcher.
type WatchStream interface {
	// Lines delivers the watcher's lines, Ready first; closed when the
	// watcher ended, Err then saying why (nil after Close).
	Lines() <-chan sidecar.WatchLine
	Err() error
	// Close ends the watcher and removes its container; idempotent.
	Close()
}

// BrowseTarget names the volume a browse container mounts: read-only, or
// read-write for a writer, a container of its own (the reader never
// writes).
type BrowseTarget struct {
	WorkspaceID string
	VolumeName  string
	Writable    bool
}

// Key is where a runtime keeps the target's container: a workspace's
// reader and its writer are two.
func (t BrowseTarget) Key() string {
	if t.Writable {
		return t.WorkspaceID + "/writer"
	}
	return t.WorkspaceID
}

// BrowseKeys are the keys of a workspace's reader and writer.
func BrowseKeys(workspaceID string) []string {
	return []string{workspaceID, BrowseTarget{WorkspaceID: workspaceID, Writable: true}.Key()}
}

// SidecarSpec describes one sidecar run; the runtime adds the hardened
// posture.
type SidecarSpec struct {
	Command     string            // prep, put, download
	Role        string            // name part: volume-prep, cairn-upload, …
	Subject     string            // workspace or artifact ID, for the name
	WorkspaceID string            // for the cairn.workspace label
	VolumeName  string            // mounted at cairn.MountPath
	Env         map[string]string // CAIRN_* input
	Transfer    bool              // transfer network mode and extras; else network none
	// Dialog, when set, runs the sidecar attached without a TTY: each line
	// it prints that is a sidecar.Need goes to Dialog, whose answer (one
	// sidecar.Grant line) is written to its stdin. An error from Dialog
	// ends the run (the sidecar is removed) with that error.
	Dialog func(ctx context.Context, need sidecar.Need) (sidecar.Grant, error)
}

// SidecarRun is what a finished sidecar left behind.
type SidecarRun struct {
	ExitCode int
	Output   []byte // stdout and stderr, merged by the TTY
}

// ObjectStore is the one bucket holding staging and final objects. Store
// failures are store_unavailable; a missing object is ErrObjectNotFound,
// which the caller turns into the reason that fits (staging_not_found,
// object_missing).
type ObjectStore interface {
	// Ping checks that the bucket answers.
	Ping(ctx context.Context) error
	// PresignPut signs a PUT of key that the store accepts only with exactly
	// the given size and SHA-256 (and content type, when one is given).
	PresignPut(ctx context.Context, key string, put PutSpec) (url string, err error)
	// PresignGet signs a GET of key that downloads as an attachment, served
	// with contentType (the type cairn sniffed, whatever the uploader sent).
	PresignGet(ctx context.Context, key string, ttl time.Duration, contentType string) (string, error)
	// Stat reads an object's size, modification time and stored checksum.
	Stat(ctx context.Context, key string) (*ObjectInfo, error)
	// ReadHead reads at most the first n bytes of an object.
	ReadHead(ctx context.Context, key string, n int64) ([]byte, error)
	// Copy copies src to dst in the bucket, replacing the metadata so that
	// dst carries contentType.
	Copy(ctx context.Context, src, dst, contentType string) error
	// Delete removes an object; an absent one is not an error.
	Delete(ctx context.Context, key string) error
	// Pin writes the directory marker of a key prefix (prefix + "/").
	Pin(ctx context.Context, prefix string) error
	// Read opens the whole object for one streaming read.
	Read(ctx context.Context, key string) (io.ReadCloser, error)
	// Put writes size bytes of body (seekable, for a store reached without
	// TLS) under key with contentType, bound to their SHA-256 (raw, 32
	// bytes), which the store verifies: for bytes the server holds itself,
	// such as a shell recording.
	Put(ctx context.Context, key string, body io.Reader, size int64, sha256 []byte, contentType string) error

	// CreateUpload starts a multipart upload of key whose parts are each
	// bound to a SHA-256 the store verifies.
	CreateUpload(ctx context.Context, key string) (uploadID string, err error)
	// PresignPart signs one part's upload, bound to its size and SHA-256.
	PresignPart(ctx context.Context, key, uploadID string, part PartSpec) (string, error)
	// ListParts lists the parts the store received, in part order; an
	// unknown upload is ErrUploadNotFound.
	ListParts(ctx context.Context, key, uploadID string) ([]Part, error)
	// CompleteUpload assembles parts into the object. Reasons:
	// upload_incomplete (parts the store will not assemble).
	CompleteUpload(ctx context.Context, key, uploadID string, parts []Part) error
	// AbortUpload discards an upload; an unknown one is not an error.
	AbortUpload(ctx context.Context, key, uploadID string) error
}

// MaxParts is the most parts one multipart upload has (the S3 limit).
const MaxParts = cairn.MaxParts

// PartSpec is what a presigned part upload binds.
type PartSpec struct {
	Number    int // 1 … MaxParts
	Size      int64
	SHA256B64 string
	TTL       time.Duration
}

// Part is one part a store holds for an unfinished upload.
type Part struct {
	Number    int
	Size      int64
	ETag      string
	SHA256B64 string // the checksum the store verified the part against
	// LastModified is when the store received the part.
	LastModified time.Time
}

// Upload is one unfinished multipart upload.
type Upload struct {
	Key       string
	ID        string
	Initiated time.Time
}

// ErrUploadNotFound is returned (wrapped) for a multipart upload the store
// does not know: completed, aborted or never started.
var ErrUploadNotFound = errors.New("upload not found")

// AnySize in a PutSpec leaves the PUT's length unbound.
const AnySize = -1

// PutSpec is what a presigned PUT binds. An empty SHA256B64 binds no
// checksum; Size AnySize binds no length.
type PutSpec struct {
	Size        int64
	SHA256B64   string
	ContentType string
	TTL         time.Duration
	// StoreHashes, with no SHA256B64, has the store compute the SHA-256 of
	// the bytes as they arrive, for Stat to report. A store that cannot
	// (its integrity probe found so) refuses with ErrStoreCannotHash.
	StoreHashes bool
}

// ErrStoreCannotHash: the store does not compute the SHA-256 of a PUT
// that binds none, so the uploader must hash the bytes first.
var ErrStoreCannotHash = errors.New("the object store does not compute a SHA-256 while it receives an upload")

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key          string
	Size         int64
	LastModified time.Time
	// SHA256B64 is the checksum the store verified the object's bytes
	// against when it was written (a checksum-bound PUT), as Stat reports
	// it; empty when the store kept none or the call does not report it.
	SHA256B64 string
	// ETag is the store's entity tag, unquoted: for a single PUT, the hex
	// MD5 of the bytes the store received.
	ETag string
}

// ErrObjectNotFound is returned (wrapped) for an absent object.
var ErrObjectNotFound = errors.New("object not found")
