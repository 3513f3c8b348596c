package service

import (
	"context"
	"errors"
	"time"
)

// execGrace is added to an exec container's expiry before it counts as
// leaked, as for shells.
const execGrace = 60 * time.Second

// Reap is one pass of the exec reaper: it removes the app's exec
// containers that carry this server's instance but are not in its
// registry (a predecessor's leftovers, a teardown that failed), and any
// of this stack's whose cairn.expires passed a minute ago (a server that
// never came back). It counts them. An exec enters the registry before
// its container exists, so an opening one is never taken.
func (x *Execs) Reap(ctx context.Context) (int, error) {
	list, err := x.rt.ListExecs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	now := x.svc.now()
	for _, c := range list {
		own := c.Instance == x.cfg.Instance
		if own && x.known(c.ShellID) {
			continue
		}
		expired := !c.Expires.IsZero() && now.After(c.Expires.Add(execGrace)) && x.ours(ctx, c.WorkspaceID)
		if !own && !expired {
			continue
		}
		if err := x.rt.RemoveContainer(ctx, c.ContainerID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		x.log.Warn("removed a leftover exec container", "exec_id", c.ShellID, "workspace_id", c.WorkspaceID,
			"container", c.Name, "instance", c.Instance)
	}
	return n, errors.Join(errs...)
}

func (x *Execs) known(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.entries[id]
	return ok
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
func (x *Execs) RunReaper(ctx context.Context) error {
	t := time.NewTicker(x.cfg.ReapInterval)
	defer t.Stop()
	for {
		if _, err := x.Reap(ctx); err != nil && ctx.Err() == nil {
			x.log.Error("exec reaper failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
