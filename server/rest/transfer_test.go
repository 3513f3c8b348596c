package rest_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/s3/s3test"
	"github.com/cairn-dev/cairn/server/service"
)

// volRoot is the canonical mount path, spelled out as callers send it.
const volRoot = "/mnt/cairn/ws"

// xferHarness is the REST server wired like setup's (main_test.go), with
// what the transfer tests need besides: more front doors over the same
// database, bucket and app with other runtime or store settings, the store
// itself, and the strings no answer may ever carry.
type xferHarness struct {
	url    string
	b      *testBundle
	gw     *stack.S3
	bucket string
	image  string
	// secret are the strings no response body may contain: presigned-URL
	// query parameters and the store's endpoint.
	secret []string
}

// xferOpts varies one front door; the zero value is setup's wiring.
type xferOpts struct {
	timeout time.Duration // per sidecar run; 0: the runtime default (300 s)
	image   string        // sidecar image; "": the test image
	presign string        // presign endpoint (scheme://host:port); "": the store's own
	maxSize int64         // the largest artifact; 0: the service default (1 GiB)
	unpack  service.UnpackLimits
}

// xferSetup is setup with a configurable runtime. When the test and its
// subtests end it checks that no sidecar container of the app is left.
func xferSetup(t testing.TB, o xferOpts) *xferHarness {
	t.Helper()
	ctx := t.Context()
	dbURL := stacktest.Database(t)
	cli := stacktest.Docker(t)
	image := stacktest.Image(t)
	app := stacktest.AppName(t)

	store, err := postgres.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(store.Close)
	db, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(db.Close)

	gw := stacktest.S3(t)
	h := &xferHarness{
		b:      &testBundle{dbURL: dbURL, db: db, store: store, cli: cli, app: app},
		gw:     gw,
		bucket: stacktest.Bucket(t),
		image:  image,
		secret: []string{"X-Amz-Signature", "X-Amz-Credential", gw.Endpoint},
	}
	// Registered before the server's cleanups, so it runs after them: every
	// request has been answered, the browse containers closed, and every
	// sidecar must be gone.
	t.Cleanup(func() { h.requireNoSidecars(t) })
	h.url = h.serve(t, o)
	return h
}

// serve starts one more front door over the harness's database, bucket and
// app, and returns its base URL.
func (h *xferHarness) serve(t testing.TB, o xferOpts) string {
	t.Helper()
	objects := s3test.Open(t, h.gw, h.bucket, o.presign)
	runtime := docker.New(h.b.cli, docker.Config{AppName: h.b.app, Image: cmp.Or(o.image, h.image),
		NetworkMode: "host", Timeout: o.timeout})
	t.Cleanup(func() {
		if err := runtime.CloseBrowsers(context.Background()); err != nil {
			t.Errorf("remove the browse containers: %v", err)
		}
	})
	svc := service.New(h.b.store, runtime, objects, service.Config{AppName: h.b.app, SidecarTimeout: o.timeout,
		MaxObjectSize: o.maxSize, Unpack: o.unpack, Snapshots: h.b.store})
	srv := httptest.NewServer(authtest.Mount(t, "", rest.New(svc, rest.Config{}).Routes()))
	t.Cleanup(srv.Close)
	return srv.URL
}

// do sends a request to base+path and checks that the answer, whatever it
// is, carries no presigned-URL part and no store endpoint.
func (h *xferHarness) do(t testing.TB, base, method, path, body string) *response {
	t.Helper()
	r := do(t, method, base+path, body)
	for _, s := range h.secret {
		require.NotContains(t, string(r.body), s, "a response leaks a URL part or the store endpoint")
	}
	return r
}

// fromVolume posts artifact-from-volume to the main server.
func (h *xferHarness) fromVolume(t testing.TB, ws, src, name string) *response {
	t.Helper()
	return h.fromVolumeAt(t, h.url, ws, src, name)
}

func (h *xferHarness) fromVolumeAt(t testing.TB, base, ws, src, name string) *response {
	t.Helper()
	return h.do(t, base, http.MethodPost, "/v1/workspaces/"+ws+"/artifact-from-volume",
		sprintf(`{"source_path":%q,"name":%q}`, src, name))
}

// updateFromVolume posts update-from-volume.
func (h *xferHarness) updateFromVolume(t testing.TB, id, src string) *response {
	t.Helper()
	return h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+id+"/update-from-volume",
		sprintf(`{"source_path":%q}`, src))
}

// load posts load-in-volume to the main server.
func (h *xferHarness) load(t testing.TB, id, target string) *response {
	t.Helper()
	return h.loadAt(t, h.url, id, target)
}

func (h *xferHarness) loadAt(t testing.TB, base, id, target string) *response {
	t.Helper()
	return h.do(t, base, http.MethodPost, "/v1/artifacts/"+id+"/load-in-volume",
		sprintf(`{"target_path":%q}`, target))
}

