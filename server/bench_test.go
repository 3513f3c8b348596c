package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/gabriel-vasile/mimetype"
	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// artifactBench is the real artifact path without Docker: Postgres, the
// store, the service and the REST front door.
type artifactBench struct {
	dsn     string
	db      *postgres.DB
	objects *s3.Store
	raw     *awss3.Client
	bucket  string
	svc     *service.Service
	ws      *cairn.Workspace
}

func setupArtifactBench(b *testing.B) *artifactBench {
	b.Helper()
	ctx := context.Background()
	store := stacktest.S3(b)
	ab := &artifactBench{dsn: stacktest.Database(b), bucket: stacktest.Bucket(b), raw: store.Client()}
	var err error
	if ab.db, err = postgres.Open(ctx, ab.dsn); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ab.db.Close)
	ab.objects, err = s3.New(s3.Config{Endpoint: "http://" + store.Endpoint, Bucket: ab.bucket,
		AccessKey: store.AccessKey, SecretKey: store.SecretKey})
	if err != nil {
		b.Fatal(err)
	}
	ab.svc = service.New(ab.db, nil, ab.objects, service.Config{})
	if ab.ws, err = ab.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	return ab
}

// stage uploads body as a staging object of the workspace, outside the
// timed region.
func (ab *artifactBench) stage(b *testing.B, body []byte) string {
	b.Helper()
	key := fmt.Sprintf("staging/%s/%s", ab.ws.ID, ulid.Make())
	_, err := ab.raw.PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: &ab.bucket, Key: &key, Body: strings.NewReader(string(body)), ContentLength: aws.Int64(int64(len(body))),
	})
	if err != nil {
		b.Fatal(err)
	}
	return key
}

// BenchmarkRegister prints the latency of a register split by step — stat,
// sniff (ranged read + detection), copy, insert (row + audit in one
// transaction) — each step run through the same adapter call the service
// makes, and the whole register through the service beside it.
func BenchmarkRegister(b *testing.B) {
	ab := setupArtifactBench(b)
	ctx := context.Background()
	body := []byte(strings.Repeat("cairn benchmark line\n", 200)) // 4 KiB of text
	var stat, sniff, copyT, insert, whole time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		key := ab.stage(b, body)
		other := ab.stage(b, body)
		b.StartTimer()

		t0 := time.Now()
		info, err := ab.objects.Stat(ctx, key)
		must(b, err)
		t1 := time.Now()
		head, err := ab.objects.ReadHead(ctx, key, 3072)
		must(b, err)
		mime := mimetype.Detect(head).String()
		t2 := time.Now()
		final := fmt.Sprintf("store/%s/%s", ab.ws.ID, ulid.Make())
		must(b, ab.objects.Copy(ctx, key, final, mime))
		t3 := time.Now()
		now := cairn.Now()
		a := &cairn.Artifact{ID: ulid.Make().String(), WorkspaceID: ab.ws.ID, Name: fmt.Sprintf("step-%d", i),
			ObjectKey: final, MIMEType: mime, Size: info.Size, State: cairn.ArtifactRecorded,
			ContentWrittenAt: now, CreatedAt: now, UpdatedAt: now}
		must(b, ab.db.WithTx(ctx, func(st service.Store) error {
			if err := st.InsertArtifact(ctx, a); err != nil {
				return err
			}
			return st.InsertAudit(ctx, &cairn.AuditEvent{ID: ulid.Make().String(), Type: cairn.AuditNewArtifact,
				Metadata: map[string]any{"workspace_id": ab.ws.ID}, CreatedAt: now})
		}))
		t4 := time.Now()
		_, err = ab.svc.RegisterArtifact(ctx, ab.ws.ID, cairn.ArtifactCreate{StagingKey: other, Name: fmt.Sprintf("svc-%d", i)})
		must(b, err)
		t5 := time.Now()

		stat, sniff, copyT, insert, whole = stat+t1.Sub(t0), sniff+t2.Sub(t1), copyT+t3.Sub(t2), insert+t4.Sub(t3), whole+t5.Sub(t4)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(stat), "stat-ms")
	b.ReportMetric(ms(sniff), "sniff-ms")
	b.ReportMetric(ms(copyT), "copy-ms")
	b.ReportMetric(ms(insert), "insert-ms")
	b.ReportMetric(ms(whole), "register-ms")
	b.ReportMetric(float64(whole)/float64(stat+sniff+copyT+insert), "register/steps")
}

// BenchmarkArtifactList compares a 1 000-artifact list through the real
// REST server with the same query run directly over pgx (rows decoded,
// nothing encoded), under concurrent load, and prints requests/s of both,
// their ratio, and the p50 latency of the list repeated unchanged with its
// ETag (a 304).
func BenchmarkArtifactList(b *testing.B) {
	ab := setupArtifactBench(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ab.dsn)
	must(b, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size,
		content_written_at, created_at, updated_at)
		SELECT 'A' || lpad(i::text, 25, '0'), $1, 'art-' || i, 'store/' || $1 || '/' || i, 'text/plain', i,
		       now(), now() + i * interval '1 microsecond', now()
		FROM generate_series(1, 1000) i`, ab.ws.ID)
	must(b, err)

	benchList(b, ab, "/v1/workspaces/"+ab.ws.ID+"/artifacts?limit=1000", func() (int, error) {
		list, err := ab.db.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ab.ws.ID,
			States: []cairn.ArtifactState{cairn.ArtifactRecorded}, Page: cairn.Page{Limit: 1000}})
		return len(list), err
	})
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
