package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/store"
)

var t0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func ws(id, name string, updated int) *cairn.Workspace {
	return &cairn.Workspace{ID: id, Name: name, VolumeState: cairn.VolumeNone, CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(updated) * time.Second)}
}

func art(id, wsID, name string, state cairn.ArtifactState, updated int) *cairn.Artifact {
	return &cairn.Artifact{ID: id, WorkspaceID: wsID, Name: name, State: state, CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(updated) * time.Second)}
}

func upsert(w *cairn.Workspace) cairn.Event {
	return cairn.Event{Type: cairn.EventWorkspaceUpserted, ID: w.ID, Workspace: w}
}

func upsertArt(a *cairn.Artifact) cairn.Event {
	return cairn.Event{Type: cairn.EventArtifactUpserted, ID: a.ID, Artifact: a}
}

func del(kind cairn.EventType, id string) cairn.Event { return cairn.Event{Type: kind, ID: id} }

// listWorkspaces runs a complete one-page list.
func listWorkspaces(s *store.Store, rows ...*cairn.Workspace) store.Changes {
	g := s.BeginList(store.Workspaces())
	ch := s.WorkspacePage(g, rows, t0)
	ch.Merge(s.FinishList(store.Workspaces(), g))
	return ch
}

func listArtifacts(s *store.Store, wsID string, rows ...*cairn.Artifact) store.Changes {
	g := s.BeginList(store.Artifacts(wsID))
	ch := s.ArtifactPage(wsID, g, rows, t0)
	ch.Merge(s.FinishList(store.Artifacts(wsID), g))
	return ch
}

func names(s *store.Store) map[string]string {
	out := map[string]string{}
	for _, w := range s.Workspaces() {
		out[w.ID] = w.Name
	}
	return out
}

func TestUpsertOrder(t *testing.T) {
	t.Parallel()
	t.Run("NewerWins", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		s.Apply([]cairn.Event{upsert(ws("a", "old", 1)), upsert(ws("a", "new", 2))}, t0)
		require.Equal(t, map[string]string{"a": "new"}, names(s))
	})
	t.Run("OlderIsIgnored", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		s.Apply([]cairn.Event{upsert(ws("a", "new", 2))}, t0)
		ch := s.Apply([]cairn.Event{upsert(ws("a", "old", 1))}, t0)
		require.Equal(t, map[string]string{"a": "new"}, names(s))
		require.Empty(t, ch.Updated)
	})
	t.Run("TieGoesToLaterArrival", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		s.Apply([]cairn.Event{upsert(ws("a", "first", 1)), upsert(ws("a", "second", 1))}, t0)
		require.Equal(t, map[string]string{"a": "second"}, names(s))
	})
	t.Run("UnchangedRowIsNoChange", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listWorkspaces(s, ws("a", "x", 1))
		ch := listWorkspaces(s, ws("a", "x", 1))
		require.True(t, ch.Empty())
	})
}

func TestTombstones(t *testing.T) {
	t.Parallel()
	t.Run("DeleteDuringListWins", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		g := s.BeginList(store.Workspaces())
		s.Apply([]cairn.Event{del(cairn.EventWorkspaceDeleted, "a")}, t0)
		s.WorkspacePage(g, []*cairn.Workspace{ws("a", "gone", 1), ws("b", "kept", 1)}, t0)
		s.FinishList(store.Workspaces(), g)
		require.Equal(t, map[string]string{"b": "kept"}, names(s))
	})
	t.Run("LateEntityReplyAfterDeleteIsDropped", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listWorkspaces(s, ws("a", "x", 1))
		s.Apply([]cairn.Event{del(cairn.EventWorkspaceDeleted, "a")}, t0)
		s.PutWorkspace(ws("a", "x", 5), t0)
		require.Empty(t, names(s))
		require.True(t, s.Deleted("a"))
	})
	t.Run("PurgedByALaterSnapshot", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		s.Apply([]cairn.Event{del(cairn.EventWorkspaceDeleted, "a")}, t0)
		require.True(t, s.Deleted("a"))
		listWorkspaces(s)
		require.False(t, s.Deleted("a"))
	})
}

