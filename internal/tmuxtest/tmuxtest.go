// Package tmuxtest drives a program in a real terminal for end-to-end
// tests: tmux on a private socket (only it is killed at cleanup), keys sent
// with send-keys, the screen read with capture-pane. Under CI=true a
// missing tmux fails the test; elsewhere it skips and says why.
package tmuxtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// pollEvery is how often WaitFor reads the screen. A terminal shows no
// events to wait on; reading it is the only way to see what a person sees.
const pollEvery = 100 * time.Millisecond

// Pane is one program running in its own tmux server.
type Pane struct {
	// Poll is how often WaitFor reads the screen; default 100 ms. A
	// measurement may read it more often.
	Poll   time.Duration
	t      testing.TB
	socket string
	target string
	last   string // the latest capture, logged when a wait fails
}

// Options shape the terminal.
type Options struct {
	Width, Height int      // default 120×40
	Env           []string // KEY=VALUE set for the program (besides TERM)
	Dir           string   // working directory; default the test's
}

// Start runs argv in a fresh tmux server at the given size. The pane stays
// after the program exits (remain-on-exit), so its last screen and exit
// status can be read.
func Start(t testing.TB, o Options, argv ...string) *Pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is required under CI=true (make deps installs it): %v", err)
		}
		t.Skipf("tmux is not installed (set CI=true to fail instead): %v", err)
	}
	if o.Width == 0 {
		o.Width, o.Height = 120, 40
	}
	p := &Pane{Poll: pollEvery, t: t, socket: "cairn-" + strings.ToLower(ulid.Make().String()), target: "main"}
	// One invocation: the option is set before the program can exit.
	args := []string{"start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
		"new-session", "-d", "-s", p.target, "-x", strconv.Itoa(o.Width), "-y", strconv.Itoa(o.Height)}
	if o.Dir != "" {
		args = append(args, "-c", o.Dir)
	}
	for _, kv := range append([]string{"TERM=xterm-256color"}, o.Env...) {
		args = append(args, "-e", kv)
	}
	// The program runs through env so that its argv needs no shell quoting.
	args = append(args, append([]string{"env"}, argv...)...)
	p.tmux(args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen of %v:\n%s", argv, p.Capture())
		}
		_, _ = p.run("kill-server")
	})
	return p
}

// Close ends the pane's tmux server and its program now, before the
// test's end (when a later check counts processes). Its last screen is
// gone with it.
func (p *Pane) Close() { _, _ = p.run("kill-server") }

// tmux runs one tmux command on the private socket and fails the test on
// error.
func (p *Pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return out
}

func (p *Pane) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-L", p.socket}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Keys sends tmux key names ("j", "Enter", "C-c", "Escape").
func (p *Pane) Keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", p.target}, keys...)...)
}

// Type sends text literally, as if pasted key by key.
func (p *Pane) Type(text string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", p.target, "-l", text)
}

// Resize changes the window's size; the program sees SIGWINCH.
func (p *Pane) Resize(width, height int) {
	p.t.Helper()
	p.tmux("resize-window", "-t", p.target, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height))
}

// Capture returns the visible screen as plain text, one line per row.
func (p *Pane) Capture() string {
	p.t.Helper()
	out, err := p.run("capture-pane", "-p", "-t", p.target)
	if err != nil {
		return fmt.Sprintf("(capture failed: %v: %s)", err, out)
	}
	p.last = out
	return out
}

// WaitFor reads the screen until ok accepts it, or fails the test after
// timeout with the last screen. It returns the accepted screen.
func (p *Pane) WaitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := p.Capture()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %s for %s; the screen:\n%s", timeout, what, screen)
		}
		time.Sleep(p.Poll)
	}
}

// WaitForText waits until the screen shows every one of texts.
func (p *Pane) WaitForText(timeout time.Duration, texts ...string) string {
	p.t.Helper()
	return p.WaitFor(fmt.Sprintf("%q", texts), timeout, func(screen string) bool {
		for _, s := range texts {
			if !strings.Contains(screen, s) {
				return false
			}
		}
		return true
	})
}

