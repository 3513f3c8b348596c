package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

func TestShellGuards(t *testing.T) {
	t.Parallel()
	t.Run("NeedsReady", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.key("s")
		require.Equal(t, "i shell needs volume READY — v provisions it", h.statusLine())
		require.NotContains(t, hintLine(h), "s shell", "disabled keys are not hinted")
	})
	t.Run("ServerHasItOff", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
			return &cairn.ShellList{Enabled: false}, nil
		}
		h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		h.size(120, 40).hello()
		h.key("s")
		require.Equal(t, "i the server has the shell turned off (shell.enable)", h.statusLine())
		h.key("?")
		helpTo(h, "(volume at /mnt/cairn/ws) — the server has the shell turned o")
	})
	t.Run("ReadOnlyHidesIt", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *config.Config) { c.ReadOnly = true })
		h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		h.size(120, 40).hello()
		h.key("s")
		require.Empty(t, h.m.ops.Tasks())
		require.Nil(t, h.m.modal)
	})
}

func readyWorkspace(h *harness) *cairn.Workspace {
	w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
	h.size(120, 40).hello()
	return w
}

func TestShellRefusalIsAToast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyWorkspace(h)
	h.b.ShellFunc = func(context.Context, string, ptyshell.Size, string) (*ptyshell.Session, error) {
		return nil, &cairn.Error{Reason: cairn.ReasonTooManyShells, Status: 429, RequestID: "req-7"}
	}
	h.key("s")
	require.Equal(t, "✕ error: shell on ws-alpha: too many shells are open on the server — end one first", h.statusLine())
	require.Empty(t, h.m.ops.Tasks())
	require.Empty(t, h.m.shell.Blocked(), "a 429 is not remembered")
	h.b.ShellFunc = func(context.Context, string, ptyshell.Size, string) (*ptyshell.Session, error) {
		return nil, &cairn.Error{Reason: cairn.ReasonForbidden, Status: 403}
	}
	h.key("s")
	require.Equal(t, "this token lacks the shell scope", h.m.shell.Blocked(), "a 403 is")
	h.key("esc", "s")
	require.Equal(t, "i this token lacks the shell scope", h.statusLine())
}

func TestShellDialSizeTermAndCancel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyWorkspace(h)
	var got ptyshell.Size
	var term string
	h.b.ShellFunc = func(ctx context.Context, _ string, size ptyshell.Size, tm string) (*ptyshell.Session, error) {
		got, term = size, tm
		return nil, errors.New("refused")
	}
	h.key("s")
	require.Equal(t, ptyshell.Size{Cols: 120, Rows: 40}, got)
	require.Equal(t, "xterm-256color", term)

	h.key("esc")              // the error toast
	h.hop(modeltest.Key("s")) // the dial's Cmd stays in flight
	require.Contains(t, h.statusLine(), "opening shell on ws-alpha… (esc cancels)")
	h.key("esc")
	require.Equal(t, "i cancelled the shell", h.statusLine())
	require.Empty(t, h.m.ops.Tasks())
}

// execFake is a shell Command whose session ends as chosen.
type execFake struct {
	result ptyshell.Result
	err    error
}

func (f *execFake) Run() error              { return f.err }
func (f *execFake) SetStdin(io.Reader)      {}
func (f *execFake) SetStdout(io.Writer)     {}
func (f *execFake) SetStderr(io.Writer)     {}
func (f *execFake) Result() ptyshell.Result { return f.result }

func TestShellHandsOverWithExec(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := readyWorkspace(h)
	var opts shell.Options
	h.m.shell.SetFactory(func(_ *ptyshell.Session, o shell.Options) (shell.Command, error) {
		opts = o
		return &execFake{}, nil
	})
	h.b.ShellFunc = func(context.Context, string, ptyshell.Size, string) (*ptyshell.Session, error) { return nil, nil }
	h.hop(modeltest.Key("s")) // the dial's Cmd stays in flight
	_, cmd := h.m.Update(shell.DialedMsg{Dial: h.m.shell.Dialing(), WSID: w.ID, WSName: w.Name})
	require.Equal(t, shell.NewOptions("ws-alpha", "ctrl+]", "auto"), opts)
	require.Contains(t, msgTypes(cmd), "tea.execMsg", "the terminal goes to the shell through tea.Exec")
}

