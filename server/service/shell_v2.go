package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
)

// CreateShell creates and starts a v2 shell: one that outlives its
// connections and every server. Its container runs the holder, which keeps
// the shell, its screen, its recording and its clocks; the registry row
// (written before the container exists) lets any replica reach it. It
// writes SHELL_OPENED and returns the shell's ID and its resume secret:
// only the secret's hash is kept. Reasons: shell_disabled,
// server_shutting_down, invalid_terminal, workspace_not_found,
// too_many_shells, volume_not_ready, volume_missing, workspace_busy,
// docker_unavailable, shell_image_missing, internal.
func (s *Shells) CreateShell(ctx context.Context, o cairn.ShellOpen) (*cairn.ShellSessionInfo, error) {
	openedAt := time.Now()
	info, err := s.createHeld(ctx, o)
	if err != nil {
		s.cfg.OnOpen(string(cairn.ErrorReason(err)), 0)
		return nil, err
	}
	s.cfg.OnOpen("ok", time.Since(openedAt))
	return info, nil
}

func (s *Shells) createHeld(ctx context.Context, o cairn.ShellOpen) (*cairn.ShellSessionInfo, error) {
	if err := s.Admit(); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ws, err := s.svc.store.FindWorkspace(ctx, o.WorkspaceID)
	if err != nil {
		return nil, err
	}
	secret, key, err := newShellSecret()
	if err != nil {
		return nil, cairn.Internal("the shell's secret could not be made", err)
	}
	now := s.svc.now()
	id := ulid.Make().String()
	row := &ShellRow{ID: id, WorkspaceID: ws.ID, Container: s.svc.appName + ".shell." + ws.ID + "." + id,
		Key: key[:], TokenName: actorName(ctx), ClientAddr: o.ClientAddr, Instance: s.cfg.Instance,
		Record: s.cfg.Record.Enabled || o.Record, State: ShellOpening, CreatedAt: now,
		ExpiresAt: now.Add(s.cfg.MaxLifetime)}
	if err := s.admitRow(ctx, row); err != nil {
		return nil, err
	}
	if err := s.startHolder(ctx, row, o); err != nil {
		s.dropRow(ctx, row)
		return nil, err
	}
	if err := s.auditHeldOpen(ctx, row, ws, o); err != nil {
		s.removeHeld(ctx, row)
		return nil, err
	}
	s.log.Info("shell opened", s.rowAttrs(row)...)
	return &cairn.ShellSessionInfo{ShellID: id, Secret: secret, WorkspaceID: ws.ID, Container: row.Container,
		Instance: s.cfg.Instance, DetachedTimeoutSecs: int(s.detached() / time.Second)}, nil
}

// admitRow writes the row in state opening if this server's caps allow
// another shell. This process is its instance's only server, so its lock
// makes the count and the insert one step.
func (s *Shells) admitRow(ctx context.Context, row *ShellRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return s.shuttingDown()
	}
	total, inWS, err := s.svc.store.CountShells(ctx, row.Instance, row.WorkspaceID)
	if err != nil {
		return err
	}
	total += len(s.entries) // v1 shells live in this process only
	inWS += s.perWS[row.WorkspaceID]
	switch {
	case total >= s.cfg.MaxSessions:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"this server already runs %d shells, its limit (shell.limits.maxSessions); close one first", total)
	case inWS >= s.cfg.MaxSessionsPerWorkspace:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"workspace %s already has %d shells on this server, its limit (shell.limits.maxSessionsPerWorkspace); close one first",
			row.WorkspaceID, inWS)
	}
	return s.svc.store.InsertShell(ctx, row)
}