// xferArtifact is the part of the artifact wire shape these tests read.
type xferArtifact struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	ObjectKey   string `json:"object_key"`
	MIMEType    string `json:"mime_type"`
	Size        int64  `json:"size"`
	State       string `json:"state"`
	SHA256B64   string `json:"sha256_b64"`
}

// artifactOf checks a 200 answer carrying an artifact and decodes it.
func xferArtifactOf(t testing.TB, r *response) *xferArtifact {
	t.Helper()
	ok(t, r)
	var env struct {
		Artifact *xferArtifact `json:"artifact"`
	}
	require.NoError(t, json.Unmarshal(r.body, &env))
	require.NotNil(t, env.Artifact, "no artifact in the answer: %s", r.body)
	require.NotEmpty(t, env.Artifact.ID)
	return env.Artifact
}

// getArtifactState reads an artifact's state through the API.
func (h *xferHarness) getArtifactState(t testing.TB, id string) string {
	t.Helper()
	return xferArtifactOf(t, h.do(t, h.url, http.MethodGet, "/v1/artifacts/"+id, "")).State
}

// volumeWorkspace creates a workspace with a READY volume, runs script in it
// (from the mount root) when given, and returns it.
func (h *xferHarness) volumeWorkspace(t testing.TB, script string) *workspace {
	t.Helper()
	ws := create(t, h.url, h.b, sprintf(`{"name":"ws-%d"}`, time.Now().UnixNano()))
	bare(t, h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws.ID+"/volume", ""))
	if script != "" {
		h.sh(t, ws, script)
	}
	return ws
}

// sh runs script in a tool container mounting ws's volume, from the mount
// root, and returns its output.
func (h *xferHarness) sh(t testing.TB, ws *workspace, script string) string {
	t.Helper()
	return stacktest.RunInVolume(t, h.b.app, ws.VolumeName, "cd "+volRoot+" && "+script)
}

// rows counts a workspace's artifact rows behind the API's back.
func (h *xferHarness) rows(t testing.TB, ws string) int {
	t.Helper()
	// Not t.Context(): this also runs in cleanups, after it is cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	require.NoError(t, h.b.db.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE workspace_id = $1`, ws).Scan(&n))
	return n
}

// sidecarLabels selects the app's sidecar containers.
func (h *xferHarness) sidecarLabels() filters.Args {
	return filters.NewArgs(filters.Arg("label", docker.LabelApp+"="+h.b.app),
		filters.Arg("label", docker.LabelSidecar+"=true"))
}

// requireNoSidecars checks that no sidecar container of the app exists,
// running or not: every run removes its container.
func (h *xferHarness) requireNoSidecars(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := h.b.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: h.sidecarLabels()})
	require.NoError(t, err)
	names := make([]string, 0, len(list))
	for _, c := range list {
		names = append(names, strings.Join(c.Names, ",")+" ("+c.State+")")
	}
	require.Empty(t, names, "sidecar containers left behind")
}

// sidecarsCreatedSince counts the app's sidecar containers the engine
// created since t0, from its event log.
func (h *xferHarness) sidecarsCreatedSince(t testing.TB, t0 time.Time) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	f := h.sidecarLabels()
	f.Add("type", string(events.ContainerEventType))
	f.Add("event", string(events.ActionCreate))
	stamp := func(at time.Time) string { return fmt.Sprintf("%d.%09d", at.Unix(), at.Nanosecond()) }
	msgs, errs := h.b.cli.Events(ctx, events.ListOptions{Since: stamp(t0), Until: stamp(time.Now()), Filters: f})
	n := 0
	for {
		select {
		case <-msgs:
			n++
		case err := <-errs:
			if errors.Is(err, io.EOF) {
				return n
			}
			require.NoError(t, err)
		}
	}
}

