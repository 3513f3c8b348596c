package rest_test

import (
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/sidecar"
)

// sidecarCommands lists the commands of the sidecars the engine created for
// a workspace since t0, from its event log, in creation order.
func (h *xferHarness) sidecarCommands(t testing.TB, t0 time.Time, ws string) []string {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelApp+"="+h.b.app),
		filters.Arg("label", docker.LabelWorkspace+"="+ws), filters.Arg("label", docker.LabelSidecar+"=true"),
		filters.Arg("type", string(events.ContainerEventType)), filters.Arg("event", string(events.ActionCreate)))
	stamp := func(at time.Time) string { return sprintf("%d.%09d", at.Unix(), at.Nanosecond()) }
	msgs, errs := h.b.cli.Events(t.Context(), events.ListOptions{Since: stamp(t0), Until: stamp(time.Now()), Filters: f})
	commands := []string{}
	for {
		select {
		case m := <-msgs:
			commands = append(commands, m.Actor.Attributes[docker.LabelCommand])
		case err := <-errs:
			require.ErrorIs(t, err, io.EOF)
			return commands
		}
	}
}

// objectsOf lists the objects under a workspace's final-key prefix,
// directory markers left out.
func (h *xferHarness) objectsOf(t testing.TB, ws string) []string {
	t.Helper()
	out, err := h.gw.Client().ListObjectsV2(t.Context(), &awss3.ListObjectsV2Input{
		Bucket: aws.String(h.bucket), Prefix: aws.String("store/" + ws + "/")})
	require.NoError(t, err)
	keys := []string{}
	for _, o := range out.Contents {
		if k := aws.ToString(o.Key); !strings.HasSuffix(k, "/") {
			keys = append(keys, k)
		}
	}
	return keys
}

// fromVolumeAsync posts artifact-from-volume to base on a goroutine of its
// own, so that the test can act while the transfer runs. The answer comes
// on the channel; a request that got none comes as status 0 with the error
// as its body.
func (h *xferHarness) fromVolumeAsync(t testing.TB, base, ws, src, name string) <-chan *response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/v1/workspaces/"+ws+"/artifact-from-volume",
		strings.NewReader(sprintf(`{"source_path":%q,"name":%q}`, src, name)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	out := make(chan *response, 1)
	go func() {
		resp, err := noRedirect.Do(req)
		if err != nil {
			out <- &response{body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			out <- &response{body: []byte(err.Error())}
			return
		}
		out <- &response{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	return out
}

func md5Hex(b []byte) string {
	m := md5.Sum(b)
	return hex.EncodeToString(m[:])
}

// TestTransferOnePass checks that a volume file reaches the store in one
// container: exactly one put sidecar per transfer, and the row records the
// size, SHA-256 and sniffed type of the bytes the store holds — whose ETag
// is their MD5 — served by a presigned GET with that type.
func TestTransferOnePass(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	const page = "<!DOCTYPE html><html><body>one pass</body></html>\n"
	const text = "the second version, plain text\n"
	ws := h.volumeWorkspace(t, "printf '%s' '"+page+"' > page.html && printf '%s' '"+text+"' > v2")

	// stored checks an artifact against content: the row, the object and a
	// presigned GET of it.
	stored := func(t *testing.T, a *xferArtifact, content, mime string) {
		t.Helper()
		require.Equal(t, int64(len(content)), a.Size)
		require.Equal(t, mime, a.MIMEType)
		require.Equal(t, sha256B64([]byte(content)), a.SHA256B64)
		require.Equal(t, "RECORDED", a.State)
		head, err := h.gw.Client().HeadObject(t.Context(), &awss3.HeadObjectInput{
			Bucket: aws.String(h.bucket), Key: aws.String(a.ObjectKey)})
		require.NoError(t, err)
		require.Equal(t, int64(len(content)), aws.ToInt64(head.ContentLength))
		require.Equal(t, `"`+md5Hex([]byte(content))+`"`, aws.ToString(head.ETag))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.presignURL(t, a.ID), nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, content, string(body))
		require.Equal(t, mime, resp.Header.Get("Content-Type"), "served with the row's type")
	}

	t0 := time.Now()
	a := xferArtifactOf(t, h.fromVolume(t, ws.ID, volRoot+"/page.html", "page"))
	require.Equal(t, []string{sidecar.CommandPut}, h.sidecarCommands(t, t0, ws.ID), "one container: the put")
	stored(t, a, page, "text/html; charset=utf-8")

	t1 := time.Now()
	u := xferArtifactOf(t, h.updateFromVolume(t, a.ID, volRoot+"/v2"))
	require.Equal(t, []string{sidecar.CommandPut}, h.sidecarCommands(t, t1, ws.ID), "one container: the put")
	require.Equal(t, a.ID, u.ID)
	require.NotEqual(t, a.ObjectKey, u.ObjectKey)
	stored(t, u, text, "text/plain; charset=utf-8")
}

// TestTransferPutSourceChanged changes the file while its upload is on the
// wire, at a fixed point: a relay in front of the store holds the PUT after
// 4 MiB of 64 MiB until a tool container has changed the file. A change of
// length breaks the PUT off in the sidecar; any other change is caught by
// its check after the PUT. Either way the answer is source_changed, no row
// is made, and no object is left.
func TestTransferPutSourceChanged(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	// Far more than the 4 MiB let through plus what the socket buffers take
	// while the relay holds, so the sidecar is still reading the file.
	const size = 64 << 20
	detail := func(what string) string {
		return "the source file '" + volRoot + "/f' " + what + " while the upload was in flight"
	}
	for _, tc := range []struct {
		outcome, change, detail string
	}{
		// Same length, new bytes near the end, not yet sent when held.
		{"ErrRewrittenInPlace", sprintf("printf changed | dd of=f bs=1 seek=%d conv=notrunc 2>/dev/null", size-100),
			detail("was modified")},
		{"ErrGrew", "echo more >> f", detail("changed size")},
		{"ErrReplaced", "printf 'a new file' > g && mv g f", detail("was replaced or removed")},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			t.Parallel()
			ws := h.volumeWorkspace(t, sprintf("head -c %d /dev/urandom > f", size))
			held := startRelay(t, h.gw.Endpoint, relayOpts{holdAt: 4 << 20, flipAt: -1})
			srv := h.serve(t, xferOpts{presign: held.endpoint})

			answer := h.fromVolumeAsync(t, srv, ws.ID, volRoot+"/f", "moving")
			select {
			case <-held.held:
			case r := <-answer:
				require.FailNow(t, "the transfer ended before its upload reached the hold point", "%d %s", r.status, r.body)
			}
			h.sh(t, ws, tc.change)
			close(held.release)
			r := <-answer
			for _, s := range h.secret {
				require.NotContains(t, string(r.body), s)
			}
			e := fails(t, r, http.StatusBadRequest, "source_changed")
			require.Equal(t, tc.detail, e.Detail)
			require.Equal(t, "Failed to save artifact 'moving' from workspace "+ws.ID+" volume", e.Message)
			require.Zero(t, h.rows(t, ws.ID), "a changed source makes no artifact")
			require.Empty(t, h.objectsOf(t, ws.ID), "and leaves no object")
		})
	}
}

