package service

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// execGrace is added to an exec container's expiry before it counts as
// leaked, as for shells.
const execGrace = 60 * time.Second

// Reap is one pass of the exec reaper. It first ends the execs whose
// server is gone (endLost), then removes the app's exec containers that
// carry this server's instance but are not in its registry (a
// predecessor's leftovers, a teardown that failed), and any of this
// stack's whose cairn.expires passed a minute ago. It counts both. An
// opening exec is never taken.
func (x *Execs) Reap(ctx context.Context) (int, error) {
	lost, lerr := x.endLost(ctx)
	now := x.svc.now()
	n, err := x.reap(ctx, func(ctx context.Context, c ShellContainer) bool {
		return !c.Expires.IsZero() && now.After(c.Expires.Add(execGrace)) && x.ours(ctx, c.WorkspaceID)
	}, nil)
	return lost + n, errors.Join(lerr, err)
}

// endLost renews this server's liveness in the registry, then ends the
// execs whose server is gone: those of an instance that stopped renewing
// (killed, its node lost, replaced under another name), and this
// instance's own from before this process started (it was restarted under
// the same name). Each one's container is removed, and the replica whose
// delete takes its row records the end — terminated, exit code -1: nobody
// saw the command's status.
func (x *Execs) endLost(ctx context.Context) (int, error) {
	ttl := x.config.instanceTTL()
	if err := x.svc.store.RenewInstance(ctx, x.config.Instance, ttl); err != nil {
		return 0, err
	}
	lost, err := x.svc.store.LostExecRows(ctx, ttl)
	if err != nil {
		return 0, err
	}
	own, err := x.svc.store.FindExecRows(ctx, x.config.Instance)
	if err != nil {
		return 0, err
	}
	for _, row := range own {
		if row.CreatedAt.Before(x.startedAt) && !x.Known(row.ID) {
			lost = append(lost, row)
		}
	}
	n := 0
	var errs []error
	for _, row := range lost {
		ended, err := x.endLostOne(ctx, row)
		if err != nil {
			errs = append(errs, err)
		} else if ended {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// endLostOne removes row's container, then claims the row; only the
// claimer writes EXEC_ENDED.
func (x *Execs) endLostOne(ctx context.Context, row *ExecRow) (bool, error) {
	if err := x.removeContainer(ctx, row.Container); err != nil {
		return false, err
	}
	claimed, err := x.svc.store.DeleteExec(ctx, row.ID)
	if err != nil || !claimed {
		return false, err
	}
	meta := map[string]any{"workspace_id": row.WorkspaceID, "exec_id": row.ID, "container": row.Container,
		"reason": string(ptyshell.ReasonTerminated), "exit_code": -1, "argv0": row.Argv0,
		"duration_s": x.svc.now().Sub(row.CreatedAt).Seconds(), "server_lost": row.Instance}
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	if err := x.svc.audit(actx, x.svc.store, cairn.AuditExecEnded, meta); err != nil {
		x.log.Error("exec audit failed", "exec_id", row.ID, "err", err)
	}
	x.log.Warn("ended an exec whose server is gone", "exec_id", row.ID, "workspace_id", row.WorkspaceID,
		"token_name", row.TokenName, "container", row.Container, "instance", row.Instance)
	return true, nil
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