// deadEndpoint returns a loopback URL where nothing listens.
func deadEndpoint(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// outsideDetail is the sidecar's detail for a source that resolves outside
// the mount.
func outsideDetail(resolved string) string {
	return "source path resolves to '" + resolved + "', which is outside the workspace volume mounted at '" + volRoot + "'"
}

// TestTransferSourcePaths walks every kind of source the sidecar tells
// apart (missing, directory, FIFO, link loop, links out of the mount) and
// the server's lexical checks (absolute, under the mount root, not the root
// itself) through artifact-from-volume and update-from-volume.
func TestTransferSourcePaths(t *testing.T) {
	t.Parallel()
	// Should a put hang (a FIFO opened for reading blocks until a writer
	// comes), the test fails in 20 s rather than the default 300 s.
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "printf 'hello\\n' > f && mkdir d && mkfifo fifo && ln -s f inlink && "+
		"ln -s d dlink && ln -s /cairn-sidecar outfile && ln -s /etc/passwd passwd && "+
		"ln -s /mnt/cairn outdir && ln -s /mnt/cairn/wsX sibling && ln -s loop loop && printf 'second version\\n' > g")
	base := sprintf("Failed to save artifact '%%s' from workspace %s volume", ws.ID)

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		for name, src := range map[string]string{"direct": volRoot + "/f", "through-link": volRoot + "/inlink"} {
			a := xferArtifactOf(t, h.fromVolume(t, ws.ID, src, name))
			require.Equal(t, name, a.Name)
			require.Equal(t, ws.ID, a.WorkspaceID)
			require.Equal(t, int64(6), a.Size)
			require.Equal(t, "RECORDED", a.State)
			require.Equal(t, "text/plain; charset=utf-8", a.MIMEType)
			// Uploaded straight to its final key: nothing goes through
			// staging.
			head, err := h.gw.Client().HeadObject(t.Context(), &awss3.HeadObjectInput{
				Bucket: aws.String(h.bucket), Key: aws.String(a.ObjectKey)})
			require.NoError(t, err)
			require.Equal(t, a.Size, aws.ToInt64(head.ContentLength))
		}
		staged, err := h.gw.Client().ListObjectsV2(t.Context(), &awss3.ListObjectsV2Input{
			Bucket: aws.String(h.bucket), Prefix: aws.String("staging/" + ws.ID + "/")})
		require.NoError(t, err)
		require.Empty(t, staged.Contents)
	})

	for _, tc := range []struct {
		outcome string
		src     string
		reason  string
		detail  string // exact, or a prefix ending in "…"
	}{
		{"ErrSourceNotFound", volRoot + "/missing", "source_not_found", "source file '" + volRoot + "/missing' does not exist"},
		{"ErrSourceIsDirectory", volRoot + "/d", "source_is_directory",
			"source path '" + volRoot + "/d' is a directory, not a single uploadable file"},
		{"ErrSourceIsDirectoryThroughLink", volRoot + "/dlink", "source_is_directory",
			"source path '" + volRoot + "/dlink' is a directory, not a single uploadable file"},
		{"ErrSourceNotRegularFIFO", volRoot + "/fifo", "source_not_regular", "source path '" + volRoot + "/fifo' is not a regular file"},
		{"ErrSourceUnreadableLinkLoop", volRoot + "/loop", "source_unreadable", "failed to read source file '" + volRoot + "/loop': …"},
		{"ErrPathOutsideMountLinkToFile", volRoot + "/outfile", "path_outside_mount", outsideDetail("/cairn-sidecar")},
		// /etc/passwd does not exist in the scratch sidecar image: the link
		// dangles, and is still judged by where it points.
		{"ErrPathOutsideMountLinkToPasswd", volRoot + "/passwd", "path_outside_mount", outsideDetail("/etc/passwd")},
		{"ErrPathOutsideMountLinkToParent", volRoot + "/outdir", "path_outside_mount", outsideDetail("/mnt/cairn")},
		{"ErrPathOutsideMountLinkToSibling", volRoot + "/sibling", "path_outside_mount", outsideDetail("/mnt/cairn/wsX")},
		{"ErrPathOutsideMountLexicalSibling", volRoot + "X/f", "path_outside_mount",
			"path '" + volRoot + "X/f' resolves to '" + volRoot + "X/f', which is outside the workspace volume mounted at '" + volRoot + "'"},
		{"ErrPathOutsideMountDotDot", volRoot + "/../wsX", "path_outside_mount",
			"path '" + volRoot + "/../wsX' resolves to '" + volRoot + "X', which is outside the workspace volume mounted at '" + volRoot + "'"},
		{"ErrPathOutsideMountRelative", "f", "path_outside_mount",
			"path 'f' must be absolute, and within the workspace volume mounted at '" + volRoot + "'"},
		{"ErrPathIsMountRoot", volRoot, "path_is_mount_root",
			"path '" + volRoot + "' is the workspace volume mount point itself, not a file within it"},
		{"ErrPathIsMountRootDotDot", volRoot + "/d/../", "path_is_mount_root",
			"path '" + volRoot + "/d/../' is the workspace volume mount point itself, not a file within it"},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			t.Parallel()
			name := strings.ToLower(tc.outcome)
			e := fails(t, h.fromVolume(t, ws.ID, tc.src, name), http.StatusBadRequest, tc.reason)
			require.Equal(t, sprintf(base, name), e.Message)
			if prefix, cut := strings.CutSuffix(tc.detail, "…"); cut {
				require.True(t, strings.HasPrefix(e.Detail, prefix), "detail: %s", e.Detail)
			} else {
				require.Equal(t, tc.detail, e.Detail)
			}
			var n int
			require.NoError(t, h.b.db.QueryRow(t.Context(),
				`SELECT count(*) FROM artifacts WHERE name = $1`, name).Scan(&n))
			require.Zero(t, n, "a refused source makes no artifact")
		})
	}

	t.Run("Update", func(t *testing.T) {
		t.Parallel()
		a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/f", "to-update"))
		msg := "Failed to update artifact " + a.ID + " content from workspace " + ws.ID + " volume"
		for _, tc := range []struct{ src, reason string }{
			{volRoot + "/missing", "source_not_found"},
			{volRoot + "/fifo", "source_not_regular"},
			{volRoot + "/outfile", "path_outside_mount"},
			{volRoot + "X/f", "path_outside_mount"},
			{"f", "path_outside_mount"},
			{volRoot + "/", "path_is_mount_root"},
		} {
			e := fails(t, h.updateFromVolume(t, a.ID, tc.src), http.StatusBadRequest, tc.reason)
			require.Equal(t, msg, e.Message, tc.src)
		}
		got := xferArtifactOf(t, h.do(t, h.url, http.MethodGet, "/v1/artifacts/"+a.ID, ""))
		require.Equal(t, *a, *got, "a refused update leaves the artifact alone")

		up := xferArtifactOf(t, h.updateFromVolume(t, a.ID, volRoot+"/g"))
		require.Equal(t, a.ID, up.ID)
		require.Equal(t, int64(15), up.Size)
		require.NotEqual(t, a.ObjectKey, up.ObjectKey)
	})
}

