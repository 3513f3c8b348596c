package service

import (
	"context"
	"encoding/hex"
	"io"
	"os"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/cast"
	"github.com/cairn-dev/cairn/ptyshell/holder"
)

// heldTimeout bounds one call to a holder that collects or ends a shell,
// its recording's upload included.
const heldTimeout = 2 * time.Minute

// settleNow collects the shell's end if it has ended, on its own bounded
// context: a connection's end, a refused attach.
func (s *Shells) settleNow(row *ShellRow) {
	ctx, cancel := context.WithTimeout(context.Background(), heldTimeout)
	defer cancel()
	s.settle(ctx, row, true)
}

// settle asks the holder how the shell is and, once it has ended, records
// its end. A holder that cannot be reached is left to the next pass when
// running says its container runs; otherwise the shell is gone and its
// end is recorded as such.
func (s *Shells) settle(ctx context.Context, row *ShellRow, running bool) {
	c := s.holderOf(row)
	if !running {
		s.closeGone(ctx, row, ptyshell.ReasonTerminated)
		return
	}
	st, err := c.State(ctx)
	switch {
	case cairn.ErrorReason(err) == cairn.ReasonShellNotFound:
		s.closeGone(ctx, row, ptyshell.ReasonTerminated)
	case err != nil:
		s.log.Warn("shell holder unreachable; its end is collected later", append(s.rowAttrs(row), "err", err)...)
	case st.End != nil:
		s.collect(ctx, row, c, st.End)
	}
}

// collect records an ended shell's end, once across every replica (the
// row's move to ending is the claim): its recording stored as an artifact,
// the holder released and its container removed, then the SHELL_CLOSED row
// (so a reader of the audit log finds everything of the shell done) and
// the registry row dropped.
func (s *Shells) collect(ctx context.Context, row *ShellRow, c *holder.Client, end *holder.EndResult) {
	ok, err := s.svc.store.SetShellState(ctx, row.ID, []ShellState{ShellRunning}, ShellEnding)
	if err != nil || !ok {
		return // another replica records it, or the database will let the next pass
	}
	s.recordHeldEnd(ctx, row, c, end, "")
}

// recordHeldEnd is collect's work once the end is claimed.
func (s *Shells) recordHeldEnd(ctx context.Context, row *ShellRow, c *holder.Client, end *holder.EndResult, killedBy string) {
	if end.Recording != nil {
		s.storeHeldRecording(ctx, row, c, end)
	}
	if err := c.Release(ctx); err != nil {
		s.log.Debug("shell holder not released; its container is removed anyway", append(s.rowAttrs(row), "err", err)...)
	}
	s.removeContainer(ctx, row)
	s.auditHeldEnd(ctx, row, sessionEnd{reason: end.Reason, exitCode: end.ExitCode, bytesIn: end.BytesIn,
		bytesOut: end.BytesOut}, end.EndedAt.Sub(end.StartedAt), killedBy)
	s.dropRow(ctx, row)
}

// closeGone records the end of a shell whose container went without a
// collected end (removed, crashed: terminated; its node lost: node_lost).
func (s *Shells) closeGone(ctx context.Context, row *ShellRow, reason ptyshell.Reason) {
	ok, err := s.svc.store.SetShellState(ctx, row.ID, []ShellState{ShellRunning}, ShellEnding)
	if err != nil || !ok {
		return
	}
	s.removeContainer(ctx, row)
	s.auditHeldEnd(ctx, row, sessionEnd{reason: reason, exitCode: -1}, s.svc.now().Sub(row.CreatedAt), "")
	s.dropRow(ctx, row)
}

func (s *Shells) auditHeldEnd(ctx context.Context, row *ShellRow, end sessionEnd, took time.Duration, killedBy string) {
	meta := map[string]any{"workspace_id": row.WorkspaceID, "shell_id": row.ID, "container": row.Container,
		"reason": string(end.reason), "exit_code": end.exitCode, "duration_s": took.Seconds(),
		"bytes_in": end.bytesIn, "bytes_out": end.bytesOut}
	if killedBy != "" {
		meta["killed_by"] = killedBy
	}
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	if err := s.svc.audit(actx, s.svc.store, cairn.AuditShellClosed, meta); err != nil {
		s.log.Error("shell audit failed", "shell_id", row.ID, "err", err)
	}
	s.cfg.OnEnd(string(end.reason), end.bytesIn, end.bytesOut)
	s.log.Info("shell ended", append(s.rowAttrs(row), "reason", string(end.reason), "exit_code", end.exitCode,
		"duration", took, "bytes_in", end.bytesIn, "bytes_out", end.bytesOut)...)
}

