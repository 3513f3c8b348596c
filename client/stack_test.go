package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/s3/s3test"
	"github.com/cairn-dev/cairn/server/service"
)

// These tests wire server packages: the contract suite runs against the
// in-process service and, over this client, against the real server. Only
// the test binary imports them; the client package itself never does.

func TestMain(m *testing.M) { stacktest.Main(m) }

// contractMaxObject is the object-size cap of the contract stacks, small so
// that object_too_large is cheap to provoke.
const contractMaxObject = 8 << 20

// services is everything the contract suite calls.
type services interface {
	cairn.WorkspaceService
	cairn.ArtifactService
	cairn.VolumeTransferService
	cairn.FileService
	cairn.MaintenanceService
	cairn.AuditService
}

// backend is one slice of the real stack: a fresh database, a bucket, an
// app name whose volumes and containers go when the test ends.
type backend struct {
	pg     *stack.Postgres
	dsn    string
	db     *pgxpool.Pool // behind cairn's back
	gw     *stack.S3
	bucket string
	app    string
	image  string
}

func newBackend(t testing.TB) *backend {
	t.Helper()
	b := &backend{pg: stacktest.Postgres(t), dsn: stacktest.Database(t), gw: stacktest.S3(t),
		bucket: stacktest.Bucket(t), image: stacktest.Image(t), app: stacktest.AppName(t)}
	db, err := pgxpool.New(context.Background(), b.dsn)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	b.db = db
	return b
}

// inProcess is the service and reconciler as the server wires them.
type inProcess struct {
	*service.Service
	*reconcile.Reconciler
}

// Sweep resolves the embedding's ambiguity in favour of the reconciler.
func (p inProcess) Sweep(ctx context.Context, workspaceID string) (*cairn.SweepResult, error) {
	return p.Reconciler.Sweep(ctx, workspaceID)
}

// serve wires the real service over b, in this process.
func (b *backend) serve(t testing.TB) services {
	t.Helper()
	ctx := context.Background()
	store, err := postgres.Open(ctx, b.dsn)
	require.NoError(t, err)
	t.Cleanup(store.Close)
	objects := s3test.Open(t, b.gw, b.bucket, "")
	runtime := docker.New(stacktest.Docker(t), docker.Config{AppName: b.app, Image: b.image, NetworkMode: "host"})
	svc := service.New(store, runtime, objects, service.Config{AppName: b.app, MaxObjectSize: contractMaxObject})
	require.NoError(t, svc.PinKeyPrefixes(ctx))
	rec := reconcile.New(store, objects, runtime, reconcile.JoinVolumes(runtime, svc), reconcile.Config{AppName: b.app})
	return inProcess{svc, rec}
}

// Tokens of a remote stack: every scope, and read only.
const (
	adminToken = "cairn-test-admin-0123456789abcdef"
	readToken  = "cairn-test-reader-0123456789abcdef"
)

