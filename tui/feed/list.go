package feed

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/store"
)

// pageSize is the page every list asks for; lists always page.
const pageSize = cairn.MaxListLimit

type (
	// listPageMsg is one page of a scope's list.
	listPageMsg struct {
		scope  store.Scope
		reqID  int
		gen    int64
		offset int
		ws     []*cairn.Workspace
		arts   []*cairn.Artifact
		etag   string // the server's tag for the page, when it sends one
		// unchanged: the server found the list still the one the tag sent
		// names; no rows came.
		unchanged bool
		err       error
		at        time.Time // when the answer arrived
	}
	// entityMsg is a workspace GET with its mount count.
	entityMsg struct {
		id     string
		reqID  int
		detail *cairn.WorkspaceDetail
		err    error
	}
	// retryListMsg retries a failed list after its backoff.
	retryListMsg struct {
		scope store.Scope
		reqID int
	}
	// inspectTickMsg refreshes the mount count of a READY workspace shown.
	inspectTickMsg struct {
		id  string
		seq int
	}
)

// listState is a scope's current list request.
type listState struct {
	reqID    int
	gen      int64
	loading  bool
	loaded   int
	err      error
	retryAt  time.Time
	failures int
	origin   Origin
	// last is the tag of the first page of the last complete list, and
	// its row count; pending is the running list's.
	last, pending listTag
}

// listTag is a list's first-page ETag and how many rows the list had.
type listTag struct {
	etag string
	rows int
}

// List is the state of a scope's list as a screen's body reports it.
func (f *Feed) List(sc store.Scope) deps.ListStatus {
	l, ok := f.lists[sc]
	if !ok {
		return deps.ListStatus{}
	}
	st := deps.ListStatus{Loading: l.loading, Loaded: l.loaded, Err: l.err}
	if !l.retryAt.IsZero() {
		st.RetryAt = l.retryAt.Add(f.conn.offset)
	}
	return st
}

func (f *Feed) listState(sc store.Scope) *listState {
	l, ok := f.lists[sc]
	if !ok {
		l = &listState{}
		f.lists[sc] = l
	}
	return l
}

// startList begins a new list of sc; an older one's replies go stale.
// The first page asks whether the list changed since the last complete one,
// when the store still holds that list's rows.
func (f *Feed) startList(sc store.Scope, o Origin) tea.Cmd {
	l := f.listState(sc)
	ifNoneMatch := ""
	if f.holds(sc) {
		ifNoneMatch = l.last.etag
	}
	l.reqID, l.gen = f.host.NextID(), f.st.BeginList(sc)
	l.loading, l.loaded, l.origin, l.pending = true, 0, o, listTag{}
	return fetchPage(f.ctx, f.backend, f.clock, sc, l.reqID, l.gen, 0, ifNoneMatch)
}

// fetchPage asks for one page of sc at offset, conditionally when
// ifNoneMatch is set.
func fetchPage(ctx context.Context, b Backend, clock func() time.Time, sc store.Scope, reqID int, gen int64,
	offset int, ifNoneMatch string) tea.Cmd {
	page := cairn.Page{Offset: offset, Limit: pageSize}
	return func() tea.Msg {
		msg := listPageMsg{scope: sc, reqID: reqID, gen: gen, offset: offset}
		if sc.Kind == store.ScopeWorkspaces {
			msg.ws, msg.etag, msg.unchanged, msg.err = workspacePage(ctx, b, cairn.WorkspaceFilter{Page: page}, ifNoneMatch)
		} else {
			msg.arts, msg.etag, msg.unchanged, msg.err = artifactPage(ctx, b, cairn.ArtifactFilter{
				WorkspaceID: sc.WorkspaceID,
				States:      []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject},
				Page:        page,
			}, ifNoneMatch)
		}
		msg.at = clock()
		return msg
	}
}

