package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/server/service"
)

// syncBuffer is a log sink the sessions' goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// v2Shells is the shell rules with a v2 shell's fakes: a fake screen, a
// captured log, and a server that upgrades attach and watch requests.
type v2Shells struct {
	s   *service.Shells
	f   *shellFixture
	log *syncBuffer
	url string
}

func setupV2(t *testing.T, cfg service.ShellConfig) (*v2Shells, cairn.Workspace) {
	t.Helper()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	logs := &syncBuffer{}
	cfg.Enabled, cfg.NewScreen = true, ptyshelltest.NewScreen
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, f := setupShells(t, cfg, ws)
	v := &v2Shells{s: s, f: f, log: logs}
	f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []service.ShellContainer
		for _, sp := range f.specs {
			out = append(out, service.ShellContainer{ShellID: sp.ShellID, WorkspaceID: sp.WorkspaceID, Name: sp.Name,
				Instance: shellInstance, State: "running"})
		}
		return out, nil
	}
	up := websocket.Upgrader{Subprotocols: []string{ptyshell.SubprotocolV2}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		var a *service.ShellAttachment
		var err error
		if r.URL.Path == "/watch" {
			a, err = s.WatchShell(r.Context(), id, r.RemoteAddr)
		} else {
			a, err = s.AttachShell(r.Context(), id, r.Header.Get(cairn.ShellSecretHeader), ptyshell.Size{Cols: 90, Rows: 20}, r.RemoteAddr)
		}
		if err != nil {
			http.Error(w, string(cairn.ErrorReason(err)), http.StatusConflict)
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			a.Abort()
			return
		}
		a.Run(func(ctx context.Context, st ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult {
			return ptyshell.Serve(ctx, conn, st, opts)
		})
	}))
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		srv.CloseClientConnections()
		srv.Close()
	})
	v.url = "ws" + strings.TrimPrefix(srv.URL, "http")
	return v, ws
}

func (v *v2Shells) create(t *testing.T, ws cairn.Workspace) (*cairn.ShellSessionInfo, *ptyshelltest.Stream) {
	t.Helper()
	info, err := v.s.CreateShell(cairn.WithActor(t.Context(), "ops"), open(ws))
	require.NoError(t, err)
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	return info, v.f.streams[len(v.f.streams)-1]
}

// dial attaches (path /attach, with secret) or watches (/watch) and reads
// the STATUS frames.
func (v *v2Shells) dial(t *testing.T, path, id, secret string) *ptyshelltest.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{ptyshell.SubprotocolV2}, HandshakeTimeout: ptyshelltest.Guard}
	h := http.Header{}
	if secret != "" {
		h.Set(cairn.ShellSecretHeader, secret)
	}
	conn, resp, err := d.Dial(v.url+path+"?id="+id, h)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	t.Cleanup(func() { _ = conn.Close() })
	c := &ptyshelltest.Conn{Conn: conn}
	for range 2 {
		f, err := c.Next()
		require.NoError(t, err)
		require.Equal(t, ptyshell.FrameStatus, f.Type)
	}
	return c
}

func (v *v2Shells) closed(t *testing.T, id string) *cairn.AuditEvent {
	t.Helper()
	require.Eventually(t, func() bool { return !v.s.Known(id) }, ptyshelltest.Guard, 5*time.Millisecond)
	rows := v.f.audits(cairn.AuditShellClosed)
	require.Len(t, rows, 1)
	return rows[0]
}

func TestShellV2ReattachRendersThenLive(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{})
	info, st := v.create(t, ws)
	require.NotEmpty(t, info.Secret)
	require.Equal(t, shellInstance, info.Instance)

	a := v.dial(t, "/attach", info.ShellID, info.Secret)
	require.NoError(t, st.Print([]byte("first;")))
	_, err := a.ReadOutput("first;")
	require.NoError(t, err)
	require.NoError(t, a.UnderlyingConn().Close()) // dropped without a close frame
	require.Eventually(t, func() bool { return detached(t, v.s, info.ShellID) }, ptyshelltest.Guard, 5*time.Millisecond)
	require.NoError(t, st.Print([]byte("while-away;")))

	b := v.dial(t, "/attach", info.ShellID, info.Secret)
	out, err := b.ReadOutput("while-away;")
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(out, ptyshelltest.RenderMarker(90, 20)), "%q", out)
	require.Contains(t, string(out), "first;")
	require.NoError(t, st.Print([]byte("live;")))
	_, err = b.ReadOutput("live;")
	require.NoError(t, err)
	require.Zero(t, st.Closes(), "the container outlived the dropped connection")
}

func detached(t *testing.T, s *service.Shells, id string) bool {
	list, err := s.FindShells(t.Context(), "")
	require.NoError(t, err)
	for _, sh := range list.Shells {
		if sh.ID == id && sh.Detached != nil {
			return *sh.Detached
		}
	}
	return false
}

func TestShellV2DetachedTimeout(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{Detached: 100 * time.Millisecond})
	info, st := v.create(t, ws)
	row := v.closed(t, info.ShellID)
	require.Equal(t, string(ptyshell.ReasonDetachedTimeout), row.Metadata["reason"])
	require.Equal(t, 1, st.Closes(), "the container is torn down")
	require.Zero(t, v.s.Live())
}