// startHolder starts the shell's container under the workspace's shared
// lock (as every session container) and marks the row running.
func (s *Shells) startHolder(ctx context.Context, row *ShellRow, o cairn.ShellOpen) error {
	_, _, err := onReadyVolume(ctx, &s.containerSessions, row.WorkspaceID, func(ctx context.Context, ws *cairn.Workspace) (string, error) {
		spec := ShellSpec{Name: row.Container, ShellID: row.ID, WorkspaceID: ws.ID, WorkspaceName: ws.Name,
			VolumeName: ws.VolumeName, TokenName: row.TokenName, Term: o.Term, Cols: o.Cols, Rows: o.Rows,
			Expires: row.ExpiresAt}
		return s.rt.StartHolder(ctx, spec, s.holderConfig(row, ws, o), row.Key)
	})
	if err != nil {
		return err
	}
	if err := s.holderAnswers(ctx, row); err != nil {
		s.removeContainer(ctx, row)
		return err
	}
	ok, err := s.svc.store.SetShellState(ctx, row.ID, []ShellState{ShellOpening}, ShellRunning)
	if err == nil && !ok {
		err = cairn.Internal("the shell's registry row went while it started", nil)
	}
	if err != nil {
		s.removeContainer(ctx, row)
	}
	row.State = ShellRunning
	return err
}

// holderAnswers asks the new holder for its state, within the open
// timeout: a create answers only once its shell can be attached, and a
// holder that cannot start (a sidecar image without it) fails the create
// rather than the first attach.
func (s *Shells) holderAnswers(ctx context.Context, row *ShellRow) error {
	hctx, cancel := context.WithTimeout(ctx, s.cfg.OpenTimeout)
	defer cancel()
	st, err := s.holderOf(row).State(hctx)
	switch {
	case cairn.ErrorReason(err) == cairn.ReasonDockerUnavailable:
		return err
	case err != nil:
		return cairn.Internal("the shell's holder did not start; check that the sidecar image carries this version's holder (make images)", err)
	case !st.Running:
		return cairn.Internal("the shell ended as it started: "+string(st.End.Reason), nil)
	}
	return nil
}

// holderConfig is what the holder keeps the shell by: the session's
// settings, as a v1 shell's Serve has them.
func (s *Shells) holderConfig(row *ShellRow, ws *cairn.Workspace, o cairn.ShellOpen) holder.Config {
	c := s.cfg
	return holder.Config{
		ShellID: row.ID, WorkspaceID: ws.ID, WorkspaceName: ws.Name, Container: row.Container,
		Cols: o.Cols, Rows: o.Rows, Term: o.Term, Scrollback: c.Scrollback,
		Detached: s.detached(), Idle: c.IdleTimeout, IdleWarning: c.IdleWarning, MaxLifetime: c.MaxLifetime,
		Ping: c.PingInterval, PongWait: c.PongWait, WriteWait: c.WriteWait,
		Stop: c.StopTimeout, Drain: c.DrainTimeout,
		Record: row.Record, RecordMaxBytes: c.Record.MaxBytes,
	}
}

func (s *Shells) detached() time.Duration {
	return cmpDuration(s.cfg.Detached, ptyshell.DefaultDetached)
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (s *Shells) auditHeldOpen(ctx context.Context, row *ShellRow, ws *cairn.Workspace, o cairn.ShellOpen) error {
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	err := s.svc.audit(actx, s.svc.store, cairn.AuditShellOpened, map[string]any{
		"workspace_id": ws.ID, "workspace_name": ws.Name, "shell_id": row.ID, "container": row.Container,
		"token_name": row.TokenName, "client_addr": row.ClientAddr, "cols": o.Cols, "rows": o.Rows, "term": o.Term,
	})
	if err != nil {
		s.log.Error("shell audit failed; ending the shell", "shell_id", row.ID, "err", err)
	}
	return err
}

// newShellSecret returns a resume secret and its hash, the shell's key.
func newShellSecret() (string, [sha256.Size]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", [sha256.Size]byte{}, err
	}
	secret := base64.RawURLEncoding.EncodeToString(b)
	return secret, sha256.Sum256([]byte(secret)), nil
}

// ShellAttachment is one connection to a v2 shell's holder, as writer or
// watcher, whose client is not yet upgraded: Run bridges them, Abort
// closes it.
type ShellAttachment struct {
	s     *Shells
	row   *ShellRow
	role  string
	shell *websocket.Conn
}

