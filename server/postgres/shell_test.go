package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service"
)

// newShell is a running row of ws opened by instance at created.
func newShell(id string, ws *cairn.Workspace, instance string, created time.Time) *service.ShellRow {
	return &service.ShellRow{ID: id, WorkspaceID: ws.ID, Container: "cairn.shell." + ws.ID + "." + id,
		Key: bytes.Repeat([]byte{0xab}, 32), TokenName: "ops", ClientAddr: "192.0.2.7:50123",
		Instance: instance, Record: true, State: service.ShellRunning,
		CreatedAt: created, ExpiresAt: created.Add(8 * time.Hour)}
}

// insertWorkspaces inserts one workspace per name.
func insertWorkspaces(t *testing.T, db *postgres.DB, names ...string) []*cairn.Workspace {
	t.Helper()
	list := make([]*cairn.Workspace, len(names))
	for i, name := range names {
		list[i] = newWorkspace(name, cairn.Now())
		require.NoError(t, db.InsertWorkspace(t.Context(), list[i]))
	}
	return list
}

func shellIDs(rows []*service.ShellRow) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

func TestShellRoundTrip(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	ws := insertWorkspaces(t, db, "shells")[0]
	// A local, nanosecond time: the row comes back in UTC at microseconds.
	created := time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.FixedZone("UTC+2", 2*3600))
	row := newShell("S1", ws, "replica-a", created)
	row.State = service.ShellOpening
	require.NoError(t, db.InsertShell(ctx, row))

	got, err := db.FindShell(ctx, "S1")
	require.NoError(t, err)
	want := *row
	want.CreatedAt, want.ExpiresAt = cairn.Timestamp(row.CreatedAt), cairn.Timestamp(row.ExpiresAt)
	require.Equal(t, &want, got, "every column survives")
	require.Equal(t, time.UTC, got.CreatedAt.Location())
	require.Equal(t, 123456000, got.CreatedAt.Nanosecond())

	t.Run("EmptyTokenAndAddress", func(t *testing.T) {
		anon := newShell("S2", ws, "replica-a", cairn.Now())
		anon.TokenName, anon.ClientAddr, anon.Record = "", "", false
		require.NoError(t, db.InsertShell(ctx, anon))
		got, err := db.FindShell(ctx, "S2")
		require.NoError(t, err)
		require.Equal(t, anon, got)
	})
	t.Run("ErrShellNotFound", func(t *testing.T) {
		_, err := db.FindShell(ctx, "no-such-shell")
		require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
		require.Contains(t, cairn.ErrorDetail(err), "'no-such-shell'")
	})
	t.Run("DuplicateID", func(t *testing.T) {
		err := db.InsertShell(ctx, newShell("S1", ws, "replica-b", cairn.Now()))
		require.Error(t, err)
		got, err := db.FindShell(ctx, "S1")
		require.NoError(t, err)
		require.Equal(t, "replica-a", got.Instance, "the first row stays")
	})
	t.Run("AbsentWorkspace", func(t *testing.T) {
		ghost := newWorkspace("ghost", cairn.Now())
		err := db.InsertShell(ctx, newShell("S3", ghost, "replica-a", cairn.Now()))
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
	})
	t.Run("RolledBackInsert", func(t *testing.T) {
		boom := errors.New("boom")
		err := db.WithTx(ctx, func(st service.Store) error {
			require.NoError(t, st.InsertShell(ctx, newShell("S4", ws, "replica-a", cairn.Now())))
			_, err := st.FindShell(ctx, "S4")
			require.NoError(t, err, "the transaction sees its own row")
			return boom
		})
		require.ErrorIs(t, err, boom)
		_, err = db.FindShell(ctx, "S4")
		require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
	})
}