// onPage applies a page; a stale one (not the scope's current request) is
// dropped.
func (f *Feed) onPage(msg listPageMsg) tea.Cmd {
	l, ok := f.lists[msg.scope]
	if !ok || l.reqID != msg.reqID || !l.loading {
		return nil
	}
	if msg.err != nil {
		return f.listFailed(msg, l)
	}
	f.conn.RESTFailing, f.conn.restWorks = false, true
	f.conn.LastGood = msg.at
	if msg.unchanged {
		return f.listUnchanged(msg, l)
	}
	if msg.offset == 0 {
		l.pending.etag = msg.etag
	}
	var ch store.Changes
	n := len(msg.ws) + len(msg.arts)
	if msg.scope.Kind == store.ScopeWorkspaces {
		ch = f.st.WorkspacePage(msg.gen, msg.ws, f.Now())
	} else {
		ch = f.st.ArtifactPage(msg.scope.WorkspaceID, msg.gen, msg.arts, f.Now())
	}
	l.loaded += n
	if n == pageSize {
		return tea.Batch(f.host.Changed(ch, l.origin), fetchPage(f.ctx, f.backend, f.clock, msg.scope, msg.reqID, msg.gen, msg.offset+n, ""))
	}
	ch.Merge(f.st.FinishList(msg.scope, msg.gen))
	l.loading, l.err, l.retryAt, l.failures = false, nil, time.Time{}, 0
	l.last = listTag{etag: l.pending.etag, rows: l.loaded}
	cmds := []tea.Cmd{f.host.Changed(ch, l.origin), f.pollIfDialsFail()}
	for _, sc := range ch.Relist {
		cmds = append(cmds, f.startList(sc, OriginResync))
	}
	return tea.Batch(append(cmds, f.listDone(msg.scope))...)
}

// listFailed records the failure and schedules a retry with backoff; `r`
// retries at once.
func (f *Feed) listFailed(msg listPageMsg, l *listState) tea.Cmd {
	f.st.AbortList(msg.scope, msg.gen)
	l.loading, l.err = false, msg.err
	l.failures++
	if unreachable(msg.err) {
		f.conn.RESTFailing = true
	}
	if msg.scope.Kind == store.ScopeArtifacts && cairn.ErrorReason(msg.err) == cairn.ReasonWorkspaceNotFound {
		return tea.Batch(f.host.Changed(f.st.DropWorkspace(msg.scope.WorkspaceID), OriginResync), f.listDone(msg.scope))
	}
	if r := cairn.ErrorReason(msg.err); r == cairn.ReasonUnauthenticated || (r == cairn.ReasonForbidden && msg.scope.Kind == store.ScopeWorkspaces) {
		return tea.Batch(f.rejected(msg.err), f.listDone(msg.scope)) // retrying cannot help: r retries
	}
	wait := min(30*time.Second, time.Second<<min(l.failures, 5))
	l.retryAt = msg.at.Add(wait)
	sc, req := msg.scope, msg.reqID
	retry := f.c.After(wait, func() tea.Msg { return retryListMsg{scope: sc, reqID: req} })
	return tea.Batch(retry, f.listDone(msg.scope))
}

// onRetry retries a failed list unless something newer ran meanwhile.
func (f *Feed) onRetry(msg retryListMsg) tea.Cmd {
	l, ok := f.lists[msg.scope]
	if !ok || l.reqID != msg.reqID || l.loading || l.err == nil {
		return nil
	}
	return f.startList(msg.scope, l.origin)
}

// unreachable reports a failure to reach the server at all.
func unreachable(err error) bool {
	var e *cairn.Error
	if !errors.As(err, &e) {
		return true
	}
	return e.Status == 0 && e.Reason == cairn.ReasonInternal
}

// Inspect fetches a workspace's detail (mount count).
func (f *Feed) Inspect(id string) tea.Cmd {
	if id == "" {
		return nil
	}
	req := f.host.NextID()
	b, ctx := f.backend, f.ctx
	return func() tea.Msg {
		d, err := b.InspectWorkspace(ctx, id)
		return entityMsg{id: id, reqID: req, detail: d, err: err}
	}
}

// onEntity applies a workspace GET unless a newer one was applied.
func (f *Feed) onEntity(msg entityMsg) tea.Cmd {
	if msg.reqID < f.inspectReq[msg.id] || msg.reqID < f.since {
		return nil
	}
	f.inspectReq[msg.id] = msg.reqID
	if msg.err != nil {
		if cairn.ErrorReason(msg.err) == cairn.ReasonWorkspaceNotFound {
			return f.host.Changed(f.st.DropWorkspace(msg.id), OriginResync)
		}
		f.st.SetMounts(msg.id, -1)
		return f.host.Changed(store.Changes{}, OriginResync)
	}
	ch := f.st.PutWorkspace(msg.detail.Workspace, f.Now())
	f.st.SetMounts(msg.id, msg.detail.MountCount)
	cmd := f.host.Changed(ch, OriginResync)
	if msg.id == f.selected && msg.detail.Workspace.VolumeState == cairn.VolumeReady {
		f.inspectSeq++
		id, seq := msg.id, f.inspectSeq
		return tea.Batch(cmd, f.c.After(10*time.Second, func() tea.Msg { return inspectTickMsg{id: id, seq: seq} }))
	}
	return cmd
}
