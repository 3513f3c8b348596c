package cairn

import "fmt"

// Reasons of the v2 shell routes (POST /v1/workspaces/{id}/shells,
// GET /v1/shells/{id}/attach, GET /v1/shells/{id}/watch).
const (
	// ReasonShellSecretRequired (401): an attach without the
	// Cairn-Shell-Secret header.
	ReasonShellSecretRequired Reason = "shell_secret_required"
	// ReasonShellSecretInvalid (403): an attach whose secret is not the
	// shell's.
	ReasonShellSecretInvalid Reason = "shell_secret_invalid"
	// ReasonShellNotAttachable (409): the shell is a v1 one, which lives
	// and dies with its connection.
	ReasonShellNotAttachable Reason = "shell_not_attachable"
)

// ShellSecretHeader carries the resume secret of an attach. The secret is
// never put in a URL, a log line or an audit row.
const ShellSecretHeader = "Cairn-Shell-Secret"

// ShellCreate is the body of POST /v1/workspaces/{id}/shells.
type ShellCreate struct {
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
	Term string `json:"term,omitempty"`
	// Record asks for the session's asciicast recording, stored as the
	// artifact shell-<id>_cast of the workspace when the shell ends.
	Record bool `json:"record,omitempty"`
}

// ShellSessionInfo is the answer of POST /v1/workspaces/{id}/shells: a v2
// shell running detached, and the secret that attaches to it. Secret is
// shown once, in this body only; String and Format never print it.
type ShellSessionInfo struct {
	ShellID     string `json:"shell_id"`
	Secret      string `json:"secret"`
	WorkspaceID string `json:"workspace_id"`
	Container   string `json:"container"`
	Instance    string `json:"instance"`
	// DetachedTimeoutSecs is how long the shell waits for a writer before
	// it ends with reason detached_timeout.
	DetachedTimeoutSecs int `json:"detached_timeout_s"`
}

// String names the shell without its secret.
func (i ShellSessionInfo) String() string {
	return fmt.Sprintf("shell %s in workspace %s on %s", i.ShellID, i.WorkspaceID, i.Instance)
}
