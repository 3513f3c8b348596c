package stacktest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

func TestDatabaseIsMigratedAndPrivate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := stacktest.Database(t), stacktest.Database(t)
	require.NotEqual(t, a, b)
	conn, err := pgx.Connect(ctx, a)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO workspaces (id, name, volume_name) VALUES ('1', 'x', 'v')`)
	require.NoError(t, err, "the schema is there")

	other, err := pgx.Connect(ctx, b)
	require.NoError(t, err)
	defer other.Close(ctx)
	var n int
	require.NoError(t, other.QueryRow(ctx, `SELECT count(*) FROM workspaces`).Scan(&n))
	require.Zero(t, n, "another test's database does not see the row")
}

func TestBucket(t *testing.T) {
	t.Parallel()
	name := stacktest.Bucket(t)
	cl := stacktest.S3(t).Client()
	_, err := cl.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(name), Key: aws.String("k"), Body: strings.NewReader("v"),
	})
	require.NoError(t, err)
}

func TestRunInVolume(t *testing.T) {
	t.Parallel()
	app := stacktest.AppName(t)
	out := stacktest.RunInVolume(t, app, app+"-vol", "echo hi > /mnt/cairn/ws/f && cat /mnt/cairn/ws/f")
	require.Equal(t, "hi", out)
	out, code := stacktest.RunInVolumeAs(t, app, app+"-vol", "1234:1234", "id -u; exit 3")
	require.Equal(t, 3, code)
	require.Equal(t, "1234", out)
}

// TestStartServerReportsAnEarlyExit: a server that refuses its config is
// reported at once with its output, not after the minute a slow start may
// take.
func TestStartServerReportsAnEarlyExit(t *testing.T) {
	t.Parallel()
	stacktest.Binary(t, "cairn") // built before the clock starts
	rec := &fatalRecorder{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stacktest.StartServer(rec, stacktest.ServerOptions{Config: "notAKey: 1\n"})
	}()
	<-done
	require.Less(t, time.Since(start), 30*time.Second, "noticed before the readiness deadline")
	require.Contains(t, rec.msg, "exited before it was ready")
	require.Contains(t, rec.msg, `unknown key "notAKey"`, "with the server's output")
}

// fatalRecorder is a test whose Fatalf ends the calling goroutine and
// keeps the message instead of failing.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
