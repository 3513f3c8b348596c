package cairn

import (
	"context"
	"slices"
	"time"
)

// SweepResult counts what one reconciliation pass examined and changed.
// WorkspaceID is set for a pass scoped to one workspace.
type SweepResult struct {
	WorkspaceID       string    `json:"workspace_id,omitempty"`
	StartedAt         time.Time `json:"started_at"`
	FinishedAt        time.Time `json:"finished_at"`
	VolumesExamined   int       `json:"volumes_examined"`
	VolumesAdopted    int       `json:"volumes_adopted"`
	VolumesCleared    int       `json:"volumes_cleared"`
	VolumesOrphaned   int       `json:"volumes_orphaned"`
	StagingExamined   int       `json:"staging_examined"`
	StagingDeleted    int       `json:"staging_deleted"`
	StorageExamined   int       `json:"storage_examined"`
	StorageDeleted    int       `json:"storage_deleted"`
	ArtifactsFlagged  int       `json:"artifacts_flagged"`
	ReleasedPruned    int       `json:"released_pruned"`
	ContainersRemoved int       `json:"containers_removed"`
	// UploadsAborted counts unfinished multipart uploads started before the
	// grace cutoff and aborted (sweep multipart-uploads).
	UploadsAborted int `json:"uploads_aborted"`
	// SnapshotContentReaped counts content no snapshot refers to any more
	// that was let go; SnapshotObjectsDeleted the snapshot objects deleted
	// with it, or left by a snapshot run that died (sweep snapshots).
	SnapshotContentReaped  int `json:"snapshot_content_reaped"`
	SnapshotObjectsDeleted int `json:"snapshot_objects_deleted"`
	// The lifecycle: warnings sent, expired workspaces deleted and idle
	// volumes archived (sweep lifecycle).
	WorkspacesWarned   int `json:"workspaces_warned"`
	WorkspacesExpired  int `json:"workspaces_expired"`
	WorkspacesArchived int `json:"workspaces_archived"`
	// Errors holds the first MaxSweepErrors per-item failures;
	// ErrorsOmitted counts the rest, so a report stays small however much
	// failed.
	Errors        []string `json:"errors,omitempty"`
	ErrorsOmitted int      `json:"errors_omitted,omitempty"`
}

// MaxSweepErrors bounds SweepResult.Errors.
const MaxSweepErrors = 20

// AddError records one failure, within the bound.
func (r *SweepResult) AddError(line string) {
	if len(r.Errors) < MaxSweepErrors {
		r.Errors = append(r.Errors, line)
		return
	}
	r.ErrorsOmitted++
}

// MaintenanceService runs reconciliation passes on demand.
type MaintenanceService interface {
	// Sweep runs one pass now, serialised with every other pass; workspaceID
	// "" means a full pass. Reasons: workspace_not_found, sweep_busy, internal.
	Sweep(ctx context.Context, workspaceID string) (*SweepResult, error)
}

// AuditFilter selects audit events, ordered by creation time, then ID:
// oldest first, or newest first when Newest is set.
type AuditFilter struct {
	WorkspaceID string
	Types       []AuditType
	Newest      bool
	Page
}

// AuditService reads the audit trail.
type AuditService interface {
	// FindAuditEvents lists events. Reasons: invalid_query, list_too_large.
	FindAuditEvents(ctx context.Context, f AuditFilter) ([]*AuditEvent, error)
}

// ParseAuditType accepts exactly the wire values.
func ParseAuditType(s string) (AuditType, error) {
	if t := AuditType(s); slices.Contains(AuditTypes(), t) {
		return t, nil
	}
	return "", Errorf(ReasonInvalidQuery, "unknown audit event type %q", s)
}
