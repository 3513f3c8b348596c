package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

var _ cairn.ShellService = (*Client)(nil)

// Shell opens an interactive shell in the workspace (an ID: resolve names
// first) with the terminal's size and TERM ("" for the server's default),
// and returns the session over it. It sends the token in the Authorization
// header, never in the URL, and no Origin. A refused upgrade is a
// *cairn.Error with the answer's status, reason and message; a server that
// answers without the shell subprotocol is refused with an error matching
// ptyshell.ErrUnsupportedProtocol; no answer at all is unreachable
// (IsUnreachable).
func (c *Client) Shell(ctx context.Context, workspaceID string, size ptyshell.Size, term string) (*ptyshell.Session, error) {
	q := ptyshell.Handshake{Size: size, Term: term}.Query()
	// websocketURL escapes the path itself; IDs are UUIDs, one segment.
	return c.dialShell(ctx, "/v1/workspaces/"+workspaceID+"/shell", q, c.header(), ptyshell.Subprotocol)
}

// dialShell dials a shell websocket offering proto, and returns the session
// over it: a refused upgrade is a *cairn.Error, no answer unreachable.
func (c *Client) dialShell(ctx context.Context, path string, q url.Values, h http.Header, proto string) (*ptyshell.Session, error) {
	conn, err := c.dialWebsocket(ctx, path, q, h, proto, ptyshell.MaxDataPayload+64)
	if err != nil {
		return nil, err
	}
	return ptyshell.NewSession(conn, ptyshell.SessionOptions{Subprotocol: proto})
}

// FindShells lists the shell containers of the server's app (of one
// workspace when workspaceID is set) and whether the server has the shell
// enabled.
func (c *Client) FindShells(ctx context.Context, workspaceID string) (*cairn.ShellList, error) {
	var q url.Values
	if workspaceID != "" {
		q = url.Values{"workspace_id": {workspaceID}}
	}
	var out cairn.ShellList
	if err := c.get(ctx, pathOf("shells"), q, &out); err != nil {
		return nil, err
	}
	if out.Shells == nil {
		out.Shells = []*cairn.Shell{}
	}
	return &out, nil
}

// KillShell ends a shell (scope admin). Not retried: a repeat answers 404
// shell_not_found.
func (c *Client) KillShell(ctx context.Context, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: pathOf("shells", id)}, nil)
}
