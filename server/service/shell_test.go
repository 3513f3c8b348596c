package service_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/server/service/servicetest"
)

// shellFixture is what the shell tests see besides the rules: the fakes,
// and what they saw, behind a lock since sessions run on goroutines.
type shellFixture struct {
	*fixture
	rt *servicetest.ShellRuntime

	mu      sync.Mutex
	audit   []*cairn.AuditEvent
	specs   []service.ShellSpec
	locked  bool // a workspace lock is held
	modes   []service.LockMode
	removed []string
	ends    []string
	streams []*ptyshelltest.Stream
}

func (f *shellFixture) audits(typ cairn.AuditType) []*cairn.AuditEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*cairn.AuditEvent
	for _, ev := range f.audit {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

const shellInstance = "host-a:44123"

// setupShells returns the shell rules over fakes: the store finds ws (and
// grants locks, noting whether one is held), the engine has its volume,
// and CreateShell hands out in-memory streams.
func setupShells(t *testing.T, cfg service.ShellConfig, ws cairn.Workspace) (*service.Shells, *shellFixture) {
	t.Helper()
	svc, base := setup(t)
	f := &shellFixture{fixture: base, rt: &servicetest.ShellRuntime{}}
	f.row(ws)
	f.store.InsertAuditFunc = func(_ context.Context, ev *cairn.AuditEvent) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.audit = append(f.audit, ev)
		return nil
	}
	f.store.LockWorkspaceFunc = func(_ context.Context, _ string, mode service.LockMode) (func(), error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.locked, f.modes = true, append(f.modes, mode)
		return func() { f.mu.Lock(); f.locked = false; f.mu.Unlock() }, nil
	}
	f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) { return true, nil }
	// The registry holds v2 shells only; these are v1's.
	f.store.FindShellRowsFunc = func(context.Context, string) ([]*service.ShellRow, error) { return nil, nil }
	f.store.FindShellFunc = func(_ context.Context, id string) (*service.ShellRow, error) { return nil, cairn.ErrShellNotFound(id) }
	f.rt.CreateShellFunc = func(_ context.Context, spec service.ShellSpec) (ptyshell.Stream, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		require.True(t, f.locked, "the container is created under the workspace lock")
		st := ptyshelltest.NewStream()
		f.specs, f.streams = append(f.specs, spec), append(f.streams, st)
		return st, nil
	}
	f.rt.RemoveContainerFunc = func(_ context.Context, id string) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.removed = append(f.removed, id)
		return nil
	}
	cfg.Instance = shellInstance
	cfg.OnEnd = func(reason string, _, _ int64) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ends = append(f.ends, reason)
	}
	return service.NewShells(svc, f.rt, cfg), f
}

func open(ws cairn.Workspace) cairn.ShellOpen {
	return cairn.ShellOpen{WorkspaceID: ws.ID, Cols: 120, Rows: 40, ClientAddr: "127.0.0.1:5000"}
}

// untilCancelled is a ServeFunc that runs the shell until ctx is cancelled,
// then ends it as Serve would for the cause.
func untilCancelled(started chan<- struct{}) func(context.Context, ptyshell.Stream, ptyshell.ServeOptions) ptyshell.ServeResult {
	return func(ctx context.Context, st ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult {
		if err := opts.Running(ctx); err != nil {
			_ = st.Close()
			return ptyshell.ServeResult{Reason: ptyshell.ReasonError, ExitCode: 125, Err: err}
		}
		opts.OnInput(time.Now(), 3)
		close(started)
		<-ctx.Done()
		_ = st.Close()
		reason := ptyshell.ReasonServerShutdown
		if errors.Is(context.Cause(ctx), ptyshell.ErrTerminated) {
			reason = ptyshell.ReasonTerminated
		}
		return ptyshell.ServeResult{Reason: reason, ExitCode: 129, Running: true, BytesIn: 3, BytesOut: 7}
	}
}

// runUntilCancelled opens a shell on ws and serves it on a goroutine until
// its context is cancelled; it returns once the shell runs, and the channel
// closed when Run returned.
func runUntilCancelled(t *testing.T, s *service.Shells, ws cairn.Workspace) (*service.ShellSession, <-chan struct{}) {
	t.Helper()
	sess, err := s.OpenShell(t.Context(), open(ws))
	require.NoError(t, err)
	started, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sess.Run(untilCancelled(started))
	}()
	select {
	case <-started:
	case <-time.After(ptyshelltest.Guard):
		t.Fatal("the shell did not start")
	}
	return sess, done
}