// WaitForValues reads the screen until re's first group has matched n
// different values, over one screen or several — a count moving on, say.
// It returns, in the order seen, the first match (re's
// FindStringSubmatch) that showed each value. It fails the test after
// timeout with the last screen and the values seen so far.
func (p *Pane) WaitForValues(timeout time.Duration, re *regexp.Regexp, n int) [][]string {
	p.t.Helper()
	var seen []string
	var matches [][]string
	deadline := time.Now().Add(timeout)
	for {
		screen := p.Capture()
		for _, m := range re.FindAllStringSubmatch(screen, -1) {
			if len(m) > 1 && !slices.Contains(seen, m[1]) {
				seen = append(seen, m[1])
				matches = append(matches, m)
			}
		}
		if len(seen) >= n {
			return matches
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %s for %d different values of %s, saw %q; the screen:\n%s", timeout, n, re, seen, screen)
		}
		time.Sleep(p.Poll)
	}
}

// Exited reports whether the program has ended, and its exit status.
func (p *Pane) Exited() (bool, int) {
	p.t.Helper()
	out := strings.TrimRight(p.tmux("display-message", "-p", "-t", p.target, "#{pane_dead} #{pane_dead_status} #{pane_dead_signal}"), "\r\n")
	fields := strings.Split(out, " ") // positional: an empty status stays a field
	if len(fields) != 3 || fields[0] != "1" {
		return false, 0
	}
	if code, err := strconv.Atoi(fields[1]); err == nil {
		return true, code
	}
	// Killed by a signal: no status, the signal instead; reported as a
	// shell does, 128 + the signal. Neither yet: tmux marks the pane dead
	// a moment before it records them.
	sig, err := strconv.Atoi(fields[2])
	return err == nil, 128 + sig
}

// WaitExit waits for the program to end and returns its exit status. (A
// program that exits in its first instant may leave tmux without a status
// to report; the programs under test here run until told to stop.)
func (p *Pane) WaitExit(timeout time.Duration) int {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	pid := p.PID()
	for {
		if dead, code := p.Exited(); dead {
			return code
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the program did not exit within %s; the screen:\n%s", timeout, p.Capture())
		}
		p.nudgeReap(pid)
		time.Sleep(pollEvery)
	}
}

// nudgeReap wakes the tmux server when the program has exited but tmux
// has not reaped it: seen here, a tmux server that missed the SIGCHLD
// leaves the program a zombie and the pane alive indefinitely. A second
// SIGCHLD makes it collect the child and record its status.
func (p *Pane) nudgeReap(pid int) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return
	}
	// The state follows the command name, which is in parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	if len(bytes.TrimSpace(rest)) == 0 || bytes.TrimSpace(rest)[0] != 'Z' {
		return
	}
	server, err := strconv.Atoi(strings.TrimSpace(p.tmux("display-message", "-p", "#{pid}")))
	if err == nil {
		_ = syscall.Kill(server, syscall.SIGCHLD)
	}
}

// PID is the program's process ID (for reading its /proc entries).
func (p *Pane) PID() int {
	p.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(p.tmux("display-message", "-p", "-t", p.target, "#{pane_pid}")))
	if err != nil {
		p.t.Fatalf("pane pid: %v", err)
	}
	return pid
}

// Buffer returns tmux's paste buffer (what the program copied with OSC 52
// when set-clipboard is on).
func (p *Pane) Buffer() string {
	p.t.Helper()
	out, _ := p.run("show-buffer")
	return out
}

// SetClipboard turns tmux's set-clipboard on, so OSC 52 copies land in its
// buffer.
func (p *Pane) SetClipboard() {
	p.t.Helper()
	p.tmux("set-option", "-s", "set-clipboard", "on")
}
