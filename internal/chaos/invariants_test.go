//go:build chaos

package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// The invariants are read from the outside — the database, the store and
// the engine — never through the server under test.

// lostArtifacts counts the acknowledged artifacts (ID → the SHA-256 the
// client was told, standard base64) that are not RECORDED with that digest
// and whose object's bytes do not hash to it.
func lostArtifacts(t *testing.T, srv *stacktest.Server, acked map[string]string) int {
	t.Helper()
	conn := database(t, srv)
	lost := 0
	for id, want := range acked {
		var key, state string
		var digest *string
		err := conn.QueryRow(t.Context(), `SELECT object_key, state, sha256_b64 FROM artifacts WHERE id = $1`, id).
			Scan(&key, &state, &digest)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			t.Errorf("artifact %s was acknowledged and has no row", id)
			lost++
			continue
		case err != nil:
			t.Fatalf("read artifact %s: %v", id, err)
		}
		if state != "RECORDED" || digest == nil || *digest != want {
			t.Errorf("artifact %s: state %s, digest %v, acknowledged %s", id, state, digest, want)
			lost++
			continue
		}
		if got := objectSHA256(t, srv, key); got != want {
			t.Errorf("artifact %s: its object hashes to %q, acknowledged %s", id, got, want)
			lost++
		}
	}
	return lost
}

// objectSHA256 streams an object from the store and returns its SHA-256 in
// standard base64, "" when it cannot be read.
func objectSHA256(t *testing.T, srv *stacktest.Server, key string) string {
	t.Helper()
	out, err := srv.S3.Client().GetObject(t.Context(), &awss3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String(key)})
	if err != nil {
		t.Logf("get object %s: %v", key, err)
		return ""
	}
	defer out.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, out.Body); err != nil {
		t.Logf("read object %s: %v", key, err)
		return ""
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// leaks counts what is left behind in the server's slice of the stack: an
// object no artifact row names and no release holds for its grace, a
// multipart upload in progress, a container of its app. Call it after the
// sweep that should have cleared them.
func leaks(t *testing.T, srv *stacktest.Server) int {
	t.Helper()
	known := map[string]bool{}
	conn := database(t, srv)
	rows, err := conn.Query(t.Context(), `SELECT object_key FROM artifacts UNION ALL SELECT object_key FROM released_objects`)
	require.NoError(t, err)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	for _, k := range keys {
		known[k] = true
	}
	n := 0
	store := srv.S3.Client()
	pages := awss3.NewListObjectsV2Paginator(store, &awss3.ListObjectsV2Input{Bucket: aws.String(srv.Bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		require.NoError(t, err)
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			if !known[key] && !strings.HasSuffix(key, "/") {
				t.Errorf("leaked object %s (%d bytes)", key, aws.ToInt64(obj.Size))
				n++
			}
		}
	}
	uploads, err := store.ListMultipartUploads(t.Context(), &awss3.ListMultipartUploadsInput{Bucket: aws.String(srv.Bucket)})
	require.NoError(t, err)
	for _, u := range uploads.Uploads {
		t.Errorf("leaked multipart upload %s of %s", aws.ToString(u.UploadId), aws.ToString(u.Key))
		n++
	}
	return n + leakedContainers(t, srv.App)
}

// leakedContainers counts the containers, running or not, labelled with app.
func leakedContainers(t *testing.T, app string) int {
	t.Helper()
	list, err := stacktest.Docker(t).ContainerList(t.Context(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+app))})
	require.NoError(t, err)
	for _, c := range list {
		t.Errorf("leaked container %s (%s, %s)", c.ID[:12], c.Image, c.State)
	}
	return len(list)
}

// database connects to the server's database, closed when the test ends.
func database(t *testing.T, srv *stacktest.Server) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), srv.Database)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// sweep runs one reconciliation pass now through the API and requires it
// to succeed.
func sweep(t *testing.T, srv *stacktest.Server) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/maintenance/sweep", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "sweep: %s", body)
}
