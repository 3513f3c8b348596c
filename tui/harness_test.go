package tui

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	time.Local = time.UTC // goldens show local times
	os.Exit(m.Run())
}

// timer is a recorded After: it fires only when the test says so.
type timer struct {
	d   time.Duration
	msg func() tea.Msg
}

type timerMsg struct{ t timer }

// harness drives the root model synchronously: Cmds run at once (the fake
// server answers each call before it returns), timers are recorded, the
// hub wait is off.
type harness struct {
	t      testing.TB
	m      *Model
	b      *tuitest.Backend
	clock  *tuitest.Clock
	clip   *tuitest.Clipboard
	timers []timer
	quit   bool
}

func newHarness(t testing.TB, edit ...func(*config.Config)) *harness {
	t.Helper()
	return newHarnessWith(t, func(*Options) {}, edit...)
}

// newHarnessWith is newHarness with opt editing the model's Options last.
func newHarnessWith(t testing.TB, opt func(*Options), edit ...func(*config.Config)) *harness {
	t.Helper()
	clock := tuitest.NewClock(tuitest.Epoch())
	h := &harness{t: t, b: tuitest.NewBackend(t, clock), clock: clock, clip: &tuitest.Clipboard{}}
	cfg := tuitest.Config()
	for _, e := range edit {
		e(cfg)
	}
	o := Options{
		Config: cfg, Backend: h.b, Theme: tuitest.Theme(cfg.Glyphs == "ascii"), Clock: clock.Now, Clipboard: h.clip,
		After: func(d time.Duration, msg func() tea.Msg) tea.Cmd {
			return func() tea.Msg { return timerMsg{timer{d: d, msg: msg}} }
		},
	}
	opt(&o)
	m, err := New(o)
	require.NoError(t, err)
	m.armHub = func() tea.Cmd { return nil }
	t.Cleanup(m.Close)
	h.m = m
	return h
}

// send delivers msg and runs every Cmd it leads to.
func (h *harness) send(msg tea.Msg) *harness {
	h.t.Helper()
	queue := []tea.Msg{msg}
	for steps := 0; len(queue) > 0; steps++ {
		require.Less(h.t, steps, 10000, "message loop does not settle")
		next := h.m.filter(queue[0]) // as the program's WithFilter does
		queue = queue[1:]
		_, cmd := h.m.Update(next)
		queue = append(queue, h.run(cmd)...)
	}
	return h
}

// run executes a Cmd tree and returns the messages to deliver.
func (h *harness) run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, h.run(c)...)
		}
		return out
	case timerMsg:
		h.timers = append(h.timers, msg.t)
		return nil
	case tea.QuitMsg:
		h.quit = true
		return nil
	default:
		return []tea.Msg{msg}
	}
}

// fire delivers every recorded timer whose message matches keep.
func (h *harness) fire(keep func(tea.Msg) bool) int {
	h.t.Helper()
	var due []tea.Msg
	rest := h.timers[:0]
	for _, t := range h.timers {
		if msg := t.msg(); keep(msg) {
			due = append(due, msg)
		} else {
			rest = append(rest, t)
		}
	}
	h.timers = rest
	for _, msg := range due {
		h.send(msg)
	}
	return len(due)
}

func (h *harness) key(keys ...string) *harness {
	h.t.Helper()
	for _, k := range keys {
		h.send(modeltest.Key(k))
	}
	return h
}

// typeText sends each rune as a key.
func (h *harness) typeText(s string) *harness {
	for _, r := range s {
		h.send(modeltest.Key(string(r)))
	}
	return h
}

// size sends a window size.
func (h *harness) size(w, hh int) *harness { return h.send(tea.WindowSizeMsg{Width: w, Height: hh}) }

// hello delivers a hub batch with hello (the first lists the workspaces).
func (h *harness) hello() *harness {
	at := h.clock.Now()
	return h.send(hubMsg{batch: live.Batch{At: at, Epoch: h.m.epoch, Conn: []live.Conn{{Kind: live.ConnHello, At: at, ServerTime: at}}}})
}

// events delivers change frames as one hub batch.
func (h *harness) events(evs ...cairn.Event) *harness {
	return h.send(hubMsg{batch: live.Batch{At: h.clock.Now(), Epoch: h.m.epoch, Events: evs}})
}

func (h *harness) conn(c live.Conn) *harness {
	c.At = h.clock.Now()
	return h.send(hubMsg{batch: live.Batch{At: c.At, Epoch: h.m.epoch, Conn: []live.Conn{c}}})
}

// view is the rendered frame.
func (h *harness) view() string { return h.m.View() }

// statusLine is the last line of the frame.
func (h *harness) statusLine() string {
	lines := strings.Split(h.view(), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

func (h *harness) header() string {
	return strings.Split(h.view(), "\n")[0]
}

// seed adds workspaces to the world and lists them through hello.
func (h *harness) seed(names ...string) []*cairn.Workspace {
	var out []*cairn.Workspace
	for _, n := range names {
		out = append(out, h.b.World.AddWorkspace(n, cairn.VolumeNone, ""))
	}
	h.size(120, 40).hello()
	return out
}

func upserted(w *cairn.Workspace) cairn.Event {
	return cairn.Event{Type: cairn.EventWorkspaceUpserted, ID: w.ID, Workspace: w}
}

func artUpserted(a *cairn.Artifact) cairn.Event {
	return cairn.Event{Type: cairn.EventArtifactUpserted, ID: a.ID, Artifact: a}
}

func hintLine(h *harness) string {
	lines := strings.Split(h.view(), "\n")
	return lines[len(lines)-2]
}

func actionMsg(id string) screen.ActionMsg { return screen.ActionMsg{ID: keys.ID(id)} }

// stripStatus runs cmd and returns the status line after it.
func stripStatus(h *harness, cmd tea.Cmd) string {
	for _, msg := range h.run(cmd) {
		h.send(msg)
	}
	return h.statusLine()
}

func commonSubject() errtext.Subject { return errtext.Subject{Workspace: "ws-alpha"} }

type ctxT = context.Context

func ctxBackground() context.Context { return context.Background() }

// hop delivers msg and the messages its Cmd yields at once, but runs no
// further Cmd: an operation started there stays in flight.
func (h *harness) hop(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	for _, next := range h.run(cmd) {
		h.m.Update(next)
	}
}

// worldWS is the fake server's current row of a workspace (counts
// included), as its workspace.upserted would carry it.
func (h *harness) worldWS(id string) *cairn.Workspace {
	d, err := h.b.InspectWorkspace(context.Background(), id)
	require.NoError(h.t, err)
	return d.Workspace
}

// named matches a message by its type's name, for the timers of packages
// whose messages are their own ("feed.pollTickMsg").
func named(name string) func(tea.Msg) bool {
	return func(msg tea.Msg) bool { return fmt.Sprintf("%T", msg) == name }
}
