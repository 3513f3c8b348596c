package stacktest_test

import (
	"context"
	"strings"
	"testing"

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
