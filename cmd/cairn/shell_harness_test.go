package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	dockerclient "github.com/docker/docker/client"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// The shell servers' tokens.
const (
	shellAdminToken   = "shell-test-admin-0123456789abcdef01"   // read, write, admin, shell, mcp
	shellNoShellToken = "shell-test-noshell-0123456789abcdef01" // read, write, admin
)

// shellStack is what the shell's end-to-end servers share: one database,
// bucket and app name, so that a workspace made through one is the
// workspace of all (as for replicas), and one Docker engine.
type shellStack struct {
	pg       *stack.Postgres
	db       string
	gw       *stack.S3
	bucket   string
	app      string
	image    string
	sidecar  string
	docker   *dockerclient.Client
	bin      string
	servers  int
	password string
}

func newShellStack(t testing.TB) *shellStack {
	t.Helper()
	dir, err := binaries()
	require.NoError(t, err)
	pg := stacktest.Postgres(t)
	dsn := stacktest.Database(t)
	st := &shellStack{
		pg: pg, db: dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")], gw: stacktest.S3(t),
		bucket: stacktest.Bucket(t), app: stacktest.AppName(t), image: stacktest.Shell(t),
		sidecar: stacktest.Image(t), docker: stacktest.Docker(t), bin: filepath.Join(dir, "cairn"),
		password: pg.Password,
	}
	// After every server is gone: no container of the app carries the
	// shell label, whatever the scenarios did.
	t.Cleanup(func() {
		list, err := st.docker.ContainerList(context.Background(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+st.app), filters.Arg("label", "cairn.kind=shell"))})
		if err != nil {
			t.Errorf("list shell containers: %v", err)
			return
		}
		for _, c := range list {
			t.Errorf("shell container left behind: %v %v", c.Names, c.Labels)
		}
	})
	return st
}

// shellServerOpts shape one server.
type shellServerOpts struct {
	disabled     bool
	image        string // shell.image; "" the test image
	exposed      bool   // no tokens, insecureNoAuth, the API on 0.0.0.0
	refused      bool   // the server must refuse to start: run it to its end
	maintainer   bool
	mcp          bool   // api.apis.mcp.enable
	writeTimeout int    // api.service.timeoutSecs.write; 0: default
	shell        string // more keys of the shell mapping, YAML flow style
}

// shellServer is one real `cairn server` process.
type shellServer struct {
	url      string
	instance string
	cmd      *exec.Cmd
	out      *stacktest.SyncBuffer
	admin    *client.Client
}

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// start runs `cairn server` from the built binary on a free loopback port
// with the shell on (unless disabled), tokens, a reap interval of 1 s and
// its own instance name, and waits until it is ready.
func (st *shellStack) start(t testing.TB, o shellServerOpts) *shellServer {
	t.Helper()
	port, err := stack.FreePort()
	require.NoError(t, err)
	st.servers++
	s := &shellServer{url: "http://127.0.0.1:" + strconv.Itoa(port), out: &stacktest.SyncBuffer{},
		instance: fmt.Sprintf("e2e-%d-%s", st.servers, st.app)}
	write := ""
	if o.writeTimeout > 0 {
		write = fmt.Sprintf(", timeoutSecs: {write: %d}", o.writeTimeout)
	}
	extra := ""
	if o.shell != "" {
		extra = ", " + o.shell
	}
	image, listen, auth := st.image, "127.0.0.1", fmt.Sprintf(`auth:
  tokens:
    - {name: admin, sha256: %s, scopes: [read, write, admin, shell, mcp]}
    - {name: noshell, sha256: %s, scopes: [read, write, admin]}`, hashToken(shellAdminToken), hashToken(shellNoShellToken))
	if o.image != "" {
		image = o.image
	}
	if o.exposed {
		listen, auth = "0.0.0.0", "auth: {insecureNoAuth: true}"
	}
	yaml := fmt.Sprintf(`appName: %s
persistence: {sql: {app: {host: 127.0.0.1, port: %d, db: %s, user: %s}}}
metrics: {service: {listenOn: 127.0.0.1, appPort: 0}}
api: {service: {listenOn: %s, appPort: %d%s}, apis: {mcp: {enable: %t}}}
artifact:
  s3: {endpoint: "%s", useTLS: false, region: us-east-1}
  store: {bucket: %s}
  sidecar: {image: %s, networkMode: host}
%s
shell: {enable: %t, image: %s, instanceName: %s, reapIntervalSecs: 1%s}
`, st.app, st.pg.Port, st.db, st.pg.User, listen, port, write, o.mcp, st.gw.Endpoint, st.bucket, st.sidecar,
		auth, !o.disabled, image, s.instance, extra)
	cfg := filepath.Join(t.TempDir(), "server.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	args := []string{"server", "-c", cfg, "-l", "info"}
	if o.maintainer {
		args = append(args, "--with-maintainer")
	}
	s.cmd = exec.Command(st.bin, args...)
	s.cmd.Env = append(os.Environ(), "CAIRN_APP_SQL_PASSWORD="+st.password,
		"CAIRN_S3_ACCESS_KEY="+st.gw.AccessKey, "CAIRN_S3_SECRET_KEY="+st.gw.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if o.refused {
		err := s.cmd.Run()
		require.Error(t, err, "the server started; output:\n%s", s.out)
		return s
	}
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() { s.logIfFailed(t) }) // runs after the stop below: the whole log
	t.Cleanup(func() { s.stop(t) })
	s.waitReady(t)
	s.admin, err = client.New(s.url, client.WithToken(shellAdminToken))
	require.NoError(t, err)
	return s
}

func (s *shellServer) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+"/liveness/ready", nil)
		require.NoError(t, err)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if stacktest.Exited(s.cmd.Process) {
			_ = s.cmd.Wait() // reaps it and copies the last of its output
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("cairn server did not become ready; output:\n%s", s.out)
}