func msgTypes(cmd tea.Cmd) []string {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		var out []string
		for _, c := range msg {
			out = append(out, msgTypes(c)...)
		}
		return out
	default:
		return []string{fmt.Sprintf("%T", msg)}
	}
}

func TestShellExitMessages(t *testing.T) {
	t.Parallel()
	exit := func(code int, reason ptyshell.Reason) ptyshell.Result {
		return ptyshell.Result{Ending: ptyshell.EndExit, Exit: ptyshell.Exit{ExitCode: code, Reason: reason}}
	}
	for _, c := range []struct {
		name  string
		x     shell.ExitedMsg
		level toast.Level
		text  string
	}{
		{"Zero", shell.ExitedMsg{Result: exit(0, ptyshell.ReasonExited)}, toast.LevelInfo, "shell exited: status 0 (ws-alpha)"},
		{"Three", shell.ExitedMsg{Result: exit(3, ptyshell.ReasonExited)}, toast.LevelInfo, "shell exited: status 3 (ws-alpha)"},
		{"Idle", shell.ExitedMsg{Result: exit(129, ptyshell.ReasonIdleTimeout)}, toast.LevelWarn, "shell on ws-alpha ended: idle timeout (status 129)"},
		{"Lost", shell.ExitedMsg{Result: ptyshell.Result{Ending: ptyshell.EndLost}, Err: errors.New("eof")}, toast.LevelError,
			"shell on ws-alpha lost its connection (no exit status)"},
		{"Detached", shell.ExitedMsg{Result: ptyshell.Result{Ending: ptyshell.EndDetach}}, toast.LevelInfo, "left the shell on ws-alpha; the server ends it"},
		{"DetachedV2KeepsRunning", shell.ExitedMsg{ShellID: "sh-1", Detached: 5 * time.Minute, ShellsKey: "W",
			Result: ptyshell.Result{Ending: ptyshell.EndDetach}}, toast.LevelInfo,
			"detached from the shell on ws-alpha: it keeps running — W lists it to attach again — and ends after 5m detached"},
		{"DetachedV2TimeoutUnknown", shell.ExitedMsg{ShellID: "sh-1", ShellsKey: ":shells",
			Result: ptyshell.Result{Ending: ptyshell.EndDetach}}, toast.LevelInfo,
			"detached from the shell on ws-alpha: it keeps running — :shells lists it to attach again — and ends after the server's detached timeout"},
		{"SignalV2KeepsRunning", shell.ExitedMsg{ShellID: "sh-1", Detached: 90 * time.Minute, ShellsKey: "W",
			Result: ptyshell.Result{Ending: ptyshell.EndSignal, Signal: syscall.SIGTERM}}, toast.LevelWarn,
			"detached from the shell on ws-alpha on terminated: it keeps running — W lists it to attach again — and ends after 1h30m detached"},
		{"SignalV1", shell.ExitedMsg{Result: ptyshell.Result{Ending: ptyshell.EndSignal, Signal: syscall.SIGHUP}}, toast.LevelWarn,
			"left the shell on ws-alpha on hangup; the server ends it"},
		{"WatchLeft", shell.ExitedMsg{Watch: true, Result: ptyshell.Result{Ending: ptyshell.EndDetach}}, toast.LevelInfo,
			"stopped watching the shell on ws-alpha — it goes on"},
		{"NoTerminal", shell.ExitedMsg{Err: ptyshell.ErrNotTerminal}, toast.LevelError, "a shell needs a terminal (stdin and stdout)"},
		{"NeverZeroWithoutExit", shell.ExitedMsg{}, toast.LevelError, "shell on ws-alpha ended without an exit status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.x.WSName = "ws-alpha"
			level, text := shell.End(c.x)
			require.Equal(t, c.level, level)
			require.Equal(t, c.text, text)
		})
	}
}

