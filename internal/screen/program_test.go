package screen

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// session runs a real program on a PTY and feeds everything it prints to
// a live Screen, keeping the bytes for the reference terminal.
type session struct {
	t      *testing.T
	mu     sync.Mutex
	live   *Screen
	out    []byte
	splits []int // offsets in out where the PTY was resized
	ptmx   *os.File
	tee    io.Writer // also sees every byte (a recorder), optional
	done   chan struct{}
}

func startSession(t *testing.T, cols, rows int, tee io.Writer, name string, args ...string) *session {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true: %v", name, err)
		}
		t.Skipf("%s is not installed (set CI=true to fail instead): %v", name, err)
	}
	cmd := exec.Command(name, args...)
	home := t.TempDir()
	cmd.Dir = home
	cmd.Env = []string{"TERM=xterm-256color", "HOME=" + home, "LANG=C.UTF-8", "PATH=/usr/bin:/bin", "PS1=$ "}
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, live: New(cols, rows, 1000), ptmx: ptmx, tee: tee, done: make(chan struct{})}
	go s.pump()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = ptmx.Close()
		<-s.done
		_ = cmd.Wait()
	})
	return s
}

func (s *session) pump() {
	defer close(s.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.out = append(s.out, buf[:n]...)
			_, _ = s.live.Write(buf[:n])
			if s.tee != nil {
				_, _ = s.tee.Write(buf[:n])
			}
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (s *session) typeText(text string) {
	s.t.Helper()
	if _, err := s.ptmx.WriteString(text); err != nil {
		s.t.Fatal(err)
	}
}

// waitScreen waits until the live screen shows every one of texts.
func (s *session) waitScreen(texts ...string) {
	s.t.Helper()
	waitUntil(s.t, 15*time.Second, strings.Join(texts, " & "), func() bool {
		screen := s.live.State().Text
		for _, x := range texts {
			if !strings.Contains(screen, x) {
				return false
			}
		}
		return true
	})
}

// waitOutput waits until the output holds n occurrences of marker.
func (s *session) waitOutput(marker string, n int) {
	s.t.Helper()
	waitUntil(s.t, 15*time.Second, marker, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return bytes.Count(s.out, []byte(marker)) >= n
	})
}

// resize changes the PTY and the live screen at one point of the output.
func (s *session) resize(cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.splits = append(s.splits, len(s.out))
	s.live.Resize(cols, rows)
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		s.t.Fatal(err)
	}
}

// chunks is the output cut where the PTY was resized.
func (s *session) chunks() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chunksLocked()
}

func (s *session) chunksLocked() [][]byte {
	var out [][]byte
	from := 0
	for _, at := range s.splits {
		out = append(out, bytes.Clone(s.out[from:at]))
		from = at
	}
	return append(out, bytes.Clone(s.out[from:]))
}

// check is the evidence: the output fed to tmux and to the Screen give the
// same text and cursor; the Screen's render, written to a fresh tmux pane
// of the same size, gives the same capture, attributes and modes.
func (s *session) check(cols, rows int, sizes [][2]int, history bool) {
	s.t.Helper()
	// One snapshot of the output and of the Screen fed exactly that
	// output: a program still running (top) writes on meanwhile.
	s.mu.Lock()
	chunks, st, render, scrollback := s.chunksLocked(), s.live.State(), s.live.Render(), s.live.ScrollbackText()
	c, r := s.live.Size()
	s.mu.Unlock()
	ref := feedTmux(s.t, cols, rows, chunks, func(p *refPane, i int) { p.resize(sizes[i][0], sizes[i][1]) })
	if got, want := st.Text, ref.text(); got != want {
		s.t.Fatalf("screen text differs from tmux:\n--- screen\n%s\n--- tmux\n%s", got, want)
	}
	if got, want := cursorOf(st), ref.cursor(); got != want {
		s.t.Fatalf("cursor x,y,visible,alt: screen %s, tmux %s", got, want)
	}
	again := feedTmux(s.t, c, r, [][]byte{render}, nil)
	if got, want := again.text(), ref.text(); got != want {
		s.t.Fatalf("render differs:\n--- render in tmux\n%s\n--- tmux\n%s", got, want)
	}
	if got, want := again.escapes(), ref.escapes(); got != want {
		s.t.Fatalf("render's attributes differ:\n--- render in tmux\n%q\n--- tmux\n%q", got, want)
	}
	if got, want := again.flags(), ref.flags(); got != want {
		s.t.Fatalf("render's modes differ:\nrender %s\n  tmux %s", got, want)
	}
	if got, want := again.cursor(), ref.cursor(); got != want {
		s.t.Fatalf("render's cursor x,y,visible,alt: %s, tmux %s", got, want)
	}
	if history {
		s.checkHistory(ref, again, scrollback)
	}
}

