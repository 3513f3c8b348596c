package client

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// Reattach backoff after a lost connection: doubling from the first,
// capped, for at most the shell's detached timeout.
const (
	ReattachFirst = 250 * time.Millisecond
	ReattachMax   = 5 * time.Second
)

// ReattachShell attaches to the v2 shell again after its connection was
// lost at lostAt, as the CLI and the TUI both do: AttachShell with backoff
// until it answers, the server refuses (a *cairn.Error: the shell ended,
// the secret is wrong), ctx ends, or the shell's detached timeout since
// lostAt has passed — the server has ended it by then. A server shutting
// down is waited out like one that does not answer: a restart is what
// drops the connection. size is read before each try: the terminal may
// have been resized meanwhile.
func (c *Client) ReattachShell(ctx context.Context, shellID, secret string, lostAt time.Time, detached time.Duration,
	size func() (ptyshell.Size, error)) (*ptyshell.Session, error) {
	wait := ReattachFirst
	for {
		sz, err := size()
		if err != nil {
			return nil, err
		}
		sess, err := c.AttachShell(ctx, shellID, secret, sz)
		if err == nil || refusedForGood(err) || time.Since(lostAt) > detached {
			return sess, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		wait = min(2*wait, ReattachMax)
	}
}

// refusedForGood reports a server's answer that another try would not
// change; server_shutting_down is not one, nor volume_node_unavailable (the
// shell's node not ready: it may return, or the shell be ended as
// node_lost, which the next try is told).
func refusedForGood(err error) bool {
	e, ok := errors.AsType[*cairn.Error](err)
	return ok && e.Reason != cairn.ReasonServerShuttingDown && e.Reason != cairn.ReasonVolumeNodeUnavailable
}
