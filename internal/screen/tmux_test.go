package screen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The reference terminal is tmux: a server on a private socket per pane,
// fed bytes raw (stty -opost, so LF stays LF) by cat. When cat is done the
// pane sets its title; tmux parses a pane's output in order, so once the
// title shows, every byte before it has been applied.

var paneSeq atomic.Int64

type refPane struct {
	t    *testing.T
	sock string
}

func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is required under CI=true: %v", err)
		}
		t.Skipf("tmux is not installed (set CI=true to fail instead): %v", err)
	}
}

// feedTmux starts a cols×rows pane and writes the chunks into it in turn;
// between two chunks it calls between (if any) with the pane, then lets
// cat go on. It returns once every chunk has been applied.
func feedTmux(t *testing.T, cols, rows int, chunks [][]byte, between func(p *refPane, i int)) *refPane {
	t.Helper()
	requireTmux(t)
	p := &refPane{t: t, sock: fmt.Sprintf("cairn-screen-%d-%d", os.Getpid(), paneSeq.Add(1))}
	dir := t.TempDir()
	script := "stty -opost -echo"
	for i, c := range chunks {
		f := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(f, c, 0o600); err != nil {
			t.Fatal(err)
		}
		script += fmt.Sprintf("; cat %s; printf '\\033]2;fed-%d\\033\\\\'; read x", f, i)
	}
	// tmux pulls history lines back onto a screen that grows; x/vt pads
	// it at the bottom. A reference that is resized keeps no history, so
	// that both grow alike (the difference is in the package doc).
	history := "1000"
	if len(chunks) > 1 {
		history = "0"
	}
	p.tmux("-f", "/dev/null", "start-server", ";", "set-option", "-g", "status", "off", ";",
		"set-option", "-g", "history-limit", history, ";",
		"new-session", "-d", "-s", "main", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"-e", "TERM=xterm-256color", "sh", "-c", script+"; exec sleep 600")
	t.Cleanup(func() { _, _ = p.run("kill-server") })
	for i := range chunks {
		p.waitTitle(fmt.Sprintf("fed-%d", i))
		if i < len(chunks)-1 {
			if between != nil {
				between(p, i)
			}
			p.tmux("send-keys", "-t", "main", "Enter")
		}
	}
	return p
}

func (p *refPane) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-u", "-L", p.sock}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (p *refPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return out
}

func (p *refPane) waitTitle(want string) {
	p.t.Helper()
	waitUntil(p.t, 15*time.Second, "pane title "+want, func() bool {
		return strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_title}")) == want
	})
}

// text is the visible screen; escapes adds the SGR of every cell.
func (p *refPane) text() string { return TrimText(p.tmux("capture-pane", "-p", "-t", "main")) }
func (p *refPane) escapes() string {
	return TrimText(p.tmux("capture-pane", "-p", "-e", "-t", "main"))
}

// history is the scrollback, oldest first, as text.
func (p *refPane) history() string {
	return TrimText(p.tmux("capture-pane", "-p", "-S", "-", "-E", "-1", "-t", "main"))
}

// flags are the cursor and the modes tmux reports.
func (p *refPane) flags() string {
	return strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main",
		"visible=#{cursor_flag} alt=#{alternate_on} "+
			"ckeys=#{keypad_cursor_flag} keypad=#{keypad_flag} wrap=#{wrap_flag} insert=#{insert_flag} "+
			"origin=#{origin_flag} region=#{scroll_region_upper}-#{scroll_region_lower} "+
			"mouse=#{mouse_standard_flag}#{mouse_button_flag}#{mouse_any_flag}#{mouse_sgr_flag}"))
}

// cursor is x,y,visible,alt. tmux shows a cursor waiting to wrap (after
// the last column was written) at x = width; x/vt does not expose that
// state and keeps x = width-1, so the two are taken as one here.
func (p *refPane) cursor() string {
	var x, y, w, vis, alt int
	out := p.tmux("display-message", "-p", "-t", "main", "#{cursor_x} #{cursor_y} #{pane_width} #{cursor_flag} #{alternate_on}")
	if _, err := fmt.Sscan(out, &x, &y, &w, &vis, &alt); err != nil {
		p.t.Fatalf("cursor %q: %v", out, err)
	}
	return fmt.Sprintf("%d,%d,%d,%d", min(x, w-1), y, vis, alt)
}

func (p *refPane) resize(cols, rows int) {
	p.tmux("resize-window", "-t", "main", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
}

// waitUntil polls ok until it holds, or fails the test after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a synchronisation
	}
}

func cursorOf(s State) string {
	return fmt.Sprintf("%d,%d,%d,%d", s.CursorX, s.CursorY, b2i(s.CursorVisible), b2i(s.AltScreen))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
