package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// CreateShell creates and starts a v2 shell: one that
// outlives its connections. It runs the checks of OpenShell, starts the
// container at once — its output feeds the screen from the first byte —
// writes SHELL_OPENED, and returns the shell's ID and its resume secret.
// The shell runs detached until a writer attaches, and ends
// detached_timeout after its writer left (or it was created). Only a hash
// of the secret is kept; the secret is in the answer and nowhere else.
// Reasons: those of OpenShell, internal.
func (s *Shells) CreateShell(ctx context.Context, o cairn.ShellOpen) (*cairn.ShellSessionInfo, error) {
	openedAt := time.Now()
	ss, err := s.open(ctx, o, openedAt)
	if err != nil {
		s.cfg.OnOpen(string(cairn.ErrorReason(err)), 0)
		return nil, err
	}
	s.mu.Lock()
	ss.e.sess = ss
	s.mu.Unlock()
	secret, sum, err := newShellSecret()
	if err != nil {
		ss.Abort()
		return nil, cairn.Internal("the shell's secret could not be made", err)
	}
	ss.startRecording(openedAt)
	hub := ptyshell.NewHub(ss.stream, ss.hubOptions())
	if err := hub.Start(ctx); err != nil {
		ss.rec.discard(ss.s.log)
		ss.finish(ptyshell.ServeResult{Reason: ptyshell.ReasonError, ExitCode: ptyshell.ExitCodeRuntime, Err: err})
		if cairn.ErrorReason(err) == "" {
			err = cairn.Internal("the shell could not be started", err)
		}
		return nil, err
	}
	go ss.runHub(hub)
	if err := ss.running(ctx); err != nil {
		ss.e.cancel(errors.New("audit unavailable"))
		<-ss.e.done
		return nil, err
	}
	s.mu.Lock()
	ss.hub, ss.secret = hub, sum
	s.mu.Unlock()
	return &cairn.ShellSessionInfo{ShellID: ss.e.id, Secret: secret, WorkspaceID: ss.e.ws.ID, Container: ss.e.container,
		Instance: s.cfg.Instance, DetachedTimeoutSecs: int(ss.hubOptions().Detached / time.Second)}, nil
}

// runHub ends the hub with the session's cause (KillShell, Shutdown) and
// records the end once the hub is done.
func (ss *ShellSession) runHub(hub *ptyshell.Hub) {
	stop := context.AfterFunc(ss.life, func() { hub.End(context.Cause(ss.life)) })
	defer stop()
	res := hub.Result()
	ss.keepRecording(res.Reason)
	ss.finish(ptyshell.ServeResult{Reason: res.Reason, ExitCode: res.ExitCode, Running: true,
		BytesIn: res.BytesIn, BytesOut: res.BytesOut, Err: res.Err})
}

func (ss *ShellSession) hubOptions() ptyshell.HubOptions {
	c := ss.s.cfg
	return ptyshell.HubOptions{
		Size:         ptyshell.Size{Cols: ss.open.Cols, Rows: ss.open.Rows},
		NewScreen:    c.NewScreen,
		Detached:     max(c.Detached, 0),
		IdleTimeout:  c.IdleTimeout,
		MaxLifetime:  c.MaxLifetime,
		OpenTimeout:  c.OpenTimeout,
		StopTimeout:  c.StopTimeout + 10*time.Second,
		DrainTimeout: c.DrainTimeout,
		Recorder:     ss.rec.recorder(),
		Logger:       ss.s.log,
		OnDetach:     func() { ss.s.log.Info("shell detached", ss.attrs()...) },
	}
}

// newShellSecret returns a resume secret and the hash that is kept.
func newShellSecret() (string, [sha256.Size]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", [sha256.Size]byte{}, err
	}
	secret := base64.RawURLEncoding.EncodeToString(b)
	return secret, sha256.Sum256([]byte(secret)), nil
}

// ShellAttachment is one connection lent a v2 shell, as writer or
// watcher, not yet upgraded: Run serves it, Abort gives it back.
type ShellAttachment struct {
	ss  *ShellSession
	tap *ptyshell.Tap
}

// AttachShell lends the v2 shell id to a new writer, after the checks that
// come before the upgrade: the shell is this server's (else
// shell_on_other_replica, naming the instance that holds it), a v2 shell,
// and secret is its own. The writer takes the shell over: a writer already
// attached gets EXIT taken_over. size, when valid, is applied before the
// screen's render. Reasons: shell_disabled, server_shutting_down,
// shell_secret_required, shell_not_found, shell_on_other_replica,
// shell_not_attachable, shell_secret_invalid, docker_unavailable.
func (s *Shells) AttachShell(ctx context.Context, id, secret string, size ptyshell.Size, clientAddr string) (*ShellAttachment, error) {
	if secret == "" {
		return nil, cairn.Errorf(cairn.ReasonShellSecretRequired,
			"attaching needs the shell's secret in the %s header", cairn.ShellSecretHeader)
	}
	ss, hub, err := s.lookupV2(ctx, id)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(sum[:], ss.secret[:]) != 1 {
		return nil, cairn.Errorf(cairn.ReasonShellSecretInvalid, "that is not the secret of shell %s", id)
	}
	writer, err := s.auditLend(ctx, cairn.AuditShellAttached, ss, clientAddr)
	if err != nil {
		return nil, err
	}
	tap, err := hub.Attach(ctx, ptyshell.RoleWriter, size)
	if err != nil {
		return nil, cairn.ErrShellNotFound(id)
	}
	s.log.Info("shell attached", append(ss.attrs(), "writer", writer, "attach_addr", clientAddr)...)
	return &ShellAttachment{ss: ss, tap: tap}, nil
}

