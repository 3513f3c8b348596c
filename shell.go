package cairn

import (
	"context"
	"fmt"
	"time"
)

// Shell is one shell of this app as GET /v1/shells lists it: the
// registry's v2 shells, whose holders every replica reaches, and the v1
// shell containers, of which only the server serving one knows the live
// details (Local).
type Shell struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Container   string    `json:"container"`
	Instance    string    `json:"instance"`
	State       string    `json:"state"` // Docker's container state
	StartedAt   time.Time `json:"started_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	TokenName   string    `json:"token_name"`
	// Local is true when the answer carries the shell's live details
	// (LastInputAt, Detached, Watchers): a v2 shell whose holder answered,
	// through whichever replica, or this server's own v1 shell.
	Local       bool       `json:"local"`
	LastInputAt *time.Time `json:"last_input_at,omitempty"`
	ClientAddr  string     `json:"client_addr,omitempty"`
	// Detached is set for a v2 shell whose holder answered: true while no
	// writer is attached (it then ends after shell.timeouts.detachedSecs).
	// Watchers counts its watchers. Both are absent for v1 shells.
	Detached *bool `json:"detached,omitempty"`
	Watchers int   `json:"watchers,omitempty"`
}

// ShellList is the answer of GET /v1/shells. Enabled mirrors shell.enable,
// so a client can disable its shell key and say why.
type ShellList struct {
	Enabled bool     `json:"enabled"`
	Shells  []*Shell `json:"shells"`
}

// ShellService lists and ends shells. Opening one is a websocket; it is
// not part of this interface.
type ShellService interface {
	// FindShells lists the app's shell containers, of one workspace when
	// workspaceID is set, ordered by StartedAt, then ID; Shells is never
	// nil. Reasons: docker_unavailable.
	FindShells(ctx context.Context, workspaceID string) (*ShellList, error)
	// KillShell ends a shell: a session of this server ends with reason
	// "terminated"; any other shell container with that ID is force-removed
	// (its server, if alive, then ends the session the same way).
	// Reasons: shell_not_found, docker_unavailable.
	KillShell(ctx context.Context, id string) error
}

// DefaultShellTerm is the TERM of a shell whose handshake names none.
const DefaultShellTerm = "xterm-256color"

// MaxStartWait bounds how long a server may spend starting a session's
// container (a Kubernetes pod: kubernetes.podStartTimeoutSecs) before it
// answers a shell's or an exec's websocket handshake; a client's dial
// waits that long for the answer, so a slow start is reported as such
// rather than as a server that did not answer.
const MaxStartWait = 5 * time.Minute

// Terminal size bounds of the handshake.
const (
	MinShellDimension = 1
	MaxShellDimension = 1000
	maxShellTermLen   = 64
)

// ShellOpen is the handshake of GET /v1/workspaces/{id}/shell.
type ShellOpen struct {
	WorkspaceID string
	Cols, Rows  int
	// Term becomes TERM in the container; "" means DefaultShellTerm.
	Term string
	// ClientAddr is the client's address, for the registry and the audit.
	ClientAddr string
	// Record asks for an asciicast recording of a v2 shell, stored as an
	// artifact of the workspace when it ends (shell.record.enable records
	// every shell).
	Record bool
}

// Validate checks the terminal of the handshake: cols and rows within
// 1–1000, a term of 1–64 characters of [A-Za-z0-9._+-]. An empty Term is
// set to DefaultShellTerm. Reasons: invalid_terminal.
func (o *ShellOpen) Validate() error {
	for _, d := range []struct {
		name string
		v    int
	}{{"cols", o.Cols}, {"rows", o.Rows}} {
		if d.v < MinShellDimension || d.v > MaxShellDimension {
			return Errorf(ReasonInvalidTerminal, "%s must be an integer between %d and %d, got %d",
				d.name, MinShellDimension, MaxShellDimension, d.v)
		}
	}
	if o.Term == "" {
		o.Term = DefaultShellTerm
	}
	if !validTerm(o.Term) {
		return Errorf(ReasonInvalidTerminal, "term must be 1–%d characters of A-Z, a-z, 0-9, '.', '_', '+' and '-'",
			maxShellTermLen)
	}
	return nil
}

func validTerm(s string) bool {
	if len(s) > maxShellTermLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '+' || c == '-'
		if !ok {
			return false
		}
	}
	return s != ""
}

// ErrShellNotFound is the refusal of a shell ID that names no shell
// container of this app.
func ErrShellNotFound(id string) *Error {
	return &Error{Reason: ReasonShellNotFound, Detail: fmt.Sprintf("no shell with ID '%s'", id)}
}