func TestShellOpenRefusals(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name    string
		enabled bool
		state   cairn.VolumeState
		edit    func(f *shellFixture, o *cairn.ShellOpen)
		reason  cairn.Reason
	}{
		{"Disabled", false, cairn.VolumeReady, nil, cairn.ReasonShellDisabled},
		{"BadTerminal", true, cairn.VolumeReady, func(_ *shellFixture, o *cairn.ShellOpen) { o.Cols = 1001 }, cairn.ReasonInvalidTerminal},
		{"BadTerm", true, cairn.VolumeReady, func(_ *shellFixture, o *cairn.ShellOpen) { o.Term = "a b" }, cairn.ReasonInvalidTerminal},
		{"NoWorkspace", true, cairn.VolumeReady, func(_ *shellFixture, o *cairn.ShellOpen) { o.WorkspaceID = "nope" }, cairn.ReasonWorkspaceNotFound},
		{"VolumeNotReady", true, cairn.VolumeNone, nil, cairn.ReasonVolumeNotReady},
		{"VolumeMissing", true, cairn.VolumeReady, func(f *shellFixture, _ *cairn.ShellOpen) {
			f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) { return false, nil }
		}, cairn.ReasonVolumeMissing},
		{"DockerDown", true, cairn.VolumeReady, func(f *shellFixture, _ *cairn.ShellOpen) {
			f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) {
				return false, cairn.Errorf(cairn.ReasonDockerUnavailable, "down")
			}
		}, cairn.ReasonDockerUnavailable},
		{"ImageMissing", true, cairn.VolumeReady, func(f *shellFixture, _ *cairn.ShellOpen) {
			f.rt.CreateShellFunc = func(context.Context, service.ShellSpec) (ptyshell.Stream, error) {
				return nil, cairn.Errorf(cairn.ReasonShellImageMissing, "absent")
			}
		}, cairn.ReasonShellImageMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, base := setup(t)
			ws := base.newWorkspace(tc.state)
			s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: tc.enabled}}, ws)
			o := open(ws)
			if tc.edit != nil {
				tc.edit(f, &o)
			}
			sess, err := s.OpenShell(t.Context(), o)
			require.Nil(t, sess)
			require.Equal(t, tc.reason, cairn.ErrorReason(err), "err: %v", err)
			require.Zero(t, s.Live(), "a refused open leaves no registry entry or cap slot")
			f.mu.Lock()
			defer f.mu.Unlock()
			require.False(t, f.locked, "the lock is released")
		})
	}
}

func TestShellOpenCreatesUnderTheSharedLock(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true, MaxLifetime: time.Hour}}, ws)
	ctx := cairn.WithActor(t.Context(), "ops")
	sess, err := s.OpenShell(ctx, cairn.ShellOpen{WorkspaceID: ws.ID, Cols: 100, Rows: 30, Term: "vt100"})
	require.NoError(t, err)
	defer sess.Abort()
	require.Equal(t, []service.LockMode{service.LockShared}, f.modes)
	require.False(t, f.locked, "released once the container exists")
	require.Len(t, f.specs, 1)
	spec := f.specs[0]
	require.Equal(t, service.ShellSpec{
		Name: appName + ".shell." + ws.ID + "." + sess.ID(), ShellID: sess.ID(), WorkspaceID: ws.ID,
		WorkspaceName: ws.Name, VolumeName: ws.VolumeName, TokenName: "ops", Term: "vt100", Cols: 100, Rows: 30,
		Expires: f.now.Add(time.Hour),
	}, spec)
	require.Equal(t, 1, s.Live())
}

