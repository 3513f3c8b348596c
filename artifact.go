package cairn

import (
	"context"
	"time"
)

// ArtifactState says whether an artifact's object is known to exist.
type ArtifactState string

const (
	ArtifactRecorded      ArtifactState = "RECORDED"
	ArtifactMissingObject ArtifactState = "MISSING_OBJECT"
)

// ParseArtifactState accepts exactly the wire values.
func ParseArtifactState(s string) (ArtifactState, error) {
	switch st := ArtifactState(s); st {
	case ArtifactRecorded, ArtifactMissingObject:
		return st, nil
	}
	return "", Errorf(ReasonInvalidQuery, "unknown artifact state %q; expected RECORDED or MISSING_OBJECT", s)
}

// Artifact is a named, durable file of a workspace, kept as one object in
// the store. A row exists only once its object was written.
type Artifact struct {
	ID          string        `json:"id"`
	WorkspaceID string        `json:"workspace_id"`
	Name        string        `json:"name"`
	Description *string       `json:"description"`
	ObjectKey   string        `json:"object_key"`
	MIMEType    string        `json:"mime_type"`
	Size        int64         `json:"size"`
	State       ArtifactState `json:"state"`
	// SHA256B64 is the standard padded base64 of the SHA-256 the current
	// object was bound to when written (the staging PUT's checksum, or the
	// volume file's digest); nil for rows written before it was recorded.
	SHA256B64 *string   `json:"sha256_b64"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// ContentWrittenAt is when the current object was written; the
	// MISSING_OBJECT grace is measured from it.
	ContentWrittenAt time.Time `json:"-"`
}

// ArtifactContent is the whole content of an artifact, read through the
// server (ArtifactReader).
type ArtifactContent struct {
	Artifact *Artifact
	Data     []byte
}

// ArtifactReader reads small artifacts whole through the server, for a
// front door that cannot hand out a URL (an MCP resource read). Content
// leaves by presigned URL or into a volume otherwise.
type ArtifactReader interface {
	// ReadArtifact returns a RECORDED artifact's content of at most max
	// bytes, checked against its size and SHA-256. Reasons:
	// artifact_not_found, object_missing, object_too_large,
	// checksum_mismatch, store_unavailable.
	ReadArtifact(ctx context.Context, id string, max int64) (*ArtifactContent, error)
}

// StagingRequest describes bytes a caller is about to upload: the store
// will accept exactly this size and SHA-256 (standard padded base64 of the
// raw digest).
//
// With Multipart, a size above the server's multipart threshold gets an
// upload plan instead of one PUT URL, and SHA256B64 is optional (the server
// hashes the assembled object itself).
//
// With Stream (and no SHA256B64), the PUT URL binds the size only and the
// store computes the SHA-256 of the bytes as they arrive, so the uploader
// need not read the file twice; a store that computes none is refused with
// ReasonDigestRequired. The uploader's own digest, taken as it sent the
// bytes, goes with the register (Staged.SHA256B64).
type StagingRequest struct {
	Size        int64
	SHA256B64   string
	ContentType string // optional; only shapes the PUT's signature
	Multipart   bool
	Stream      bool
}

// Staging is a presigned upload slot: PUT the bytes to PutURL with exactly
// the signed headers before ExpiresAt, then register or replace with Key.
// A multipart slot has Upload instead of PutURL: its parts' URLs are minted
// on request, and register completes it.
type Staging struct {
	Key       string      `json:"staging_object_key"`
	PutURL    string      `json:"put_url,omitempty"`
	ExpiresAt time.Time   `json:"expires_at"`
	Upload    *UploadPlan `json:"upload,omitempty"`
}

// UploadPlan is how a multipart upload is cut: parts 1…PartCount, each
// PartSize bytes but the last, which holds the rest.
type UploadPlan struct {
	ID        string `json:"upload_id"`
	PartSize  int64  `json:"part_size"`
	PartCount int    `json:"part_count"`
}

// PartRequest asks for the URLs of some parts of a multipart upload, each
// bound to its size and SHA-256.
type PartRequest struct {
	StagingKey string
	UploadID   string
	Parts      []PartSpec
}

// MaxPartBatch bounds the parts of one PartRequest.
const MaxPartBatch = 100

// PartSpec is one part a client is about to upload.
type PartSpec struct {
	Number    int    `json:"part_number"`
	Size      int64  `json:"size"`
	SHA256B64 string `json:"sha256_b64"`
}

// PartURL is a presigned upload of one part.
type PartURL struct {
	Number int    `json:"part_number"`
	PutURL string `json:"put_url"`
}

// PartURLs answers a PartRequest.
type PartURLs struct {
	Parts     []PartURL `json:"parts"`
	ExpiresAt time.Time `json:"expires_at"`
}

// UploadedPart is a part the store holds, verified against its SHA-256.
// SHA256B64 is empty on a store that lists parts without their checksums
// (SeaweedFS); ETag is the store's, without quotes — for a part, the MD5
// of its bytes in hex on the stores cairn is tested with.
type UploadedPart struct {
	Number    int    `json:"part_number"`
	Size      int64  `json:"size"`
	SHA256B64 string `json:"sha256_b64"`
	ETag      string `json:"etag,omitempty"`
}

// StagedUpload names the multipart upload a register or replace completes.
type StagedUpload struct {
	ID string
	// Size is the whole object's size; the parts must add up to it.
	Size int64
	// SHA256B64, when set, is checked against the assembled bytes.
	SHA256B64 string
}

// Staged is uploaded content a register or replace takes: a staging key,
// and the upload to complete when it was a multipart one. SHA256B64, for
// a single PUT, is the SHA-256 its uploader computed; when set, the stored
// bytes must have it.
type Staged struct {
	Key       string
	Upload    *StagedUpload
	SHA256B64 string
}

// ArtifactCreate registers a staged object as a new artifact; SHA256B64
// is Staged's.
type ArtifactCreate struct {
	StagingKey  string
	Upload      *StagedUpload
	SHA256B64   string
	Name        string
	Description *string
}

// ArtifactFilter selects artifacts of one workspace. No state means
// RECORDED only, as the first cairn did.
type ArtifactFilter struct {
	WorkspaceID string
	Names       []string
	States      []ArtifactState
	Page
}

// ArtifactGet asks for an artifact and, with Presign, a GET URL valid for
// TTL (zero: the configured maximum).
type ArtifactGet struct {
	Presign bool
	TTL     time.Duration
}

// ArtifactDetail is an artifact with its presigned GET URL when one was
// asked for.
type ArtifactDetail struct {
	Artifact *Artifact
	GetURL   string
}

// ArtifactService manages artifacts. Every method returns *Error values;
// the reasons each can return are listed.
type ArtifactService interface {
	// MintStaging presigns an upload slot in the workspace. Nothing is
	// written. Reasons: invalid_parameters, invalid_checksum,
	// workspace_not_found, object_too_large, store_unavailable.
	MintStaging(ctx context.Context, workspaceID string, r StagingRequest) (*Staging, error)

	// RegisterArtifact turns an uploaded staging object into a RECORDED
	// artifact. Reasons: invalid_name, invalid_parameters,
	// workspace_not_found, name_taken, staging_key_invalid,
	// staging_not_found, object_too_large, store_unavailable.
	RegisterArtifact(ctx context.Context, workspaceID string, c ArtifactCreate) (*Artifact, error)

	// FindArtifacts lists a workspace's artifacts in creation order.
	// Reasons: invalid_query, invalid_name, list_too_large, workspace_not_found.
	FindArtifacts(ctx context.Context, f ArtifactFilter) ([]*Artifact, error)

	// GetArtifact returns an artifact, with a presigned GET URL on request.
	// Reasons: artifact_not_found, object_missing, store_unavailable.
	GetArtifact(ctx context.Context, id string, g ArtifactGet) (*ArtifactDetail, error)

	// RenameArtifact changes the name within the workspace; renaming to the
	// current name succeeds. Reasons: invalid_name, artifact_not_found, name_taken.
	RenameArtifact(ctx context.Context, id, name string) (*Artifact, error)

	// SetArtifactDescription replaces the description; nil clears it.
	// Reasons: invalid_parameters, artifact_not_found.
	SetArtifactDescription(ctx context.Context, id string, description *string) (*Artifact, error)

	// ReplaceContent points the artifact at a newly uploaded staging object
	// and marks it RECORDED; the old object is released. Reasons:
	// artifact_not_found, staging_key_invalid, staging_not_found,
	// object_too_large, store_unavailable.
	ReplaceContent(ctx context.Context, id string, src Staged) (*Artifact, error)

	// MintParts presigns uploads of parts of a multipart staging upload.
	// Reasons: invalid_parameters, invalid_checksum, workspace_not_found,
	// staging_key_invalid, staging_not_found, store_unavailable.
	MintParts(ctx context.Context, workspaceID string, r PartRequest) (*PartURLs, error)

	// UploadedParts lists the parts the store holds for a multipart staging
	// upload, so an interrupted upload sends only the rest. Reasons:
	// workspace_not_found, staging_key_invalid, staging_not_found,
	// store_unavailable.
	UploadedParts(ctx context.Context, workspaceID, stagingKey, uploadID string) ([]UploadedPart, error)

	// AbortUpload discards a multipart staging upload and its parts.
	// Reasons: workspace_not_found, staging_key_invalid, store_unavailable.
	AbortUpload(ctx context.Context, workspaceID, stagingKey, uploadID string) error

	// DeleteArtifact deletes the row and releases its object for the
	// reaper's grace window. Deleting an unknown ID succeeds.
	DeleteArtifact(ctx context.Context, id string) error
}

// VolumeArtifactCreate saves a file of the workspace volume as a new
// artifact.
type VolumeArtifactCreate struct {
	SourcePath  string
	Name        string
	Description *string
	// Format, when set (ArchiveTarGz, ArchiveZip), packs the directory at
	// SourcePath into one archive artifact.
	Format string
}

// VolumeTransferService moves bytes between a workspace volume and the
// store through sidecar containers. Paths are as seen inside any container
// that mounts the workspace (under MountPath).
type VolumeTransferService interface {
	// ArtifactFromVolume stores a volume file as a new artifact. Reasons:
	// invalid_name, invalid_parameters, workspace_not_found, name_taken,
	// path_outside_mount, path_is_mount_root, volume_not_ready, source_*,
	// object_too_large, store_unavailable, docker_unavailable,
	// sidecar_failed, sidecar_timeout, workspace_busy, sidecar_busy.
	ArtifactFromVolume(ctx context.Context, workspaceID string, c VolumeArtifactCreate) (*Artifact, error)

	// UpdateFromVolume replaces an artifact's content from a volume file,
	// repairing a MISSING_OBJECT artifact. Reasons: as ArtifactFromVolume,
	// with artifact_not_found instead of name_taken.
	UpdateFromVolume(ctx context.Context, artifactID, sourcePath string) (*Artifact, error)

	// LoadIntoVolume writes an artifact's content to a volume file; the
	// parent directory must exist. Reasons: invalid_parameters,
	// artifact_not_found, workspace_not_found, path_outside_mount,
	// path_is_mount_root, volume_not_ready, object_missing,
	// target_dir_missing, target_is_directory, write_failed,
	// store_unavailable, docker_unavailable, sidecar_failed,
	// sidecar_timeout, workspace_busy, sidecar_busy.
	LoadIntoVolume(ctx context.Context, artifactID, targetPath string) error
}
