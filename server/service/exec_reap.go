package service

import (
	"context"
	"time"
)

// execGrace is added to an exec container's expiry before it counts as
// leaked, as for shells.
const execGrace = 60 * time.Second

// Reap is one pass of the exec reaper: it removes the app's exec
// containers that carry this server's instance but are not in its
// registry (a predecessor's leftovers, a teardown that failed), and any
// of this stack's whose cairn.expires passed a minute ago (a server that
// never came back). It counts them. An opening exec is never taken.
func (x *Execs) Reap(ctx context.Context) (int, error) {
	now := x.svc.now()
	return x.reap(ctx, func(ctx context.Context, c ShellContainer) bool {
		return !c.Expires.IsZero() && now.After(c.Expires.Add(execGrace)) && x.ours(ctx, c.WorkspaceID)
	}, nil)
}

// ours reports a workspace of this stack's database: another stack on the
// same engine may share the app name.
func (x *Execs) ours(ctx context.Context, workspaceID string) bool {
	if workspaceID == "" {
		return false
	}
	_, err := x.svc.store.FindWorkspace(ctx, workspaceID)
	return err == nil
}

// RunReaper reaps at once, then every reap interval, until ctx is done;
// failures are logged and the loop goes on. It returns nil.
func (x *Execs) RunReaper(ctx context.Context) error { return x.reapEvery(ctx, x.Reap) }
