// Package feed keeps cairn-tui's store in step with the server: the first
// list on hello, paged lists per scope with their retries, resyncs, the
// workspace detail the cursor rests on, the event connection's state and
// the polling fallback. It owns that state; the root model routes its
// messages to Update and hands it a Host for what the rest of the program
// does with a change.
package feed

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/store"
)

// Origin says why a list runs; it shapes the MISSING alerts.
type Origin uint8

const (
	OriginFirst Origin = iota + 1
	OriginResync
	OriginPoll
	OriginPrefetch
)

// Backend is what the feed reads of the server.
type Backend interface {
	FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error)
	InspectWorkspace(ctx context.Context, id string) (*cairn.WorkspaceDetail, error)
	ReadHead(ctx context.Context, artifactID string, n int64) ([]byte, int64, error)
}

// Host is what the feed asks of the root model from Update.
type Host interface {
	NextID() int
	// Now is the model's time (local, before the server clock offset).
	Now() time.Time
	// Changed tells the screens about ch and raises its alerts.
	Changed(ch store.Changes, o Origin) tea.Cmd
	// ErrorToast shows err as its sentence about s.
	ErrorToast(err error, s errtext.Subject) tea.Cmd
	// Scopes are the scopes of the screens on the stack.
	Scopes() []store.Scope
	// Paused reports a modal or form: polling waits.
	Paused() bool
	// FirstList is what starts with the first list (the shell check, the
	// offer of interrupted uploads).
	FirstList() tea.Cmd
}

// Feed is the store's link to the server.
type Feed struct {
	c       *deps.Deps
	host    Host
	backend Backend
	ctx     context.Context
	clock   func() time.Time
	pump    *live.Pump
	st      *store.Store

	conn   Conn
	resync resyncState
	listed bool // the first workspaces list was started
	lists  map[store.Scope]*listState

	heads *store.Heads // the first lines of small text artifacts

	selected   string // workspace whose detail is fetched
	inspectReq map[string]int
	// since is the first request ID of this feed: an answer below it was
	// asked by the feed of another connection (a context switch).
	since      int
	inspectSeq int
}

// New returns the feed of store st; it does no I/O.
func New(ctx context.Context, c *deps.Deps, host Host, b Backend, pump *live.Pump, st *store.Store, clock func() time.Time) *Feed {
	return &Feed{c: c, host: host, backend: b, ctx: ctx, clock: clock, pump: pump, st: st,
		conn: newConn(c.Config.EventsMode), lists: make(map[store.Scope]*listState), inspectReq: make(map[string]int),
		heads: store.NewHeads(32), since: host.NextID()}
}

type (
	// StartMsg begins listing without waiting for hello (events poll or
	// off).
	StartMsg struct{}
	// HelloTimeoutMsg: 1.5 s passed without hello; list anyway.
	HelloTimeoutMsg struct{}
)

// Update handles the feed's messages; ok is false for any other.
func (f *Feed) Update(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case listPageMsg:
		return f.onPage(msg), true
	case entityMsg:
		return f.onEntity(msg), true
	case retryListMsg:
		return f.onRetry(msg), true
	case pollTickMsg:
		return f.onPoll(msg), true
	case headMsg:
		f.onHead(msg)
		return nil, true
	case StartMsg:
		return f.startFirstList(), true
	case HelloTimeoutMsg:
		return f.onHelloTimeout(), true
	case inspectTickMsg:
		if msg.id == f.selected && msg.seq == f.inspectSeq {
			return f.Inspect(msg.id), true
		}
		return nil, true
	}
	return nil, false
}

// Batch applies the connection transitions and merged events of one hub
// batch: the events as one store update, then a resync if asked.
func (f *Feed) Batch(b live.Batch) tea.Cmd {
	var cmds []tea.Cmd
	for _, c := range b.Conn {
		cmds = append(cmds, f.onConn(c))
	}
	if len(b.Events) > 0 {
		f.conn.LastGood = b.At
		ch := f.st.Apply(b.Events, f.Now())
		cmds = append(cmds, f.host.Changed(ch, OriginPoll))
		if touches(ch, f.selected) {
			cmds = append(cmds, f.Inspect(f.selected))
		}
		for _, sc := range ch.Relist {
			cmds = append(cmds, f.startList(sc, OriginResync))
		}
	}
	if len(b.Resync) > 0 && f.listed {
		cmds = append(cmds, f.Resync())
	}
	f.CheckOffline()
	return tea.Batch(cmds...)
}

func touches(ch store.Changes, wsID string) bool {
	if wsID == "" {
		return false
	}
	for _, r := range append(ch.Added, ch.Updated...) {
		if r.Kind == store.KindWorkspace && r.ID == wsID {
			return true
		}
	}
	return false
}

// Now is the model's time corrected by the server clock offset.
func (f *Feed) Now() time.Time { return f.host.Now().Add(f.conn.offset) }

// Offset is the server clock minus the local one, from hello.
func (f *Feed) Offset() time.Duration { return f.conn.offset }

// Refresh is r: dial again after a rejected token, re-list every visible
// and cached scope, retry failed lists.
func (f *Feed) Refresh() tea.Cmd {
	f.retryRejected()
	return f.Resync()
}

// Resync re-lists every visible and cached scope and re-fetches the
// selected workspace; a trigger during a resync runs it once more after.
func (f *Feed) Resync() tea.Cmd {
	if !f.listed {
		return f.startFirstList()
	}
	if len(f.resync.running) > 0 {
		f.resync.again = true
		return nil
	}
	f.resync.running = make(map[store.Scope]bool)
	scopes := f.host.Scopes()
	for _, id := range f.st.CachedSets() {
		scopes = append(scopes, store.Artifacts(id))
	}
	var cmds []tea.Cmd
	for _, sc := range scopes {
		if f.resync.running[sc] {
			continue
		}
		f.resync.running[sc] = true
		cmds = append(cmds, f.startList(sc, OriginResync))
	}
	return tea.Batch(append(cmds, f.Inspect(f.selected))...)
}

// Resyncing reports a resync in flight.
func (f *Feed) Resyncing() bool { return len(f.resync.running) > 0 }

// resyncState tracks one resync: its scopes in flight and one "again".
type resyncState struct {
	running map[store.Scope]bool
	again   bool
}

// listDone settles a scope of the running resync.
func (f *Feed) listDone(sc store.Scope) tea.Cmd {
	if !f.resync.running[sc] {
		return nil
	}
	delete(f.resync.running, sc)
	if len(f.resync.running) > 0 || !f.resync.again {
		return nil
	}
	f.resync.again = false
	return f.Resync()
}

// Open lists a scope a screen shows unless it is cached or listing.
func (f *Feed) Open(wsID string, o Origin) tea.Cmd {
	sc := store.Artifacts(wsID)
	if f.st.Cached(wsID) || f.st.Listing(sc) {
		return nil
	}
	return f.startList(sc, o)
}

// Select is the cursor resting on a workspace: fetch its detail.
func (f *Feed) Select(wsID string) tea.Cmd {
	f.selected = wsID
	return f.Inspect(wsID)
}