func TestShellCapsAreReservedAtomically(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, _ := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true, MaxSessionsPerWorkspace: 1}}, ws)
	const opens = 16
	var wg sync.WaitGroup
	errs := make(chan error, opens)
	sessions := make(chan *service.ShellSession, opens)
	for range opens {
		wg.Go(func() {
			sess, err := s.OpenShell(t.Context(), open(ws))
			if err != nil {
				errs <- err
				return
			}
			sessions <- sess
		})
	}
	wg.Wait()
	close(errs)
	close(sessions)
	require.Len(t, sessions, 1, "exactly one open takes the workspace's only slot")
	for err := range errs {
		require.Equal(t, cairn.ReasonTooManyShells, cairn.ErrorReason(err))
	}
	for sess := range sessions {
		sess.Abort()
	}
	require.Zero(t, s.Live())
	sess, err := s.OpenShell(t.Context(), open(ws))
	require.NoError(t, err, "an aborted session frees its slot")
	sess.Abort()

	t.Run("ProcessCap", func(t *testing.T) {
		t.Parallel()
		_, base := setup(t)
		ws := base.newWorkspace(cairn.VolumeReady)
		s, _ := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true, MaxSessions: 2, MaxSessionsPerWorkspace: 5}}, ws)
		for range 2 {
			sess, err := s.OpenShell(t.Context(), open(ws))
			require.NoError(t, err)
			defer sess.Abort()
		}
		_, err := s.OpenShell(t.Context(), open(ws))
		require.Equal(t, cairn.ReasonTooManyShells, cairn.ErrorReason(err))
	})
}

func TestShellRunAuditsAndReleases(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	sess, done := runUntilCancelled(t, s, ws)

	opened := f.audits(cairn.AuditShellOpened)
	require.Len(t, opened, 1)
	require.Equal(t, map[string]any{
		"workspace_id": ws.ID, "workspace_name": ws.Name, "shell_id": sess.ID(),
		"container": appName + ".shell." + ws.ID + "." + sess.ID(), "token_name": "", "client_addr": "127.0.0.1:5000",
		"cols": 120, "rows": 40, "term": "xterm-256color",
	}, opened[0].Metadata)

	list, err := func() (*cairn.ShellList, error) {
		f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
			return []service.ShellContainer{{ShellID: sess.ID(), WorkspaceID: ws.ID, Instance: shellInstance, State: "running"}}, nil
		}
		return s.FindShells(t.Context(), "")
	}()
	require.NoError(t, err)
	require.True(t, list.Shells[0].Local)
	require.Equal(t, "127.0.0.1:5000", list.Shells[0].ClientAddr)
	require.NotNil(t, list.Shells[0].LastInputAt, "the input was recorded")

	require.NoError(t, s.KillShell(cairn.WithActor(t.Context(), "ops"), sess.ID()))
	<-done
	require.Zero(t, s.Live())
	closed := f.audits(cairn.AuditShellClosed)
	require.Len(t, closed, 1)
	m := closed[0].Metadata
	require.Equal(t, "terminated", m["reason"])
	require.Equal(t, 129, m["exit_code"])
	require.Equal(t, "ops", m["killed_by"])
	require.Equal(t, int64(3), m["bytes_in"])
	require.Equal(t, int64(7), m["bytes_out"])
	require.Equal(t, []string{"terminated"}, f.ends)
	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) { return nil, nil } // removed by the teardown
	err = s.KillShell(t.Context(), sess.ID())
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err), "the shell is gone from the registry and from Docker")
}

func TestShellAuditFailureEndsTheShell(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	f.store.InsertAuditFunc = func(context.Context, *cairn.AuditEvent) error { return errors.New("database down") }
	sess, err := s.OpenShell(t.Context(), open(ws))
	require.NoError(t, err)
	sess.Run(func(ctx context.Context, st ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult {
		require.Error(t, opts.Running(ctx), "a shell that cannot be audited is not offered")
		_ = st.Close()
		return ptyshell.ServeResult{Reason: ptyshell.ReasonError, ExitCode: 125}
	})
	require.Zero(t, s.Live())
}

func TestShellKillRemote(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		return []service.ShellContainer{{ContainerID: "c1", Name: "n1", ShellID: "sh1", WorkspaceID: ws.ID, Instance: "host-b:1"}}, nil
	}
	require.NoError(t, s.KillShell(cairn.WithActor(t.Context(), "ops"), "sh1"))
	require.Equal(t, []string{"c1"}, f.removed, "another replica's shell is force-removed")
	closed := f.audits(cairn.AuditShellClosed)
	require.Len(t, closed, 1)
	require.Equal(t, "ops", closed[0].Metadata["killed_by"])
	require.Equal(t, false, closed[0].Metadata["local"])

	err := s.KillShell(t.Context(), "sh2")
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
}