// TestTransferTargetPaths walks every kind of target path
// through load-in-volume, looking at the result from a tool container.
func TestTransferTargetPaths(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	ws := h.volumeWorkspace(t, "printf 'payload\\n' > src && mkdir d sub && printf 'other\\n' > other && "+
		"ln -s other link && ln -s d dirlink && ln -s /mnt/cairn outside && ln -s "+volRoot+" rootlink && "+
		"printf 'old content, longer than the new\\n' > existing && chown 1234:1234 existing && chmod 0640 existing && "+
		"printf 'kept\\n' > kept")
	a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/src", "payload"))
	msg := "Failed to load artifact " + a.ID + " into workspace " + ws.ID + " volume"
	t.Cleanup(func() {
		// Refused downloads created nothing, parents included.
		h.sh(t, ws, "test ! -e nope && test ! -e sub/flagged && test -z \"$(ls -A d)\"")
	})
	// look shows a file as a tool container sees it: owner, mode, type, content.
	look := func(t *testing.T, p string) string {
		return h.sh(t, ws, "stat -c '%u %g %a %F' "+p+" && cat "+p)
	}

	t.Run("OKNewFile", func(t *testing.T) {
		t.Parallel()
		bare(t, h.load(t, a.ID, volRoot+"/sub/new"))
		require.Equal(t, "0 0 666 regular file\r\npayload", look(t, "sub/new"))
	})

	t.Run("OKExistingFileKeepsOwnerAndMode", func(t *testing.T) {
		t.Parallel()
		bare(t, h.load(t, a.ID, volRoot+"/existing"))
		require.Equal(t, "1234 1234 640 regular file\r\npayload", look(t, "existing"), "truncated, owner and mode kept")
	})

	t.Run("OKSymlinkReplacedNotFollowed", func(t *testing.T) {
		t.Parallel()
		bare(t, h.load(t, a.ID, volRoot+"/link"))
		require.Equal(t, "0 0 666 regular file\r\n0 0 644 regular file\r\npayload\r\nother",
			look(t, "link other"), "the link is a file now; what it pointed to is untouched")
	})

	for _, tc := range []struct {
		outcome, target, reason, detail string
	}{
		{"ErrTargetIsDirectory", volRoot + "/d", "target_is_directory",
			"destination path '" + volRoot + "/d' is a directory, not a file to write"},
		{"ErrTargetIsDirectoryThroughLink", volRoot + "/dirlink", "target_is_directory",
			"destination path '" + volRoot + "/dirlink' is a directory, not a file to write"},
		{"ErrTargetDirMissing", volRoot + "/nope/f", "target_dir_missing",
			"destination directory '" + volRoot + "/nope' does not exist; create it before downloading into it"},
		{"ErrPathOutsideMountParentLink", volRoot + "/outside/f", "path_outside_mount",
			"path '" + volRoot + "/outside/f' resolves to '/mnt/cairn/f', which is outside the workspace volume mounted at '" + volRoot + "'"},
		{"ErrPathIsMountRootThroughLink", volRoot + "/rootlink/.", "path_is_mount_root",
			"destination path '" + volRoot + "/rootlink/.' is the workspace volume mount point itself, not a file to write"},
		{"ErrPathIsMountRoot", volRoot, "path_is_mount_root",
			"path '" + volRoot + "' is the workspace volume mount point itself, not a file within it"},
		{"ErrPathIsMountRootDotDot", volRoot + "/d/..", "path_is_mount_root",
			"path '" + volRoot + "/d/..' is the workspace volume mount point itself, not a file within it"},
		{"ErrPathOutsideMountLexicalSibling", volRoot + "X", "path_outside_mount",
			"path '" + volRoot + "X' resolves to '" + volRoot + "X', which is outside the workspace volume mounted at '" + volRoot + "'"},
		{"ErrPathOutsideMountRelative", "ws/f", "path_outside_mount",
			"path 'ws/f' must be absolute, and within the workspace volume mounted at '" + volRoot + "'"},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			t.Parallel()
			e := fails(t, h.load(t, a.ID, tc.target), http.StatusBadRequest, tc.reason)
			require.Equal(t, msg, e.Message)
			require.Equal(t, tc.detail, e.Detail)
		})
	}

	t.Run("ErrObjectMissingState", func(t *testing.T) {
		t.Parallel()
		m := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/src", "flagged"))
		h.b.exec(t, `UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1`, m.ID)
		e := fails(t, h.load(t, m.ID, volRoot+"/sub/flagged"), http.StatusConflict, "object_missing")
		require.Equal(t, "Failed to load artifact "+m.ID+" into workspace "+ws.ID+" volume", e.Message)
		require.Equal(t, "artifact "+m.ID+" is 'MISSING_OBJECT'; only a 'RECORDED' artifact has a servable object", e.Detail)
	})

	t.Run("ErrObjectMissingInStore", func(t *testing.T) {
		t.Parallel()
		v := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/src", "vanished"))
		_, err := h.gw.Client().DeleteObject(t.Context(), &awss3.DeleteObjectInput{
			Bucket: aws.String(h.bucket), Key: aws.String(v.ObjectKey)})
		require.NoError(t, err)
		e := fails(t, h.load(t, v.ID, volRoot+"/kept"), http.StatusConflict, "object_missing")
		require.Equal(t, "the object store returned HTTP 404 for the download", e.Detail)
		require.Equal(t, "0 0 644 regular file\r\nkept", look(t, "kept"), "a refused download leaves the target alone")
		var state string
		require.NoError(t, h.b.db.QueryRow(t.Context(), `SELECT state FROM artifacts WHERE id = $1`, v.ID).Scan(&state))
		require.Equal(t, "MISSING_OBJECT", state, "the sidecar's 404 flags the artifact on the spot")
	})
}

