package cairn

import (
	"context"
	"time"
)

// VolumeState says whether a workspace's Docker volume exists. Only a READY
// volume may be mounted; the column is written only after Docker succeeded.
type VolumeState string

const (
	VolumeNone  VolumeState = "NONE"
	VolumeReady VolumeState = "READY"
)

// ParseVolumeState accepts exactly the wire values.
func ParseVolumeState(s string) (VolumeState, error) {
	switch st := VolumeState(s); st {
	case VolumeNone, VolumeReady:
		return st, nil
	}
	return "", Errorf(ReasonInvalidQuery, "unknown volume state %q; expected NONE or READY", s)
}

// Workspace is a scope of work: a name, and a Docker named volume mounted at
// MountPath by every container of that work.
type Workspace struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Description    *string         `json:"description,omitempty"`
	VolumeName     string          `json:"volume_name"`
	VolumeState    VolumeState     `json:"volume_state"`
	VolumeMetadata *VolumeMetadata `json:"volume_metadata,omitempty"`
	VolumeIssue    *VolumeIssue    `json:"volume_issue,omitempty"`
	ArtifactCounts ArtifactCounts  `json:"artifact_counts"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`

	// Lifecycle (docs/api.md#expiry-and-archiving), each absent when unset.
	// TTLSecs moves ExpiresAt to the last touch plus it; ExpiresAt is
	// when the maintainer deletes the workspace, after its warning.
	// ArchiveIdleAfterSecs overrides lifecycle.archiveIdleAfterSecs (0:
	// never). ArchivedSnapshotID names the snapshot an idle volume was
	// archived to; the next setup restores it.
	TTLSecs              *int64     `json:"ttl_secs,omitempty"`
	ExpiresAt            *time.Time `json:"expires_at,omitempty"`
	ArchiveIdleAfterSecs *int64     `json:"archive_idle_after_secs,omitempty"`
	ArchivedSnapshotID   *string    `json:"archived_snapshot_id,omitempty"`
	// LastActiveAt is the last activity cairn saw: a touch, a file change,
	// transfer, shell or exec through it, or a container mounting the
	// volume at a maintainer pass.
	LastActiveAt time.Time `json:"last_active_at,omitzero"`
	// When the expiring and archiving warnings went out; cleared by a
	// touch and by activity.
	ExpiryWarnedAt  *time.Time `json:"-"`
	ArchiveWarnedAt *time.Time `json:"-"`
}

// ArtifactCounts counts a workspace's artifacts by state. The store keeps
// them in the same transaction as every artifact insert, delete and state
// change, so reading them costs nothing and every change of a count is also
// a workspace change (a workspace.upserted event).
type ArtifactCounts struct {
	Recorded      int64 `json:"recorded"`
	MissingObject int64 `json:"missing_object"`
}

// VolumeIssue is why a READY volume cannot take new containers now, as the
// maintainer last found it: the reason and detail a session or transfer
// would be refused with (volume_node_unavailable: on Kubernetes, the one
// node holding the volume is gone, cordoned, not ready or outside
// kubernetes.nodeSelector). The maintainer clears it once the volume takes
// containers again, or the volume is gone.
type VolumeIssue struct {
	Reason Reason `json:"reason"`
	Detail string `json:"detail"`
}

// VolumeMetadata is what the workspace asks of its volume. SizeBytes is the
// size a Kubernetes claim requests, within the runtime's bound; Docker's
// local volumes cannot be sized, so there it is only stored.
type VolumeMetadata struct {
	SizeBytes *int64 `json:"size_bytes,omitempty"`
}

// Validate checks the size hint: absent means unset, otherwise positive.
func (m *VolumeMetadata) Validate() error {
	if m != nil && m.SizeBytes != nil && *m.SizeBytes <= 0 {
		return Errorf(ReasonInvalidParameters, "volume_metadata.size_bytes must be greater than 0 when given")
	}
	return nil
}

