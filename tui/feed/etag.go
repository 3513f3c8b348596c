package feed

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/store"
)

// pager is a Backend that lists a page conditionally, with the server's
// ETag (*client.Client is one). A list whose first page the server finds
// unchanged is unchanged whole — a cairn tag moves with any change to the
// list — so the feed keeps the rows the store has and decodes nothing.
// A Backend without it lists in full every time.
type pager interface {
	WorkspacePage(ctx context.Context, f cairn.WorkspaceFilter, ifNoneMatch string) (*client.Listing[*cairn.Workspace], error)
	ArtifactPage(ctx context.Context, f cairn.ArtifactFilter, ifNoneMatch string) (*client.Listing[*cairn.Artifact], error)
}

func workspacePage(ctx context.Context, b Backend, f cairn.WorkspaceFilter, ifNoneMatch string) ([]*cairn.Workspace, string, bool, error) {
	p, ok := b.(pager)
	if !ok {
		rows, err := b.FindWorkspaces(ctx, f)
		return rows, "", false, err
	}
	l, err := p.WorkspacePage(ctx, f, ifNoneMatch)
	if err != nil {
		return nil, "", false, err
	}
	return l.Rows, l.ETag, l.NotModified, nil
}

func artifactPage(ctx context.Context, b Backend, f cairn.ArtifactFilter, ifNoneMatch string) ([]*cairn.Artifact, string, bool, error) {
	p, ok := b.(pager)
	if !ok {
		rows, err := b.FindArtifacts(ctx, f)
		return rows, "", false, err
	}
	l, err := p.ArtifactPage(ctx, f, ifNoneMatch)
	if err != nil {
		return nil, "", false, err
	}
	return l.Rows, l.ETag, l.NotModified, nil
}

// listUnchanged ends a list the server found unchanged since the last
// complete one: the store keeps that list's rows, as if it had come again.
func (f *Feed) listUnchanged(msg listPageMsg, l *listState) tea.Cmd {
	f.st.AbortList(msg.scope, msg.gen)
	l.loading, l.err, l.retryAt, l.failures = false, nil, time.Time{}, 0
	l.loaded = l.last.rows
	return tea.Batch(f.host.Changed(store.Changes{}, l.origin), f.pollIfDialsFail(), f.listDone(msg.scope))
}

// holds reports whether the store still has the rows of sc's last complete
// list (an artifact set may have been evicted or dropped since).
func (f *Feed) holds(sc store.Scope) bool {
	if sc.Kind == store.ScopeArtifacts {
		return f.st.Cached(sc.WorkspaceID)
	}
	return f.st.Seeded(sc)
}