func TestShellV2RacingAttachesLeaveOneWriter(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{})
	info, _ := v.create(t, ws)
	const n = 50
	atts := make([]*service.ShellAttachment, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a, err := v.s.AttachShell(t.Context(), info.ShellID, info.Secret, ptyshell.Size{Cols: 80, Rows: 24}, "x")
			require.NoError(t, err)
			atts[i] = a
		})
	}
	wg.Wait()
	writers := 0
	for _, a := range atts {
		if a.Writer() {
			writers++
		} else {
			require.ErrorIs(t, context.Cause(a.Context()), ptyshell.ErrTakenOver)
		}
		a.Abort()
	}
	require.Equal(t, 1, writers)
}

func TestShellV2SecretRefusals(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{})
	info, _ := v.create(t, ws)
	_, err := v.s.AttachShell(t.Context(), info.ShellID, "", ptyshell.Size{}, "x")
	require.Equal(t, cairn.ReasonShellSecretRequired, cairn.ErrorReason(err))
	_, err = v.s.AttachShell(t.Context(), info.ShellID, info.Secret+"x", ptyshell.Size{}, "x")
	require.Equal(t, cairn.ReasonShellSecretInvalid, cairn.ErrorReason(err))
	require.NotContains(t, err.Error(), info.Secret)
	require.Empty(t, v.f.audits(cairn.AuditShellAttached), "a refused attach lent nothing")

	// A v1 shell cannot be attached.
	sess, _ := runUntilCancelled(t, v.s, ws)
	_, err = v.s.AttachShell(t.Context(), sess.ID(), info.Secret, ptyshell.Size{}, "x")
	require.Equal(t, cairn.ReasonShellNotAttachable, cairn.ErrorReason(err))

	w := v.dial(t, "/watch", info.ShellID, "")
	require.NoError(t, w.Close())
	require.NoError(t, v.s.KillShell(t.Context(), info.ShellID))
	v.closed(t, info.ShellID)
	require.NotContains(t, v.log.String(), info.Secret, "the secret is in no log line")
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	require.NotEmpty(t, v.f.audit)
	for _, ev := range v.f.audit {
		row, err := json.Marshal(ev)
		require.NoError(t, err)
		require.NotContains(t, string(row), info.Secret, "the secret is in no audit row (%s)", ev.Type)
	}
}

func TestShellV2WatcherAuditedAndReadOnly(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{})
	info, st := v.create(t, ws)
	wr := v.dial(t, "/attach", info.ShellID, info.Secret)
	w := v.dial(t, "/watch", info.ShellID, "")
	require.Len(t, v.f.audits(cairn.AuditShellWatched), 1)
	attached := v.f.audits(cairn.AuditShellAttached)
	require.Len(t, attached, 1, "the writer's attach is audited too")
	require.Equal(t, info.ShellID, attached[0].Metadata["shell_id"])
	require.NoError(t, w.SendInput([]byte("nope")))
	// The refusal first, before any output: its ERROR and the output would
	// otherwise race on the watcher's connection.
	f, _, err := w.NextOfType(ptyshell.FrameError)
	require.NoError(t, err)
	var refusal ptyshell.ErrorInfo
	require.NoError(t, ptyshell.DecodeControl(f.Payload, &refusal))
	require.Equal(t, ptyshell.ErrorReadOnly, refusal.Code)
	require.NoError(t, wr.SendInput([]byte("yes")))
	require.NoError(t, st.Print([]byte("out;")))
	_, err = w.ReadOutput("out;")
	require.NoError(t, err)
	require.NoError(t, st.WaitUntil(t.Context(), func() bool { return len(st.Input()) == 3 }))
	require.Equal(t, "yes", string(st.Input()))
}

func TestShellV2ListAndKillDetached(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{})
	info, st := v.create(t, ws)
	v.f.rt.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		return []service.ShellContainer{{ShellID: info.ShellID, WorkspaceID: ws.ID, Instance: shellInstance, State: "running"}}, nil
	}
	require.True(t, detached(t, v.s, info.ShellID))
	require.NoError(t, v.s.KillShell(t.Context(), info.ShellID))
	row := v.closed(t, info.ShellID)
	require.Equal(t, string(ptyshell.ReasonTerminated), row.Metadata["reason"])
	require.Equal(t, 1, st.Closes())
}

func TestShellV2OtherReplica(t *testing.T) {
	t.Parallel()
	v, ws := setupV2(t, service.ShellConfig{})
	info, _ := v.create(t, ws)
	svcB, _ := setup(t)
	rtB := *v.f.rt
	rtB.ListShellsFunc = func(context.Context) ([]service.ShellContainer, error) {
		return []service.ShellContainer{{ShellID: info.ShellID, WorkspaceID: ws.ID, Instance: shellInstance}}, nil
	}
	b := service.NewShells(svcB, &rtB, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true, Instance: "host-b:1"}})
	_, err := b.AttachShell(t.Context(), info.ShellID, info.Secret, ptyshell.Size{}, "x")
	require.Equal(t, cairn.ReasonShellOnOtherReplica, cairn.ErrorReason(err))
	require.Contains(t, err.Error(), shellInstance)
	_, err = b.WatchShell(t.Context(), info.ShellID, "x")
	require.Equal(t, cairn.ReasonShellOnOtherReplica, cairn.ErrorReason(err))
	_, err = b.AttachShell(t.Context(), "nope", info.Secret, ptyshell.Size{}, "x")
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
}
