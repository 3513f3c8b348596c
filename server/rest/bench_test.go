package rest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/rest"
)

// benchWorkspaces is how many workspaces the benchmark seeds, and the size
// of the list it reads.
const benchWorkspaces = 1000

// benchReady is how many of them get a real volume.
const benchReady = 50

// benchParallelism multiplies GOMAXPROCS into the number of concurrent
// clients.
const benchParallelism = 8

// The queries the store runs for GET /v1/workspaces/{id} and for an
// unfiltered GET /v1/workspaces?limit=N (server/postgres/workspace.go),
// run directly over pgx as the floor the API is compared with.
const (
	benchColumns = `id, name, description, volume_name, volume_state, volume_metadata,
	coalesce(created_at, to_timestamp(0)), coalesce(updated_at, to_timestamp(0))`
	benchGetSQL  = `SELECT ` + benchColumns + ` FROM workspaces WHERE id = $1`
	benchListSQL = `SELECT ` + benchColumns + ` FROM workspaces
		WHERE ($1::text[] IS NULL OR name = ANY($1))
		  AND ($2::text[] IS NULL OR volume_state = ANY($2))
		ORDER BY created_at, id OFFSET $3 LIMIT $4`
)

// BenchmarkMetadata measures the metadata API under concurrent load against
// the same queries run directly over pgx in the same run (target:
// ≥ 0.5× direct, p99 < 10 ms). Each sub-benchmark runs b.N requests
// through the real HTTP server (real service, real Postgres, real
// Docker), then b.N direct queries, and reports requests/s of both, their
// ratio http/direct, and the p99 latency of each side; ns/op is the HTTP
// side's.
//
// The workspaces are seeded NONE, without volumes: Get measures the
// metadata path, which does not ask Docker for a NONE row. GetReady reads
// READY rows with real volumes, whose mount_count costs a Docker round (a
// volume listing and a running-container listing shared by the requests
// that arrive while the previous round is in flight).
func BenchmarkMetadata(b *testing.B) {
	u, tb := setup(b, rest.Config{})
	ctx := b.Context()
	_, err := tb.db.Exec(ctx, `INSERT INTO workspaces (id, name, description, volume_name, volume_state,
			volume_metadata, created_at, updated_at)
		SELECT id, 'bench-' || g, 'workspace number ' || g, $1 || '-' || id, 'NONE',
			'{"size_bytes": 1073741824}'::jsonb, at, at
		FROM (SELECT gen_random_uuid()::text AS id, g,
			now() - interval '1 hour' + g * interval '1 millisecond' AS at
			FROM generate_series(1, $2::int) g) s`, tb.app, benchWorkspaces)
	require.NoError(b, err)
	rows, err := tb.db.Query(ctx, `SELECT id FROM workspaces ORDER BY created_at, id`)
	require.NoError(b, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(b, err)
	require.Len(b, ids, benchWorkspaces)

	// The direct side gets a pool configured as the service's is.
	direct, err := pgxpool.New(ctx, tb.dbURL)
	require.NoError(b, err)
	b.Cleanup(direct.Close)
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute,
	}}
	b.Cleanup(client.CloseIdleConnections)

	// The HTTP side reads the whole body; the direct side scans every row
	// into the domain type, as the store does.
	httpGet := func(ctx context.Context, path string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+path, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
		}
		return nil
	}

	b.Run("Get", func(b *testing.B) {
		compare(b,
			func(ctx context.Context, i uint64) error {
				return httpGet(ctx, "/v1/workspaces/"+ids[i%benchWorkspaces])
			},
			func(ctx context.Context, i uint64) error {
				_, err := scanBenchWorkspace(direct.QueryRow(ctx, benchGetSQL, ids[i%benchWorkspaces]))
				return err
			})
	})

	// READY rows with real volumes: each GET asks Docker for mount_count,
	// in rounds shared by the concurrent requests.
	ready := ids[:benchReady]
	for _, id := range ready {
		_, err := tb.cli.VolumeCreate(ctx, volume.CreateOptions{Name: tb.app + "-" + id, Driver: "local"})
		require.NoError(b, err)
	}
	_, err = tb.db.Exec(ctx, `UPDATE workspaces SET volume_state = 'READY' WHERE id = ANY($1)`, ready)
	require.NoError(b, err)
	b.Run("GetReady", func(b *testing.B) {
		compare(b,
			func(ctx context.Context, i uint64) error {
				return httpGet(ctx, "/v1/workspaces/"+ready[i%benchReady])
			},
			func(ctx context.Context, i uint64) error {
				_, err := scanBenchWorkspace(direct.QueryRow(ctx, benchGetSQL, ready[i%benchReady]))
				return err
			})
	})

	b.Run("List", func(b *testing.B) {
		path := fmt.Sprintf("/v1/workspaces?limit=%d", benchWorkspaces)
		compare(b,
			func(ctx context.Context, _ uint64) error { return httpGet(ctx, path) },
			func(ctx context.Context, _ uint64) error {
				rows, err := direct.Query(ctx, benchListSQL, nil, nil, 0, benchWorkspaces)
				if err != nil {
					return err
				}
				list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Workspace, error) {
					return scanBenchWorkspace(row)
				})
				if err == nil && len(list) != benchWorkspaces {
					err = fmt.Errorf("listed %d workspaces", len(list))
				}
				return err
			})
	})
}

func scanBenchWorkspace(row pgx.Row) (*cairn.Workspace, error) {
	var ws cairn.Workspace
	err := row.Scan(&ws.ID, &ws.Name, &ws.Description, &ws.VolumeName, &ws.VolumeState,
		&ws.VolumeMetadata, &ws.CreatedAt, &ws.UpdatedAt)
	return &ws, err
}

// compare runs b.N operations of each side under b.RunParallel and reports
// both rates, their ratio, and both p99 latencies.
func compare(b *testing.B, viaHTTP, viaPgx func(context.Context, uint64) error) {
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	httpElapsed, httpLat := measure(b, viaHTTP)
	directElapsed, directLat := measure(b, viaPgx)
	b.StopTimer()

	httpRate := float64(len(httpLat)) / httpElapsed.Seconds()
	directRate := float64(len(directLat)) / directElapsed.Seconds()
	b.ReportMetric(float64(httpElapsed.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(httpRate, "http-req/s")
	b.ReportMetric(directRate, "direct-req/s")
	b.ReportMetric(httpRate/directRate, "http/direct")
	b.ReportMetric(p99(httpLat), "http-p99-ms")
	b.ReportMetric(p99(directLat), "direct-p99-ms")
}

// measure runs op b.N times across the parallel clients and returns the
// wall time and every operation's latency.
func measure(b *testing.B, op func(context.Context, uint64) error) (time.Duration, []time.Duration) {
	var (
		mu   sync.Mutex
		all  = make([]time.Duration, 0, b.N)
		next atomic.Uint64
	)
	ctx := b.Context()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		defer func() {
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
		for pb.Next() {
			t0 := time.Now()
			if err := op(ctx, next.Add(1)); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
	})
	return time.Since(start), all
}

// p99 is the 99th-percentile latency in milliseconds.
func p99(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[(len(lat)*99)/100]) / float64(time.Millisecond)
}
