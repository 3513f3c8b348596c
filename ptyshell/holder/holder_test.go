package holder_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// holderBin is the cairn-sidecar binary the tests run, built once.
var holderBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-holder-test-")
	if err != nil {
		panic(err)
	}
	holderBin = filepath.Join(dir, "cairn-sidecar")
	build := exec.Command("go", "build", "-o", holderBin, "github.com/cairn-dev/cairn/cmd/cairn-sidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// running is one holder process of a test.
type running struct {
	cmd    *exec.Cmd
	socket string
	key    []byte
	client *holder.Client
	links  *holder.Links
	stderr *bytes.Buffer // read only after the process was waited for

	relays    atomic.Int32 // relay processes started
	relayMu   sync.Mutex
	lastRelay *exec.Cmd
}

func testConfig(t *testing.T) holder.Config {
	return holder.Config{
		ShellID: "01TESTSHELL", WorkspaceID: "01TESTWS", WorkspaceName: "ws", Container: "cairn.shell.test",
		Argv: []string{"/bin/sh"}, Cols: 80, Rows: 24, Term: "xterm",
		Detached: time.Minute, MaxLifetime: time.Hour, Stop: time.Second, Drain: time.Second,
		Record: true, Socket: filepath.Join(t.TempDir(), "holder.sock"),
	}
}

// startHolder runs the holder binary with cfg, as a runtime would, and
// returns it once it listens. Its client reaches it through the relay
// subcommand, as a server does through an exec.
func startHolder(t *testing.T, cfg holder.Config) *running {
	t.Helper()
	key := sha256.Sum256([]byte("the shell's secret"))
	env, err := holder.Env(cfg, key[:])
	require.NoError(t, err)
	cmd := exec.Command(holderBin, holder.CommandHold)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "PS1=$ ", "TERM=" + cfg.Term}, env...)
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // killed, or exited on its own
	})
	require.Eventually(t, func() bool {
		_, err := os.Stat(cfg.Socket)
		return err == nil
	}, ptyshelltest.Guard, 5*time.Millisecond, "the holder listens")
	r := &running{cmd: cmd, socket: cfg.Socket, key: key[:], stderr: stderr}
	r.links = holder.NewLinks(r.relayDial())
	t.Cleanup(r.links.Close)
	r.client = holder.NewClient(r.links.For("the container"), key[:])
	return r
}

// relayDial runs "cairn-sidecar relay" and joins its stdio, as a runtime's
// exec does; it counts the relays it started.
func (r *running) relayDial() holder.DialRelay {
	return func(ctx context.Context, _ string) (net.Conn, error) {
		relay := exec.Command(holderBin, holder.CommandRelay, r.socket)
		in, err := relay.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := relay.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := relay.Start(); err != nil {
			return nil, err
		}
		r.relays.Add(1)
		r.relayMu.Lock()
		r.lastRelay = relay
		r.relayMu.Unlock()
		return holder.NewStreamConn(out, in, func() error {
			_ = in.Close()
			_ = relay.Process.Kill()
			return relay.Wait()
		}), nil
	}
}

func attach(t *testing.T, c *holder.Client, role string) *ptyshelltest.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ptyshelltest.Guard)
	defer cancel()
	conn, err := c.Attach(ctx, role, ptyshell.Size{Cols: 80, Rows: 24})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &ptyshelltest.Conn{Conn: conn}
}

// readOutput reads OUTPUT until want has shown, past the STATUS frames a
// connection starts with.
func readOutput(c *ptyshelltest.Conn, want string) ([]byte, error) {
	var out []byte
	for !strings.Contains(string(out), want) {
		f, err := c.Next()
		if err != nil {
			return out, err
		}
		switch f.Type {
		case ptyshell.FrameOutput:
			out = append(out, f.Payload...)
		case ptyshell.FrameStatus:
		default:
			return out, fmt.Errorf("frame 0x%02x while waiting for output %q", byte(f.Type), want)
		}
	}
	return out, nil
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), ptyshelltest.Guard)
	t.Cleanup(cancel)
	return c
}