// TestTransferVolumeNotReady checks the READY precondition of every
// transfer, and that the lexical path checks come before it.
func TestTransferVolumeNotReady(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	none := create(t, h.url, h.b, `{"name":"none"}`)
	detail := func(id string) string { return "workspace " + id + " has no runtime volume (volume state 'NONE')" }

	t.Run("ErrVolumeNotReadyFromVolume", func(t *testing.T) {
		e := fails(t, h.fromVolume(t, none.ID, volRoot+"/f", "x"), http.StatusBadRequest, "volume_not_ready")
		require.Equal(t, "Failed to save artifact 'x' from workspace "+none.ID+" volume", e.Message)
		require.Equal(t, detail(none.ID), e.Detail)
		fails(t, h.fromVolume(t, none.ID, volRoot+"X/f", "x"), http.StatusBadRequest, "path_outside_mount")
		fails(t, h.fromVolume(t, none.ID, volRoot, "x"), http.StatusBadRequest, "path_is_mount_root")
		require.Zero(t, h.rows(t, none.ID))
	})

	t.Run("ErrVolumeNotReadyAfterTeardown", func(t *testing.T) {
		ws := h.volumeWorkspace(t, "printf 'x\\n' > f")
		a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/f", "before-teardown"))
		bare(t, h.do(t, h.url, http.MethodDelete, "/v1/workspaces/"+ws.ID+"/volume", ""))

		require.Equal(t, detail(ws.ID),
			fails(t, h.load(t, a.ID, volRoot+"/g"), http.StatusBadRequest, "volume_not_ready").Detail)
		require.Equal(t, detail(ws.ID),
			fails(t, h.updateFromVolume(t, a.ID, volRoot+"/f"), http.StatusBadRequest, "volume_not_ready").Detail)
		require.Equal(t, detail(ws.ID),
			fails(t, h.fromVolume(t, ws.ID, volRoot+"/f", "after-teardown"), http.StatusBadRequest, "volume_not_ready").Detail)
		require.Equal(t, 1, h.rows(t, ws.ID))
	})
}

