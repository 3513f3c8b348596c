package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service"
)

// versions reads both list versions of ws.
func versions(t *testing.T, db *postgres.DB, ws *cairn.Workspace) (workspaces, artifacts int64) {
	t.Helper()
	ctx := context.Background()
	workspaces, err := db.WorkspaceListVersion(ctx)
	require.NoError(t, err)
	artifacts, err = db.ArtifactListVersion(ctx, ws.ID)
	require.NoError(t, err)
	return workspaces, artifacts
}

// TestListVersions checks which changes move which list's version: every
// change that can alter a byte of a list moves it, and a change that cannot
// leaves it be.
func TestListVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ws, _ := setupWorkspace(t)
	other := newWorkspace("other", cairn.Now())
	require.NoError(t, db.InsertWorkspace(ctx, other))
	a := newArtifact(ws, "report", cairn.Now())

	// step runs one change and reports whether each version moved; a
	// version that moves only ever grows.
	step := func(t *testing.T, change func() error) (workspacesMoved, artifactsMoved bool) {
		t.Helper()
		w0, a0 := versions(t, db, ws)
		require.NoError(t, change())
		w1, a1 := versions(t, db, ws)
		require.GreaterOrEqual(t, w1, w0)
		require.GreaterOrEqual(t, a1, a0)
		return w1 != w0, a1 != a0
	}
	for _, c := range []struct {
		name                  string
		change                func() error
		workspaces, artifacts bool
	}{
		// The insert changes the artifact counts, which the workspace rows carry.
		{"ArtifactInsert", func() error { return db.InsertArtifact(ctx, a) }, true, true},
		{"ArtifactRename", func() error { a.Name = "renamed"; return db.UpdateArtifact(ctx, a) }, false, true},
		{"ArtifactDescription", func() error { a.Description = new("notes"); return db.UpdateArtifact(ctx, a) }, false, true},
		{"ArtifactContent", func() error { a.SHA256B64 = digestOf("v2"); a.Size = 9; return db.UpdateArtifact(ctx, a) }, false, true},
		{"ArtifactFlagged", func() error {
			ok, err := db.FlagMissing(ctx, a, cairn.Now())
			require.True(t, ok)
			return err
		}, true, true},
		{"ArtifactDelete", func() error { return db.DeleteArtifact(ctx, a.ID) }, true, true},
		{"OtherWorkspaceArtifact", func() error { return db.InsertArtifact(ctx, newArtifact(other, "x", cairn.Now())) }, true, false},
		{"WorkspaceInsert", func() error { return db.InsertWorkspace(ctx, newWorkspace("third", cairn.Now())) }, true, false},
		{"WorkspaceRename", func() error { ws.Name = "ws-renamed"; return db.UpdateWorkspace(ctx, ws) }, true, false},
		{"WorkspaceDelete", func() error { return db.DeleteWorkspace(ctx, other.ID, cairn.Now()) }, true, false},
	} {
		workspaces, artifacts := step(t, c.change)
		require.Equal(t, c.workspaces, workspaces, "%s: workspace list version moved", c.name)
		require.Equal(t, c.artifacts, artifacts, "%s: artifact list version moved", c.name)
	}

	t.Run("RolledBackMovesNothing", func(t *testing.T) {
		workspaces, artifacts := step(t, func() error {
			err := db.WithTx(ctx, func(st service.Store) error {
				if err := st.InsertArtifact(ctx, newArtifact(ws, "gone", cairn.Now())); err != nil {
					return err
				}
				return errors.New("roll back")
			})
			require.EqualError(t, err, "roll back")
			return nil
		})
		require.False(t, workspaces)
		require.False(t, artifacts)
	})
	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		_, err := db.ArtifactListVersion(ctx, other.ID)
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
	})
}

// TestListVersionMovesAtCommit holds a change uncommitted: readers see
// neither the change nor a moved version until it commits, and then both,
// so a version read before a list is never newer than the list.
func TestListVersionMovesAtCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ws, _ := setupWorkspace(t)
	w0, a0 := versions(t, db, ws)

	inserted, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.WithTx(ctx, func(st service.Store) error {
			if err := st.InsertArtifact(ctx, newArtifact(ws, "pending", cairn.Now())); err != nil {
				return err
			}
			close(inserted)
			<-release
			return nil
		})
	}()
	<-inserted
	w1, a1 := versions(t, db, ws)
	require.Equal(t, w0, w1, "an uncommitted change moves no version")
	require.Equal(t, a0, a1, "an uncommitted change moves no version")
	list, err := db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID,
		States: []cairn.ArtifactState{cairn.ArtifactRecorded}, Page: cairn.Page{Limit: 10}})
	require.NoError(t, err)
	require.Empty(t, list)

	close(release)
	require.NoError(t, <-done)
	w2, a2 := versions(t, db, ws)
	require.Greater(t, w2, w1)
	require.Greater(t, a2, a1)
}

// TestListVersionsConcurrentWriters commits artifact writes in several
// workspaces at once: the deferred, striped workspace-list bump neither
// deadlocks nor loses a bump.
func TestListVersionsConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := setup(t)
	const writers, each = 8, 10
	spaces := make([]*cairn.Workspace, writers)
	for i := range spaces {
		spaces[i] = newWorkspace("ws-"+string(rune('a'+i)), cairn.Now())
		require.NoError(t, db.InsertWorkspace(ctx, spaces[i]))
	}
	before, err := db.WorkspaceListVersion(ctx)
	require.NoError(t, err)

	errs := make(chan error, writers)
	for _, ws := range spaces {
		go func() {
			for i := range each {
				if err := db.InsertArtifact(ctx, newArtifact(ws, "a"+string(rune('a'+i)), cairn.Now())); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	after, err := db.WorkspaceListVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, before+writers*each, after, "one bump per committed workspace-row change")
	for _, ws := range spaces {
		v, err := db.ArtifactListVersion(ctx, ws.ID)
		require.NoError(t, err)
		require.Equal(t, int64(each), v)
	}
}
