package cairn

import "time"

// AuditType names a kind of recorded mutation.
type AuditType string

const (
	AuditNewWorkspace         AuditType = "NEW_WORKSPACE"
	AuditRenameWorkspace      AuditType = "RENAME_WORKSPACE"
	AuditWorkspaceVolumeState AuditType = "WORKSPACE_VOLUME_STATE"
	// AuditWorkspaceVolumeIssue: the maintainer found a READY volume unable
	// to take containers, or able again (a workspace's volume_issue).
	AuditWorkspaceVolumeIssue AuditType = "WORKSPACE_VOLUME_ISSUE"
	AuditDeleteWorkspace      AuditType = "DELETE_WORKSPACE"
	AuditNewArtifact          AuditType = "NEW_ARTIFACT"
	AuditRenameArtifact       AuditType = "RENAME_ARTIFACT"
	AuditUpdateArtifactObject AuditType = "UPDATE_ARTIFACT_OBJECT"
	AuditArtifactMissing      AuditType = "ARTIFACT_MISSING_OBJECT"
	AuditDeleteArtifact       AuditType = "DELETE_ARTIFACT"
	AuditShellOpened          AuditType = "SHELL_OPENED"
	AuditShellClosed          AuditType = "SHELL_CLOSED"
)

// AuditEvent records one mutation, written in the same transaction as the
// change. Actor is the token name, "maintainer" for reconciler writes, or nil
// when authentication is off.
type AuditEvent struct {
	ID        string         `json:"id"`
	Type      AuditType      `json:"type"`
	Actor     *string        `json:"actor"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"created_at"`
}

// AuditShellWatched records one read-only watch of a v2 shell
// (GET /v1/shells/{id}/watch).
const AuditShellWatched AuditType = "SHELL_WATCHED"

// AuditShellAttached records one writer attach to a v2 shell: a reattach
// after a drop or a take-over (GET /v1/shells/{id}/attach).
const AuditShellAttached AuditType = "SHELL_ATTACHED"

// The SSH workbench's sessions: who came in with which key, and when they
// left (cairn server --ssh-listen).
const (
	AuditSSHSessionStarted AuditType = "SSH_SESSION_STARTED"
	AuditSSHSessionEnded   AuditType = "SSH_SESSION_ENDED"
)

// AuditTypes is every audit type, in the order docs/api.md#audit lists them:
// what GET /v1/audit filters by and the TUI cycles through.
func AuditTypes() []AuditType {
	return []AuditType{
		AuditNewWorkspace, AuditRenameWorkspace, AuditWorkspaceVolumeState, AuditWorkspaceVolumeIssue, AuditDeleteWorkspace,
		AuditNewArtifact, AuditRenameArtifact, AuditUpdateArtifactObject, AuditArtifactMissing, AuditDeleteArtifact,
		AuditShellOpened, AuditShellClosed, AuditShellWatched, AuditShellAttached, AuditExecStarted, AuditExecEnded,
		AuditSSHSessionStarted, AuditSSHSessionEnded, AuditFileChanged, AuditWebhookRetried,
		AuditSnapshotCreated, AuditSnapshotDeleted, AuditSnapshotRestored,
		AuditWorkspaceLifecycle, AuditWorkspaceExpiring, AuditWorkspaceArchiving, AuditWorkspaceArchived,
	}
}

// AuditFileChanged records one change of a workspace volume's files through
// the API: a write, remove, mkdir or move, with its path.
const AuditFileChanged AuditType = "WORKSPACE_FILE_CHANGED"

// AuditWebhookRetried records an operator sending a failed webhook
// delivery again (POST /v1/webhooks/deliveries/{id}/retry).
const AuditWebhookRetried AuditType = "WEBHOOK_DELIVERY_RETRIED"

// Snapshots: one taken, one deleted, and one restored into a workspace's
// volume (a fork's new workspace included).
const (
	AuditSnapshotCreated  AuditType = "SNAPSHOT_CREATED"
	AuditSnapshotDeleted  AuditType = "SNAPSHOT_DELETED"
	AuditSnapshotRestored AuditType = "SNAPSHOT_RESTORED"
)

// Lifecycle: settings changed or a touch; a warning sent; an idle volume
// archived to a snapshot. An expired workspace's delete is DELETE_WORKSPACE
// by the maintainer.
const (
	AuditWorkspaceLifecycle AuditType = "WORKSPACE_LIFECYCLE"
	AuditWorkspaceExpiring  AuditType = "WORKSPACE_EXPIRING"
	AuditWorkspaceArchiving AuditType = "WORKSPACE_ARCHIVING"
	AuditWorkspaceArchived  AuditType = "WORKSPACE_ARCHIVED"
)