// TestTransferRefusedBeforeSidecar checks, from the engine's event log,
// that requests the server can refuse by itself never start a container:
// bad input, unknown IDs, a taken name (checked before the path), a path
// outside the mount lexically, the mount root, a volume that is not READY.
func TestTransferRefusedBeforeSidecar(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	ws := h.volumeWorkspace(t, "printf 'x\\n' > f")
	none := create(t, h.url, h.b, `{"name":"none"}`)

	t0 := time.Now()
	a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/f", "taken"))
	require.Equal(t, 1, h.sidecarsCreatedSince(t, t0), "the control: a transfer runs one put")

	t0 = time.Now()
	t.Run("ErrNameTaken", func(t *testing.T) {
		e := fails(t, h.fromVolume(t, ws.ID, "relative/and/bad", "taken"), http.StatusConflict, "name_taken")
		require.Equal(t, "Failed to save artifact 'taken' from workspace "+ws.ID+" volume", e.Message)
		require.Equal(t, "workspace "+ws.ID+" already has an artifact named 'taken'", e.Detail)
		fails(t, h.fromVolume(t, ws.ID, volRoot+"/f", "taken"), http.StatusConflict, "name_taken")
	})
	t.Run("ErrPathOutsideMount", func(t *testing.T) {
		for _, p := range []string{volRoot + "X", volRoot + "X/f", volRoot + "/../wsX/f", "/etc/passwd", "f", "./f"} {
			fails(t, h.fromVolume(t, ws.ID, p, "n"), http.StatusBadRequest, "path_outside_mount")
			fails(t, h.updateFromVolume(t, a.ID, p), http.StatusBadRequest, "path_outside_mount")
			fails(t, h.load(t, a.ID, p), http.StatusBadRequest, "path_outside_mount")
		}
	})
	t.Run("ErrPathIsMountRoot", func(t *testing.T) {
		for _, p := range []string{volRoot, volRoot + "/", volRoot + "/.", "//mnt/cairn//ws/"} {
			fails(t, h.fromVolume(t, ws.ID, p, "n"), http.StatusBadRequest, "path_is_mount_root")
			fails(t, h.updateFromVolume(t, a.ID, p), http.StatusBadRequest, "path_is_mount_root")
			fails(t, h.load(t, a.ID, p), http.StatusBadRequest, "path_is_mount_root")
		}
	})
	t.Run("ErrVolumeNotReady", func(t *testing.T) {
		fails(t, h.fromVolume(t, none.ID, volRoot+"/f", "n"), http.StatusBadRequest, "volume_not_ready")
	})
	t.Run("ErrInvalidPath", func(t *testing.T) {
		// Values that would reach the sidecar's environment are checked
		// first: Docker refusing them must never read as an outage.
		quote := func(v string) string { b, _ := json.Marshal(v); return string(b) }
		for name, p := range map[string]string{
			"NUL": volRoot + "/a\x00b", "ESC": volRoot + "/\x1b[31mred", "DEL": volRoot + "/a\x7f",
			"Newline": volRoot + "/a\nb", "Long": volRoot + "/" + strings.Repeat("a", 5000),
		} {
			for _, r := range []*response{
				h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws.ID+"/artifact-from-volume",
					`{"name":"n","source_path":`+quote(p)+`}`),
				h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+a.ID+"/update-from-volume", `{"source_path":`+quote(p)+`}`),
				h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+a.ID+"/load-in-volume", `{"target_path":`+quote(p)+`}`),
			} {
				e := fails(t, r, http.StatusBadRequest, "invalid_path")
				require.NotContains(t, e.Detail, p, name+": the path is not echoed")
			}
		}
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		e := fails(t, h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws.ID+"/artifact-from-volume", `{"name":"n"}`),
			http.StatusBadRequest, "invalid_parameters")
		require.Equal(t, "Volume artifact parameters not valid", e.Message)
		e = fails(t, h.fromVolume(t, ws.ID, volRoot+"/f", "bad name"), http.StatusBadRequest, "invalid_name")
		require.Equal(t, "Volume artifact parameters not valid", e.Message)
		e = fails(t, h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws.ID+"/artifact-from-volume", `{"source_path":1}`),
			http.StatusBadRequest, "invalid_json")
		require.Equal(t, "Unable to parse volume artifact parameters from request", e.Message)
		e = fails(t, h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+a.ID+"/update-from-volume", `{}`),
			http.StatusBadRequest, "invalid_parameters")
		require.Equal(t, "Volume artifact update parameters not valid", e.Message)
		e = fails(t, h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+a.ID+"/update-from-volume", ``),
			http.StatusBadRequest, "invalid_json")
		require.Equal(t, "Unable to parse volume artifact update parameters from request", e.Message)
		e = fails(t, h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+a.ID+"/load-in-volume", `{"target_path":""}`),
			http.StatusBadRequest, "invalid_parameters")
		require.Equal(t, "Artifact load parameters not valid", e.Message)
		e = fails(t, h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+a.ID+"/load-in-volume", `[`),
			http.StatusBadRequest, "invalid_json")
		require.Equal(t, "Unable to parse artifact load parameters from request", e.Message)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := fails(t, h.fromVolume(t, "no-such-ws", volRoot+"/f", "n"), http.StatusNotFound, "workspace_not_found")
		require.Equal(t, "Failed to fetch workspace no-such-ws", e.Message)
		e = fails(t, h.updateFromVolume(t, "no-such-artifact", volRoot+"/f"), http.StatusNotFound, "artifact_not_found")
		require.Equal(t, "Failed to fetch artifact no-such-artifact", e.Message)
		e = fails(t, h.load(t, "no-such-artifact", volRoot+"/f"), http.StatusNotFound, "artifact_not_found")
		require.Equal(t, "Failed to fetch artifact no-such-artifact", e.Message)
	})

	require.Zero(t, h.sidecarsCreatedSince(t, t0), "a request refused by the server starts no container")
	require.Equal(t, 1, h.rows(t, ws.ID))
}

