package client_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// insertArtifact writes an artifact row behind cairn's back.
func (b *backend) insertArtifact(t *testing.T, wsID, name string) {
	t.Helper()
	id := ulid.Make().String()
	_, err := b.db.Exec(context.Background(), `INSERT INTO artifacts (id, workspace_id, name, object_key,
		mime_type, size, content_written_at, created_at, updated_at)
		VALUES ($1, $2, $3, 'store/' || $2 || '/' || $1, 'text/plain', 1, now(), now(), now())`, id, wsID, name)
	require.NoError(t, err)
}

func TestListPages(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	url := b.remote(t)
	c := newClient(t, url)
	ctx := t.Context()
	ws, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "alpha"})
	require.NoError(t, err)
	b.insertArtifact(t, ws.ID, "first")
	arts := cairn.ArtifactFilter{WorkspaceID: ws.ID, States: []cairn.ArtifactState{cairn.ArtifactRecorded}}

	t.Run("Workspaces", func(t *testing.T) {
		first, err := c.WorkspacePage(ctx, cairn.WorkspaceFilter{}, "")
		require.NoError(t, err)
		require.False(t, first.NotModified)
		require.NotEmpty(t, first.ETag)
		all, err := c.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
		require.NoError(t, err)
		require.Equal(t, all, first.Rows, "a page is what the plain list returns")

		same, err := c.WorkspacePage(ctx, cairn.WorkspaceFilter{}, first.ETag)
		require.NoError(t, err)
		require.Equal(t, &client.Listing[*cairn.Workspace]{ETag: first.ETag, NotModified: true}, same)

		_, err = c.RenameWorkspace(ctx, ws.ID, "beta")
		require.NoError(t, err)
		moved, err := c.WorkspacePage(ctx, cairn.WorkspaceFilter{}, first.ETag)
		require.NoError(t, err)
		require.False(t, moved.NotModified)
		require.NotEqual(t, first.ETag, moved.ETag)
		require.Equal(t, "beta", moved.Rows[0].Name)
	})
	t.Run("Artifacts", func(t *testing.T) {
		first, err := c.ArtifactPage(ctx, arts, "")
		require.NoError(t, err)
		require.Len(t, first.Rows, 1)
		same, err := c.ArtifactPage(ctx, arts, first.ETag)
		require.NoError(t, err)
		require.True(t, same.NotModified)
		require.Nil(t, same.Rows)

		b.insertArtifact(t, ws.ID, "second")
		moved, err := c.ArtifactPage(ctx, arts, first.ETag)
		require.NoError(t, err)
		require.False(t, moved.NotModified)
		require.Len(t, moved.Rows, 2)
		require.NotEqual(t, first.ETag, moved.ETag)

		other, err := c.ArtifactPage(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Page: cairn.Page{Limit: 1}}, moved.ETag)
		require.NoError(t, err)
		require.False(t, other.NotModified, "another query's tag is no match")
		require.Len(t, other.Rows, 1)
	})
	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		_, err := c.ArtifactPage(ctx, cairn.ArtifactFilter{WorkspaceID: "00000000-0000-4000-8000-000000000000"}, `W/"1-x"`)
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		_, err = c.ArtifactPage(ctx, cairn.ArtifactFilter{}, "")
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
	})

	// A 304 is an answer about the list: only a caller who may read it
	// gets one.
	t.Run("AuthBefore304", func(t *testing.T) {
		page, err := c.ArtifactPage(ctx, arts, "")
		require.NoError(t, err)
		conditional := func(token string) int {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/workspaces/"+ws.ID+"/artifacts?state=RECORDED&offset=0&limit=1000", nil)
			require.NoError(t, err)
			req.Header.Set("If-None-Match", page.ETag)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusUnauthorized, conditional(""))
		require.Equal(t, http.StatusUnauthorized, conditional("not-a-token"))
		require.Equal(t, http.StatusNotModified, conditional(readToken))
		reader, err := client.New(url, client.WithToken(readToken))
		require.NoError(t, err)
		same, err := reader.ArtifactPage(ctx, arts, page.ETag)
		require.NoError(t, err)
		require.True(t, same.NotModified)
	})
}