func TestGenerations(t *testing.T) {
	t.Parallel()
	t.Run("EventDuringListSurvivesRemoval", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		g := s.BeginList(store.Workspaces())
		s.Apply([]cairn.Event{upsert(ws("new", "created-meanwhile", 1))}, t0)
		s.WorkspacePage(g, []*cairn.Workspace{ws("b", "listed", 1)}, t0)
		s.FinishList(store.Workspaces(), g)
		require.Equal(t, map[string]string{"new": "created-meanwhile", "b": "listed"}, names(s))
	})
	t.Run("SnapshotRemovesRowsItDidNotReturn", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listWorkspaces(s, ws("a", "x", 1), ws("b", "y", 1))
		ch := listWorkspaces(s, ws("b", "y", 1))
		require.Equal(t, map[string]string{"b": "y"}, names(s))
		require.Len(t, ch.Removed, 1)
		require.Equal(t, "a", ch.Removed[0].ID)
	})
	t.Run("StaleListIsIgnored", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		old := s.BeginList(store.Workspaces())
		cur := s.BeginList(store.Workspaces())
		require.True(t, s.WorkspacePage(old, []*cairn.Workspace{ws("a", "stale", 1)}, t0).Empty())
		require.True(t, s.FinishList(store.Workspaces(), old).Empty())
		s.WorkspacePage(cur, []*cairn.Workspace{ws("b", "current", 1)}, t0)
		s.FinishList(store.Workspaces(), cur)
		require.Equal(t, map[string]string{"b": "current"}, names(s))
	})
	t.Run("DeleteDuringPagedListRelists", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listWorkspaces(s, ws("a", "x", 1), ws("b", "y", 1))
		g := s.BeginList(store.Workspaces())
		s.WorkspacePage(g, []*cairn.Workspace{ws("a", "x", 1)}, t0)
		s.Apply([]cairn.Event{del(cairn.EventWorkspaceDeleted, "a")}, t0)
		ch := s.FinishList(store.Workspaces(), g)
		require.Equal(t, []store.Scope{store.Workspaces()}, ch.Relist)
	})
}

func TestCascade(t *testing.T) {
	t.Parallel()
	s := store.New(0)
	listWorkspaces(s, ws("w", "ws", 1))
	listArtifacts(s, "w", art("a1", "w", "one", cairn.ArtifactRecorded, 1), art("a2", "w", "two", cairn.ArtifactMissingObject, 1))
	require.Equal(t, 1, s.MissingIn("w"))
	ch := s.Apply([]cairn.Event{del(cairn.EventWorkspaceDeleted, "w")}, t0)
	_, cached := s.Artifacts("w")
	require.False(t, cached)
	_, ok := s.Artifact("a1")
	require.False(t, ok)
	require.Zero(t, s.MissingIn("w"))
	require.Len(t, ch.Removed, 3) // the workspace and both artifacts
}

func TestMissingTransitions(t *testing.T) {
	t.Parallel()
	t.Run("FirstListIsSilent", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		ch := listArtifacts(s, "w", art("a", "w", "x", cairn.ArtifactMissingObject, 1))
		require.Empty(t, ch.Missing)
		require.True(t, s.ChangedAt("a").IsZero())
	})
	t.Run("RecordedTurningMissingAlerts", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listArtifacts(s, "w", art("a", "w", "report_csv", cairn.ArtifactRecorded, 1))
		ch := s.Apply([]cairn.Event{upsertArt(art("a", "w", "report_csv", cairn.ArtifactMissingObject, 2))}, t0)
		require.Equal(t, []store.Transition{{ArtifactID: "a", WorkspaceID: "w", Name: "report_csv"}}, ch.Missing)
		require.Equal(t, t0, s.ChangedAt("a"))
		ch = s.Apply([]cairn.Event{upsertArt(art("a", "w", "renamed", cairn.ArtifactMissingObject, 3))}, t0)
		require.Empty(t, ch.Missing, "already known missing")
	})
	t.Run("UnknownInSeededSetAlerts", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listArtifacts(s, "w")
		ch := s.Apply([]cairn.Event{upsertArt(art("a", "w", "x", cairn.ArtifactMissingObject, 1))}, t0)
		require.Len(t, ch.Missing, 1)
	})
	t.Run("UncachedWorkspaceOnlyIndexes", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		ch := s.Apply([]cairn.Event{upsertArt(art("a", "w", "x", cairn.ArtifactMissingObject, 1))}, t0)
		require.Empty(t, ch.Missing)
		require.Empty(t, ch.Added)
		require.Equal(t, 1, s.MissingIn("w"))
		s.Apply([]cairn.Event{upsertArt(art("a", "w", "x", cairn.ArtifactRecorded, 2))}, t0)
		require.Zero(t, s.MissingIn("w"))
	})
	t.Run("ResyncFindingNewOnesReports", func(t *testing.T) {
		t.Parallel()
		s := store.New(0)
		listArtifacts(s, "w", art("a", "w", "x", cairn.ArtifactRecorded, 1))
		ch := listArtifacts(s, "w", art("a", "w", "x", cairn.ArtifactMissingObject, 2))
		require.Len(t, ch.Missing, 1)
	})
}