// TestTransferOwnership checks the sidecars' posture against files of
// other users: DAC_OVERRIDE reads a private file of uid 1234 in its private
// directory; a new file is 0666 whatever the umask, so a tool container of
// any UID can rewrite it; an existing file keeps its owner and mode.
func TestTransferOwnership(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	ws := h.volumeWorkspace(t, "mkdir priv && printf 'secret\\n' > priv/f && chown -R 1234:1234 priv && "+
		"chmod 0600 priv/f && chmod 0700 priv")
	out, code := stacktest.RunInVolumeAs(t, h.b.app, ws.VolumeName, "1235:1235", "cat "+volRoot+"/priv/f")
	require.NotZero(t, code, "the control: another uid cannot read it (%s)", out)

	a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/priv/f", "private"))
	require.Equal(t, int64(7), a.Size)

	t.Run("OKNewFileWritableByAnyUID", func(t *testing.T) {
		t.Parallel()
		bare(t, h.load(t, a.ID, volRoot+"/fresh"))
		out, code := stacktest.RunInVolumeAs(t, h.b.app, ws.VolumeName, "1234:1234", "echo x >> "+volRoot+"/fresh")
		require.Zero(t, code, out)
		require.Equal(t, "0 0 666\r\nsecret\r\nx", h.sh(t, ws, "stat -c '%u %g %a' fresh && cat fresh"))
	})

	t.Run("OKNewFileInPrivateDirectory", func(t *testing.T) {
		t.Parallel()
		bare(t, h.load(t, a.ID, volRoot+"/priv/copy"))
		require.Equal(t, "0 0 666\r\n1234 1234 700\r\nsecret",
			h.sh(t, ws, "stat -c '%u %g %a' priv/copy priv && cat priv/copy"), "directories are never re-moded")
	})

	t.Run("OKExistingFileKeepsOwnerAndMode", func(t *testing.T) {
		t.Parallel()
		out, code := stacktest.RunInVolumeAs(t, h.b.app, ws.VolumeName, "1234:1234",
			"printf 'changed by its owner\\n' > "+volRoot+"/priv/f")
		require.Zero(t, code, out)
		bare(t, h.load(t, a.ID, volRoot+"/priv/f"))
		require.Equal(t, "1234 1234 600\r\nsecret", h.sh(t, ws, "stat -c '%u %g %a' priv/f && cat priv/f"))
	})
}

// TestTransferRoundTrip takes files volume → artifact → volume (another
// path) and checks the SHA-256 inside the volume on both sides: an empty
// file, 200 MiB of random bytes, and update-from-volume replacing content
// and repairing a MISSING_OBJECT artifact.
func TestTransferRoundTrip(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	ws := h.volumeWorkspace(t, "mkdir out && : > empty && printf 'one\\n' > v1 && "+
		"printf 'two, a longer version\\n' > v2 && printf '%s' three > v3")
	// sums returns the SHA-256 of each file, as a tool container computes it.
	sums := func(t *testing.T, files ...string) []string {
		out := h.sh(t, ws, "sha256sum "+strings.Join(files, " ")+" | cut -d' ' -f1")
		digests := strings.Split(out, "\r\n")
		require.Len(t, digests, len(files), out)
		return digests
	}

	t.Run("OKEmptyFile", func(t *testing.T) {
		t.Parallel()
		a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/empty", "empty"))
		require.Zero(t, a.Size)
		bare(t, h.load(t, a.ID, volRoot+"/out/empty"))
		const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		require.Equal(t, emptySHA+"\r\n"+emptySHA+"\r\n0 666",
			h.sh(t, ws, "sha256sum empty out/empty | cut -d' ' -f1 && stat -c '%s %a' out/empty"))
	})

	t.Run("OK200MiB", func(t *testing.T) {
		t.Parallel()
		const size = 200 << 20
		// Random bytes sniff as some format now and then (an MP3 frame
		// sync, say): a fixed binary head makes the type the test's own.
		before := h.sh(t, ws, sprintf("{ printf 'cairn\\0\\1\\2'; head -c %d /dev/urandom; } > big && sha256sum big | cut -d' ' -f1", size-8))
		start := time.Now()
		a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/big", "big"))
		up := time.Since(start)
		require.Equal(t, int64(size), a.Size)
		require.Equal(t, "application/octet-stream", a.MIMEType)
		start = time.Now()
		bare(t, h.load(t, a.ID, volRoot+"/out/big"))
		t.Logf("200 MiB: volume → artifact %v, artifact → volume %v", up.Round(time.Millisecond),
			time.Since(start).Round(time.Millisecond))
		require.Len(t, before, 64)
		require.Equal(t, []string{before}, sums(t, "out/big"))
	})

	t.Run("OKUpdateFromVolume", func(t *testing.T) {
		t.Parallel()
		a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/v1", "versioned"))

		u := xferArtifactOf(t, h.updateFromVolume(t, a.ID, volRoot+"/v2"))
		require.Equal(t, a.ID, u.ID)
		require.Equal(t, int64(22), u.Size)
		require.NotEqual(t, a.ObjectKey, u.ObjectKey)
		bare(t, h.load(t, a.ID, volRoot+"/out/v2"))

		// The reconciler's verdict, set behind the API's back: the object
		// is gone. update-from-volume has no state gate and repairs it.
		h.b.exec(t, `UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1`, a.ID)
		require.Equal(t, "MISSING_OBJECT", h.getArtifactState(t, a.ID))
		fails(t, h.load(t, a.ID, volRoot+"/out/v3"), http.StatusConflict, "object_missing")

		r := xferArtifactOf(t, h.updateFromVolume(t, a.ID, volRoot+"/v3"))
		require.Equal(t, "RECORDED", r.State)
		require.Equal(t, int64(5), r.Size)
		require.Equal(t, "RECORDED", h.getArtifactState(t, a.ID))
		bare(t, h.load(t, a.ID, volRoot+"/out/v3"))

		got := sums(t, "v2", "out/v2", "v3", "out/v3")
		require.Equal(t, got[0], got[1], "the update replaced the content")
		require.Equal(t, got[2], got[3], "the repair stored the new content")
		require.NotEqual(t, got[0], got[2])
	})
}

