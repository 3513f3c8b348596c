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

// endLost ends the execs whose server is gone: those of an instance that
// stopped renewing its liveness (killed, its node lost, replaced under
// another name), those of this instance's predecessor (restarted under the
// same name), and this process's own whose registry entry went without
// its row (a delete that failed). Each one's container is removed, and the
// replica whose delete takes its row records the end — terminated, exit
// code -1, nobody saw the command's status — if its start was recorded.
func (x *Execs) endLost(ctx context.Context) (int, error) {
	lost, err := x.svc.store.LostExecRows(ctx, x.config.instanceTTL())
	if err != nil {
		return 0, err
	}
	own, err := x.svc.store.FindExecRows(ctx, x.config.Instance)
	if err != nil {
		return 0, err
	}
	for _, row := range own {
		// A row goes before its entry on every path but a failed open, which
		// ends within the open timeout: an older row without an entry is
		// left over.
		leftover := !x.Known(row.ID) && x.svc.now().Sub(row.CreatedAt) > x.config.OpenTimeout
		if row.Process != x.process || leftover {
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
// claimer writes EXEC_ENDED, and only for an exec whose start is on record.
func (x *Execs) endLostOne(ctx context.Context, row *ExecRow) (bool, error) {
	if err := x.removeContainer(ctx, row.Container); err != nil {
		return false, err
	}
	claimed, err := x.svc.store.DeleteExec(ctx, row.ID)
	if err != nil || !claimed {
		return false, err
	}
	if row.Started {
		meta := map[string]any{"workspace_id": row.WorkspaceID, "exec_id": row.ID, "container": row.Container,
			"reason": string(ptyshell.ReasonTerminated), "exit_code": -1, "argv0": row.Argv0,
			"duration_s": x.svc.now().Sub(row.CreatedAt).Seconds(), "server_lost": row.Instance}
		actx, cancel := context.WithTimeout(ctx, auditTimeout)
		defer cancel()
		if err := x.svc.audit(actx, x.svc.store, cairn.AuditExecEnded, meta); err != nil {
			x.log.Error("exec audit failed", "exec_id", row.ID, "err", err)
		}
	}
	x.log.Warn("ended an exec whose server is gone", "exec_id", row.ID, "workspace_id", row.WorkspaceID,
		"token_name", row.TokenName, "container", row.Container, "instance", row.Instance)
	return true, nil
}

// renewEvery keeps this instance live in the registry: at once, then every
// reap interval, on a loop of its own so a slow reaper pass never lets it
// lapse, until ctx is done.
func (x *Execs) renewEvery(ctx context.Context) {
	t := time.NewTicker(x.config.ReapInterval)
	defer t.Stop()
	for {
		if err := x.svc.store.RenewInstance(ctx, x.config.Instance, x.config.instanceTTL()); err != nil && ctx.Err() == nil {
			x.log.Error("exec liveness renewal failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
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

// RunReaper renews this instance's liveness and reaps, at once, then
// every reap interval, until ctx is done; failures are logged and the loop
// goes on. The renewal goes on until Shutdown has ended the execs, so none
// of them looks lost while it drains. It returns nil.
func (x *Execs) RunReaper(ctx context.Context) error {
	go x.renewEvery(x.renewing)
	return x.reapEvery(ctx, x.Reap)
}

// Shutdown ends every exec of this process (containerSessions.Shutdown),
// then stops renewing its liveness.
func (x *Execs) Shutdown(ctx context.Context) {
	x.containerSessions.Shutdown(ctx)
	x.stopRenewing()
}