// WatchShell lends the v2 shell id to a read-only watcher, and writes a
// SHELL_WATCHED row naming who watches. No secret: the token's scope
// decides. Reasons: those of AttachShell but the secret's, and the audit's.
func (s *Shells) WatchShell(ctx context.Context, id, clientAddr string) (*ShellAttachment, error) {
	ss, hub, err := s.lookupV2(ctx, id)
	if err != nil {
		return nil, err
	}
	watcher, err := s.auditLend(ctx, cairn.AuditShellWatched, ss, clientAddr)
	if err != nil {
		return nil, err
	}
	tap, err := hub.Attach(ctx, ptyshell.RoleWatcher, ptyshell.Size{})
	if err != nil {
		return nil, cairn.ErrShellNotFound(id)
	}
	s.log.Info("shell watched", append(ss.attrs(), "watcher", watcher, "watcher_addr", clientAddr)...)
	return &ShellAttachment{ss: ss, tap: tap}, nil
}

// auditLend writes the row of one connection lent the shell (typ is
// SHELL_ATTACHED or SHELL_WATCHED) and returns the token name it names. A
// lend that cannot be audited is refused: who saw or typed into a shell is
// what the audit log is for.
func (s *Shells) auditLend(ctx context.Context, typ cairn.AuditType, ss *ShellSession, clientAddr string) (string, error) {
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	who := actorName(ctx)
	return who, s.svc.audit(actx, s.svc.store, typ, map[string]any{
		"workspace_id": ss.e.ws.ID, "shell_id": ss.e.id, "container": ss.e.container,
		"token_name": who, "client_addr": clientAddr,
	})
}

// lookupV2 finds the local v2 session id. A shell container of another
// instance is shell_on_other_replica; a v1 session shell_not_attachable.
func (s *Shells) lookupV2(ctx context.Context, id string) (*ShellSession, *ptyshell.Hub, error) {
	if err := s.Admit(); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	e, ok := s.entries[id]
	var ss *ShellSession
	var hub *ptyshell.Hub
	if ok {
		ss = e.sess
		if ss != nil {
			hub = ss.hub
		}
	}
	s.mu.Unlock()
	switch {
	case ok && ss == nil:
		return nil, nil, cairn.Errorf(cairn.ReasonShellNotAttachable,
			"shell %s is a v1 shell, which ends with its connection; it cannot be attached", id)
	case ok && hub == nil:
		return nil, nil, cairn.ErrShellNotFound(id) // still starting: nobody has its secret yet
	case ok:
		return ss, hub, nil
	}
	list, err := s.rt.ListShells(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range list {
		if c.ShellID == id && c.Instance != s.cfg.Instance {
			return nil, nil, cairn.ErrShellOnOtherReplica(id, c.Instance)
		}
	}
	return nil, nil, cairn.ErrShellNotFound(id)
}

// Run serves the connection with serve (ptyshell.Serve over the upgraded
// connection). It returns when the connection ends; the shell goes on
// unless it ended.
func (a *ShellAttachment) Run(serve func(ctx context.Context, stream ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult) {
	res := serve(a.tap.Context(), a.tap, a.tap.Options(a.ss.connOptions()))
	a.ss.s.log.Info("shell connection ended", append(a.ss.attrs(), "role", a.tap.Role(), "reason", string(res.Reason))...)
}

// Abort gives the shell back when the upgrade failed.
func (a *ShellAttachment) Abort() { _ = a.tap.Close() } // a tap's Close cannot fail

// connOptions are a v2 connection's ServeOptions before its tap completes
// them.
func (ss *ShellSession) connOptions() ptyshell.ServeOptions {
	o := ss.options()
	o.Running, o.OpenedAt = nil, time.Time{}
	return o
}

// Writer reports whether this connection is still the shell's writer
// (not taken over).
func (a *ShellAttachment) Writer() bool {
	return a.tap.Role() == ptyshell.RoleWriter && context.Cause(a.tap.Context()) == nil
}

// Context is cancelled, with the cause, when the connection must end
// (taken over, the shell's end).
func (a *ShellAttachment) Context() context.Context { return a.tap.Context() }