// remote runs the real server (server.Open, as `cairn server` does) over b
// on a free loopback port and returns its base URL.
func (b *backend) remote(t testing.TB, tune ...func(*server.Config)) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.AppName = b.app
	cfg.Persistence.SQL.App.Host, cfg.Persistence.SQL.App.Port = b.pg.Host, b.pg.Port
	cfg.Persistence.SQL.App.User = b.pg.User
	cfg.Persistence.SQL.App.DB = b.dsn[strings.LastIndex(b.dsn, "/")+1 : strings.Index(b.dsn, "?")]
	cfg.API.Service.ListenOn, cfg.API.Service.AppPort = "127.0.0.1", 0
	cfg.Metrics.Service.ListenOn, cfg.Metrics.Service.AppPort = "127.0.0.1", 0
	cfg.Artifact.S3.Endpoint, cfg.Artifact.S3.UseTLS, cfg.Artifact.S3.Region = b.gw.Endpoint, false, b.gw.Region
	cfg.Artifact.Store.Bucket = b.bucket
	cfg.Artifact.Store.MaxObjectSize = contractMaxObject
	cfg.Artifact.Sidecar.Image = b.image
	cfg.Artifact.Sidecar.NetworkMode = "host"
	cfg.Auth.Tokens = []server.TokenConfig{
		{Name: "admin", SHA256: tokenHash(adminToken), Scopes: []string{"read", "write", "admin"}},
		{Name: "reader", SHA256: tokenHash(readToken), Scopes: []string{"read"}},
	}
	for _, f := range tune {
		f(&cfg)
	}
	require.NoError(t, cfg.Validate())
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg, server.Secrets{SQLPassword: b.pg.Password, S3AccessKey: b.gw.AccessKey,
		S3SecretKey: b.gw.SecretKey}, server.Options{})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serve: %v", err)
		}
		srv.Close()
	})
	return "http://" + srv.APIAddr()
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newClient is a client of url with opts, the admin token unless opts
// give another.
func newClient(t testing.TB, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, append([]client.Option{client.WithToken(adminToken)}, opts...)...)
	require.NoError(t, err)
	return c
}

// sh runs script in a container that mounts ws's volume, as an agent's
// tool container would, and returns its output.
func (b *backend) sh(t testing.TB, ws *cairn.Workspace, script string) string {
	t.Helper()
	return stacktest.RunInVolume(t, b.app, ws.VolumeName, script)
}

func (b *backend) appName() string { return b.app }

// mkdir makes a directory, and those above it, in ws's volume.
func (b *backend) mkdir(t testing.TB, ws *cairn.Workspace, path string) {
	t.Helper()
	b.sh(t, ws, "mkdir -p "+path)
}

// symlink makes a symlink at path pointing at target in ws's volume.
func (b *backend) symlink(t testing.TB, ws *cairn.Workspace, path, target string) {
	t.Helper()
	b.sh(t, ws, "ln -s "+target+" "+path)
}

// fifo makes a named pipe at path in ws's volume.
func (b *backend) fifo(t testing.TB, ws *cairn.Workspace, path string) {
	t.Helper()
	b.sh(t, ws, "mkfifo "+path)
}

// writeVolume writes content (no single quotes) to path in ws's volume.
func (b *backend) writeVolume(t testing.TB, ws *cairn.Workspace, path, content string) {
	t.Helper()
	b.sh(t, ws, "printf %s '"+content+"' > "+path)
}

// readVolume returns the content of path in ws's volume.
func (b *backend) readVolume(t testing.TB, ws *cairn.Workspace, path string) string {
	t.Helper()
	return b.sh(t, ws, "cat "+path)
}

// mount starts a container that mounts ws's volume; stop ends it.
func (b *backend) mount(t testing.TB, ws *cairn.Workspace) (stop func()) {
	t.Helper()
	return stacktest.StartMounting(t, b.app, ws.VolumeName)
}

// markMissing flags an artifact MISSING_OBJECT behind cairn's back, as a
// sweep would after its object vanished.
func (b *backend) markMissing(t testing.TB, id string) {
	t.Helper()
	_, err := b.db.Exec(context.Background(), `UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1`, id)
	require.NoError(t, err)
}

// putObject overwrites an object in the store behind cairn's back.
func (b *backend) putObject(t testing.TB, key string, body []byte) {
	t.Helper()
	_, err := b.gw.Client().PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(key), Body: strings.NewReader(string(body)),
		ContentLength: aws.Int64(int64(len(body))),
	})
	require.NoError(t, err)
}

// putStaged uploads body to a presigned staging PUT with plain net/http,
// exactly as docs/api.md#the-staging-flow asks a client to.
func putStaged(t testing.TB, st *cairn.Staging, body []byte, checksum string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, st.PutURL, strings.NewReader(string(body)))
	require.NoError(t, err)
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("x-amz-checksum-sha256", checksum)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func deleteInput(bucket, key string) *awss3.DeleteObjectInput {
	return &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
}
