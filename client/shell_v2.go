package client

import (
	"context"
	"net/http"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// CreateShell creates a v2 shell in the workspace (an ID): it starts at
// once, detached, and outlives its connections until
// shell.timeouts.detachedSecs pass without a writer. The answer carries
// the shell's ID and its resume secret; keep the secret private (it is
// never sent in a URL). Not retried: a repeat would create another shell.
// A server without v2 answers 404 or 405 (IsV2Unsupported).
func (c *Client) CreateShell(ctx context.Context, workspaceID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error) {
	return c.CreateShellWith(ctx, workspaceID, cairn.ShellCreate{Cols: size.Cols, Rows: size.Rows, Term: term})
}

// CreateShellWith is CreateShell with the whole create body: Record asks
// for the session's recording.
func (c *Client) CreateShellWith(ctx context.Context, workspaceID string, body cairn.ShellCreate) (*cairn.ShellSessionInfo, error) {
	var out cairn.ShellSessionInfo
	if err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "shells"), body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AttachShell attaches to the v2 shell as its writer, with the secret in
// the Cairn-Shell-Secret header, and applies size before the screen's
// render. A writer already attached is taken over (its EXIT says
// taken_over). Any replica attaches. Refusals: shell_secret_required,
// shell_secret_invalid, shell_not_found, shell_not_attachable.
func (c *Client) AttachShell(ctx context.Context, shellID, secret string, size ptyshell.Size) (*ptyshell.Session, error) {
	h := c.header()
	h.Set(cairn.ShellSecretHeader, secret)
	q := ptyshell.Handshake{Size: size}.Query()
	return c.dialShell(ctx, "/v1/shells/"+shellID+"/attach", q, h, ptyshell.SubprotocolV2)
}

// WatchShell watches the v2 shell read-only: the screen's render, then live
// output. Its INPUT and RESIZE are refused with a non-fatal ERROR
// read_only. The token's scope decides; no secret.
func (c *Client) WatchShell(ctx context.Context, shellID string, size ptyshell.Size) (*ptyshell.Session, error) {
	q := ptyshell.Handshake{Size: size}.Query()
	return c.dialShell(ctx, "/v1/shells/"+shellID+"/watch", q, c.header(), ptyshell.SubprotocolV2)
}

// IsV2Unsupported reports whether err is a server's answer that it has no
// v2 shell routes (an older server): 404 or 405 without a shell reason.
func IsV2Unsupported(err error) bool {
	e, ok := err.(*cairn.Error) //nolint:errorlint // the client returns it unwrapped
	if !ok {
		return false
	}
	switch e.Reason {
	case cairn.ReasonWorkspaceNotFound, cairn.ReasonShellDisabled:
		return false
	}
	return e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed
}

// SignalShell sends a signal by name (INT, TERM, HUP, …:
// ptyshell.SignalNames) to the v2 shell's foreground job, with its secret,
// from any replica. Not retried: a repeat would signal twice.
func (c *Client) SignalShell(ctx context.Context, shellID, secret, signal string) error {
	h := http.Header{}
	h.Set(cairn.ShellSecretHeader, secret)
	return c.do(ctx, call{method: http.MethodPost, path: pathOf("shells", shellID, "signal"), header: h,
		body: struct {
			Signal string `json:"signal"`
		}{signal}}, nil)
}