func TestShellReturnResyncsAndSizes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := readyWorkspace(h)
	lists := 0
	h.b.FindWorkspacesFunc = func(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
		lists++
		return h.b.Client.FindWorkspaces(ctx, f)
	}
	_, cmd := h.m.Update(shell.ExitedMsg{WSID: w.ID, WSName: w.Name,
		Result: ptyshell.Result{Ending: ptyshell.EndExit, Exit: ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited}}})
	require.Contains(t, msgTypes(cmd), "tea.windowSizeMsg", "the size is asked again")
	for _, msg := range h.run(cmd) {
		h.send(msg)
	}
	require.Positive(t, lists, "a resync ran")
	require.Equal(t, "i shell exited: status 3 (ws-alpha)", h.statusLine())
	h.key("j")
	require.Equal(t, "i shell exited: status 3 (ws-alpha)", h.statusLine(), "the next key is handled like any")
}

// TestCancelledDialClosesOutsideUpdate: a session that arrives after its
// dial was cancelled is closed by a Cmd, never inside Update, where Close
// could wait a second for the server.
func TestCancelledDialClosesOutsideUpdate(t *testing.T) {
	t.Parallel()
	s := clienttest.New(t)
	ws := s.AddWorkspace("ws-alpha", cairn.VolumeReady)
	sess, err := s.Client(t).Shell(context.Background(), ws.ID, ptyshell.Size{Cols: 80, Rows: 24}, "xterm")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })

	h := newHarness(t)
	_, cmd := h.m.Update(shell.DialedMsg{Dial: 41, WSID: ws.ID, WSName: ws.Name, Session: sess}) // no dial 41 is in flight
	require.Equal(t, ptyshell.EndNone, sess.Result().Ending, "Update did not close the session")
	require.NotNil(t, cmd)
	h.run(cmd)
	require.Equal(t, ptyshell.EndDetach, sess.Result().Ending, "the Cmd did")
}

// TestShellDialsV2WhenOffered: a server with v2 creates the shell and the
// session attaches to it; the hand-over's command then reattaches after a
// lost connection. A server without v2 (the fake's default) gets v1's dial,
// as every other test here shows.
func TestShellDialsV2WhenOffered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := readyWorkspace(h)
	var created, attached []string
	h.b.CreateShellFunc = func(_ context.Context, wsID string, _ ptyshell.Size, _ string) (*cairn.ShellSessionInfo, error) {
		created = append(created, wsID)
		return &cairn.ShellSessionInfo{ShellID: "sh-1", Secret: "s3cret", DetachedTimeoutSecs: 300}, nil
	}
	h.b.AttachShellFunc = func(_ context.Context, id, secret string, _ ptyshell.Size) (*ptyshell.Session, error) {
		attached = append(attached, id+"/"+secret)
		return nil, nil
	}
	h.b.ShellFunc = func(context.Context, string, ptyshell.Size, string) (*ptyshell.Session, error) {
		t.Error("a v2 server is not dialed with v1")
		return nil, nil
	}
	lost := ptyshell.Result{Ending: ptyshell.EndLost}
	var made []shell.Options
	h.m.shell.SetFactory(func(_ *ptyshell.Session, o shell.Options) (shell.Command, error) {
		made = append(made, o)
		if len(made) == 1 {
			return &execFake{result: lost}, nil
		}
		return &execFake{}, nil
	})
	var dialed shell.DialedMsg
	queue := []tea.Msg{modeltest.Key("s")}
	for len(queue) > 0 && dialed.Dial == 0 { // up to the dial's answer, not delivered
		msg := queue[0]
		queue = queue[1:]
		if d, ok := msg.(shell.DialedMsg); ok {
			dialed = d
			continue
		}
		_, cmd := h.m.Update(msg)
		queue = append(queue, h.run(cmd)...)
	}
	require.Equal(t, []string{w.ID}, created)
	require.NotNil(t, dialed.V2)
	_, exec := h.m.Update(dialed)
	require.Contains(t, msgTypes(exec), "tea.execMsg")
	require.Len(t, made, 1)
	require.True(t, made[0].Resumable, "a v2 shell says it keeps running when left")
	require.Equal(t, []string{"sh-1/s3cret"}, attached)
}

