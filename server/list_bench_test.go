package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/rest"
)

// BenchmarkWorkspaceList is BenchmarkArtifactList for a list of 1 000
// workspaces, each row with its artifact counts.
func BenchmarkWorkspaceList(b *testing.B) {
	ab := setupArtifactBench(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ab.dsn)
	must(b, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO workspaces (id, name, description, volume_name, created_at, updated_at)
		SELECT gen_random_uuid()::text, 'ws-' || i, 'a <scratch> & "test" space', 'cairn-' || i,
		       now() + i * interval '1 microsecond', now()
		FROM generate_series(1, 999) i`)
	must(b, err)

	benchList(b, ab, "/v1/workspaces?limit=1000", func() (int, error) {
		list, err := ab.db.FindWorkspaces(ctx, cairn.WorkspaceFilter{Page: cairn.Page{Limit: 1000}})
		return len(list), err
	})
}

// benchList serves the REST routes over ab and reports, for the list at
// path: requests/s over HTTP and of direct (the store's query, rows
// decoded), their ratio, and the p50 latency of the list repeated
// unchanged with its ETag.
func benchList(b *testing.B, ab *artifactBench, path string, direct func() (rows int, err error)) {
	b.Helper()
	api := rest.New(ab.svc, rest.Config{})
	srv := httptest.NewServer(authtest.Mount(b, "", api.Routes()))
	defer srv.Close()
	// Read buffers as large as the cairn client's, so that the client's
	// reads (4 KiB at a time by default) do not weigh on the HTTP side.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, ReadBufferSize: 256 << 10}}
	// get sends the list with etag as If-None-Match; it runs on the
	// workers' goroutines, so it reports failures with Errorf.
	get := func(etag string) (status int, tag string, n int64) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			b.Errorf("list request: %v", err)
			return 0, "", 0
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Errorf("list: %v", err)
			return 0, "", 0
		}
		defer resp.Body.Close()
		n, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag"), n
	}

	b.ResetTimer()
	httpRate, directRate := compare(func() {
		if status, _, n := get(""); status != http.StatusOK || n < 100_000 {
			b.Errorf("list answered %d with %d bytes", status, n)
		}
	}, func() {
		if n, err := direct(); err != nil || n != 1000 {
			b.Errorf("direct list has %d rows: %v", n, err)
		}
	})
	if b.Failed() {
		return
	}
	_, tag, _ := get("")
	var latencies []time.Duration
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		start := time.Now()
		if status, _, _ := get(tag); status != http.StatusNotModified {
			b.Fatalf("the unchanged list with its ETag %q answered %d", tag, status)
		}
		latencies = append(latencies, time.Since(start))
	}
	slices.Sort(latencies)
	b.ReportMetric(httpRate, "http-req/s")
	b.ReportMetric(directRate, "direct-req/s")
	b.ReportMetric(httpRate/directRate, "http/direct")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "etag-p50-ms")
}

// compare runs x and y, each from several goroutines, in alternating
// windows, and returns the operations per second of each. Alternating
// keeps the ratio fair on a machine whose load drifts.
func compare(x, y func()) (xRate, yRate float64) {
	const rounds, window = 10, 200 * time.Millisecond
	var xOps, yOps int
	for range rounds {
		xOps += run(x, window)
		yOps += run(y, window)
	}
	total := (rounds * window).Seconds()
	return float64(xOps) / total, float64(yOps) / total
}

// run runs op from several goroutines for d and returns how many times it
// finished.
func run(op func(), d time.Duration) int {
	const workers = 8
	done := make(chan int, workers)
	deadline := time.Now().Add(d)
	for range workers {
		go func() {
			n := 0
			for time.Now().Before(deadline) {
				op()
				n++
			}
			done <- n
		}()
	}
	total := 0
	for range workers {
		total += <-done
	}
	return total
}
