package rest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
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
	"github.com/cairn-dev/cairn/server/auth"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/route"
)

// fakeShells is a hand-written rest.ShellService: each func field is what
// the method does; nil ones answer as an enabled, empty service would.
type fakeShells struct {
	AdmitFunc      func() error
	OpenShellFunc  func(ctx context.Context, o cairn.ShellOpen) (rest.ShellSession, error)
	FindShellsFunc func(ctx context.Context, workspaceID string) (*cairn.ShellList, error)
	KillShellFunc  func(ctx context.Context, id string) error
}

var _ rest.ShellService = (*fakeShells)(nil)

func (f *fakeShells) Admit() error {
	if f.AdmitFunc == nil {
		return nil
	}
	return f.AdmitFunc()
}

func (f *fakeShells) OpenShell(ctx context.Context, o cairn.ShellOpen) (rest.ShellSession, error) {
	return f.OpenShellFunc(ctx, o)
}

func (f *fakeShells) FindShells(ctx context.Context, workspaceID string) (*cairn.ShellList, error) {
	return f.FindShellsFunc(ctx, workspaceID)
}

func (f *fakeShells) KillShell(ctx context.Context, id string) error { return f.KillShellFunc(ctx, id) }

// fakeSession serves an in-memory echoing stream and records how it ended.
type fakeSession struct {
	stream  *ptyshelltest.Stream
	mu      sync.Mutex
	aborted bool
	result  *ptyshell.ServeResult
	done    chan struct{}
}

func newFakeSession() *fakeSession {
	st := ptyshelltest.NewStream()
	st.Echo = true
	return &fakeSession{stream: st, done: make(chan struct{})}
}

func (s *fakeSession) Run(serve func(context.Context, ptyshell.Stream, ptyshell.ServeOptions) ptyshell.ServeResult) {
	res := serve(context.Background(), s.stream, ptyshell.ServeOptions{Status: ptyshell.Status{ShellID: "sh1"}})
	s.mu.Lock()
	s.result = &res
	s.mu.Unlock()
	close(s.done)
}

func (s *fakeSession) Abort() {
	s.mu.Lock()
	s.aborted = true
	s.mu.Unlock()
	close(s.done)
}

const (
	shellToken   = "token-with-shell-0123456789abcdef"
	noShellToken = "token-without-shell-0123456789ab"
)

// shellSetup serves the shell routes through the real access control, with
// two tokens (one with scope shell, one without) and one allowed origin.
func shellSetup(t *testing.T, svc *fakeShells) string {
	t.Helper()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	origins := []string{"https://ops.example"}
	g, err := auth.New(auth.Config{HostGuard: true, AllowedOrigins: origins, Tokens: []auth.Token{
		{Name: "ops", SHA256: sum(shellToken), Scopes: []route.Scope{route.Shell, route.Read, route.Admin}},
		{Name: "reader", SHA256: sum(noShellToken), Scopes: []route.Scope{route.Read}},
	}})
	require.NoError(t, err)
	api := rest.New(nil, rest.Config{Shell: rest.ShellConfig{Service: svc, AllowedOrigins: origins}})
	h, err := g.Mount("/", api.Routes())
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// handshake is a well-formed shell handshake with the shell token.
func handshake(t *testing.T, base, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	require.NoError(t, err)
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "other, " + ptyshell.Subprotocol,
		"Authorization": "Bearer " + shellToken, "X-Request-ID": "req-1",
	} {
		req.Header.Set(k, v)
	}
	return req
}