func TestFindShellRows(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	wss := insertWorkspaces(t, db, "one", "two", "empty")
	base := cairn.Now()
	// Inserted out of order; S-b and S-a share a time, so the ID breaks the tie.
	for _, r := range []*service.ShellRow{
		newShell("S-c", wss[0], "replica-a", base.Add(2*time.Second)),
		newShell("S-b", wss[1], "replica-b", base.Add(time.Second)),
		newShell("S-a", wss[0], "replica-a", base.Add(time.Second)),
		newShell("S-z", wss[1], "replica-a", base),
	} {
		require.NoError(t, db.InsertShell(ctx, r))
	}

	all, err := db.FindShellRows(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{"S-z", "S-a", "S-b", "S-c"}, shellIDs(all))

	one, err := db.FindShellRows(ctx, wss[0].ID)
	require.NoError(t, err)
	require.Equal(t, []string{"S-a", "S-c"}, shellIDs(one))
	two, err := db.FindShellRows(ctx, wss[1].ID)
	require.NoError(t, err)
	require.Equal(t, []string{"S-z", "S-b"}, shellIDs(two))

	none, err := db.FindShellRows(ctx, wss[2].ID)
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestFindShellRowsBounded(t *testing.T) {
	t.Parallel()
	db, dsn := setup(t)
	ctx := t.Context()
	ws := insertWorkspaces(t, db, "crowded")[0]
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	// One row past the bound, numbered so that their order is their number.
	_, err = conn.Exec(ctx, `INSERT INTO shells (id, workspace_id, container, key, instance, record, state,
		created_at, expires_at)
		SELECT format('S%s', lpad(n::text, 6, '0')), $1, 'c', decode(repeat('ab', 32), 'hex'), 'replica-a',
		       false, 'running', timestamptz '2031-01-01' + n * interval '1 ms', timestamptz '2032-01-01'
		  FROM generate_series(1, $2::int) n`, ws.ID, service.MaxShellRows+1)
	require.NoError(t, err)

	for _, workspaceID := range []string{"", ws.ID} {
		list, err := db.FindShellRows(ctx, workspaceID)
		require.NoError(t, err)
		require.Equal(t, service.MaxShellRows, len(list), "rows listed")
		require.Equal(t, "S000001", list[0].ID)
		require.Equal(t, fmt.Sprintf("S%06d", service.MaxShellRows), list[len(list)-1].ID,
			"the earliest rows, the last one left out")
	}
}

func TestCountShells(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	wss := insertWorkspaces(t, db, "one", "two")
	for i, r := range []*service.ShellRow{
		newShell("S1", wss[0], "replica-a", cairn.Now()),
		newShell("S2", wss[0], "replica-a", cairn.Now()),
		newShell("S3", wss[1], "replica-a", cairn.Now()),
		newShell("S4", wss[0], "replica-b", cairn.Now()),
		newShell("S5", wss[1], "replica-b", cairn.Now()),
	} {
		r.State = []service.ShellState{service.ShellOpening, service.ShellRunning, service.ShellEnding}[i%3]
		require.NoError(t, db.InsertShell(ctx, r))
	}

	for _, c := range []struct {
		instance, workspaceID string
		total, inWorkspace    int
	}{
		{"replica-a", wss[0].ID, 3, 2},
		{"replica-a", wss[1].ID, 3, 1},
		{"replica-b", wss[0].ID, 2, 1},
		{"replica-b", "", 2, 0},
		{"replica-c", wss[0].ID, 0, 0},
	} {
		total, inWorkspace, err := db.CountShells(ctx, c.instance, c.workspaceID)
		require.NoError(t, err)
		require.Equal(t, [2]int{c.total, c.inWorkspace}, [2]int{total, inWorkspace},
			"instance %s, workspace %q", c.instance, c.workspaceID)
	}
}

func TestSetShellState(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	ws := insertWorkspaces(t, db, "states")[0]
	row := newShell("S1", ws, "replica-a", cairn.Now())
	row.State = service.ShellOpening
	require.NoError(t, db.InsertShell(ctx, row))
	stateOf := func() service.ShellState {
		t.Helper()
		got, err := db.FindShell(ctx, "S1")
		require.NoError(t, err)
		return got.State
	}

	for _, step := range []struct {
		from []service.ShellState
		to   service.ShellState
		ok   bool
		now  service.ShellState
	}{
		{[]service.ShellState{service.ShellRunning}, service.ShellEnding, false, service.ShellOpening},
		{nil, service.ShellEnding, false, service.ShellOpening},
		{[]service.ShellState{service.ShellOpening}, service.ShellRunning, true, service.ShellRunning},
		{[]service.ShellState{service.ShellOpening}, service.ShellRunning, false, service.ShellRunning},
		{[]service.ShellState{service.ShellOpening, service.ShellRunning}, service.ShellEnding, true, service.ShellEnding},
		{[]service.ShellState{service.ShellOpening, service.ShellRunning}, service.ShellEnding, false, service.ShellEnding},
	} {
		ok, err := db.SetShellState(ctx, "S1", step.from, step.to)
		require.NoError(t, err)
		require.Equal(t, step.ok, ok, "from %v to %s", step.from, step.to)
		require.Equal(t, step.now, stateOf())
	}

	t.Run("AbsentRow", func(t *testing.T) {
		ok, err := db.SetShellState(ctx, "no-such-shell", []service.ShellState{service.ShellRunning}, service.ShellEnding)
		require.NoError(t, err)
		require.False(t, ok)
	})
	t.Run("UnknownStateRefused", func(t *testing.T) {
		_, err := db.SetShellState(ctx, "S1", []service.ShellState{service.ShellEnding}, "closed")
		require.Equal(t, "23514", pgCode(err), "the state CHECK")
		require.Equal(t, service.ShellEnding, stateOf())
	})
}

// TestSetShellStateOneWinner races two replicas ending the same running
// shell: exactly one of them may claim it, every time.
func TestSetShellStateOneWinner(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	ws := insertWorkspaces(t, db, "race")[0]
	const rounds = 200
	for round := range rounds {
		id := fmt.Sprintf("S%03d", round)
		require.NoError(t, db.InsertShell(ctx, newShell(id, ws, "replica-a", cairn.Now())))

		start := make(chan struct{})
		var wg sync.WaitGroup
		var won [2]bool
		var errs [2]error
		for i := range won {
			wg.Go(func() {
				<-start
				won[i], errs[i] = db.SetShellState(ctx, id, []service.ShellState{service.ShellRunning}, service.ShellEnding)
			})
		}
		close(start)
		wg.Wait()
		require.NoError(t, errors.Join(errs[:]...))
		require.True(t, won[0] != won[1], "round %d: exactly one replica claims the end, got %v", round, won)
		got, err := db.FindShell(ctx, id)
		require.NoError(t, err)
		require.Equal(t, service.ShellEnding, got.State)
	}
}

func TestDeleteShell(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	ws := insertWorkspaces(t, db, "deletes")[0]
	require.NoError(t, db.InsertShell(ctx, newShell("S1", ws, "replica-a", cairn.Now())))
	require.NoError(t, db.InsertShell(ctx, newShell("S2", ws, "replica-a", cairn.Now())))

	require.NoError(t, db.DeleteShell(ctx, "S1"))
	_, err := db.FindShell(ctx, "S1")
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err))
	require.NoError(t, db.DeleteShell(ctx, "S1"), "an absent row is no error")
	require.NoError(t, db.DeleteShell(ctx, "never-was"))

	rest, err := db.FindShellRows(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{"S2"}, shellIDs(rest), "only the named row goes")
}