// TestTransferSidecarTimeout runs the put sidecar past a 1 s timeout: its
// PUT goes to a relay that never passes a byte on, so it hangs until it is
// stopped; the answer is 504 sidecar_timeout, no container is left and no
// row is made.
func TestTransferSidecarTimeout(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	// The volume is set up through the main server, so the prep sidecar is
	// not held to the short bound; only the transfer is.
	ws := h.volumeWorkspace(t, "printf 'x\\n' > f")
	stall := startRelay(t, h.gw.Endpoint, relayOpts{holdAt: 0, flipAt: -1})
	short := h.serve(t, xferOpts{timeout: time.Second, presign: stall.endpoint})

	start := time.Now()
	e := fails(t, h.fromVolumeAt(t, short, ws.ID, volRoot+"/f", "stuck"), http.StatusGatewayTimeout, "sidecar_timeout")
	took := time.Since(start)
	require.Equal(t, "Failed to save artifact 'stuck' from workspace "+ws.ID+" volume", e.Message)
	require.Equal(t, "the 'put' sidecar ran past its 1s timeout and was stopped", e.Detail)
	require.Less(t, took, 30*time.Second, "stopped promptly")
	t.Logf("504 after %v", took.Round(time.Millisecond))
	h.requireNoSidecars(t)
	require.Zero(t, h.rows(t, ws.ID))
	require.Empty(t, h.objectsOf(t, ws.ID))
}

// TestTransferFailureClasses checks the failure classes that are not the
// caller's: a store the sidecars cannot reach is 502 store_unavailable, a
// Docker failure (the sidecar image is missing) 503 docker_unavailable.
// Neither answer names the store's address.
func TestTransferFailureClasses(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	ws := h.volumeWorkspace(t, "printf 'x\\n' > f")
	a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/f", "stored"))

	t.Run("ErrStoreUnavailable", func(t *testing.T) {
		t.Parallel()
		// The server's own store calls work; the presigned URLs it hands
		// to sidecars name an address where nothing listens.
		dead := deadEndpoint(t)
		unreachable := h.serve(t, xferOpts{presign: dead})
		r := h.fromVolumeAt(t, unreachable, ws.ID, volRoot+"/f", "unstored")
		e := fails(t, r, http.StatusBadGateway, "store_unavailable")
		require.Equal(t, "the object store could not be reached for the upload: connection refused", e.Detail)
		require.NotContains(t, string(r.body), strings.TrimPrefix(dead, "http://"))
		r = h.loadAt(t, unreachable, a.ID, volRoot+"/g")
		e = fails(t, r, http.StatusBadGateway, "store_unavailable")
		require.Equal(t, "the object store could not be reached for the download: connection refused", e.Detail)
		require.NotContains(t, string(r.body), strings.TrimPrefix(dead, "http://"))
		h.sh(t, ws, "test ! -e g")
	})

	t.Run("ErrDockerUnavailable", func(t *testing.T) {
		t.Parallel()
		imageless := h.serve(t, xferOpts{image: "cairn-no-such-image:" + strings.ToLower(h.b.app)})
		e := fails(t, h.fromVolumeAt(t, imageless, ws.ID, volRoot+"/f", "unstored2"), http.StatusServiceUnavailable, "docker_unavailable")
		require.Equal(t, "the docker engine failed to create the sidecar", e.Detail)
		fails(t, h.loadAt(t, imageless, a.ID, volRoot+"/h"), http.StatusServiceUnavailable, "docker_unavailable")
	})

	t.Cleanup(func() { require.Equal(t, 1, h.rows(t, ws.ID)) })
}