// checkHistory compares the scrollback of the Screen, of tmux fed the
// output and of tmux fed the render. tmux drops a tenth of its
// history-limit at once when full, so the newest lines are compared.
func (s *session) checkHistory(ref, again *refPane, scrollback []string) {
	s.t.Helper()
	want := strings.Split(ref.history(), "\n")
	if len(want) < 900 {
		s.t.Fatalf("tmux kept only %d lines of history", len(want))
	}
	n := len(want) - 1
	for name, got := range map[string][]string{
		"screen":         scrollback,
		"render in tmux": strings.Split(again.history(), "\n"),
	} {
		if len(got) < n || strings.Join(got[len(got)-n:], "\n") != strings.Join(want[len(want)-n:], "\n") {
			s.t.Fatalf("%s history differs from tmux's: %d lines, last %q; tmux %d, last %q", name, len(got), got[len(got)-1], len(want), want[len(want)-1])
		}
	}
}

func TestVi(t *testing.T) {
	s := startSession(t, 80, 24, nil, "vi", "-u", "NONE", "-N", "-i", "NONE", "notes.txt")
	s.waitScreen("notes.txt")
	s.typeText(":syntax on\r:set number\ri")
	s.typeText("first line typed in vi\r\tindented 日本語 wide\rthird line")
	s.waitScreen("third line", "-- INSERT --")
	s.check(80, 24, nil, false)
}

func TestTop(t *testing.T) {
	s := startSession(t, 80, 24, nil, "top", "-d", "0.3")
	s.waitOutput("top - ", 3) // the first screen and two refreshes
	s.check(80, 24, nil, false)
}

func TestTopResized(t *testing.T) {
	s := startSession(t, 80, 24, nil, "top", "-d", "0.3")
	s.waitOutput("top - ", 2)
	s.resize(100, 30)
	n := strings.Count(string(s.chunks()[1]), "top - ")
	s.waitOutput("top - ", 4+n)
	s.check(80, 24, [][2]int{{100, 30}}, false)
}

func TestLess(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "line %s %d\n", strings.Repeat("=", i%70), i)
	}
	f := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, 80, 24, nil, "less", f)
	s.waitScreen("line  0")
	s.typeText(" ")
	s.waitScreen(" 45")
	s.typeText("/== 100\r")
	s.waitScreen("== 100")
	s.check(80, 24, nil, false)
}

func TestShellPrompt(t *testing.T) {
	s := startSession(t, 80, 24, nil, "sh")
	s.waitScreen("$")
	s.typeText(`printf '\033[1mbold\033[0m \033[2mfaint\033[0m \033[3mitalic\033[0m \033[4munder\033[0m \033[5mblink\033[0m \033[7mreverse\033[0m \033[8mhidden\033[0m \033[9mstrike\033[0m\n'` + "\r")
	s.typeText(`printf '\033[31mred\033[0m \033[92mbright\033[0m \033[38;5;208m256\033[0m \033[48;2;10;20;200mtrue\033[0m wide:日本語\n'` + "\r")
	s.typeText("seq 1 3000; echo done-$((40+2))\r")
	s.waitScreen("done-42")
	s.typeText(`printf '\033[44mblue bg, erased\033[K\033[0m\n'; printf 'end of output'` + "\r")
	s.waitScreen("end of output$")
	s.check(80, 24, nil, true)
}
