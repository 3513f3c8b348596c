package service

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
)

// FindShells lists the app's shells: the registry's v2 shells, whichever
// replica opened them, and the shell containers that have no row (v1
// shells, leftovers), with each container's state.
func (s *Shells) FindShells(ctx context.Context, workspaceID string) (*cairn.ShellList, error) {
	list, err := s.rt.ListShells(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.svc.store.FindShellRows(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]*cairn.Shell, 0, len(list))
	listed := map[string]bool{}
	states := map[string]string{}
	for _, c := range list {
		states[c.ShellID] = c.State
	}
	var held []*ShellRow
	for _, row := range rows {
		listed[row.ID] = true
		if row.State == ShellRunning {
			held = append(held, row)
		}
	}
	for i, live := range s.liveStates(ctx, held) {
		row := held[i]
		sh := &cairn.Shell{ID: row.ID, WorkspaceID: row.WorkspaceID, Container: row.Container,
			Instance: row.Instance, State: cmp.Or(states[row.ID], "missing"), StartedAt: cairn.Timestamp(row.CreatedAt),
			ExpiresAt: cairn.Timestamp(row.ExpiresAt), TokenName: row.TokenName, ClientAddr: row.ClientAddr}
		if live != nil && live.Running {
			sh.Local, sh.Detached, sh.Watchers = true, &live.Detached, live.Watchers
			if !live.LastInputAt.IsZero() {
				at := cairn.Timestamp(live.LastInputAt)
				sh.LastInputAt = &at
			}
		}
		out = append(out, sh)
	}
	s.mu.Lock()
	for _, c := range list {
		if listed[c.ShellID] || workspaceID != "" && c.WorkspaceID != workspaceID {
			continue
		}
		out = append(out, s.containerShell(c))
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *cairn.Shell) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	return &cairn.ShellList{Enabled: s.cfg.Enabled, Shells: out}, nil
}

// liveLookups bounds the holders asked at once by one listing, and
// liveTimeout each question: a holder that does not answer leaves its
// shell listed without its live details.
const (
	liveLookups = 8
	liveTimeout = 3 * time.Second
)

// liveStates asks each row's holder for its live state, in parallel; an
// entry is nil where the holder did not answer.
func (s *Shells) liveStates(ctx context.Context, rows []*ShellRow) []*holder.State {
	out := make([]*holder.State, len(rows))
	sem := make(chan struct{}, liveLookups)
	var wg sync.WaitGroup
	for i, row := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lctx, cancel := context.WithTimeout(ctx, liveTimeout)
			defer cancel()
			if st, err := s.holderOf(row).State(lctx); err == nil {
				out[i] = st
			}
		}()
	}
	wg.Wait()
	return out
}

// containerShell describes a shell container without a registry row, with
// what this process knows of it when it is its own v1 shell; s.mu is held.
func (s *Shells) containerShell(c ShellContainer) *cairn.Shell {
	sh := &cairn.Shell{
		ID: c.ShellID, WorkspaceID: c.WorkspaceID, Container: c.Name, Instance: c.Instance,
		State: c.State, StartedAt: cairn.Timestamp(c.Created), TokenName: c.TokenName,
	}
	if !c.Expires.IsZero() {
		sh.ExpiresAt = cairn.Timestamp(c.Expires)
	}
	if e, ok := s.entries[c.ShellID]; ok && c.Instance == s.cfg.Instance {
		sh.Local, sh.ClientAddr = true, e.clientAddr
		if !e.lastInput.IsZero() {
			at := cairn.Timestamp(e.lastInput)
			sh.LastInputAt = &at
		}
	}
	return sh
}

// KillShell ends the shell id. A v2 shell is ended by its holder, from any
// replica, and KillShell returns once its end is recorded. A v1 session of
// this process ends with reason "terminated" and KillShell returns once
// its end is recorded (or after the stop timeout plus a margin). Any other
// container of the app with that cairn.shell label (another replica's v1
// shell, a leftover) is force-removed. Reasons: shell_not_found,
// docker_unavailable.
func (s *Shells) KillShell(ctx context.Context, id string) error {
	by := actorName(ctx)
	s.mu.Lock()
	e, local := s.entries[id]
	if local {
		e.killedBy = by
	}
	s.mu.Unlock()
	if local {
		e.cancel(ptyshell.ErrTerminated)
		s.await(ctx, e)
		return nil
	}
	row, err := s.svc.store.FindShell(ctx, id)
	switch {
	case err == nil && row.State == ShellRunning:
		return s.killHeld(ctx, row, by)
	case err == nil:
		return cairn.ErrShellNotFound(id) // opening (nobody has it yet) or ending already
	case cairn.ErrorReason(err) != cairn.ReasonShellNotFound:
		return err
	}
	return s.removeLeftover(ctx, id, by)
}

