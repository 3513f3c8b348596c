package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/postgres"
)

// BenchmarkListWithCounts lists 1 000 workspaces, with their kept
// artifact_counts, from a database holding 1 000 000 artifacts, side by
// side with the same list without the counts; the target is within 1.2×.
// The same list counting by a scan at read time is printed for scale.
func BenchmarkListWithCounts(b *testing.B) {
	ctx := context.Background()
	dsn := stacktest.Database(b)
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	pool, err := pgxpool.New(ctx, dsn) // for the queries that are not the store's
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	start := time.Now()
	// The notify trigger is off for the load only (nothing listens); the
	// count triggers run as they always do.
	for _, q := range []string{
		`ALTER TABLE artifacts DISABLE TRIGGER cairn_artifacts_notify`,
		`ALTER TABLE workspaces DISABLE TRIGGER cairn_workspaces_notify`,
		`INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
		 SELECT 'w' || lpad(i::text, 4, '0'), 'ws-' || i, 'c-' || i, now(), now() FROM generate_series(1, 1000) i`,
		`INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, state, content_written_at, created_at, updated_at)
		 SELECT 'a' || w || '-' || j, 'w' || lpad(w::text, 4, '0'), 'art-' || j, 'store/' || w || '/' || j, 'text/plain', 1,
		        CASE WHEN j % 50 = 0 THEN 'MISSING_OBJECT' ELSE 'RECORDED' END, now(), now(), now()
		   FROM generate_series(1, 1000) w, generate_series(1, 1000) j`,
		`ALTER TABLE artifacts ENABLE TRIGGER cairn_artifacts_notify`,
		`ALTER TABLE workspaces ENABLE TRIGGER cairn_workspaces_notify`,
		`VACUUM ANALYZE workspaces`,
		`VACUUM ANALYZE artifacts`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("setup: 1 000 workspaces, 1 000 000 artifacts in %s", time.Since(start).Round(time.Millisecond))

	page := cairn.WorkspaceFilter{Page: cairn.Page{Limit: 1000}}
	withCounts := func() {
		list, err := db.FindWorkspaces(ctx, page)
		if err != nil || len(list) != 1000 || list[0].ArtifactCounts != (cairn.ArtifactCounts{Recorded: 980, MissingObject: 20}) {
			b.Fatalf("list with counts: %v, %d rows", err, len(list))
		}
	}
	// The same query and scan as the store's, without the two count columns.
	withoutCounts := func() {
		rows, err := pool.Query(ctx, `SELECT id, name, description, volume_name, volume_state, volume_metadata,
			coalesce(created_at, to_timestamp(0)), coalesce(updated_at, to_timestamp(0)) FROM workspaces
			WHERE ($1::text[] IS NULL OR name = ANY($1)) AND ($2::text[] IS NULL OR volume_state = ANY($2))
			ORDER BY created_at, id OFFSET $3 LIMIT $4`, nil, nil, 0, 1000)
		if err != nil {
			b.Fatal(err)
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Workspace, error) {
			var ws cairn.Workspace
			err := row.Scan(&ws.ID, &ws.Name, &ws.Description, &ws.VolumeName, &ws.VolumeState, &ws.VolumeMetadata,
				&ws.CreatedAt, &ws.UpdatedAt)
			ws.CreatedAt, ws.UpdatedAt = cairn.Timestamp(ws.CreatedAt), cairn.Timestamp(ws.UpdatedAt)
			return &ws, err
		})
		if err != nil || len(list) != 1000 {
			b.Fatalf("list without counts: %v, %d rows", err, len(list))
		}
	}
	// What counting at read time would cost.
	scanning := func() {
		rows, err := pool.Query(ctx, `SELECT w.id, count(*) FILTER (WHERE a.state = 'RECORDED'),
			count(*) FILTER (WHERE a.state = 'MISSING_OBJECT')
			FROM workspaces w LEFT JOIN artifacts a ON a.workspace_id = w.id
			GROUP BY w.id, w.created_at ORDER BY w.created_at, w.id LIMIT 1000`)
		if err != nil {
			b.Fatal(err)
		}
		rows.Close()
		if rows.Err() != nil {
			b.Fatal(rows.Err())
		}
	}

	var with, without []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		first, second := withCounts, withoutCounts
		if i%2 == 1 { // alternate the order, so neither always runs on a warmer cache
			first, second = second, first
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		t2 := time.Now()
		if i%2 == 0 {
			with, without = append(with, t1.Sub(t0)), append(without, t2.Sub(t1))
		} else {
			with, without = append(with, t2.Sub(t1)), append(without, t1.Sub(t0))
		}
	}
	b.StopTimer()
	t0 := time.Now()
	for range 3 {
		scanning()
	}
	scan := time.Since(t0) / 3
	mw, mo := median(with), median(without)
	b.ReportMetric(float64(mw.Microseconds())/1000, "with-counts-ms")
	b.ReportMetric(float64(mo.Microseconds())/1000, "without-counts-ms")
	b.ReportMetric(float64(mw)/float64(mo), "ratio")
	b.Logf("list of 1 000 workspaces over 1 000 000 artifacts: with counts %s, without %s: %.2f× (target ≤ 1.2×); "+
		"counting by a scan instead: %s (%.0f×)", mw, mo, float64(mw)/float64(mo), scan.Round(time.Millisecond),
		float64(scan)/float64(mo))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
