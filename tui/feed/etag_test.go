package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// tagged is the fake backend with conditional pages, tagged as a cairn
// server tags them: the tag covers the whole list (here a hash of every
// row) and the page asked for. It counts the pages sent with rows and the
// conditions it was given.
type tagged struct {
	*tuitest.Backend
	sent        int
	ifNoneMatch []string
}

func tagOf[T any](all []T, p cairn.Page) string {
	b, err := json.Marshal(all)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(fmt.Appendf(b, "%d-%d", p.Offset, p.Limit))
	return `W/"` + hex.EncodeToString(sum[:8]) + `"`
}

func (b *tagged) WorkspacePage(ctx context.Context, f cairn.WorkspaceFilter, inm string) (*client.Listing[*cairn.Workspace], error) {
	b.ifNoneMatch = append(b.ifNoneMatch, inm)
	all, err := b.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
	if err != nil {
		return nil, err
	}
	if tag := tagOf(all, f.Page); tag != inm {
		b.sent++
		rows, err := b.FindWorkspaces(ctx, f)
		return &client.Listing[*cairn.Workspace]{Rows: rows, ETag: tag}, err
	}
	return &client.Listing[*cairn.Workspace]{ETag: inm, NotModified: true}, nil
}

func (b *tagged) ArtifactPage(ctx context.Context, f cairn.ArtifactFilter, inm string) (*client.Listing[*cairn.Artifact], error) {
	b.ifNoneMatch = append(b.ifNoneMatch, inm)
	all, err := b.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: f.WorkspaceID, States: f.States})
	if err != nil {
		return nil, err
	}
	if tag := tagOf(all, f.Page); tag != inm {
		b.sent++
		rows, err := b.FindArtifacts(ctx, f)
		return &client.Listing[*cairn.Artifact]{Rows: rows, ETag: tag}, err
	}
	return &client.Listing[*cairn.Artifact]{ETag: inm, NotModified: true}, nil
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