// removeLeftover force-removes the shell container id that has no row:
// another replica's v1 shell, whose server sees it vanish and ends the
// session, or a leftover.
func (s *Shells) removeLeftover(ctx context.Context, id, by string) error {
	list, err := s.rt.ListShells(ctx)
	if err != nil {
		return err
	}
	for _, c := range list {
		if c.ShellID != id {
			continue
		}
		if err := s.rt.RemoveContainer(ctx, c.ContainerID); err != nil {
			return err
		}
		// The owner's own row, if it is alive, cannot name who killed it.
		meta := map[string]any{"workspace_id": c.WorkspaceID, "shell_id": id, "container": c.Name,
			"reason": string(ptyshell.ReasonTerminated), "instance": c.Instance, "local": false}
		if by != "" {
			meta["killed_by"] = by
		}
		if err := s.svc.audit(ctx, s.svc.store, cairn.AuditShellClosed, meta); err != nil {
			s.log.Error("shell audit failed", "shell_id", id, "err", err)
		}
		s.log.Info("shell container removed", "shell_id", id, "workspace_id", c.WorkspaceID,
			"instance", c.Instance, "token_name", by)
		return nil
	}
	return cairn.ErrShellNotFound(id)
}

// await waits for e's end to be recorded, bounded by the stop timeout plus
// the drain and a margin, and by ctx.
func (s *Shells) await(ctx context.Context, e *shellEntry) {
	t := time.NewTimer(s.cfg.StopTimeout + 15*time.Second)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Reap is one pass of the server-side reaper: the registry's shells are
// settled (settlePass), then the app's shell containers that carry this
// server's instance but are neither in the registry nor this process's v1
// shells — a predecessor's leftovers, or a teardown that failed — are
// removed and counted.
//
// A shell's row is written before its container exists and moves to
// running only once the container runs, so the rows are read before the
// containers are listed: a running row whose container the later listing
// lacks has lost it. A container whose row came after that read is a
// create under way; its row is looked up again before it is taken.
func (s *Shells) Reap(ctx context.Context) (int, error) {
	rows, err := s.svc.store.FindShellRows(ctx, "")
	if err != nil {
		return 0, err
	}
	list, err := s.rt.ListShells(ctx)
	if err != nil {
		return 0, err
	}
	byID := make(map[string]ShellContainer, len(list))
	for _, c := range list {
		byID[c.ShellID] = c
	}
	held := s.settlePass(ctx, rows, byID)
	n, err := s.reap(ctx, func(context.Context, ShellContainer) bool { return false },
		func(id string) bool { return held[id] || s.hasRow(ctx, id) })
	s.cfg.OnReap("server", n)
	return n, err
}

// hasRow reports whether shell id has a registry row; a lookup that fails
// counts as one, so a database hiccup removes no container.
func (s *Shells) hasRow(ctx context.Context, id string) bool {
	_, err := s.svc.store.FindShell(ctx, id)
	return cairn.ErrorReason(err) != cairn.ReasonShellNotFound
}

// RunReaper reaps at once, then every reap interval, until ctx is done;
// failures are logged and the loop goes on. Each pass also removes the
// recordings a crashed server left behind. It returns nil.
func (s *Shells) RunReaper(ctx context.Context) error {
	return s.reapEvery(ctx, func(ctx context.Context) (int, error) {
		n, err := s.Reap(ctx)
		SweepRecordings(s.cfg.Record.Dir, s.log)
		return n, err
	})
}

// nameShells adds the workspace's open shells to a volume_in_use refusal of
// its teardown: Docker refuses while a shell mounts the
// volume, and the operator needs to know which to end.
func (s *Service) nameShells(ctx context.Context, ws *cairn.Workspace, err error) error {
	if cairn.ErrorReason(err) != cairn.ReasonVolumeInUse || s.openShells == nil {
		return err
	}
	ids := s.openShells(ctx, ws.ID)
	if len(ids) == 0 {
		return err
	}
	return &cairn.Error{Reason: cairn.ReasonVolumeInUse, Err: err, Detail: fmt.Sprintf(
		"workspace %s has open shells (%s); end them with DELETE /v1/shells/{id}, then tear the volume down",
		ws.Name, strings.Join(ids, ", "))}
}

// shellsOf lists the IDs of the workspace's shells, so another replica's
// are named too; nil if they cannot be listed.
func (s *Shells) shellsOf(ctx context.Context, workspaceID string) []string {
	list, err := s.FindShells(ctx, workspaceID)
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(list.Shells))
	for _, sh := range list.Shells {
		ids = append(ids, sh.ID)
	}
	return ids
}
