package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// TestFindAuditEventsOrder reads the same rows oldest first and newest
// first, whole and in pages: equal created_at falls back to the ID, in the
// same direction.
func TestFindAuditEventsOrder(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	insert := func(id, ws string, created time.Time) {
		require.NoError(t, db.InsertAudit(ctx, &cairn.AuditEvent{ID: id, Type: cairn.AuditNewWorkspace,
			Metadata: map[string]any{"workspace_id": ws}, CreatedAt: created}))
	}
	insert("E2", "ws-a", at.Add(time.Minute))
	insert("E1", "ws-a", at)
	insert("E4", "ws-a", at.Add(2*time.Minute))
	insert("E3", "ws-a", at.Add(2*time.Minute)) // ties E4: the ID decides
	insert("X1", "ws-b", at.Add(3*time.Minute)) // another workspace

	ids := func(f cairn.AuditFilter) []string {
		t.Helper()
		f.WorkspaceID = "ws-a"
		list, err := db.FindAuditEvents(ctx, f)
		require.NoError(t, err)
		var out []string
		for _, ev := range list {
			out = append(out, ev.ID)
		}
		return out
	}
	require.Equal(t, []string{"E1", "E2", "E3", "E4"}, ids(cairn.AuditFilter{}))
	require.Equal(t, []string{"E4", "E3", "E2", "E1"}, ids(cairn.AuditFilter{Newest: true}))
	page := func(offset int) []string {
		return ids(cairn.AuditFilter{Newest: true, Page: cairn.Page{Offset: offset, Limit: 3}})
	}
	require.Equal(t, []string{"E4", "E3", "E2"}, page(0))
	require.Equal(t, []string{"E1"}, page(3))
	require.Empty(t, page(4))
}