func TestShellRefusalsBeforeTheUpgrade(t *testing.T) {
	t.Parallel()
	const path = "/v1/workspaces/ws1/shell?cols=120&rows=40"
	for _, tc := range []struct {
		name   string
		row    int
		edit   func(r *http.Request)
		admit  error
		open   error
		status int
		reason cairn.Reason
	}{
		{"OriginNotAllowed", 1, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, nil, nil, 403, cairn.ReasonOriginNotAllowed},
		{"HostNotLoopback", 2, func(r *http.Request) { r.Host = "evil.example" }, nil, nil, 403, cairn.ReasonHostNotAllowed},
		{"NoToken", 3, func(r *http.Request) { r.Header.Del("Authorization") }, nil, nil, 401, cairn.ReasonUnauthenticated},
		{"UnknownToken", 3, func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, nil, nil, 401, cairn.ReasonUnauthenticated},
		{"NoShellScope", 4, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+noShellToken) }, nil, nil, 403, cairn.ReasonForbidden},
		{"Disabled", 5, nil, cairn.Errorf(cairn.ReasonShellDisabled, "off"), nil, 404, cairn.ReasonShellDisabled},
		{"ShuttingDown", 6, nil, cairn.Errorf(cairn.ReasonServerShuttingDown, "bye"), nil, 503, cairn.ReasonServerShuttingDown},
		{"NotAnUpgrade", 7, func(r *http.Request) { r.Header.Del("Upgrade"); r.Header.Del("Connection") }, nil, nil, 400, cairn.ReasonWebsocketRequired},
		{"NoSubprotocol", 8, func(r *http.Request) { r.Header.Set("Sec-WebSocket-Protocol", "cairn.ptyshell.v2") }, nil, nil, 400, cairn.ReasonSubprotocolRequired},
		{"NoSubprotocolAtAll", 8, func(r *http.Request) { r.Header.Del("Sec-WebSocket-Protocol") }, nil, nil, 400, cairn.ReasonSubprotocolRequired},
		{"ColsMissing", 9, func(r *http.Request) { r.URL.RawQuery = "rows=40" }, nil, nil, 400, cairn.ReasonInvalidTerminal},
		{"RowsTooLarge", 9, func(r *http.Request) { r.URL.RawQuery = "cols=80&rows=1001" }, nil, nil, 400, cairn.ReasonInvalidTerminal},
		{"BadTerm", 9, func(r *http.Request) { r.URL.RawQuery = "cols=80&rows=24&term=xterm%3Bls" }, nil, nil, 400, cairn.ReasonInvalidTerminal},
		{"NoWorkspace", 10, nil, nil, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "no"), 404, cairn.ReasonWorkspaceNotFound},
		{"Cap", 11, nil, nil, cairn.Errorf(cairn.ReasonTooManyShells, "full"), 429, cairn.ReasonTooManyShells},
		{"VolumeNotReady", 12, nil, nil, cairn.Errorf(cairn.ReasonVolumeNotReady, "none"), 409, cairn.ReasonVolumeNotReady},
		{"VolumeMissing", 13, nil, nil, cairn.Errorf(cairn.ReasonVolumeMissing, "gone"), 409, cairn.ReasonVolumeMissing},
		{"DockerDown", 14, nil, nil, cairn.Errorf(cairn.ReasonDockerUnavailable, "down"), 503, cairn.ReasonDockerUnavailable},
		{"NoImage", 15, nil, nil, cairn.Errorf(cairn.ReasonShellImageMissing, "absent"), 503, cairn.ReasonShellImageMissing},
		{"CreateFailed", 16, nil, nil, cairn.Internal("spec refused", io.ErrUnexpectedEOF), 500, cairn.ReasonInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opened := false
			base := shellSetup(t, &fakeShells{
				AdmitFunc: func() error { return tc.admit },
				OpenShellFunc: func(_ context.Context, o cairn.ShellOpen) (rest.ShellSession, error) {
					opened = true
					require.Equal(t, cairn.ShellOpen{WorkspaceID: "ws1", Cols: 120, Rows: 40, Term: "xterm-256color",
						ClientAddr: o.ClientAddr}, o)
					return nil, tc.open
				},
			})
			req := handshake(t, base, path)
			if tc.edit != nil {
				tc.edit(req)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode, "row %d", tc.row)
			require.Equal(t, "req-1", resp.Header.Get("X-Request-ID"))
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var env struct {
				Success   bool   `json:"success"`
				RequestID string `json:"request_id"`
				Error     struct {
					Code    int    `json:"code"`
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
			require.False(t, env.Success)
			require.Equal(t, "req-1", env.RequestID)
			require.Equal(t, tc.status, env.Error.Code)
			require.Equal(t, string(tc.reason), env.Error.Reason)
			require.NotEmpty(t, env.Error.Message)
			require.Equal(t, tc.row >= 10, opened, "only rows 10–16 reach the service's open")
		})
	}
}

