package reconcile_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// ageOut is the tests' grace window; clocks are moved past it instead of
// sleeping.
const ageOut = time.Hour

// env is one test's slice of the real services.
type env struct {
	dsn    string
	db     *postgres.DB
	store  *s3.Store
	sdk    *awss3.Client
	bucket string
	rt     *docker.Runtime
	svc    *service.Service
	app    string
	offset atomic.Int64 // the reconciler's clock runs this far ahead
}

func setup(t *testing.T) *env {
	t.Helper()
	e := &env{dsn: stacktest.Database(t), bucket: stacktest.Bucket(t), app: stacktest.AppName(t)}
	var err error
	e.db, err = postgres.Open(context.Background(), e.dsn)
	require.NoError(t, err)
	t.Cleanup(e.db.Close)
	gw := stacktest.S3(t)
	e.sdk = gw.Client()
	e.store, err = s3.New(s3.Config{Endpoint: "http://" + gw.Endpoint, Region: gw.Region, Bucket: e.bucket,
		AccessKey: gw.AccessKey, SecretKey: gw.SecretKey, HTTPClient: http.DefaultClient})
	require.NoError(t, err)
	e.rt = docker.New(stacktest.Docker(t), docker.Config{AppName: e.app})
	e.svc = service.New(e.db, e.rt, e.store, service.Config{AppName: e.app})
	return e
}

// ahead sets how far the reconciler's clock runs ahead of the real one.
func (e *env) ahead(d time.Duration) { e.offset.Store(int64(d)) }

// now is the reconciler's clock.
func (e *env) now() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) }

func (e *env) reconciler(cfg reconcile.Config) *reconcile.Reconciler {
	return e.reconcilerWith(e.store, cfg)
}

func (e *env) reconcilerWith(objects reconcile.Objects, cfg reconcile.Config) *reconcile.Reconciler {
	cfg.AppName = e.app
	cfg.ObjAgeOut = ageOut
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return cairn.Timestamp(e.now()) }
	}
	return reconcile.New(e.db, objects, e.rt, reconcile.JoinVolumes(e.rt, e.svc), cfg)
}

func (e *env) workspace(t *testing.T, state cairn.VolumeState) *cairn.Workspace {
	t.Helper()
	id := uuid.NewString()
	now := cairn.Now()
	ws := &cairn.Workspace{ID: id, Name: "ws-" + id[:8], VolumeName: e.app + "-" + id, VolumeState: state,
		CreatedAt: now, UpdatedAt: now}
	require.NoError(t, e.db.InsertWorkspace(context.Background(), ws))
	return ws
}

// artifact records a RECORDED row for key, written now.
func (e *env) artifact(t *testing.T, ws *cairn.Workspace, key string) *cairn.Artifact {
	t.Helper()
	now := cairn.Now()
	a := &cairn.Artifact{ID: ulid.Make().String(), WorkspaceID: ws.ID, Name: "a-" + ulid.Make().String(),
		ObjectKey: key, MIMEType: "text/plain", Size: 1, State: cairn.ArtifactRecorded,
		ContentWrittenAt: now, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, e.db.InsertArtifact(context.Background(), a))
	return a
}

func (e *env) put(t *testing.T, key string) {
	t.Helper()
	_, err := e.sdk.PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: &e.bucket, Key: &key, Body: strings.NewReader("x")})
	require.NoError(t, err)
}

func (e *env) exists(t *testing.T, key string) bool {
	t.Helper()
	_, err := e.store.Stat(context.Background(), key)
	if err != nil {
		require.ErrorIs(t, err, service.ErrObjectNotFound)
		return false
	}
	return true
}

func (e *env) keys(t *testing.T) []string {
	t.Helper()
	out, err := e.sdk.ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: &e.bucket})
	require.NoError(t, err)
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

func (e *env) artifactState(t *testing.T, id string) cairn.ArtifactState {
	t.Helper()
	a, err := e.db.FindArtifact(context.Background(), id)
	require.NoError(t, err)
	return a.State
}

func pass(t *testing.T, r *reconcile.Reconciler) *cairn.SweepResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.RunOnce(ctx, "")
	require.NoError(t, err)
	return res
}
