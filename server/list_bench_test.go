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

	benchList(b, ab, "/v1/workspaces?limit=1000", func() int {
		list, err := ab.db.FindWorkspaces(ctx, cairn.WorkspaceFilter{Page: cairn.Page{Limit: 1000}})
		must(b, err)
		return len(list)
	})
}

// benchList serves the REST routes over ab and reports, for the list at
// path: requests/s over HTTP and of direct (the store's query, rows
// decoded), their ratio, and the p50 latency of the list repeated
// unchanged with its ETag.
func benchList(b *testing.B, ab *artifactBench, path string, direct func() int) {
	b.Helper()
	api := rest.New(ab.svc, rest.Config{})
	srv := httptest.NewServer(authtest.Mount(b, "", api.Routes()))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(etag string) (status int, tag string, n int64) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		must(b, err)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := client.Do(req)
		must(b, err)
		defer resp.Body.Close()
		n, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag"), n
	}

	b.ResetTimer()
	httpRate := measure(b, func() {
		if status, _, n := get(""); status != http.StatusOK || n < 100_000 {
			b.Fatalf("list answered %d with %d bytes", status, n)
		}
	})
	directRate := measure(b, func() {
		if n := direct(); n != 1000 {
			b.Fatalf("direct list has %d rows", n)
		}
	})
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