func TestShellUpgrade(t *testing.T) {
	t.Parallel()

	t.Run("SwitchesWithSubprotocolAndRequestID", func(t *testing.T) {
		t.Parallel()
		sess := newFakeSession()
		base := shellSetup(t, &fakeShells{OpenShellFunc: func(_ context.Context, o cairn.ShellOpen) (rest.ShellSession, error) {
			require.Equal(t, "vt100", o.Term)
			require.NotEmpty(t, o.ClientAddr)
			return sess, nil
		}})
		d := websocket.Dialer{Subprotocols: []string{ptyshell.Subprotocol}, HandshakeTimeout: ptyshelltest.Guard}
		conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/v1/workspaces/ws1/shell?cols=80&rows=24&term=vt100",
			http.Header{"Authorization": {"Bearer " + shellToken}, "X-Request-ID": {"req-101"}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		require.Equal(t, ptyshell.Subprotocol, resp.Header.Get("Sec-WebSocket-Protocol"))
		require.Equal(t, "req-101", resp.Header.Get("X-Request-ID"))
		require.Empty(t, resp.Header.Get("Sec-WebSocket-Extensions"), "no compression")

		c := &ptyshelltest.Conn{Conn: conn}
		for range 2 { // starting, running
			_, _, err = c.NextOfType(ptyshell.FrameStatus)
			require.NoError(t, err)
		}
		require.NoError(t, c.SendInput([]byte("ping-me")))
		_, err = c.ReadOutput("ping-me")
		require.NoError(t, err)
		sess.stream.Exit(5)
		tr := c.Collect()
		require.Equal(t, 5, tr.Exit.ExitCode)
		<-sess.done
		require.Equal(t, ptyshell.ReasonExited, sess.result.Reason)
		require.False(t, sess.aborted)
	})

	t.Run("FailedUpgradeAbortsWithAnEnvelope", func(t *testing.T) {
		t.Parallel()
		sess := newFakeSession()
		base := shellSetup(t, &fakeShells{OpenShellFunc: func(context.Context, cairn.ShellOpen) (rest.ShellSession, error) {
			return sess, nil
		}})
		req := handshake(t, base, "/v1/workspaces/ws1/shell?cols=80&rows=24")
		req.Header.Set("Sec-WebSocket-Version", "12") // gorilla refuses it itself
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Contains(t, string(body), `"reason":"websocket_required"`)
		require.Contains(t, string(body), `"request_id":"req-1"`)
		select {
		case <-sess.done:
		case <-time.After(ptyshelltest.Guard):
			t.Fatal("the session was not torn down")
		}
		require.True(t, sess.aborted, "the container of a failed upgrade is torn down")
	})
}

func TestShellRoutes(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := shellSetup(t, &fakeShells{
		FindShellsFunc: func(_ context.Context, ws string) (*cairn.ShellList, error) {
			if ws == "none" {
				return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{}}, nil
			}
			return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{{ID: "sh1", WorkspaceID: "ws1", Container: "c",
				Instance: "host:1", State: "running", StartedAt: started, ExpiresAt: started.Add(time.Hour), TokenName: "ops"}}}, nil
		},
		KillShellFunc: func(_ context.Context, id string) error {
			if id == "sh1" {
				return nil
			}
			return cairn.ErrShellNotFound(id)
		},
	})
	call := func(method, path, token string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, body := call(http.MethodGet, "/v1/shells", noShellToken)
	require.Equal(t, http.StatusOK, status, "scope read lists")
	require.Contains(t, body, `"enabled":true,"shells":[{"id":"sh1","workspace_id":"ws1","container":"c","instance":"host:1",`+
		`"state":"running","started_at":"2026-01-02T03:04:05Z","expires_at":"2026-01-02T04:04:05Z","token_name":"ops","local":false}]`)
	_, body = call(http.MethodGet, "/v1/shells?workspace_id=none", noShellToken)
	require.Contains(t, body, `"shells":[]`, "the key is always there")

	status, _ = call(http.MethodDelete, "/v1/shells/sh1", noShellToken)
	require.Equal(t, http.StatusForbidden, status, "killing needs scope admin")
	status, body = call(http.MethodDelete, "/v1/shells/sh1", shellToken)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `"success":true`)
	status, body = call(http.MethodDelete, "/v1/shells/sh2", shellToken)
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, `"reason":"shell_not_found"`)
}

func TestShellRecordQuery(t *testing.T) {
	t.Parallel()
	opens := make(chan cairn.ShellOpen, 4)
	base := shellSetup(t, &fakeShells{OpenShellFunc: func(_ context.Context, o cairn.ShellOpen) (rest.ShellSession, error) {
		opens <- o
		return nil, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "stop here")
	}})
	for _, tc := range []struct {
		query  string
		status int
		record bool
	}{
		{"&record=true", http.StatusNotFound, true},
		{"&record=false", http.StatusNotFound, false},
		{"", http.StatusNotFound, false},
		{"&record=maybe", http.StatusBadRequest, false},
	} {
		resp, err := http.DefaultClient.Do(handshake(t, base, "/v1/workspaces/ws1/shell?cols=120&rows=40"+tc.query))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, tc.status, resp.StatusCode, tc.query)
		select {
		case o := <-opens:
			require.NotEqual(t, http.StatusBadRequest, tc.status, "a bad record value is refused before the open")
			require.Equal(t, tc.record, o.Record, tc.query)
		default:
			require.Equal(t, http.StatusBadRequest, tc.status, "the open was not reached for %q", tc.query)
		}
	}
}