// serverLogTail bounds the server log a failed test prints.
const serverLogTail = 256 << 10

// logIfFailed prints the end of the server's log when the test failed: a
// create the server refused with a 500 is explained only there.
func (s *shellServer) logIfFailed(t testing.TB) {
	if !t.Failed() {
		return
	}
	out := s.out.String()
	if len(out) > serverLogTail {
		out = "…" + out[len(out)-serverLogTail:]
	}
	t.Logf("server %s log:\n%s", s.instance, out)
}

// stop ends the server with SIGTERM, as an orchestrator would.
func (s *shellServer) stop(t testing.TB) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	s.killOwnShells(t)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	_ = s.cmd.Wait() // the exit status of a stopped server is not what is tested here
}

// killOwnShells ends the v2 shells s opened that a scenario left running:
// they outlive the server, so its stop no longer ends them. What is left
// after that is a leak the stack's check reports.
func (s *shellServer) killOwnShells(t testing.TB) {
	t.Helper()
	if s.admin == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := s.admin.FindShells(ctx, "")
	if err != nil {
		return // a server that cannot list has nothing of its own to end
	}
	for _, sh := range list.Shells {
		if sh.Instance == s.instance && sh.Local {
			_ = s.admin.KillShell(ctx, sh.ID) // it may end by itself meanwhile
		}
	}
}

// readyWorkspace creates a workspace through s and sets its volume up.
func (s *shellServer) readyWorkspace(t testing.TB) *cairn.Workspace {
	t.Helper()
	ws, err := s.admin.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-" + strings.ToLower(randomToken())})
	require.NoError(t, err)
	require.NoError(t, s.admin.SetupVolume(t.Context(), ws.ID))
	return ws
}

func randomToken() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }

// shellURL is the ws:// URL of the shell of wsID with a terminal size.
func (s *shellServer) shellURL(wsID string, size ptyshell.Size) string {
	q := url.Values{"cols": {strconv.Itoa(size.Cols)}, "rows": {strconv.Itoa(size.Rows)}}
	return "ws" + strings.TrimPrefix(s.url, "http") + "/v1/workspaces/" + wsID + "/shell?" + q.Encode()
}

// shellProto is the protocol a scenario runs over: v1 opens a shell with
// its connection; v2 creates one (POST /v1/workspaces/{id}/shells) and
// attaches to it with its secret.
type shellProto string

const (
	protoV1 shellProto = "v1"
	protoV2 shellProto = "v2"
)

// open opens a shell on wsID over p as a client session.
func (s *shellServer) open(t testing.TB, p shellProto, wsID string, size ptyshell.Size) *ptyshell.Session {
	t.Helper()
	if p == protoV1 {
		sess, err := s.admin.Shell(t.Context(), wsID, size, "")
		require.NoError(t, err)
		return sess
	}
	info, err := s.admin.CreateShell(t.Context(), wsID, size, "")
	require.NoError(t, err)
	sess, err := s.admin.AttachShell(t.Context(), info.ShellID, info.Secret, size)
	require.NoError(t, err)
	return sess
}

// dial opens the shell of wsID over v1 as a raw frame connection with the
// admin token, and reads the two STATUS frames; it returns the running
// STATUS.
func (s *shellServer) dial(t testing.TB, wsID string, size ptyshell.Size) (*ptyshelltest.Conn, ptyshell.Status) {
	t.Helper()
	return s.dialWS(t, s.shellURL(wsID, size), ptyshell.Subprotocol, nil)
}

// dialAs is dial over p: over v2 it creates the shell and attaches as its
// writer (the screen's render then comes as the first OUTPUT).
func (s *shellServer) dialAs(t testing.TB, p shellProto, wsID string, size ptyshell.Size) (*ptyshelltest.Conn, ptyshell.Status) {
	t.Helper()
	if p == protoV1 {
		return s.dial(t, wsID, size)
	}
	info, err := s.admin.CreateShell(t.Context(), wsID, size, "")
	require.NoError(t, err)
	return s.attach(t, info.ShellID, info.Secret, size)
}

