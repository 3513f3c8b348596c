package rest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/server/auth"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/route"
)

const v2Secret = "s3cret-resume-value-0123456789"

// fakeV2 is a rest.ShellV2Service over one real Hub with an in-memory
// stream, served as a holder serves its shell: shell "sh1" with secret
// v2Secret.
type fakeV2 struct {
	hub    *ptyshell.Hub
	holder *ptyshelltest.HubServer
	stream *ptyshelltest.Stream
	opens  chan cairn.ShellOpen // every create's request, while there is room
}

// bridgeSession is one connection to the fake holder, bridged as the
// service bridges a holder's.
type bridgeSession struct{ shell *websocket.Conn }

func (s bridgeSession) Run(serve func(context.Context, *websocket.Conn, holder.BridgeOptions) holder.BridgeResult) {
	serve(context.Background(), s.shell, holder.BridgeOptions{WriteWait: ptyshelltest.Guard})
}

func (s bridgeSession) Abort() { _ = s.shell.Close() }

// connect opens a connection to the fake holder in role.
func (f *fakeV2) connect(ctx context.Context, path string, size ptyshell.Size) (rest.ShellBridge, error) {
	q := ""
	if size.Valid() {
		q = fmt.Sprintf("?cols=%d&rows=%d", size.Cols, size.Rows)
	}
	d := websocket.Dialer{Subprotocols: []string{ptyshell.SubprotocolV2}, HandshakeTimeout: ptyshelltest.Guard}
	conn, resp, err := d.DialContext(ctx, f.holder.URL+path+q, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close() // only the status matters
	}
	if err != nil {
		return nil, err
	}
	return bridgeSession{conn}, nil
}

func (f *fakeV2) CreateShell(_ context.Context, o cairn.ShellOpen) (*cairn.ShellSessionInfo, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	select {
	case f.opens <- o:
	default:
	}
	return &cairn.ShellSessionInfo{ShellID: "sh1", Secret: v2Secret, WorkspaceID: o.WorkspaceID}, nil
}

func (f *fakeV2) lookup(id string) error {
	if id == "sh1" {
		return nil
	}
	return cairn.ErrShellNotFound(id)
}

func (f *fakeV2) AttachShell(ctx context.Context, id, secret string, size ptyshell.Size, _ string) (rest.ShellBridge, error) {
	if secret == "" {
		return nil, cairn.Errorf(cairn.ReasonShellSecretRequired, "send the secret")
	}
	if err := f.lookup(id); err != nil {
		return nil, err
	}
	if secret != v2Secret {
		return nil, cairn.Errorf(cairn.ReasonShellSecretInvalid, "wrong secret")
	}
	return f.connect(ctx, "/attach", size)
}

// SignalShell keeps no rule: the service's (the holder's) are tested
// where they live.
func (f *fakeV2) SignalShell(_ context.Context, id, _, _ string) error { return f.lookup(id) }

func (f *fakeV2) WatchShell(ctx context.Context, id, _ string) (rest.ShellBridge, error) {
	if err := f.lookup(id); err != nil {
		return nil, err
	}
	return f.connect(ctx, "/watch", ptyshell.Size{})
}

func v2Setup(t *testing.T) (string, *fakeV2, *bytes.Buffer) {
	t.Helper()
	st := ptyshelltest.NewStream()
	st.Echo = true
	hub := ptyshell.NewHub(st, ptyshell.HubOptions{Size: ptyshell.Size{Cols: 80, Rows: 24}})
	require.NoError(t, hub.Start(t.Context()))
	t.Cleanup(func() { hub.End(ptyshell.ErrServerShutdown); <-hub.Done() })
	v2 := &fakeV2{hub: hub, stream: st, opens: make(chan cairn.ShellOpen, 8),
		holder: ptyshelltest.NewHubServer(t, hub, ptyshell.ServeOptions{Status: ptyshell.Status{ShellID: "sh1"}})}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	g, err := auth.New(auth.Config{HostGuard: true, Tokens: []auth.Token{
		{Name: "ops", SHA256: sum(shellToken), Scopes: []route.Scope{route.Shell, route.Read, route.Admin}},
		{Name: "reader", SHA256: sum(noShellToken), Scopes: []route.Scope{route.Read}},
	}})
	require.NoError(t, err)
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	api := rest.New(nil, rest.Config{Logger: logger, LogLevel: slog.LevelInfo,
		Shell: rest.ShellConfig{Service: &fakeShells{}, V2: v2}})
	h, err := g.Mount("/", api.Routes())
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http"), v2, logs
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func dialV2(t *testing.T, url string, h http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{ptyshell.SubprotocolV2}, HandshakeTimeout: ptyshelltest.Guard}
	c, resp, err := d.Dial(url, h)
	if c != nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, resp, err
}

func authHeader(secret string) http.Header {
	h := http.Header{"Authorization": {"Bearer " + shellToken}}
	if secret != "" {
		h.Set(cairn.ShellSecretHeader, secret)
	}
	return h
}