// TestTransferPutStoreMismatch has the store receive other bytes than the
// sidecar read and sent: a relay inverts one byte of the PUT's body on the
// wire. The store's ETag then differs from the sidecar's MD5, so nothing is
// recorded and the object is deleted. A sidecar_failed, not the caller's
// mistake.
func TestTransferPutStoreMismatch(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	const size = 2 << 20
	ws := h.volumeWorkspace(t, sprintf("head -c %d /dev/zero > f", size))
	garble := startRelay(t, h.gw.Endpoint, relayOpts{holdAt: -1, flipAt: 1 << 20})
	srv := h.serve(t, xferOpts{presign: garble.endpoint})

	e := fails(t, h.fromVolumeAt(t, srv, ws.ID, volRoot+"/f", "garbled"), http.StatusInternalServerError, "sidecar_failed")
	require.Regexp(t, "^"+regexp.QuoteMeta(sprintf("the object store holds %d bytes with ETag ", size))+`"[0-9a-f]{32}"`+
		regexp.QuoteMeta(sprintf(", not the %d bytes with MD5 %s that the put sidecar read from '%s/f' and sent",
			size, md5Hex(make([]byte, size)), volRoot))+"$", e.Detail)
	require.Zero(t, h.rows(t, ws.ID))
	require.Empty(t, h.objectsOf(t, ws.ID), "the mismatched object is deleted")
}

// TestTransferPutTooLarge caps artifacts at 16 bytes: a bigger file is
// refused by the sidecar before any byte is sent; one of exactly the cap
// is taken.
func TestTransferPutTooLarge(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{})
	small := h.serve(t, xferOpts{maxSize: 16})
	ws := h.volumeWorkspace(t, "printf 'seventeen bytes!!' > big && printf 'sixteen bytes!!!' > fits")

	e := fails(t, h.fromVolumeAt(t, small, ws.ID, volRoot+"/big", "big"), http.StatusBadRequest, "object_too_large")
	require.Equal(t, "source file '"+volRoot+"/big' is 17 bytes, over the 16 byte cap of one upload from a volume", e.Detail)
	require.Zero(t, h.rows(t, ws.ID))
	require.Empty(t, h.objectsOf(t, ws.ID))

	a := xferArtifactOf(t, h.fromVolumeAt(t, small, ws.ID, volRoot+"/fits", "fits"))
	require.Equal(t, int64(16), a.Size)
}