// TestHolderKeepsTheShellAcrossConnections: a writer types through the
// relay, leaves, and the next writer starts from the screen it left; a
// watcher sees the same; the end is reported with the recording, whose
// digest is the one announced, and a release lets the holder exit 0.
func TestHolderKeepsTheShellAcrossConnections(t *testing.T) {
	h := startHolder(t, testConfig(t))
	w := attach(t, h.client, ptyshell.RoleWriter)
	require.NoError(t, w.SendInput([]byte("echo hi-$((6*7))\r")))
	_, err := readOutput(w, "hi-42")
	require.NoError(t, err)
	require.NoError(t, w.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second)))
	require.Eventually(t, func() bool {
		st, err := h.client.State(ctx(t))
		return err == nil && st.Running && st.Detached
	}, ptyshelltest.Guard, 10*time.Millisecond, "the shell runs on, detached")

	again := attach(t, h.client, ptyshell.RoleWriter)
	_, err = readOutput(again, "hi-42")
	require.NoError(t, err, "the render of the screen shows what was typed before")
	watcher := attach(t, h.client, ptyshell.RoleWatcher)
	_, err = readOutput(watcher, "hi-42")
	require.NoError(t, err)

	st, err := h.client.End(ctx(t))
	require.NoError(t, err)
	require.False(t, st.Running)
	require.Equal(t, ptyshell.ReasonTerminated, st.End.Reason)
	require.NotNil(t, st.End.Recording)

	body, err := h.client.Recording(ctx(t))
	require.NoError(t, err)
	cast, err := io.ReadAll(body)
	require.NoError(t, err)
	require.NoError(t, body.Close())
	sum := sha256.Sum256(cast)
	require.Equal(t, st.End.Recording.SHA256, hex.EncodeToString(sum[:]))
	require.EqualValues(t, st.End.Recording.Size, len(cast))
	require.Contains(t, string(cast), "hi-42")

	require.NoError(t, h.client.Release(ctx(t)))
	require.NoError(t, h.cmd.Wait(), "released, the holder exits 0")
	require.Empty(t, h.stderr.String(), "the holder's own output carries nothing")
	require.NotContains(t, h.stderr.String(), "hi-42")
}

// TestHolderReportsTheShellsExit: the shell's own exit ends it with its
// code, on the connection and in the state.
func TestHolderReportsTheShellsExit(t *testing.T) {
	h := startHolder(t, testConfig(t))
	w := attach(t, h.client, ptyshell.RoleWriter)
	require.NoError(t, w.SendInput([]byte("exit 3\r")))
	tr := w.Collect()
	require.Equal(t, 1, tr.Exits)
	require.Equal(t, 3, tr.Exit.ExitCode)
	require.Equal(t, ptyshell.ReasonExited, tr.Exit.Reason)
	st, err := h.client.State(ctx(t))
	require.NoError(t, err)
	require.False(t, st.Running)
	require.Equal(t, 3, st.End.ExitCode)
	_, err = h.client.Attach(ctx(t), ptyshell.RoleWriter, ptyshell.Size{})
	require.ErrorIs(t, err, holder.ErrEnded)
}

// TestHolderRefusesWithoutProof: a request without a proof, with a proof
// of another key, or with a proof already used, is refused; the same
// request with a fresh proof is served.
func TestHolderRefusesWithoutProof(t *testing.T) {
	h := startHolder(t, testConfig(t))
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", h.socket)
	}}}
	get := func(sign func(*http.Request)) int {
		req, err := http.NewRequest(http.MethodGet, "http://holder"+holder.PathState, nil)
		require.NoError(t, err)
		sign(req)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, get(func(*http.Request) {}))
	other := sha256.Sum256([]byte("another secret"))
	require.Equal(t, http.StatusForbidden, get(func(r *http.Request) { require.NoError(t, holder.Sign(r, other[:], time.Now())) }))
	stale := time.Now().Add(-10 * time.Minute)
	require.Equal(t, http.StatusForbidden, get(func(r *http.Request) { require.NoError(t, holder.Sign(r, h.key, stale)) }))

	var proof string
	require.Equal(t, http.StatusOK, get(func(r *http.Request) {
		require.NoError(t, holder.Sign(r, h.key, time.Now()))
		proof = r.Header.Get(holder.ProofHeader)
	}))
	require.Equal(t, http.StatusForbidden, get(func(r *http.Request) { r.Header.Set(holder.ProofHeader, proof) }), "a proof is good once")
}

// TestBridgeRelaysAClientToTheHolder: a client served through Bridge sees
// what a client of the holder sees; its close detaches the shell without
// ending it.
func TestBridgeRelaysAClientToTheHolder(t *testing.T) {
	h := startHolder(t, testConfig(t))
	results := make(chan holder.BridgeResult, 1)
	up := websocket.Upgrader{Subprotocols: []string{ptyshell.SubprotocolV2}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shell, err := h.client.Attach(r.Context(), ptyshell.RoleWriter, ptyshell.Size{Cols: 80, Rows: 24})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		client, err := up.Upgrade(w, r, nil)
		if err != nil {
			_ = shell.Close()
			return
		}
		results <- holder.Bridge(context.Background(), client, shell, holder.BridgeOptions{WriteWait: 10 * time.Second})
	}))
	defer srv.Close()
	c := ptyshelltest.DialV2(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	require.NoError(t, c.SendInput([]byte("printf 'x%.0s' $(seq 1 50000) | wc -c; echo bridged-$((2*21))\r")))
	_, err := readOutput(c, "bridged-42")
	require.NoError(t, err)
	require.NoError(t, c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second)))
	res := <-results
	require.Equal(t, websocket.CloseNormalClosure, res.Code)
	require.Positive(t, res.BytesIn)
	require.Positive(t, res.BytesOut)
	st, err := h.client.State(ctx(t))
	require.NoError(t, err)
	require.True(t, st.Running, "a client's close leaves the shell running")
}