func TestShellShutdown(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	_, done1 := runUntilCancelled(t, s, ws)
	_, done2 := runUntilCancelled(t, s, ws)
	stuck, err := s.OpenShell(t.Context(), open(ws)) // opened, never served: its container must still go
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	s.Shutdown(ctx)
	<-done1
	<-done2
	require.ElementsMatch(t, []string{"server_shutdown", "server_shutdown"}, f.ends)
	require.Equal(t, []string{appName + ".shell." + ws.ID + "." + stuck.ID()}, f.removed,
		"what did not end by the deadline is force-removed")
	require.Equal(t, cairn.ReasonServerShuttingDown, cairn.ErrorReason(s.Admit()))
	_, err = s.OpenShell(t.Context(), open(ws))
	require.Equal(t, cairn.ReasonServerShuttingDown, cairn.ErrorReason(err))
}

func TestShellReap(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	reaped := 0
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}, OnReap: func(by string, n int) {
		require.Equal(t, "server", by)
		reaped += n
	}}, ws)
	live, err := s.OpenShell(t.Context(), open(ws))
	require.NoError(t, err)
	defer live.Abort()
	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		return []service.ShellContainer{
			{ContainerID: "registered", ShellID: live.ID(), Instance: shellInstance},
			{ContainerID: "leftover", ShellID: "old", Instance: shellInstance},
			{ContainerID: "theirs", ShellID: "other", Instance: "host-b:1"},
		}, nil
	}
	n, err := s.Reap(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"leftover"}, f.removed, "only this instance's containers missing from the registry")
	require.Equal(t, 1, reaped)
}

// A v2 shell created while a reaper pass runs — its row and container
// appearing just before or just after a listing of the containers — is
// neither taken for a leftover nor for a shell whose container went.
func TestShellReapSparesACreateUnderWay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		listed bool // the new container is in the listing that saw it made
	}{{"BeforeAListing", true}, {"AfterAListing", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, base := setup(t)
			ws := base.newWorkspace(cairn.VolumeReady)
			s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
			var mu sync.Mutex
			rows := map[string]*service.ShellRow{}
			var containers []service.ShellContainer
			f.store.FindShellRowsFunc = func(context.Context, string) ([]*service.ShellRow, error) {
				mu.Lock()
				defer mu.Unlock()
				var out []*service.ShellRow
				for _, r := range rows {
					out = append(out, r)
				}
				return out, nil
			}
			f.store.FindShellFunc = func(_ context.Context, id string) (*service.ShellRow, error) {
				mu.Lock()
				defer mu.Unlock()
				if r, ok := rows[id]; ok {
					return r, nil
				}
				return nil, cairn.ErrShellNotFound(id)
			}
			f.store.SetShellStateFunc = func(_ context.Context, id string, from []service.ShellState, to service.ShellState) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				r, ok := rows[id]
				if !ok || !slices.Contains(from, r.State) {
					return false, nil
				}
				r.State = to
				return true, nil
			}
			f.store.DeleteShellFunc = func(_ context.Context, id string) error {
				mu.Lock()
				defer mu.Unlock()
				delete(rows, id)
				return nil
			}
			// Each listing is raced by a whole create: row, container, running.
			create := func() {
				id := fmt.Sprintf("shell-%d", len(rows))
				rows[id] = &service.ShellRow{ID: id, WorkspaceID: ws.ID, Container: "c-" + id,
					Instance: shellInstance, State: service.ShellRunning, CreatedAt: time.Now()}
				containers = append(containers, service.ShellContainer{ContainerID: "c-" + id, Name: "c-" + id,
					ShellID: id, WorkspaceID: ws.ID, Instance: shellInstance, State: "running"})
			}
			f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
				mu.Lock()
				defer mu.Unlock()
				if tc.listed {
					create()
				}
				out := slices.Clone(containers)
				if !tc.listed {
					create()
				}
				return out, nil
			}
			f.rt.DialHolderFunc = func(context.Context, string) (net.Conn, error) {
				return nil, errors.New("the test's holders are not asked")
			}
			n, err := s.Reap(t.Context())
			require.NoError(t, err)
			require.Zero(t, n)
			f.mu.Lock()
			defer f.mu.Unlock()
			require.Empty(t, f.removed, "no container of a shell being created is removed")
		})
	}
}