// TestShellsScreenReopens: enter on the shells screen attaches as the
// writer to a shell this TUI created (it holds the secret), and watches any
// other read-only.
func TestShellsScreenReopens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := readyWorkspace(h)
	h.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
		return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{{ID: "sh-other", WorkspaceID: w.ID}}}, nil
	}
	var watched, attached []string
	h.b.WatchShellFunc = func(_ context.Context, id string, _ ptyshell.Size) (*ptyshell.Session, error) {
		watched = append(watched, id)
		return nil, nil
	}
	h.b.AttachShellFunc = func(_ context.Context, id, secret string, _ ptyshell.Size) (*ptyshell.Session, error) {
		attached = append(attached, id+"/"+secret)
		return nil, nil
	}
	var made []shell.Options
	h.m.shell.SetFactory(func(_ *ptyshell.Session, o shell.Options) (shell.Command, error) {
		made = append(made, o)
		return &execFake{}, nil
	})
	h.command("shells")
	h.send(modeltest.Key("enter"))
	require.Equal(t, []string{"sh-other"}, watched, "not this TUI's: watched")
	require.Len(t, made, 1)
	require.Contains(t, made[0].Workspace, "(watching, read-only)")

	h.send(shell.ExitedMsg{WSID: w.ID, WSName: w.Name}) // the watch ends
	h.b.CreateShellFunc = func(context.Context, string, ptyshell.Size, string) (*cairn.ShellSessionInfo, error) {
		return &cairn.ShellSessionInfo{ShellID: "sh-mine", Secret: "k3y", DetachedTimeoutSecs: 300}, nil
	}
	h.key("1").send(modeltest.Key("s")) // creates sh-mine and attaches once
	h.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
		return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{{ID: "sh-mine", WorkspaceID: w.ID}}}, nil
	}
	h.command("shells")
	h.send(modeltest.Key("enter"))
	require.Equal(t, []string{"sh-mine/k3y", "sh-mine/k3y"}, attached, "this TUI's own: attached again as its writer")
}

// TestShellSecretsOutliveTheProgram: with the state directory's secrets
// (what cairn-tui passes), a v2 shell this TUI created is kept there; the
// next program — or `cairn shell --attach` — attaches to it as its writer,
// and its end forgets it.
func TestShellSecretsOutliveTheProgram(t *testing.T) {
	t.Parallel()
	keep := client.ShellSecrets{Dir: filepath.Join(t.TempDir(), "shells")}
	withKeep := func(o *Options) { o.ShellSecrets = keep }
	first := newHarnessWith(t, withKeep)
	w := readyWorkspace(first)
	first.b.CreateShellFunc = func(context.Context, string, ptyshell.Size, string) (*cairn.ShellSessionInfo, error) {
		return &cairn.ShellSessionInfo{ShellID: "sh-kept", Secret: "k3pt", DetachedTimeoutSecs: 300}, nil
	}
	first.b.AttachShellFunc = func(context.Context, string, string, ptyshell.Size) (*ptyshell.Session, error) { return nil, nil }
	first.m.shell.SetFactory(func(*ptyshell.Session, shell.Options) (shell.Command, error) { return &execFake{}, nil })
	first.send(modeltest.Key("s"))
	info, ok := keep.Lookup("sh-kept")
	require.True(t, ok, "the secret is in the state directory")
	require.Equal(t, "k3pt", info.Secret)

	next := newHarnessWith(t, withKeep)
	readyWorkspace(next)
	next.b.FindShellsFunc = func(context.Context, string) (*cairn.ShellList, error) {
		return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{{ID: "sh-kept", WorkspaceID: w.ID}}}, nil
	}
	var attached []string
	next.b.AttachShellFunc = func(_ context.Context, id, secret string, _ ptyshell.Size) (*ptyshell.Session, error) {
		attached = append(attached, id+"/"+secret)
		return nil, nil
	}
	next.b.WatchShellFunc = func(context.Context, string, ptyshell.Size) (*ptyshell.Session, error) {
		t.Error("a shell whose secret is kept is attached, not watched")
		return nil, nil
	}
	next.m.shell.SetFactory(func(*ptyshell.Session, shell.Options) (shell.Command, error) { return &execFake{}, nil })
	next.command("shells")
	next.send(modeltest.Key("enter"))
	require.Equal(t, []string{"sh-kept/k3pt"}, attached)

	next.send(shell.ExitedMsg{WSID: w.ID, WSName: w.Name, ShellID: "sh-kept",
		Result: ptyshell.Result{Ending: ptyshell.EndExit, Exit: ptyshell.Exit{Reason: ptyshell.ReasonExited}}})
	_, ok = keep.Lookup("sh-kept")
	require.False(t, ok, "an ended shell's secret is forgotten")
}
