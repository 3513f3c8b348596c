package cairn

import "time"

// Audit types of `cairn exec`: one row when a command is about to start,
// one when it ended. Their metadata names argv[0] only, never the rest of
// the argv, which may hold secrets.
const (
	AuditExecStarted AuditType = "EXEC_STARTED"
	AuditExecEnded   AuditType = "EXEC_ENDED"
)

// ExecOpen is the request of GET /v1/workspaces/{id}/exec.
type ExecOpen struct {
	WorkspaceID string
	// Argv is the command, run as given with no shell: at least one
	// string, the first not empty.
	Argv []string
	// ClientAddr is the client's address, for the registry and the audit.
	ClientAddr string
	// Dir is the working directory, a directory of the volume; the mount
	// root when empty.
	Dir string
	// Env adds NAME=value variables (wsexec.Options.Check's rules).
	Env []string
	// Timeout ends the command this long after it started (reason
	// timeout); 0 leaves the maximum lifetime alone.
	Timeout time.Duration
}