// AttachShell connects a new writer to the v2 shell id through its holder,
// from whichever replica the client reached, after the checks that come
// before the upgrade: the shell is in the registry, a v2 shell, and secret
// is its own. The writer takes the shell over: a writer already attached
// gets EXIT taken_over. size, when valid, is applied before the screen's
// render. Reasons: shell_disabled, server_shutting_down,
// shell_secret_required, shell_not_found, shell_not_attachable,
// shell_secret_invalid, docker_unavailable.
func (s *Shells) AttachShell(ctx context.Context, id, secret string, size ptyshell.Size, clientAddr string) (*ShellAttachment, error) {
	row, err := s.heldWithSecret(ctx, id, secret, "attaching")
	if err != nil {
		return nil, err
	}
	return s.lend(ctx, row, ptyshell.RoleWriter, size, clientAddr)
}

// heldWithSecret finds the running v2 shell id whose secret is secret:
// what may type into it may also attach or signal it.
func (s *Shells) heldWithSecret(ctx context.Context, id, secret, doing string) (*ShellRow, error) {
	if secret == "" {
		return nil, cairn.Errorf(cairn.ReasonShellSecretRequired,
			"%s needs the shell's secret in the %s header", doing, cairn.ShellSecretHeader)
	}
	row, err := s.lookupHeld(ctx, id)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(sum[:], row.Key) != 1 {
		return nil, cairn.Errorf(cairn.ReasonShellSecretInvalid, "that is not the secret of shell %s", id)
	}
	return row, nil
}

// SignalShell sends a signal by name (ptyshell.SignalNames) to the v2
// shell id's foreground job — the command at its prompt, or the shell
// when none runs — from any replica, as the terminal's own keys would.
// Reasons: invalid_parameters, those of AttachShell, docker_unavailable.
func (s *Shells) SignalShell(ctx context.Context, id, secret, name string) error {
	if _, ok := ptyshell.SignalOf(name); !ok {
		return cairn.Errorf(cairn.ReasonInvalidParameters, "signal must be one of %s", strings.Join(ptyshell.SignalNames, ", "))
	}
	row, err := s.heldWithSecret(ctx, id, secret, "signalling")
	if err != nil {
		return err
	}
	err = s.holderOf(row).Signal(ctx, name)
	if se, ok := errors.AsType[*holder.StatusError](err); ok && se.Code == http.StatusConflict {
		s.settleNow(row) // it ended unseen
		return cairn.ErrShellNotFound(row.ID)
	}
	if err != nil && cairn.ErrorReason(err) == cairn.ReasonInternal {
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: "the shell's container could not be reached through the container runtime; try again"}
	}
	return err
}

// WatchShell connects a read-only watcher to the v2 shell id, and writes a
// SHELL_WATCHED row naming who watches. No secret: the token's scope
// decides. Reasons: those of AttachShell but the secret's.
func (s *Shells) WatchShell(ctx context.Context, id, clientAddr string) (*ShellAttachment, error) {
	row, err := s.lookupHeld(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.lend(ctx, row, ptyshell.RoleWatcher, ptyshell.Size{}, clientAddr)
}

// lend audits the connection (a lend that cannot be audited is refused:
// who saw or typed into a shell is what the audit log is for), then opens
// it on the holder.
func (s *Shells) lend(ctx context.Context, row *ShellRow, role string, size ptyshell.Size, clientAddr string) (*ShellAttachment, error) {
	typ := cairn.AuditShellAttached
	if role == ptyshell.RoleWatcher {
		typ = cairn.AuditShellWatched
	}
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	who := actorName(ctx)
	if err := s.svc.audit(actx, s.svc.store, typ, map[string]any{"workspace_id": row.WorkspaceID, "shell_id": row.ID,
		"container": row.Container, "token_name": who, "client_addr": clientAddr}); err != nil {
		return nil, err
	}
	s.lent.Add(1)
	conn, err := s.holderOf(row).Attach(ctx, role, size)
	if err != nil {
		defer s.lent.Done()
		s.settleNow(row) // it may have ended unseen
		if errors.Is(err, holder.ErrEnded) || cairn.ErrorReason(err) == cairn.ReasonShellNotFound {
			return nil, cairn.ErrShellNotFound(row.ID)
		}
		if cairn.ErrorReason(err) == "" {
			// The engine did not carry the stream in time (an exec that
			// failed, a handshake that timed out): an outage of the
			// runtime, not a bug.
			s.log.Warn("shell holder unreachable", append(s.rowAttrs(row), "err", err)...)
			err = &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
				Detail: "the shell's container could not be reached through the container runtime; try again"}
		}
		return nil, err
	}
	s.log.Info("shell "+map[string]string{ptyshell.RoleWriter: "attached", ptyshell.RoleWatcher: "watched"}[role],
		append(s.rowAttrs(row), "by", who, "addr", clientAddr)...)
	return &ShellAttachment{s: s, row: row, role: role, shell: conn}, nil
}

