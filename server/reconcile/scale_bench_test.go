package reconcile_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
)

// BenchmarkSweepScale times one full reconciliation pass over N final
// objects and N artifact rows (the target: 100 000 swept in < 15 s with
// memory independent of the count) and samples the Go heap during it.
//
// Of the N objects (store/<ws>/<26-digit index>), every hundredth is
// unreferenced: a third of those carry an aged released_objects row, a third
// a fresh one (kept), a third none at all (never referenced); the others are
// referenced by a RECORDED row. N/100 more rows name objects that were never
// written (flagged MISSING_OBJECT), and N/1000 aged released rows name no
// object (pruned). The reconciler's clock runs two grace windows ahead, so
// everything is past the cutoff without sleeping.
//
// The objects are written straight into versitygw's posix directory (after
// checking the gateway lists such files like uploaded ones): uploading them
// through the S3 API would dominate the run. Seeding is outside the timed
// region.
func BenchmarkSweepScale(b *testing.B) {
	var base *scaleRun // the 100k run, for the ratios
	for _, n := range []int{100_000, 200_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			var run scaleRun
			for range b.N {
				run = sweepScaleOnce(b, n)
			}
			b.ReportMetric(run.elapsed.Seconds(), "sweep-s")
			b.ReportMetric(float64(run.heapPeak)/(1<<20), "heap-peak-MB")
			b.ReportMetric(float64(run.sysPeak)/(1<<20), "sys-peak-MB")
			b.ReportMetric(float64(n), "objects")
			line := fmt.Sprintf("sweep-scale: objects=%d sweep=%.2fs (target < 15 s at 100k) heap-peak=%.1fMB (base %.1fMB) sys-peak=%.1fMB VmHWM %d→%d kB",
				n, run.elapsed.Seconds(), float64(run.heapPeak)/(1<<20), float64(run.heapBase)/(1<<20),
				float64(run.sysPeak)/(1<<20), run.hwmBefore, run.hwmAfter)
			if base != nil {
				tr := run.elapsed.Seconds() / base.elapsed.Seconds()
				hr := float64(run.heapPeak) / float64(base.heapPeak)
				b.ReportMetric(tr, "time-ratio")
				b.ReportMetric(hr, "heap-ratio")
				line += fmt.Sprintf(" time-ratio=%.2f heap-ratio=%.2f (vs %d)", tr, hr, base.n)
			} else {
				base = &run
			}
			fmt.Println(line)
		})
	}
}

// scaleRun is one measured pass.
type scaleRun struct {
	n                   int
	elapsed             time.Duration
	heapBase            uint64 // HeapInuse right before the pass
	heapPeak, sysPeak   uint64 // max HeapInuse and Sys while it ran
	hwmBefore, hwmAfter int64  // VmHWM (kB), process-wide and monotonic
}

// scaleWorkspaces is how many workspaces the objects are spread over.
const scaleWorkspaces = 3

