package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestWorkspacePage(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	at := cairn.Now()
	var want []string
	for i := range 5 {
		ws := newWorkspace("w"+string(rune('a'+i)), at.Add(time.Duration(i%2)*time.Second))
		require.NoError(t, db.InsertWorkspace(ctx, ws))
		want = append(want, ws.ID)
	}
	var got []string
	var after *cairn.Workspace
	for {
		page, err := db.WorkspacePage(ctx, after, 2)
		require.NoError(t, err)
		for _, ws := range page {
			got = append(got, ws.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1]
	}
	require.ElementsMatch(t, want, got)
	require.Len(t, got, 5)
}

func TestKeySetAndFlag(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	ws := newWorkspace("w", cairn.Now())
	require.NoError(t, db.InsertWorkspace(ctx, ws))
	mk := func(key string) *cairn.Artifact {
		now := cairn.Now()
		a := &cairn.Artifact{ID: ulid.Make().String(), WorkspaceID: ws.ID, Name: ulid.Make().String(), ObjectKey: key,
			MIMEType: "text/plain", State: cairn.ArtifactRecorded, ContentWrittenAt: now, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.InsertArtifact(ctx, a))
		return a
	}
	listed, missing := mk("store/"+ws.ID+"/A"), mk("store/"+ws.ID+"/B")
	mk("other/C")

	set, err := db.OpenKeySet(ctx)
	require.NoError(t, err)
	defer set.Close()
	require.NoError(t, set.Add(ctx, []string{listed.ObjectKey, "store/x/Z"}))
	require.NoError(t, set.Add(ctx, []string{listed.ObjectKey}), "a key listed twice is kept once")
	cutoff := cairn.Now().Add(time.Minute)
	rows, err := set.Missing(ctx, "store/", "", cutoff, "", 10)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, missing.ID, rows[0].ID)
	rows, err = set.Missing(ctx, "store/", "", cairn.Now().Add(-time.Hour), "", 10)
	require.NoError(t, err)
	require.Empty(t, rows, "rows written after the cutoff are not candidates")

	stale := *missing
	stale.ObjectKey = "store/changed"
	ok, err := db.FlagMissing(ctx, &stale, cairn.Now())
	require.NoError(t, err)
	require.False(t, ok, "a changed key is not flagged")
	ok, err = db.FlagMissing(ctx, missing, cairn.Now())
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = db.FlagMissing(ctx, missing, cairn.Now())
	require.NoError(t, err)
	require.False(t, ok, "a flagged row is not flagged twice")
	events, err := db.FindAuditEvents(ctx, cairn.AuditFilter{Types: []cairn.AuditType{cairn.AuditArtifactMissing}})
	require.NoError(t, err)
	require.Len(t, events, 1)

	refs, released, err := db.ObjectRefs(ctx, []string{listed.ObjectKey, missing.ObjectKey, "store/none"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{listed.ObjectKey: true, missing.ObjectKey: true}, refs)
	require.Empty(t, released)
}

func TestPassAndLeaderLocks(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	release, err := db.LockPass(ctx, "app")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = db.LockPass(short, "app")
	require.Equal(t, cairn.ReasonSweepBusy, cairn.ErrorReason(err))
	other, err := db.LockPass(ctx, "other-app")
	require.NoError(t, err)
	other()
	release()
	release, err = db.LockPass(ctx, "app")
	require.NoError(t, err)
	release()

	lease, ok, err := db.TryLeader(ctx, "app")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, lease.Alive(ctx))
	_, ok, err = db.TryLeader(ctx, "app")
	require.NoError(t, err)
	require.False(t, ok)
	lease.Release()
	lease, ok, err = db.TryLeader(ctx, "app")
	require.NoError(t, err)
	require.True(t, ok)
	lease.Release()
}