// storeHeldRecording uploads the holder's recording as the artifact
// shell-<id>_cast, its digest checked against the holder's. It never fails
// the end: a recording that cannot be stored is logged.
func (s *Shells) storeHeldRecording(ctx context.Context, row *ShellRow, c *holder.Client, end *holder.EndResult) {
	info := end.Recording
	sum, err := hex.DecodeString(info.SHA256)
	if err != nil {
		s.log.Warn("shell recording not stored: its digest is malformed", s.rowAttrs(row)...)
		return
	}
	f, err := s.spoolRecording(ctx, row, c, info.Size)
	if err != nil {
		s.log.Warn("shell recording not stored", append(s.rowAttrs(row), "err", err)...)
		return
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }() // stored or given up: the file goes
	if row.TokenName != "" {
		ctx = cairn.WithActor(ctx, row.TokenName)
	}
	desc := recordingDescription(end.StartedAt, end.EndedAt, end.Reason, info.Size, info.Truncated)
	a, err := s.svc.storeHeld(ctx, row.WorkspaceID, recordingName(row.ID), &desc,
		held{body: f, size: info.Size, sha256: sum, mimeType: cast.MIME})
	if err != nil {
		s.log.Warn("shell recording not stored", append(s.rowAttrs(row), "reason", string(cairn.ErrorReason(err)), "err", err)...)
		return
	}
	s.log.Info("shell recording stored", append(s.rowAttrs(row), "artifact_id", a.ID, "size", info.Size)...)
}

// spoolRecording copies the holder's recording into a file of
// shell.record.dir (the store's upload needs a body it can rewind), held
// as a recording being written so a sweep leaves it alone.
func (s *Shells) spoolRecording(ctx context.Context, row *ShellRow, c *holder.Client, size int64) (*os.File, error) {
	body, err := c.Recording(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	f, err := createRecordingFile(s.cfg.Record.Dir, row.ID)
	if err != nil {
		return nil, err
	}
	if _, err = io.Copy(f, io.LimitReader(body, size)); err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// removeHeld removes the shell's container, then its row.
func (s *Shells) removeHeld(ctx context.Context, row *ShellRow) {
	s.removeContainer(ctx, row)
	s.dropRow(ctx, row)
}

func (s *Shells) removeContainer(ctx context.Context, row *ShellRow) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StopTimeout+10*time.Second)
	defer cancel()
	s.links.Forget(row.Container)
	if err := s.rt.RemoveContainer(rctx, row.Container); err != nil {
		s.log.Error("remove shell container", append(s.rowAttrs(row), "err", err)...)
	}
}

func (s *Shells) dropRow(ctx context.Context, row *ShellRow) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	if err := s.svc.store.DeleteShell(dctx, row.ID); err != nil {
		s.log.Error("drop shell registry row", append(s.rowAttrs(row), "err", err)...)
	}
}

// killHeld ends the v2 shell of row: the holder ends it (reason
// terminated) and its end is recorded naming who killed it. A holder that
// cannot be reached has its container removed.
func (s *Shells) killHeld(ctx context.Context, row *ShellRow, by string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heldTimeout)
	defer cancel()
	// The kill claims the end before it asks for it: the end cuts the
	// shell's connections, and their servers look for an end to collect;
	// the one recorded must be the kill's, naming who killed, and be on
	// record when the kill answers.
	ok, err := s.svc.store.SetShellState(ctx, row.ID, []ShellState{ShellRunning}, ShellEnding)
	if err != nil {
		return err
	}
	if !ok {
		return cairn.ErrShellNotFound(row.ID) // it ended meanwhile, recorded by whoever saw it
	}
	c := s.holderOf(row)
	st, err := c.End(ctx)
	if err == nil && st.End != nil {
		s.recordHeldEnd(ctx, row, c, st.End, by)
		return nil
	}
	s.log.Warn("shell holder did not end the shell; removing its container", append(s.rowAttrs(row), "err", err)...)
	s.removeContainer(ctx, row)
	s.auditHeldEnd(ctx, row, sessionEnd{reason: ptyshell.ReasonTerminated, exitCode: -1}, s.svc.now().Sub(row.CreatedAt), by)
	s.dropRow(ctx, row)
	return nil
}

// settlePass is the registry's part of a reaper pass: every row is matched
// with its container. A running shell is asked whether it ended (and its
// end collected); one whose container is gone or stopped is recorded as
// ended (node_lost when its node was lost); a row still opening past the
// open timeout is a create that died;
// a row left ending by a replica that died while collecting goes once its
// container has.
//
// It returns the IDs of the rows it found, whose containers the reaper
// leaves to this pass.
func (s *Shells) settlePass(ctx context.Context, rows []*ShellRow, containers map[string]ShellContainer) map[string]bool {
	held := make(map[string]bool, len(rows))
	for _, row := range rows {
		held[row.ID] = true
		c, exists := containers[row.ID]
		running := exists && c.State == "running"
		switch {
		case row.State == ShellRunning && exists && c.State == ShellNodeLost:
			s.closeGone(ctx, row, ptyshell.ReasonNodeLost)
		case row.State == ShellRunning:
			s.settle(ctx, row, running)
		case row.State == ShellOpening:
			if s.svc.now().Sub(row.CreatedAt) > s.cfg.OpenTimeout+time.Minute {
				s.removeHeld(ctx, row)
			}
		case row.State == ShellEnding:
			if !running {
				s.removeHeld(ctx, row)
			}
		}
	}
	return held
}