// A running v2 shell whose container is listed on a lost node is ended
// by the reaper with reason node_lost, its container removed and its row
// dropped, without a call to its holder (which cannot be reached); one on
// a running container is asked as usual.
func TestShellReapEndsAShellOnALostNode(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	var mu sync.Mutex
	rows := map[string]*service.ShellRow{}
	for _, id := range []string{"lost", "fine"} {
		rows[id] = &service.ShellRow{ID: id, WorkspaceID: ws.ID, Container: "c-" + id, Instance: shellInstance,
			State: service.ShellRunning, CreatedAt: time.Now()}
	}
	f.store.FindShellRowsFunc = func(context.Context, string) ([]*service.ShellRow, error) {
		mu.Lock()
		defer mu.Unlock()
		return []*service.ShellRow{rows["lost"], rows["fine"]}, nil
	}
	f.store.SetShellStateFunc = func(_ context.Context, id string, from []service.ShellState, to service.ShellState) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(from, rows[id].State) {
			return false, nil
		}
		rows[id].State = to
		return true, nil
	}
	var dropped []string
	f.store.DeleteShellFunc = func(_ context.Context, id string) error {
		dropped = append(dropped, id)
		return nil
	}
	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		return []service.ShellContainer{
			{ContainerID: "c-lost", ShellID: "lost", WorkspaceID: ws.ID, Instance: shellInstance, State: service.ShellNodeLost},
			{ContainerID: "c-fine", ShellID: "fine", WorkspaceID: ws.ID, Instance: shellInstance, State: "running"},
		}, nil
	}
	var dialed []string
	f.rt.DialHolderFunc = func(_ context.Context, container string) (net.Conn, error) {
		dialed = append(dialed, container)
		return nil, errors.New("the test's holders do not answer")
	}
	_, err := s.Reap(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"lost"}, dropped)
	require.Equal(t, service.ShellRunning, rows["fine"].State, "a shell whose holder did not answer is left to the next pass")
	require.NotContains(t, dialed, "c-lost", "a lost node's holder is not asked")
	f.mu.Lock()
	require.Equal(t, []string{"c-lost"}, f.removed)
	f.mu.Unlock()
	closed := f.audits(cairn.AuditShellClosed)
	require.Len(t, closed, 1)
	require.Equal(t, "lost", closed[0].Metadata["shell_id"])
	require.Equal(t, string(ptyshell.ReasonNodeLost), closed[0].Metadata["reason"])
}

// An attach to a shell no longer in the registry is shell_not_found, and
// says how the shell ended when its SHELL_CLOSED row does: a client whose
// connection broke with a lost node learns, as it reattaches, why.
func TestAttachToAnEndedShellSaysWhy(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	f.store.FindShellFunc = func(_ context.Context, id string) (*service.ShellRow, error) {
		return nil, cairn.ErrShellNotFound(id)
	}
	ends := map[string]*service.ShellEnd{"lost": {Reason: ptyshell.ReasonNodeLost, ExitCode: -1},
		"done": {Reason: ptyshell.ReasonExited, ExitCode: 3}}
	f.store.FindShellEndFunc = func(_ context.Context, id string) (*service.ShellEnd, error) { return ends[id], nil }
	size := ptyshell.Size{Cols: 80, Rows: 24}

	_, err := s.AttachShell(t.Context(), "lost", "secret", size, "")
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
	require.ErrorContains(t, err, "shell lost has ended (node_lost, exit code -1): the node it ran on was lost")
	_, err = s.WatchShell(t.Context(), "done", "")
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
	require.ErrorContains(t, err, "shell done has ended (exited, exit code 3)")
	_, err = s.AttachShell(t.Context(), "never-was", "secret", size, "")
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
	require.NotContains(t, err.Error(), "ended", "no end on record, nothing said of one")
}

func TestFindShells(t *testing.T) {
	t.Parallel()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}}, ws)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		return []service.ShellContainer{
			{ShellID: "b", WorkspaceID: ws.ID, Created: t0, Instance: "x"},
			{ShellID: "c", WorkspaceID: "other", Created: t0.Add(-time.Hour), Instance: "x"},
			{ShellID: "a", WorkspaceID: ws.ID, Created: t0, Instance: "x", Expires: t0.Add(time.Hour)},
		}, nil
	}
	all, err := s.FindShells(t.Context(), "")
	require.NoError(t, err)
	require.True(t, all.Enabled)
	var ids []string
	for _, sh := range all.Shells {
		ids = append(ids, sh.ID)
		require.False(t, sh.Local)
	}
	require.Equal(t, []string{"c", "a", "b"}, ids, "by started_at, then id")
	one, err := s.FindShells(t.Context(), ws.ID)
	require.NoError(t, err)
	require.Len(t, one.Shells, 2)

	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) { return nil, nil }
	none, err := s.FindShells(t.Context(), "")
	require.NoError(t, err)
	require.NotNil(t, none.Shells, "never nil: the key is always present")
}