func TestShellV2CreateAnswersTheSecretInTheBodyOnly(t *testing.T) {
	t.Parallel()
	base, _, logs := v2Setup(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http"+strings.TrimPrefix(base, "ws")+"/v1/workspaces/ws1/shells",
		strings.NewReader(`{"cols":100,"rows":30,"term":"vt100"}`))
	require.NoError(t, err)
	req.Header = authHeader("")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got struct {
		Success bool   `json:"success"`
		ShellID string `json:"shell_id"`
		Secret  string `json:"secret"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, "sh1", got.ShellID)
	require.Equal(t, v2Secret, got.Secret)
	for k, v := range resp.Header {
		require.NotContains(t, strings.Join(v, ","), v2Secret, "header %s", k)
	}
	require.NotContains(t, logs.String(), v2Secret)
}

func TestShellV2CreatePassesRecord(t *testing.T) {
	t.Parallel()
	base, v2, _ := v2Setup(t)
	for _, tc := range []struct {
		body string
		want bool
	}{{`{"cols":100,"rows":30,"record":true}`, true}, {`{"cols":100,"rows":30}`, false}} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http"+strings.TrimPrefix(base, "ws")+"/v1/workspaces/ws1/shells",
			strings.NewReader(tc.body))
		require.NoError(t, err)
		req.Header = authHeader("")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
		select {
		case o := <-v2.opens:
			require.Equal(t, tc.want, o.Record, tc.body)
		case <-time.After(ptyshelltest.Guard):
			t.Fatal("the create never reached the service")
		}
	}
}

func TestShellV2RefusalsBeforeTheUpgrade(t *testing.T) {
	t.Parallel()
	base, v2, logs := v2Setup(t)
	q := "?cols=80&rows=24"
	for _, tc := range []struct {
		name   string
		path   string
		h      http.Header
		protos []string
		status int
		reason cairn.Reason
	}{
		{"NoToken", "/v1/shells/sh1/attach" + q, http.Header{cairn.ShellSecretHeader: {v2Secret}}, nil, 401, cairn.ReasonUnauthenticated},
		{"NoScope", "/v1/shells/sh1/watch" + q, http.Header{"Authorization": {"Bearer " + noShellToken}}, nil, 403, cairn.ReasonForbidden},
		{"NoSecret", "/v1/shells/sh1/attach" + q, authHeader(""), nil, 401, cairn.ReasonShellSecretRequired},
		{"WrongSecret", "/v1/shells/sh1/attach" + q, authHeader("nope"), nil, 403, cairn.ReasonShellSecretInvalid},
		{"Unknown", "/v1/shells/nope/attach" + q, authHeader(v2Secret), nil, 404, cairn.ReasonShellNotFound},
		{"V1Only", "/v1/shells/sh1/attach" + q, authHeader(v2Secret), []string{ptyshell.Subprotocol}, 400, cairn.ReasonSubprotocolRequired},
		{"NoSize", "/v1/shells/sh1/attach", authHeader(v2Secret), nil, 400, cairn.ReasonInvalidTerminal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := websocket.Dialer{Subprotocols: tc.protos, HandshakeTimeout: ptyshelltest.Guard}
			if tc.protos == nil {
				d.Subprotocols = []string{ptyshell.SubprotocolV2}
			}
			_, resp, err := d.Dial(base+tc.path, tc.h)
			require.Error(t, err)
			require.NotNil(t, resp)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			var env struct {
				Error struct {
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
			require.Equal(t, string(tc.reason), env.Error.Reason)
			require.NotContains(t, env.Error.Message, v2Secret)
		})
	}
	require.NotContains(t, logs.String(), v2Secret, "the secret is in no log line")
	require.NotContains(t, logs.String(), "nope\"", "nor a wrong one")
	require.True(t, v2.hub.Detached(), "no refusal attached anything")
}

func TestShellV2RacingAttachesOverWebsockets(t *testing.T) {
	t.Parallel()
	base, v2, _ := v2Setup(t)
	const n = 50
	conns := make([]*websocket.Conn, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, resp, err := dialV2(t, base+"/v1/shells/sh1/attach?cols=80&rows=24", authHeader(v2Secret))
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, ptyshell.SubprotocolV2, c.Subprotocol())
			conns[i] = c
		})
	}
	wg.Wait()
	// Every Attach ran before its upgrade: 49 writers were taken over.
	type ended struct {
		i  int
		tr ptyshelltest.Transcript
	}
	ends := make(chan ended, n)
	for i, c := range conns {
		go func() { ends <- ended{i, (&ptyshelltest.Conn{Conn: c}).Collect()} }()
	}
	left := map[int]bool{}
	for i := range n {
		left[i] = true
	}
	for range n - 1 {
		e := <-ends
		require.Equal(t, 1, e.tr.Exits)
		require.Equal(t, ptyshell.ReasonTakenOver, e.tr.Exit.Reason)
		require.Equal(t, ptyshell.CloseTakenOver, e.tr.CloseCode)
		delete(left, e.i)
	}
	require.Len(t, left, 1)
	require.False(t, v2.hub.Detached())
	for i := range left {
		require.NoError(t, (&ptyshelltest.Conn{Conn: conns[i]}).SendInput([]byte("only-writer")))
	}
	require.NoError(t, v2.stream.WaitUntil(t.Context(), func() bool { return string(v2.stream.Input()) == "only-writer" }))
}
