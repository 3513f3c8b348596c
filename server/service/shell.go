package service

import (
	"context"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
)

var _ cairn.ShellService = (*Shells)(nil)

// ShellConfig holds the shell rules' settings (shell.*): those of every
// container session, and the shell's own. Zero values take the defaults,
// except IdleTimeout, where zero disables the idle end.
type ShellConfig struct {
	SessionConfig
	IdleTimeout time.Duration // no INPUT this long ends a shell; 0: never
	IdleWarning time.Duration // default 60 s
	// Detached ends a v2 shell this long after its writer left
	// (shell.timeouts.detachedSecs; default 300 s).
	Detached time.Duration
	// Scrollback is the lines of history a v2 shell's holder keeps in its
	// virtual screen, whose render starts every attach and watch
	// (shell.replay.scrollbackLines).
	Scrollback int
	// Record is shell.record: the asciicast recording of v2 shells.
	Record ShellRecording
	// Seams for metrics; nil hooks are skipped. OnOpen sees every open:
	// "ok" once running (took is request → running), else the reason it
	// was refused or failed. OnEnd sees every end with its reason and
	// bytes; OnReap every container a reaper removed.
	OnOpen func(result string, took time.Duration)
	OnEnd  func(reason string, bytesIn, bytesOut int64)
	OnReap func(by string, n int)
}

// Shells holds the shell rules: those every container session shares
// (containerSessions), and the shell's own — its runtime, v2's attach and
// watch, list and kill, recordings.
type Shells struct {
	containerSessions[*shellEntry]
	rt  ShellRuntime
	cfg ShellConfig
	// bridges is the context of every v2 connection this server relays;
	// Shutdown cancels it, and the clients reattach elsewhere.
	bridges    context.Context
	endBridges context.CancelFunc
	// lent counts the v2 connections from their lend until the check of
	// their shell's end that follows them: Shutdown waits for it, so a
	// shell that ended as the server stopped is collected by it.
	lent sync.WaitGroup
	// links keeps a relay open to each holder this server has reached, so
	// an attach costs a stream over it rather than a runtime exec.
	links *holder.Links
}

// shellEntry is one live shell in the registry, from the open's checks
// until its teardown's audit row is written.
type shellEntry struct {
	registration

	// Guarded by Shells.mu.
	lastInput time.Time
	killedBy  string
}

// shellKind names the shell in the rules it shares with exec.
var shellKind = sessionKind{name: "shell", plural: "shells", idKey: "shell_id",
	disabled:  "the shell is disabled on this server; an operator enables it with shell.enable",
	retry:     "open the shell again shortly",
	freeSlot:  "close one first",
	unaudited: "ending the shell"}

// NewShells returns the shell rules over svc's store and runtime and the
// shell runtime rt; svc's volume teardown then names the open shells that
// block it.
func NewShells(svc *Service, rt ShellRuntime, cfg ShellConfig) *Shells {
	cfg.SessionConfig = cfg.withDefaults()
	if cfg.OnOpen == nil {
		cfg.OnOpen = func(string, time.Duration) {}
	}
	if cfg.OnEnd == nil {
		cfg.OnEnd = func(string, int64, int64) {}
	}
	if cfg.OnReap == nil {
		cfg.OnReap = func(string, int) {}
	}
	s := &Shells{
		containerSessions: newContainerSessions[*shellEntry](svc, shellKind, cfg.SessionConfig,
			rt.ListShells, rt.RemoveContainer),
		rt: rt, cfg: cfg, links: holder.NewLinks(rt.DialHolder),
	}
	s.bridges, s.endBridges = context.WithCancel(context.Background())
	svc.openShells = s.shellsOf
	return s
}

// Enabled reports shell.enable.
func (s *Shells) Enabled() bool { return s.cfg.Enabled }

// Shutdown cuts the v2 connections this server relays (their shells live
// on in their containers, and the clients reattach through another
// replica) and ends its v1 shells with reason server_shutdown.
func (s *Shells) Shutdown(ctx context.Context) {
	s.endBridges()
	settled := make(chan struct{})
	go func() { s.lent.Wait(); close(settled) }()
	select {
	case <-settled:
	case <-ctx.Done():
	}
	s.containerSessions.Shutdown(ctx)
	s.links.Close()
}

// OpenShell runs the pre-upgrade checks that are not the websocket's own,
// in the order of the reasons below, and creates the shell's container,
// not started, before the upgrade. The returned session is in the registry
// and holds a cap slot; Run serves it, or Abort tears it down when the
// upgrade fails. Reasons: shell_disabled, server_shutting_down,
// invalid_terminal, workspace_not_found, too_many_shells, volume_not_ready,
// volume_missing, workspace_busy, docker_unavailable, shell_image_missing,
// internal.
func (s *Shells) OpenShell(ctx context.Context, o cairn.ShellOpen) (*ShellSession, error) {
	sess, err := s.open(ctx, o, time.Now())
	if err != nil {
		s.cfg.OnOpen(string(cairn.ErrorReason(err)), 0)
		return nil, err
	}
	return sess, nil
}

func (s *Shells) open(ctx context.Context, o cairn.ShellOpen, openedAt time.Time) (*ShellSession, error) {
	if err := s.Admit(); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	e, life, err := s.enter(ctx, o.WorkspaceID, o.ClientAddr, openedAt, func(r registration) *shellEntry {
		return &shellEntry{registration: r}
	})
	if err != nil {
		return nil, err
	}
	stream, err := createOnReady(ctx, &s.containerSessions, e, func(ctx context.Context, ws *cairn.Workspace) (ptyshell.Stream, error) {
		return s.rt.CreateShell(ctx, ShellSpec{
			Name: e.container, ShellID: e.id, WorkspaceID: ws.ID, WorkspaceName: ws.Name, VolumeName: ws.VolumeName,
			TokenName: e.tokenName, Term: o.Term, Cols: o.Cols, Rows: o.Rows,
			Expires: s.svc.now().Add(s.cfg.MaxLifetime),
		})
	})
	if err != nil {
		return nil, err
	}
	return &ShellSession{s: s, e: e, open: o, stream: stream, life: life}, nil
}
