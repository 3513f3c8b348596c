package client

import (
	"context"
	"fmt"
	"io"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/wsexec"
)

// Exec runs argv in a fresh container that mounts the workspace's volume
// (an ID: resolve names first), as `cairn exec` does (package wsexec): no
// TTY, stdin streamed to its end of file and then half-closed (nil: none),
// stdout and stderr copied apart as they come. It returns the command's
// status: its ExitCode, and a Reason other than "exited" when the command
// did not end by itself (max_lifetime, terminated, server_shutdown,
// oom_killed, error). The token goes in the Authorization header, never in
// the URL; the argv in a header of its own. A refusal before the command
// started is a *cairn.Error with the answer's status, reason and message; a
// connection that ends without a status is wsexec.ErrConnectionLost, never
// status 0; a server without the subprotocol,
// wsexec.ErrUnsupportedProtocol. A read of stdin still blocked when Exec
// returns is left to finish in its goroutine.
func (c *Client) Exec(ctx context.Context, workspaceID string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (wsexec.Status, error) {
	return c.ExecWith(ctx, workspaceID, argv, ExecOptions{}, stdin, stdout, stderr)
}

// ExecOptions are how to run a command besides its argv: the working
// directory, added variables and timeout (wsexec.Options, sent in a header
// of their own, never the URL), and the signals to deliver while it runs.
type ExecOptions struct {
	wsexec.Options
	Signals <-chan string
}

// ExecWith is Exec with options; a command past its timeout ends with
// reason timeout.
func (c *Client) ExecWith(ctx context.Context, workspaceID string, argv []string, o ExecOptions, stdin io.Reader, stdout, stderr io.Writer) (wsexec.Status, error) {
	conn, err := c.dialExec(ctx, workspaceID, argv, o.Options)
	if err != nil {
		return wsexec.Status{}, err
	}
	return wsexec.Run(ctx, conn, stdin, stdout, stderr, wsexec.RunOptions{Signals: o.Signals})
}

// dialExec dials the exec route and checks the answer's subprotocol.
func (c *Client) dialExec(ctx context.Context, workspaceID string, argv []string, o wsexec.Options) (*websocket.Conn, error) {
	v, err := wsexec.EncodeArgv(argv)
	if err != nil {
		return nil, &cairn.Error{Reason: cairn.ReasonInvalidParameters, Detail: err.Error(), Err: err}
	}
	opts, err := wsexec.EncodeOptions(o)
	if err != nil {
		return nil, &cairn.Error{Reason: cairn.ReasonInvalidParameters, Detail: err.Error(), Err: err}
	}
	h := c.header()
	h.Set(wsexec.ArgvHeader, v)
	if opts != "" {
		h.Set(wsexec.OptionsHeader, opts)
	}
	// websocketURL escapes the path itself; IDs are UUIDs, one segment.
	path := "/v1/workspaces/" + workspaceID + "/exec"
	conn, err := c.dialWebsocket(ctx, path, nil, h, wsexec.Subprotocol, wsexec.MaxDataPayload+64)
	if err != nil {
		return nil, err
	}
	if conn.Subprotocol() != wsexec.Subprotocol {
		msg := websocket.FormatCloseMessage(websocket.CloseProtocolError, "")
		_ = conn.WriteMessage(websocket.CloseMessage, msg) // leaving anyway
		_ = conn.Close()
		return nil, fmt.Errorf("GET %s: %w (it named %q)", path, wsexec.ErrUnsupportedProtocol, conn.Subprotocol())
	}
	return conn, nil
}
