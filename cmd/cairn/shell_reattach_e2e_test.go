package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// seen bounds how long a screen may take to show what it should.
const seen = 20 * time.Second

// TestShellReattachRestoresTheScreen is issue 22's acceptance run on the
// real engine through the real `cairn shell` in tmux: the client is killed
// (SIGKILL: no close frame, no restore) while vi shows typed text and while
// top runs, and `cairn shell --attach ID` in a fresh terminal shows the
// same screen — the server's render of its virtual terminal, not a byte
// replay.
func TestShellReattachRestoresTheScreen(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	ws := a.readyWorkspace(t)

	for _, tc := range []struct {
		name  string
		start string // typed at the prompt
		ready []string
		then  func(p *tmuxtest.Pane)
	}{
		{name: "vi", start: "vi /mnt/cairn/ws/notes.txt", ready: []string{"~"}, then: func(p *tmuxtest.Pane) {
			p.Keys("i")
			p.Type("cairn keeps this line")
			p.Keys("Enter")
			p.Type("and this one, typed before the drop")
			p.WaitForText(seen, "and this one, typed before the drop")
		}},
		{name: "top", start: "top -d 60", ready: []string{"PID", "CPU"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir() // where the CLI keeps this shell's secret
			size := tmuxtest.Options{Width: 100, Height: 30, Env: []string{"CAIRN_URL=" + a.url, "CAIRN_TOKEN=" + shellAdminToken,
				"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state, "HOME=" + t.TempDir()}}
			p := tmuxtest.Start(t, size, st.bin, "shell", ws.Name)
			p.WaitForText(time.Minute, "/mnt/cairn/ws #")
			p.Type(tc.start)
			p.Keys("Enter")
			p.WaitForText(seen, tc.ready...)
			if tc.then != nil {
				tc.then(p)
			}
			before := stable(p)
			id := onlyShellSecret(t, state)
			require.NoError(t, syscall.Kill(p.PID(), syscall.SIGKILL), "the client dies without a word")
			require.Equal(t, 128+int(syscall.SIGKILL), p.WaitExit(seen))

			q := tmuxtest.Start(t, size, st.bin, "shell", "--attach", id)
			after := q.WaitFor("the screen as it was", time.Minute, func(screen string) bool {
				return trimScreen(screen) == before
			})
			require.Equal(t, before, trimScreen(after))
			if tc.name == "vi" {
				q.Keys("Escape") // apart from what follows, or vi takes ESC : for a key sequence
				q.WaitFor("vi's command mode", seen, func(screen string) bool { return !strings.Contains(screen, "\nI /mnt") })
				q.Type(":q!")
				q.Keys("Enter")
			} else {
				q.Type("q")
			}
			q.WaitForText(seen, "/mnt/cairn/ws #")
			q.Type("exit")
			q.Keys("Enter")
			q.WaitExit(seen)
		})
	}
}

// TestShellSurvivesAKilledClient: a command still running when its
// client is SIGKILLed finishes, and its output is there after the
// reattach — the session outlived the connection.
func TestShellSurvivesAKilledClient(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	ws := a.readyWorkspace(t)
	state := t.TempDir()
	size := tmuxtest.Options{Width: 100, Height: 30, Env: []string{"CAIRN_URL=" + a.url, "CAIRN_TOKEN=" + shellAdminToken,
		"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state, "HOME=" + t.TempDir()}}
	p := tmuxtest.Start(t, size, st.bin, "shell", ws.Name)
	p.WaitForText(time.Minute, "/mnt/cairn/ws #")
	p.Type("echo started-$((1+1)); sleep 6; echo done-$((40+2))")
	p.Keys("Enter")
	p.WaitForText(seen, "started-2") // the shell runs the line: the echo of typed text alone would not prove Enter arrived
	require.NoError(t, syscall.Kill(p.PID(), syscall.SIGKILL))
	require.Equal(t, 128+int(syscall.SIGKILL), p.WaitExit(seen))
	require.NotContains(t, p.Capture(), "done-42", "killed before the command finished")

	q := tmuxtest.Start(t, size, st.bin, "shell", "--attach", onlyShellSecret(t, state))
	q.WaitForText(seen, "done-42")
	q.Type("exit")
	q.Keys("Enter")
	require.Zero(t, q.WaitExit(seen))
}

// TestShellRidesOutANetworkDrop: the network between `cairn shell` and its
// server drops (every TCP connection cut, no close frame) while `sleep 20;
// echo done` runs; the CLI reattaches by itself, and done shows on the same
// terminal with no key pressed.
func TestShellRidesOutANetworkDrop(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	ws := a.readyWorkspace(t)
	link := newCuttableLink(t, strings.TrimPrefix(a.url, "http://"))
	size := tmuxtest.Options{Width: 100, Height: 30, Env: []string{"CAIRN_URL=http://" + link.addr(), "CAIRN_TOKEN=" + shellAdminToken,
		"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}}
	p := tmuxtest.Start(t, size, st.bin, "shell", ws.Name)
	p.WaitForText(time.Minute, "/mnt/cairn/ws #")
	p.Type("echo started-$((1+1)); sleep 20; echo done-$((40+2))")
	p.Keys("Enter")
	p.WaitForText(seen, "started-2") // running, not only echoed
	require.Positive(t, link.cut(), "the shell's connection went through the link")
	p.WaitForText(time.Minute, "done-42")
	require.GreaterOrEqual(t, link.accepted(), 2, "the CLI came back on a new connection")
	p.Type("exit")
	p.Keys("Enter")
	require.Zero(t, p.WaitExit(seen))
}

// cuttableLink forwards TCP to a server and can cut every connection at
// once, as a dropped network does: no close frame reaches either end. It
// can be pointed at another server, or at none.
type cuttableLink struct {
	ln     net.Listener
	mu     sync.Mutex
	target string // host:port; "" closes every new connection
	open   []net.Conn
	count  int
}

func newCuttableLink(t *testing.T, target string) *cuttableLink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := &cuttableLink{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); l.cut() })
	go l.serve()
	return l
}

func (l *cuttableLink) addr() string { return l.ln.Addr().String() }

// point sends the connections made from now on to target ("" to none).
func (l *cuttableLink) point(target string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.target = target
}

func (l *cuttableLink) serve() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return // the listener closed with the test
		}
		l.mu.Lock()
		target := l.target
		l.mu.Unlock()
		if target == "" {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		l.mu.Lock()
		l.open = append(l.open, in, out)
		l.count++
		l.mu.Unlock()
		go pipe(in, out)
		go pipe(out, in)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src) // ends when either side is cut
	_ = dst.Close()
}

// cut closes every connection made so far and says how many there were.
func (l *cuttableLink) cut() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.open) / 2
	for _, c := range l.open {
		_ = c.Close()
	}
	l.open = nil
	return n
}

// accepted is how many connections the link has carried.
func (l *cuttableLink) accepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// stable is the pane's screen once two captures in a row agree.
func stable(p *tmuxtest.Pane) string {
	last := ""
	screen := p.WaitFor("a settled screen", seen, func(screen string) bool {
		now := trimScreen(screen)
		settled := now == last
		last = now
		return settled
	})
	return trimScreen(screen)
}

// trimScreen drops trailing spaces of each line and trailing empty lines.
func trimScreen(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// onlyShellSecret is the ID of the one v2 shell whose secret the CLI kept.
func onlyShellSecret(t *testing.T, state string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(state, "cairn", "shells"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	return entries[0].Name()
}