// WorkspaceCreate holds what a caller chooses for a new workspace.
type WorkspaceCreate struct {
	Name           string
	Description    *string
	VolumeMetadata *VolumeMetadata
	// FromSnapshot, when set, gives the new workspace a READY volume
	// holding that snapshot's tree.
	FromSnapshot string
	Lifecycle    Lifecycle
}

// Validate checks the name rule and the field limits.
func (c WorkspaceCreate) Validate() error {
	if err := ValidateName("workspace", c.Name); err != nil {
		return err
	}
	if err := ValidateDescription(c.Description); err != nil {
		return err
	}
	if err := c.Lifecycle.Validate(Now()); err != nil {
		return err
	}
	return c.VolumeMetadata.Validate()
}

// WorkspaceFilter selects workspaces. Empty sets match everything; within a
// set, values are OR'ed.
type WorkspaceFilter struct {
	Names        []string
	VolumeStates []VolumeState
	Page
}

// WorkspaceDetail is a workspace with the live count of running containers
// that mount its volume (-1 when there is no volume or Docker did not answer
// in time).
type WorkspaceDetail struct {
	Workspace  *Workspace
	MountCount int
	// VolumeSizeBytes is the size the runtime gave the volume (a
	// Kubernetes claim's granted capacity); 0 when unknown or unsized.
	VolumeSizeBytes int64
}

// WorkspaceService manages workspaces and their volumes. Every method returns
// *Error values; the reasons each can return are listed.
type WorkspaceService interface {
	// CreateWorkspace records a new workspace with no volume. A volume size
	// above the runtime's bound is invalid_parameters.
	// Reasons: invalid_name, invalid_parameters, name_taken.
	CreateWorkspace(ctx context.Context, c WorkspaceCreate) (*Workspace, error)

	// FindWorkspaces lists workspaces ordered by creation time, then ID.
	// Reasons: invalid_query, list_too_large.
	FindWorkspaces(ctx context.Context, f WorkspaceFilter) ([]*Workspace, error)

	// InspectWorkspace returns a workspace and its live mount count; it is the
	// only lookup that asks Docker anything. Reasons: workspace_not_found.
	InspectWorkspace(ctx context.Context, id string) (*WorkspaceDetail, error)

	// RenameWorkspace changes the name (not the volume name). Renaming to the
	// current name succeeds. Reasons: invalid_name, workspace_not_found, name_taken.
	RenameWorkspace(ctx context.Context, id, name string) (*Workspace, error)

	// SetWorkspaceDescription replaces the description; nil clears it.
	// Reasons: invalid_parameters, workspace_not_found.
	SetWorkspaceDescription(ctx context.Context, id string, description *string) (*Workspace, error)

	// SetWorkspaceVolumeMetadata replaces the volume hint; nil clears it. Only
	// allowed while the workspace has no volume.
	// Reasons: invalid_parameters, workspace_not_found, volume_exists.
	SetWorkspaceVolumeMetadata(ctx context.Context, id string, m *VolumeMetadata) (*Workspace, error)

	// DeleteWorkspace deletes a workspace that has no volume, with its
	// artifacts. Not idempotent. Reasons: workspace_not_found, volume_exists,
	// workspace_busy.
	DeleteWorkspace(ctx context.Context, id string) error

	// SetupVolume creates (or adopts) the workspace's volume, prepares its
	// root and marks it READY. Idempotent; a repeat repairs the root's mode.
	// A volume size above the runtime's bound (lowered since it was stored)
	// is invalid_parameters, and no volume is made.
	// Reasons: invalid_parameters, workspace_not_found, docker_unavailable, volume_prep_failed,
	// sidecar_timeout, workspace_busy, sidecar_busy.
	SetupVolume(ctx context.Context, id string) error

	// TeardownVolume removes the workspace's volume (never by force) and marks
	// it NONE. Idempotent. Reasons: workspace_not_found, volume_in_use,
	// docker_unavailable, workspace_busy.
	TeardownVolume(ctx context.Context, id string) error
}