// lookupHeld finds the running v2 shell id in the registry. A v1 shell of
// this process is shell_not_attachable.
func (s *Shells) lookupHeld(ctx context.Context, id string) (*ShellRow, error) {
	if err := s.Admit(); err != nil {
		return nil, err
	}
	if s.Known(id) {
		return nil, cairn.Errorf(cairn.ReasonShellNotAttachable,
			"shell %s is a v1 shell, which ends with its connection; it cannot be attached", id)
	}
	row, err := s.svc.store.FindShell(ctx, id)
	if cairn.ErrorReason(err) == cairn.ReasonShellNotFound {
		return nil, s.endedWhy(ctx, id, err)
	}
	if err != nil {
		return nil, err
	}
	if row.State != ShellRunning {
		return nil, cairn.ErrShellNotFound(id) // starting (nobody has its secret yet) or ending
	}
	return row, nil
}

// endedWhy is the shell_not_found of a shell not in the registry, saying
// how it ended when its SHELL_CLOSED row says so: a client reattaching
// after its connection broke learns why (node_lost, max_lifetime, …)
// rather than only that the shell is gone.
func (s *Shells) endedWhy(ctx context.Context, id string, notFound error) error {
	end, err := s.svc.store.FindShellEnd(ctx, id)
	if err != nil || end == nil {
		return notFound
	}
	why := ""
	if end.Reason == ptyshell.ReasonNodeLost {
		why = ": the node it ran on was lost"
	}
	return cairn.Errorf(cairn.ReasonShellNotFound, "shell %s has ended (%s, exit code %d)%s", id, end.Reason, end.ExitCode, why)
}

// holderOf is the client of the row's holder, reached over this server's
// relay to its container.
func (s *Shells) holderOf(row *ShellRow) *holder.Client {
	return holder.NewClient(s.links.For(row.Container), row.Key)
}

// Run bridges the upgraded client to the holder until either ends; the
// shell goes on unless it ended, in which case its end is collected.
// Shutdown cuts the bridge: the client reattaches through another replica.
func (a *ShellAttachment) Run(serve func(ctx context.Context, shell *websocket.Conn, opts holder.BridgeOptions) holder.BridgeResult) {
	res := serve(a.s.bridges, a.shell, holder.BridgeOptions{WriteWait: cmpDuration(a.s.cfg.WriteWait, ptyshell.DefaultWriteWait)})
	a.s.log.Info("shell connection ended", append(a.s.rowAttrs(a.row), "role", a.role, "close_code", res.Code)...)
	a.s.settleNow(a.row)
	a.s.lent.Done()
}

// Abort closes the holder's connection when the client's upgrade failed.
func (a *ShellAttachment) Abort() {
	_ = a.shell.Close() // nothing was sent on it
	a.s.lent.Done()
}

// rowAttrs identify a v2 shell in log lines.
func (s *Shells) rowAttrs(row *ShellRow) []any {
	return []any{"shell_id", row.ID, "workspace_id", row.WorkspaceID, "token_name", row.TokenName,
		"client_addr", row.ClientAddr}
}
