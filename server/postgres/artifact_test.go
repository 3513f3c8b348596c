package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service"
)

func newArtifact(ws *cairn.Workspace, name string, at time.Time) *cairn.Artifact {
	return &cairn.Artifact{
		ID: ulid.Make().String(), WorkspaceID: ws.ID, Name: name, ObjectKey: "store/" + ws.ID + "/" + ulid.Make().String(),
		MIMEType: "text/plain; charset=utf-8", Size: 3, State: cairn.ArtifactRecorded,
		SHA256B64: digestOf(name), ContentWrittenAt: at, CreatedAt: at, UpdatedAt: at,
	}
}

// digestOf is the SHA-256 of s as the column keeps it.
func digestOf(s string) *string {
	sum := sha256.Sum256([]byte(s))
	b64 := base64.StdEncoding.EncodeToString(sum[:])
	return &b64
}

func setupWorkspace(t *testing.T) (*postgres.DB, *cairn.Workspace, string) {
	t.Helper()
	db, dsn := setup(t)
	ws := newWorkspace("ws", cairn.Now())
	require.NoError(t, db.InsertWorkspace(context.Background(), ws))
	return db, ws, dsn
}

func TestArtifactRoundTrip(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := context.Background()
	a := newArtifact(ws, "report", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))

	got, err := db.FindArtifact(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, a, got)

	t.Run("ErrNameTakenInWorkspace", func(t *testing.T) {
		dup := newArtifact(ws, "report", cairn.Now())
		err := db.InsertArtifact(ctx, dup)
		require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
		require.Equal(t, "workspace "+ws.ID+" already has an artifact named 'report'", cairn.ErrorDetail(err))
	})
	t.Run("SameNameInAnotherWorkspace", func(t *testing.T) {
		other := newWorkspace("other", cairn.Now())
		require.NoError(t, db.InsertWorkspace(ctx, other))
		require.NoError(t, db.InsertArtifact(ctx, newArtifact(other, "report", cairn.Now())))
	})
	t.Run("NameTakenAcrossStates", func(t *testing.T) {
		missing := newArtifact(ws, "lost", cairn.Now())
		missing.State = cairn.ArtifactMissingObject
		require.NoError(t, db.InsertArtifact(ctx, missing))
		taken, err := db.ArtifactNameTaken(ctx, ws.ID, "lost")
		require.NoError(t, err)
		require.True(t, taken)
		taken, err = db.ArtifactNameTaken(ctx, ws.ID, "free")
		require.NoError(t, err)
		require.False(t, taken)
	})
	t.Run("Update", func(t *testing.T) {
		a.Name, a.Size, a.State, a.UpdatedAt = "renamed", 9, cairn.ArtifactMissingObject, cairn.Now()
		a.SHA256B64 = digestOf("new content")
		require.NoError(t, db.UpdateArtifact(ctx, a))
		got, err := db.FindArtifact(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got)
	})
	t.Run("RowWithoutDigest", func(t *testing.T) {
		legacy := newArtifact(ws, "legacy", cairn.Now())
		legacy.SHA256B64 = nil
		require.NoError(t, db.InsertArtifact(ctx, legacy))
		got, err := db.FindArtifact(ctx, legacy.ID)
		require.NoError(t, err)
		require.Nil(t, got.SHA256B64)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.FindArtifact(ctx, "nope")
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(db.DeleteArtifact(ctx, "nope")))
		ghost := newArtifact(ws, "ghost", cairn.Now())
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(db.UpdateArtifact(ctx, ghost)))
	})
}

// A row the first cairn wrote has no digest column value: it reads as nil,
// and a list carries it.
func TestArtifactFromBeforeTheDigest(t *testing.T) {
	t.Parallel()
	db, ws, dsn := setupWorkspace(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	id := ulid.Make().String()
	_, err = conn.Exec(ctx, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, state,
		content_written_at, created_at, updated_at) VALUES ($1, $2, 'old', 'store/x', 'text/plain', 1, 'RECORDED',
		now(), now(), now())`, id, ws.ID)
	require.NoError(t, err)

	got, err := db.FindArtifact(ctx, id)
	require.NoError(t, err)
	require.Nil(t, got.SHA256B64)
	list, err := db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, States: []cairn.ArtifactState{cairn.ArtifactRecorded}})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Nil(t, list[0].SHA256B64)
}

func TestFindArtifacts(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := context.Background()
	base := cairn.Now()
	var want []string
	for i := range 5 {
		a := newArtifact(ws, fmt.Sprintf("a%d", i), base.Add(time.Duration(i)*time.Millisecond))
		if i == 3 {
			a.State = cairn.ArtifactMissingObject
		}
		require.NoError(t, db.InsertArtifact(ctx, a))
		want = append(want, a.Name)
	}
	recorded := []cairn.ArtifactState{cairn.ArtifactRecorded}
	both := []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}

	list, err := db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, States: both})
	require.NoError(t, err)
	require.Equal(t, want, artifactNames(list), "creation order")

	list, err = db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, States: recorded})
	require.NoError(t, err)
	require.Equal(t, []string{"a0", "a1", "a2", "a4"}, artifactNames(list))

	list, err = db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, States: both, Page: cairn.Page{Offset: 1, Limit: 2}})
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2"}, artifactNames(list))

	list, err = db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{"a3", "a4"}})
	require.NoError(t, err)
	require.Equal(t, []string{"a3", "a4"}, artifactNames(list), "no state filter means any state here")

	list, err = db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: "other"})
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestReleaseObject(t *testing.T) {
	t.Parallel()
	db, ws, dsn := setupWorkspace(t)
	ctx := context.Background()
	first := cairn.Now()
	require.NoError(t, db.ReleaseObject(ctx, "store/k", ws.ID, first))
	require.NoError(t, db.ReleaseObject(ctx, "store/k", ws.ID, first.Add(time.Hour)), "a second release is a no-op")

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var at time.Time
	require.NoError(t, conn.QueryRow(ctx, `SELECT released_at FROM released_objects WHERE object_key = 'store/k'`).Scan(&at))
	require.True(t, first.Equal(at), "the first release time stands")
}

func TestLockArtifactRowSerialisesWriters(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := context.Background()
	a := newArtifact(ws, "hot", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))

	locked := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.WithTx(ctx, func(st service.Store) error {
			if _, err := st.LockArtifactRow(ctx, a.ID); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := db.WithTx(short, func(st service.Store) error {
		_, err := st.LockArtifactRow(short, a.ID)
		return err
	})
	require.Error(t, err, "a second writer waits for the row lock")
	released = true
	close(release)
	require.NoError(t, <-done)
}

func artifactNames(list []*cairn.Artifact) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.Name
	}
	return out
}