// TestRelayCarriesManyConnections: a server's requests and attachments to
// one holder share one relay, several at a time; a relay that dies is
// replaced at the next dial, and the shell never notices.
func TestRelayCarriesManyConnections(t *testing.T) {
	h := startHolder(t, testConfig(t))
	w := attach(t, h.client, ptyshell.RoleWriter)
	watchers := make([]*ptyshelltest.Conn, 3)
	for i := range watchers {
		watchers[i] = attach(t, h.client, ptyshell.RoleWatcher)
	}
	for range 5 {
		_, err := h.client.State(ctx(t))
		require.NoError(t, err)
	}
	require.NoError(t, w.SendInput([]byte("echo many-$((6*7))\r")))
	for _, c := range append(watchers, w) {
		_, err := readOutput(c, "many-42")
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, h.relays.Load(), "every connection rode the one relay")
	require.Equal(t, 1, h.links.Open())

	h.relayMu.Lock()
	require.NoError(t, h.lastRelay.Process.Kill())
	h.relayMu.Unlock()
	_, err := w.Next() // the writer's stream went with its relay
	for err == nil {
		_, err = w.Next()
	}
	again := attach(t, h.client, ptyshell.RoleWriter)
	_, err = readOutput(again, "many-42")
	require.NoError(t, err, "a new relay reaches the same shell")
	require.EqualValues(t, 2, h.relays.Load())
	st, err := h.client.State(ctx(t))
	require.NoError(t, err)
	require.True(t, st.Running)
}

// TestHolderKeepsABurstWhole: a burst the terminal holds more of than one
// read reaches a connection whole and in order, however the holder chunks it.
func TestHolderKeepsABurstWhole(t *testing.T) {
	h := startHolder(t, testConfig(t))
	w := attach(t, h.client, ptyshell.RoleWriter)
	require.NoError(t, w.SendInput([]byte("seq 1 30000; echo burst-$((6*7))\r")))
	out, err := readOutput(w, "burst-42")
	require.NoError(t, err)
	text := string(out)
	// The terminal may echo the command before the shell prints its
	// prompt, so the output starts at its first two lines, not after a newline.
	start := strings.Index(text, "1\r\n2\r\n")
	require.GreaterOrEqual(t, start, 0, "the first line shows")
	var want strings.Builder
	for i := 1; i <= 30000; i++ {
		fmt.Fprintf(&want, "%d\r\n", i)
	}
	require.True(t, strings.HasPrefix(text[start:], want.String()), "every line, in order")
}

// TestHolderSignalsTheForegroundJob: a signal goes to the job at the
// prompt, which decides what it means, not to the shell; a name that is no
// signal a client may send is refused, and a shell that exited takes none.
func TestHolderSignalsTheForegroundJob(t *testing.T) {
	h := startHolder(t, testConfig(t))
	w := attach(t, h.client, ptyshell.RoleWriter)
	require.NoError(t, w.SendInput([]byte("sh -c 'trap \"echo got-usr1\" USR1; trap \"echo got-term; exit 5\" TERM; echo trapping; while :; do sleep 0.05; done'\r")))
	_, err := readOutput(w, "trapping\r\n")
	require.NoError(t, err)
	require.NoError(t, h.client.Signal(ctx(t), "USR1"))
	_, err = readOutput(w, "got-usr1")
	require.NoError(t, err)
	require.NoError(t, h.client.Signal(ctx(t), "TERM"))
	_, err = readOutput(w, "got-term")
	require.NoError(t, err)
	require.NoError(t, w.SendInput([]byte("echo shell-$((40+2))\r")))
	_, err = readOutput(w, "shell-42")
	require.NoError(t, err, "the shell itself took no TERM: it runs on")

	var se *holder.StatusError
	require.ErrorAs(t, h.client.Signal(ctx(t), "SEGV"), &se)
	require.Equal(t, http.StatusBadRequest, se.Code)
	require.NoError(t, w.SendInput([]byte("exit 0\r")))
	w.Collect()
	require.ErrorAs(t, h.client.Signal(ctx(t), "INT"), &se)
	require.Equal(t, http.StatusConflict, se.Code)
}