func sweepScaleOnce(b *testing.B, n int) scaleRun {
	b.StopTimer()
	defer b.StartTimer()
	ctx := context.Background()

	// The services, wired as setup does for the tests.
	dsn, bucket, app := stacktest.Database(b), stacktest.Bucket(b), stacktest.AppName(b)
	gw := stacktest.S3(b)
	db, err := postgres.Open(ctx, dsn)
	require.NoError(b, err)
	b.Cleanup(db.Close)
	store, err := s3.New(s3.Config{Endpoint: "http://" + gw.Endpoint, Region: gw.Region, Bucket: bucket,
		AccessKey: gw.AccessKey, SecretKey: gw.SecretKey, HTTPClient: http.DefaultClient})
	require.NoError(b, err)
	rt := docker.New(stacktest.Docker(b), docker.Config{AppName: app})
	svc := service.New(db, rt, store, service.Config{AppName: app})
	sdk := gw.Client()

	bucketDir := filepath.Join(gw.Dir, "s3data", bucket)
	checkPosixLayout(b, sdk, bucket, bucketDir)
	// Emptying the bucket through the API (stacktest's cleanup) would take
	// minutes; the seeded tree goes on disk first (cleanups run LIFO).
	b.Cleanup(func() { os.RemoveAll(filepath.Join(bucketDir, "store")) })

	ws := make([]string, scaleWorkspaces)
	for i := range ws {
		id := uuid.NewString()
		now := cairn.Now()
		require.NoError(b, db.InsertWorkspace(ctx, &cairn.Workspace{ID: id, Name: "ws-" + id[:8],
			VolumeName: app + "-" + id, VolumeState: cairn.VolumeNone, CreatedAt: now, UpdatedAt: now}))
		ws[i] = id
	}

	start := time.Now()
	seedObjects(b, bucketDir, ws, n)
	objSeed := time.Since(start)
	start = time.Now()
	seedRows(b, dsn, ws, n)
	rowSeed := time.Since(start)

	// What the pass must do.
	var wantDeleted, wantKept int
	for i := 0; i < n; i += 100 {
		if (i/100)%3 == 1 {
			wantKept++ // fresh released row
		} else {
			wantDeleted++ // aged released row, or never referenced
		}
	}
	wantFlagged, wantPruned := n/100, n/1000
	b.Logf("seeded %d objects on disk in %s, %d rows in %s; expect %d deleted, %d flagged, %d pruned",
		n, objSeed.Round(time.Millisecond), n, rowSeed.Round(time.Millisecond), wantDeleted, wantFlagged, wantPruned)

	r := reconcile.New(db, store, rt, reconcile.JoinVolumes(rt, svc), reconcile.Config{
		AppName:   app,
		ObjAgeOut: ageOut,
		Now:       func() time.Time { return cairn.Timestamp(time.Now().Add(2 * ageOut)) },
	})

	// The measured pass.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	run := scaleRun{n: n, heapBase: ms.HeapInuse, hwmBefore: vmHWM(b)}
	stop := make(chan struct{})
	peaks := make(chan [2]uint64)
	go func() {
		var ms runtime.MemStats
		var heap, sys uint64
		sample := func() {
			runtime.ReadMemStats(&ms)
			heap, sys = max(heap, ms.HeapInuse), max(sys, ms.Sys)
		}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-stop:
				sample()
				peaks <- [2]uint64{heap, sys}
				return
			case <-tick.C:
			}
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	b.StartTimer()
	t0 := time.Now()
	res, err := r.RunOnce(pctx, "")
	run.elapsed = time.Since(t0)
	b.StopTimer()
	cancel()
	close(stop)
	p := <-peaks
	run.heapPeak, run.sysPeak = p[0], p[1]
	run.hwmAfter = vmHWM(b)

	// The pass did its work.
	require.NoError(b, err)
	require.Empty(b, res.Errors)
	require.Equal(b, n, res.StorageExamined)
	require.Equal(b, wantDeleted, res.StorageDeleted)
	require.Equal(b, wantFlagged, res.ArtifactsFlagged)
	require.Equal(b, wantPruned, res.ReleasedPruned)
	require.Equal(b, scaleWorkspaces, res.VolumesExamined)
	require.Zero(b, res.StagingExamined)

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(b, err)
	defer conn.Close(ctx)
	var missing, released int
	require.NoError(b, conn.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE state = $1`,
		cairn.ArtifactMissingObject).Scan(&missing))
	require.Equal(b, wantFlagged, missing)
	require.NoError(b, conn.QueryRow(ctx, `SELECT count(*) FROM released_objects`).Scan(&released))
	require.Equal(b, wantKept, released, "only the fresh released rows are left")
	left := 0
	for _, w := range ws {
		entries, err := os.ReadDir(filepath.Join(bucketDir, "store", w))
		require.NoError(b, err)
		left += len(entries)
	}
	require.Equal(b, n-wantDeleted, left, "objects left on disk")
	return run
}

// checkPosixLayout makes sure a file written into the bucket's directory is
// an object to the gateway: one uploaded with the SDK lands at
// <bucketDir>/<key>, and a listing shows a directly written file with its
// size and modification time. It also times a few uploads, to show why the
// seed bypasses the API.
func checkPosixLayout(b *testing.B, sdk *awss3.Client, bucket, bucketDir string) {
	b.Helper()
	ctx := context.Background()
	const puts = 200
	var wg sync.WaitGroup
	errs := make(chan error, puts)
	start := time.Now()
	for i := range puts {
		wg.Go(func() {
			key := fmt.Sprintf("probe/put/%04d", i)
			_, err := sdk.PutObject(ctx, &awss3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader("x")})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	rate := float64(puts) / time.Since(start).Seconds()
	b.Logf("SDK PutObject: %.0f objects/s (200 000 would take %.0f s); seeding on disk instead", rate, 200_000/rate)
	_, err := os.Stat(filepath.Join(bucketDir, "probe", "put", "0000"))
	require.NoError(b, err, "an uploaded object is a file at <S3.Dir>/s3data/<bucket>/<key>")

	direct := filepath.Join(bucketDir, "probe", "direct", "obj")
	require.NoError(b, os.MkdirAll(filepath.Dir(direct), 0o755))
	require.NoError(b, os.WriteFile(direct, []byte("hello"), 0o644))
	mtime := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(b, os.Chtimes(direct, mtime, mtime))
	out, err := sdk.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("probe/direct/")})
	require.NoError(b, err)
	require.Len(b, out.Contents, 1)
	require.Equal(b, "probe/direct/obj", aws.ToString(out.Contents[0].Key))
	require.Equal(b, int64(5), aws.ToInt64(out.Contents[0].Size))
	require.True(b, mtime.Equal(aws.ToTime(out.Contents[0].LastModified)), "LastModified %v, mtime %v",
		aws.ToTime(out.Contents[0].LastModified), mtime)
	require.NoError(b, os.RemoveAll(filepath.Join(bucketDir, "probe")))
	out, err = sdk.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket})
	require.NoError(b, err)
	require.Empty(b, out.Contents)
}

// scaleName is object i's name under its workspace; the SQL seed spells
// it lpad(i, 26, '0').
func scaleName(i int) string { return fmt.Sprintf("%026d", i) }

// seedObjects writes the N one-byte objects into the bucket's directory.
func seedObjects(b *testing.B, bucketDir string, ws []string, n int) {
	b.Helper()
	for _, w := range ws {
		require.NoError(b, os.MkdirAll(filepath.Join(bucketDir, "store", w), 0o755))
	}
	workers := 4 * runtime.GOMAXPROCS(0)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				p := filepath.Join(bucketDir, "store", ws[i%len(ws)], scaleName(i))
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
}

// seedRows bulk-inserts the artifact and released rows (see
// BenchmarkSweepScale for the mix).
func seedRows(b *testing.B, dsn string, ws []string, n int) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(b, err)
	defer conn.Close(ctx)
	wsOf := func(i string) string {
		return fmt.Sprintf("($1::text[])[%s %% %d + 1]", i, len(ws))
	}
	keyOf := func(i, mark string, width int) string {
		return fmt.Sprintf("'store/' || %s || '/' || '%s' || lpad(%s::text, %d, '0')", wsOf(i), mark, i, width)
	}
	stmts := []string{
		// Referenced objects: every one but each hundredth.
		`INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, state,
			created_at, updated_at, content_written_at)
		 SELECT 'A' || lpad(i::text, 25, '0'), ` + wsOf("i") + `, 'a-' || i, ` + keyOf("i", "", 26) + `,
			'text/plain', 1, 'RECORDED', now(), now(), now()
		 FROM generate_series(0, $2 - 1) i WHERE i % 100 <> 0`,
		// Rows whose object was never written, as many as the unreferenced
		// objects, so there are N rows.
		`INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, state,
			created_at, updated_at, content_written_at)
		 SELECT 'M' || lpad(j::text, 25, '0'), ` + wsOf("j") + `, 'm-' || j, ` + keyOf("j", "M", 25) + `,
			'text/plain', 1, 'RECORDED', now(), now(), now()
		 FROM generate_series(0, $2 / 100 - 1) j`,
		// Released unreferenced objects: aged (reaped) and fresh (kept).
		`INSERT INTO released_objects (object_key, workspace_id, released_at)
		 SELECT ` + keyOf("i", "", 26) + `, ` + wsOf("i") + `,
			CASE WHEN (i / 100) % 3 = 0 THEN now() - interval '1 day' ELSE now() + interval '3 hours' END
		 FROM generate_series(0, $2 - 1, 100) i WHERE (i / 100) % 3 <> 2`,
		// Aged released rows without an object: pruned.
		`INSERT INTO released_objects (object_key, workspace_id, released_at)
		 SELECT ` + keyOf("k", "P", 25) + `, ` + wsOf("k") + `, now() - interval '1 day'
		 FROM generate_series(0, $2 / 1000 - 1) k`,
	}
	for _, s := range stmts {
		_, err := conn.Exec(ctx, s, ws, n)
		require.NoError(b, err, s)
	}
	for _, table := range []string{"artifacts", "released_objects"} {
		_, err = conn.Exec(ctx, "ANALYZE "+table)
		require.NoError(b, err)
	}
	var rows int
	require.NoError(b, conn.QueryRow(ctx, `SELECT count(*) FROM artifacts`).Scan(&rows))
	require.Equal(b, n-n/100+n/100, rows)
}

// vmHWM reads the process's peak resident set (kB) from /proc/self/status.
func vmHWM(b *testing.B) int64 {
	b.Helper()
	f, err := os.Open("/proc/self/status")
	require.NoError(b, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(b, err)
			return kb
		}
	}
	require.NoError(b, sc.Err())
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
