package tui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/store"
)

// pageSize is the page every list asks for; lists always page.
const pageSize = cairn.MaxListLimit

// origin says why a list runs; it shapes the MISSING alerts.
type origin uint8

const (
	originFirst origin = iota + 1
	originResync
	originPoll
	originPrefetch
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
	origin   origin
}

func (m *Model) listState(sc store.Scope) *listState {
	l, ok := m.sh.lists[sc]
	if !ok {
		l = &listState{}
		m.sh.lists[sc] = l
	}
	return l
}

// startList begins a new list of sc; an older one's replies go stale.
func (m *Model) startList(sc store.Scope, o origin) tea.Cmd {
	l := m.listState(sc)
	l.reqID, l.gen = m.id(), m.sh.st.BeginList(sc)
	l.loading, l.loaded, l.origin = true, 0, o
	return fetchPage(m.ctx, m.backend, m.clock, sc, l.reqID, l.gen, 0)
}

// fetchPage asks for one page of sc at offset.
func fetchPage(ctx context.Context, b Backend, clock func() time.Time, sc store.Scope, reqID int, gen int64, offset int) tea.Cmd {
	page := cairn.Page{Offset: offset, Limit: pageSize}
	return func() tea.Msg {
		msg := listPageMsg{scope: sc, reqID: reqID, gen: gen, offset: offset}
		if sc.Kind == store.ScopeWorkspaces {
			msg.ws, msg.err = b.FindWorkspaces(ctx, cairn.WorkspaceFilter{Page: page})
		} else {
			msg.arts, msg.err = b.FindArtifacts(ctx, cairn.ArtifactFilter{
				WorkspaceID: sc.WorkspaceID,
				States:      []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject},
				Page:        page,
			})
		}
		msg.at = clock()
		return msg
	}
}

// onPage applies a page; a stale one (not the scope's current request) is
// dropped.
func (m *Model) onPage(msg listPageMsg) tea.Cmd {
	l, ok := m.sh.lists[msg.scope]
	if !ok || l.reqID != msg.reqID || !l.loading {
		return nil
	}
	if msg.err != nil {
		return m.listFailed(msg, l)
	}
	m.conn.restFailing, m.conn.restWorks = false, true
	m.conn.lastGood = msg.at
	var ch store.Changes
	n := len(msg.ws) + len(msg.arts)
	if msg.scope.Kind == store.ScopeWorkspaces {
		ch = m.sh.st.WorkspacePage(msg.gen, msg.ws, m.sh.Now())
	} else {
		ch = m.sh.st.ArtifactPage(msg.scope.WorkspaceID, msg.gen, msg.arts, m.sh.Now())
	}
	l.loaded += n
	if n == pageSize {
		return tea.Batch(m.changed(ch, l.origin), fetchPage(m.ctx, m.backend, m.clock, msg.scope, msg.reqID, msg.gen, msg.offset+n))
	}
	ch.Merge(m.sh.st.FinishList(msg.scope, msg.gen))
	l.loading, l.err, l.retryAt, l.failures = false, nil, time.Time{}, 0
	cmds := []tea.Cmd{m.changed(ch, l.origin), m.pollIfDialsFail()}
	for _, sc := range ch.Relist {
		cmds = append(cmds, m.startList(sc, originResync))
	}
	return tea.Batch(append(cmds, m.listDone(msg.scope))...)
}

// listFailed records the failure and schedules a retry with backoff; `r`
// retries at once.
func (m *Model) listFailed(msg listPageMsg, l *listState) tea.Cmd {
	m.sh.st.AbortList(msg.scope, msg.gen)
	l.loading, l.err = false, msg.err
	l.failures++
	if unreachable(msg.err) {
		m.conn.restFailing = true
	}
	if msg.scope.Kind == store.ScopeArtifacts && cairn.ErrorReason(msg.err) == cairn.ReasonWorkspaceNotFound {
		return tea.Batch(m.changed(m.sh.st.DropWorkspace(msg.scope.WorkspaceID), originResync), m.listDone(msg.scope))
	}
	if r := cairn.ErrorReason(msg.err); r == cairn.ReasonUnauthenticated || (r == cairn.ReasonForbidden && msg.scope.Kind == store.ScopeWorkspaces) {
		return tea.Batch(m.rejected(msg.err), m.listDone(msg.scope)) // retrying cannot help: r retries
	}
	wait := min(30*time.Second, time.Second<<min(l.failures, 5))
	l.retryAt = msg.at.Add(wait)
	sc, req := msg.scope, msg.reqID
	retry := m.c.After(wait, func() tea.Msg { return retryListMsg{scope: sc, reqID: req} })
	return tea.Batch(retry, m.listDone(msg.scope))
}

// onRetry retries a failed list unless something newer ran meanwhile.
func (m *Model) onRetry(msg retryListMsg) tea.Cmd {
	l, ok := m.sh.lists[msg.scope]
	if !ok || l.reqID != msg.reqID || l.loading || l.err == nil {
		return nil
	}
	return m.startList(msg.scope, l.origin)
}

// unreachable reports a failure to reach the server at all.
func unreachable(err error) bool {
	var e *cairn.Error
	if !errors.As(err, &e) {
		return true
	}
	return e.Status == 0 && e.Reason == cairn.ReasonInternal
}

// inspect fetches a workspace's detail (mount count).
func (m *Model) inspect(id string) tea.Cmd {
	if id == "" {
		return nil
	}
	req := m.id()
	b, ctx := m.backend, m.ctx
	return func() tea.Msg {
		d, err := b.InspectWorkspace(ctx, id)
		return entityMsg{id: id, reqID: req, detail: d, err: err}
	}
}

// onEntity applies a workspace GET unless a newer one was applied.
func (m *Model) onEntity(msg entityMsg) tea.Cmd {
	if msg.reqID < m.inspectReq[msg.id] {
		return nil
	}
	m.inspectReq[msg.id] = msg.reqID
	if msg.err != nil {
		if cairn.ErrorReason(msg.err) == cairn.ReasonWorkspaceNotFound {
			return m.changed(m.sh.st.DropWorkspace(msg.id), originResync)
		}
		m.sh.st.SetMounts(msg.id, -1)
		return m.changed(store.Changes{}, originResync)
	}
	ch := m.sh.st.PutWorkspace(msg.detail.Workspace, m.sh.Now())
	m.sh.st.SetMounts(msg.id, msg.detail.MountCount)
	cmd := m.changed(ch, originResync)
	if msg.id == m.selected && msg.detail.Workspace.VolumeState == cairn.VolumeReady {
		m.inspectSeq++
		id, seq := msg.id, m.inspectSeq
		return tea.Batch(cmd, m.c.After(10*time.Second, func() tea.Msg { return inspectTickMsg{id: id, seq: seq} }))
	}
	return cmd
}