// FindShellEnd reads how a shell ended from its SHELL_CLOSED row, and
// only from that type of row.
func TestFindShellEnd(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	audit := func(id string, typ cairn.AuditType, meta map[string]any) {
		t.Helper()
		require.NoError(t, db.InsertAudit(ctx, &cairn.AuditEvent{ID: id, Type: typ, Metadata: meta, CreatedAt: cairn.Now()}))
	}
	audit("A1", cairn.AuditShellOpened, map[string]any{"shell_id": "S1"})
	audit("A2", cairn.AuditShellClosed, map[string]any{"shell_id": "S1", "reason": "node_lost", "exit_code": -1})
	audit("A3", cairn.AuditShellClosed, map[string]any{"shell_id": "S2", "reason": "exited", "exit_code": 3})
	audit("A4", cairn.AuditShellOpened, map[string]any{"shell_id": "S3"})

	end, err := db.FindShellEnd(ctx, "S1")
	require.NoError(t, err)
	require.Equal(t, &service.ShellEnd{Reason: ptyshell.ReasonNodeLost, ExitCode: -1}, end)
	end, err = db.FindShellEnd(ctx, "S2")
	require.NoError(t, err)
	require.Equal(t, &service.ShellEnd{Reason: ptyshell.ReasonExited, ExitCode: 3}, end)
	end, err = db.FindShellEnd(ctx, "S3")
	require.NoError(t, err)
	require.Nil(t, end, "an open shell has no end")
	end, err = db.FindShellEnd(ctx, "never-was")
	require.NoError(t, err)
	require.Nil(t, end)
}

func TestShellsCascadeWithWorkspace(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	wss := insertWorkspaces(t, db, "doomed", "kept")
	require.NoError(t, db.InsertShell(ctx, newShell("S1", wss[0], "replica-a", cairn.Now())))
	require.NoError(t, db.InsertShell(ctx, newShell("S2", wss[0], "replica-b", cairn.Now())))
	require.NoError(t, db.InsertShell(ctx, newShell("S3", wss[1], "replica-a", cairn.Now())))

	at := cairn.Now()
	require.NoError(t, db.WithTx(ctx, func(st service.Store) error { return st.DeleteWorkspace(ctx, wss[0].ID, at) }))

	rest, err := db.FindShellRows(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{"S3"}, shellIDs(rest), "the deleted workspace's rows go with it")
	total, _, err := db.CountShells(ctx, "replica-b", "")
	require.NoError(t, err)
	require.Zero(t, total)
}

func TestShellKeyCheck(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	ws := insertWorkspaces(t, db, "keys")[0]
	for _, size := range []int{31, 33, 0} {
		row := newShell(fmt.Sprintf("S%d", size), ws, "replica-a", cairn.Now())
		row.Key = bytes.Repeat([]byte{1}, size)
		err := db.InsertShell(ctx, row)
		require.Equal(t, "23514", pgCode(err), "a %d-byte key: the CHECK refuses it", size)
		require.Equal(t, cairn.ReasonInternal, cairn.ErrorReason(err))
	}
	rows, err := db.FindShellRows(ctx, "")
	require.NoError(t, err)
	require.Empty(t, rows)

	t.Run("UnknownState", func(t *testing.T) {
		row := newShell("S-state", ws, "replica-a", cairn.Now())
		row.State = "closed"
		require.Equal(t, "23514", pgCode(db.InsertShell(ctx, row)))
	})
}

// pgCode is the SQLSTATE of the database error err wraps, or "".
func pgCode(err error) string {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code
	}
	return ""
}
