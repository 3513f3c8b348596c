package cairn

import (
	"context"
	"time"
)

// MaxTTLSecs bounds a ttl and an idle bound: ten years.
const MaxTTLSecs = 10 * 365 * 24 * 3600

// Lifecycle is what a caller sets of a workspace's lifecycle: a ttl or a
// fixed expiry (not both), and an idle bound for archiving. Nil fields are
// unset; on create a nil expiry takes lifecycle.defaultTTLSecs.
type Lifecycle struct {
	TTLSecs              *int64     `json:"ttl_secs,omitempty"`
	ExpiresAt            *time.Time `json:"expires_at,omitempty"`
	ArchiveIdleAfterSecs *int64     `json:"archive_idle_after_secs,omitempty"`
}

// Validate checks the bounds: a ttl of 1 s to ten years, an expiry in
// the future, an idle bound of 0 (never) to ten years.
func (l Lifecycle) Validate(now time.Time) error {
	switch {
	case l.TTLSecs != nil && l.ExpiresAt != nil:
		return Errorf(ReasonInvalidParameters, "give ttl_secs or expires_at, not both")
	case l.TTLSecs != nil && (*l.TTLSecs <= 0 || *l.TTLSecs > MaxTTLSecs):
		return Errorf(ReasonInvalidParameters, "ttl_secs must be between 1 and %d", MaxTTLSecs)
	case l.ExpiresAt != nil && !l.ExpiresAt.After(now):
		return Errorf(ReasonInvalidParameters, "expires_at must be in the future")
	case l.ArchiveIdleAfterSecs != nil && (*l.ArchiveIdleAfterSecs < 0 || *l.ArchiveIdleAfterSecs > MaxTTLSecs):
		return Errorf(ReasonInvalidParameters, "archive_idle_after_secs must be between 0 (never) and %d", MaxTTLSecs)
	}
	return nil
}

// LifecycleService sets and postpones a workspace's lifecycle.
type LifecycleService interface {
	// SetWorkspaceLifecycle replaces the workspace's ttl, expiry and idle
	// bound (nil fields clear them) and withdraws warnings sent.
	// Reasons: invalid_parameters, workspace_not_found.
	SetWorkspaceLifecycle(ctx context.Context, id string, l Lifecycle) (*Workspace, error)
	// TouchWorkspace records activity: the idle clock restarts, a ttl
	// moves the expiry to now plus it, and warnings sent are withdrawn.
	// Reasons: workspace_not_found.
	TouchWorkspace(ctx context.Context, id string) (*Workspace, error)
}
