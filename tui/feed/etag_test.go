package feed

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// tagged is the fake backend, whose lists the fake server tags as a cairn
// server does, watched: it counts the pages sent with rows and the
// conditions it was given.
type tagged struct {
	*tuitest.Backend
	sent        int
	ifNoneMatch []string
}

func (b *tagged) WorkspacePage(ctx context.Context, f cairn.WorkspaceFilter, inm string) (*client.Listing[*cairn.Workspace], error) {
	b.ifNoneMatch = append(b.ifNoneMatch, inm)
	l, err := b.Backend.WorkspacePage(ctx, f, inm)
	if err == nil && !l.NotModified {
		b.sent++
	}
	return l, err
}

func (b *tagged) ArtifactPage(ctx context.Context, f cairn.ArtifactFilter, inm string) (*client.Listing[*cairn.Artifact], error) {
	b.ifNoneMatch = append(b.ifNoneMatch, inm)
	l, err := b.Backend.ArtifactPage(ctx, f, inm)
	if err == nil && !l.NotModified {
		b.sent++
	}
	return l, err
}

func setupTagged(t *testing.T) (*Feed, *tagged, *store.Store) {
	t.Helper()
	f, b, st := setup(t)
	tb := &tagged{Backend: b}
	f.backend = tb
	return f, tb, st
}

func TestResyncKeepsUnchangedList(t *testing.T) {
	t.Parallel()
	f, b, st := setupTagged(t)
	for i := range 1500 { // two pages
		b.World.AddWorkspace(fmt.Sprintf("ws-%04d", i), cairn.VolumeNone, "")
	}
	drain(f, f.Resync())
	require.Len(t, st.Workspaces(), 1500)
	require.Equal(t, 2, b.sent)
	require.Equal(t, []string{"", ""}, b.ifNoneMatch, "the first list has no tag to send")
	first := st.Workspaces()

	b.ifNoneMatch = nil
	drain(f, f.Resync())
	require.Equal(t, 2, b.sent, "an unchanged list is not sent again")
	require.Len(t, b.ifNoneMatch, 1, "its first page answers for the whole list")
	require.NotEmpty(t, b.ifNoneMatch[0])
	require.ElementsMatch(t, first, st.Workspaces(), "the store keeps the rows it had")
	require.False(t, f.List(store.Workspaces()).Loading)
	require.Equal(t, 1500, f.List(store.Workspaces()).Loaded)
	require.False(t, f.Resyncing())

	w := b.World.UpdateWorkspace(first[0].ID, func(ws *cairn.Workspace) { ws.Name = "renamed" })
	drain(f, f.Resync())
	require.Equal(t, 4, b.sent, "a change anywhere in the list sends it whole")
	got, ok := st.Workspace(w.ID)
	require.True(t, ok)
	require.Equal(t, "renamed", got.Name)

	b.ifNoneMatch = nil
	drain(f, f.Resync())
	require.Equal(t, 4, b.sent, "unchanged again")
}

func TestUnchangedArtifactsOnlyWhileCached(t *testing.T) {
	t.Parallel()
	f, b, st := setupTagged(t)
	ws := b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	a := b.World.AddArtifact(ws.ID, "report", cairn.ArtifactRecorded, 3, "")
	drain(f, f.Resync())
	drain(f, f.Open(ws.ID, OriginFirst))
	arts, ok := st.Artifacts(ws.ID)
	require.True(t, ok)
	require.Len(t, arts, 1)
	sent := b.sent

	drain(f, f.startList(store.Artifacts(ws.ID), OriginResync))
	require.Equal(t, sent, b.sent, "the cached, unchanged list is kept")
	arts, _ = st.Artifacts(ws.ID)
	require.Len(t, arts, 1)
	require.Equal(t, a.ID, arts[0].ID)

	// A list the store no longer holds is listed whole, whatever its tag.
	st.DropWorkspace(ws.ID)
	b.ifNoneMatch = nil
	drain(f, f.startList(store.Artifacts(ws.ID), OriginResync))
	require.Equal(t, []string{""}, b.ifNoneMatch)
	require.Equal(t, sent+1, b.sent)
}