// attach attaches to a v2 shell as its writer, a raw frame connection.
func (s *shellServer) attach(t testing.TB, shellID, secret string, size ptyshell.Size) (*ptyshelltest.Conn, ptyshell.Status) {
	t.Helper()
	return s.dialWS(t, s.attachURL(shellID, size), ptyshell.SubprotocolV2, http.Header{cairn.ShellSecretHeader: {secret}})
}

// watch watches a v2 shell, a raw frame connection.
func (s *shellServer) watch(t testing.TB, shellID string) *ptyshelltest.Conn {
	t.Helper()
	u := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/shells/" + shellID + "/watch?cols=80&rows=24"
	c, _ := s.dialWS(t, u, ptyshell.SubprotocolV2, nil)
	return c
}

// attachURL is the ws:// URL of a v2 shell's writer attach.
func (s *shellServer) attachURL(shellID string, size ptyshell.Size) string {
	q := url.Values{"cols": {strconv.Itoa(size.Cols)}, "rows": {strconv.Itoa(size.Rows)}}
	return "ws" + strings.TrimPrefix(s.url, "http") + "/v1/shells/" + shellID + "/attach?" + q.Encode()
}

func (s *shellServer) dialWS(t testing.TB, u, subprotocol string, h http.Header) (*ptyshelltest.Conn, ptyshell.Status) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: 10 * time.Second}
	if h == nil {
		h = http.Header{}
	}
	h.Set("Authorization", "Bearer "+shellAdminToken)
	conn, resp, err := d.DialContext(t.Context(), u, h)
	var refusal []byte
	if resp != nil && resp.Body != nil {
		refusal, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<10)) // shown if the dial failed
		resp.Body.Close()
	}
	require.NoError(t, err, "dial the shell: %s", refusal)
	t.Cleanup(func() { _ = conn.Close() }) // may be closed already
	c := &ptyshelltest.Conn{Conn: conn}
	var st ptyshell.Status
	for _, state := range []string{ptyshell.StateStarting, ptyshell.StateRunning} {
		f, err := c.Next()
		require.NoError(t, err)
		require.Equal(t, ptyshell.FrameStatus, f.Type, "frame %q", f.Payload)
		require.NoError(t, ptyshell.DecodeControl(f.Payload, &st))
		require.Equal(t, state, st.State)
	}
	return c, st
}

// shellContainers counts the containers carrying label=value.
func (st *shellStack) count(t testing.TB, label string) int {
	t.Helper()
	list, err := st.docker.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", label))})
	require.NoError(t, err)
	return len(list)
}

// shellAudit returns the SHELL_CLOSED row of shellID, waiting for it (the
// row is written after the client saw the end).
func (s *shellServer) closedRow(t testing.TB, wsID, shellID string) map[string]any {
	t.Helper()
	var row map[string]any
	require.Eventually(t, func() bool {
		events, err := s.admin.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: wsID,
			Types: []cairn.AuditType{cairn.AuditShellClosed}})
		require.NoError(t, err)
		for _, ev := range events {
			if ev.Metadata["shell_id"] == shellID {
				row = ev.Metadata
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "no SHELL_CLOSED row for %s", shellID)
	return row
}

// rawShellRequest sends the shell's handshake as a plain HTTP request, so
// that a refusal can be read whole; set edits it before it goes.
func (s *shellServer) rawShellRequest(t testing.TB, path string, set func(r *http.Request)) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Protocol", ptyshell.Subprotocol)
	req.Header.Set("Authorization", "Bearer "+shellAdminToken)
	if set != nil {
		set(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env map[string]any
	if resp.StatusCode != http.StatusSwitchingProtocols {
		require.NoError(t, json.Unmarshal(body, &env), "body %q", body)
	}
	return resp.StatusCode, env, resp.Header
}

// rawCreateRequest sends v2's POST /v1/workspaces/{id}/shells with body
// and the admin token; set edits it before it goes. It returns the status
// and the decoded envelope.
func (s *shellServer) rawCreateRequest(t testing.TB, wsID, body string, set func(r *http.Request)) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+"/v1/workspaces/"+wsID+"/shells", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+shellAdminToken)
	if set != nil {
		set(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	return resp.StatusCode, env, resp.Header
}

// vmRSS is a process's resident set in bytes.
func vmRSS(t testing.TB, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	defer f.Close()
	re := regexp.MustCompile(`^VmRSS:\s+(\d+) kB`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			n, err := strconv.ParseInt(m[1], 10, 64)
			require.NoError(t, err)
			return n << 10
		}
	}
	t.Fatalf("no VmRSS for pid %d", pid)
	return 0
}