func TestCounts(t *testing.T) {
	t.Parallel()
	s := store.New(0)
	_, ok := s.MissingTotal()
	require.False(t, ok, "unknown until the workspaces were listed")
	w := ws("w", "ws", 1)
	w.ArtifactCounts = cairn.ArtifactCounts{Recorded: 5, MissingObject: 2}
	listWorkspaces(s, w, ws("v", "other", 1))
	c, ok := s.Counts("w")
	require.True(t, ok)
	require.Equal(t, store.Counts{Recorded: 5, Missing: 2}, c)
	total, ok := s.MissingTotal()
	require.True(t, ok)
	require.Equal(t, int64(2), total)

	// A count change arrives as a workspace.upserted with the same updated_at.
	moved := *w
	moved.ArtifactCounts = cairn.ArtifactCounts{Recorded: 4, MissingObject: 3}
	ch := s.Apply([]cairn.Event{upsert(&moved)}, t0)
	require.Len(t, ch.Updated, 1)
	require.Equal(t, []store.CountRise{{WorkspaceID: "w", By: 1}}, ch.Rises, "an uncached workspace's rise is its alert")
	total, _ = s.MissingTotal()
	require.Equal(t, int64(3), total)

	listArtifacts(s, "w")
	again := moved
	again.ArtifactCounts.MissingObject = 4
	require.Empty(t, s.Apply([]cairn.Event{upsert(&again)}, t0).Rises, "a cached one raises per-artifact alerts instead")
}

func TestEviction(t *testing.T) {
	t.Parallel()
	s := store.New(4)
	for i := range 3 {
		id := fmt.Sprintf("w%d", i)
		listArtifacts(s, id, art(id+"a", id, "a", cairn.ArtifactRecorded, 1), art(id+"b", id, "b", cairn.ArtifactMissingObject, 1))
	}
	// w0 is the least recently viewed: it went first, keeping its missing entry.
	require.False(t, s.Cached("w0"))
	require.True(t, s.Cached("w1"))
	require.True(t, s.Cached("w2"))
	require.Equal(t, 1, s.MissingIn("w0"))

	s.Viewed("w1")
	s.Pin("w2")
	listArtifacts(s, "w3", art("w3a", "w3", "a", cairn.ArtifactRecorded, 1))
	require.True(t, s.Cached("w2"), "pinned")
	require.True(t, s.Cached("w3"), "just listed")
	require.False(t, s.Cached("w1"), "off-stack and older than the new set")
}

// A row that differs in its lifecycle alone (last_active_at moves without
// a change event) is a change; the same row is none; warning frames change
// no row.
func TestLifecycleFieldsAreCompared(t *testing.T) {
	t.Parallel()
	s := store.New(100)
	listWorkspaces(s, ws("a", "x", 5))
	same := ws("a", "x", 5)
	require.Empty(t, s.PutWorkspace(same, t0).Updated)
	active := ws("a", "x", 5)
	active.LastActiveAt = t0.Add(time.Hour)
	require.Len(t, s.PutWorkspace(active, t0).Updated, 1)
	expiring := ws("a", "x", 5)
	expiring.LastActiveAt, expiring.ExpiresAt = active.LastActiveAt, &t0
	require.Len(t, s.PutWorkspace(expiring, t0).Updated, 1)
	snap := "s"
	archived := *expiring
	archived.ArchivedSnapshotID = &snap
	require.Len(t, s.PutWorkspace(&archived, t0).Updated, 1)
	warned := archived
	warned.Name = "renamed by a stale frame"
	ch := s.Apply([]cairn.Event{{Type: cairn.EventWorkspaceExpiring, ID: "a", Workspace: &warned}}, t0)
	require.True(t, ch.Empty())
	got, _ := s.Workspace("a")
	require.Equal(t, "x", got.Name)
}
