package s3_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
)

// partOf is a part of the given size filled with one byte value.
func partOf(size int, fill byte) []byte { return bytes.Repeat([]byte{fill}, size) }

// putPart presigns part n of the upload for body and PUTs it as a client
// would: exactly the signed length and checksum.
func putPart(t *testing.T, store *s3.Store, key, id string, n int, body []byte) (int, string) {
	t.Helper()
	u, err := store.PresignPart(ctxT(t), key, id, service.PartSpec{Number: n, Size: int64(len(body)), SHA256B64: sum(body), TTL: time.Minute})
	require.NoError(t, err)
	return put(t, u, upload{body: body, checksum: sum(body)})
}

func TestMultipart(t *testing.T) {
	t.Parallel()

	t.Run("OKRoundTrip", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key := "store/ws/" + ulid.Make().String()
		id, err := store.CreateUpload(ctxT(t), key)
		require.NoError(t, err)
		first, last := partOf(cairn.MinPartSize, 'a'), []byte("the tail")

		// Parts arrive in any order; the listing is in part order.
		status, body := putPart(t, store, key, id, 2, last)
		require.Equal(t, http.StatusOK, status, body)
		status, body = putPart(t, store, key, id, 1, first)
		require.Equal(t, http.StatusOK, status, body)

		parts, err := store.ListParts(ctxT(t), key, id)
		require.NoError(t, err)
		require.Len(t, parts, 2)
		require.Equal(t, []int{1, 2}, []int{parts[0].Number, parts[1].Number})
		require.Equal(t, []int64{int64(len(first)), int64(len(last))}, []int64{parts[0].Size, parts[1].Size})
		if stacktest.StoreKind() == stack.StoreSeaweedFS {
			// SeaweedFS verifies each part's checksum on upload (the
			// integrity probe proves it) but lists parts without it: a pack
			// then reads the assembled archive back (service/archive.go),
			// and a resuming client compares parts by their MD5 ETag.
			require.Empty(t, parts[0].SHA256B64+parts[1].SHA256B64, "SeaweedFS lists no part checksums")
		} else {
			require.Equal(t, sum(first), parts[0].SHA256B64, "each part carries the checksum the store verified")
			require.Equal(t, sum(last), parts[1].SHA256B64)
		}

		require.NoError(t, store.CompleteUpload(ctxT(t), key, id, parts))
		info, err := store.Stat(ctxT(t), key)
		require.NoError(t, err)
		require.Equal(t, int64(len(first)+len(last)), info.Size)
		require.NotEqual(t, sum(append(first, last...)), info.SHA256B64,
			"a multipart object's stored checksum is not the whole object's SHA-256")

		r, err := store.Read(ctxT(t), key)
		require.NoError(t, err)
		h := sha256.New()
		_, err = io.Copy(h, r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.Equal(t, sum(append(first, last...)), base64.StdEncoding.EncodeToString(h.Sum(nil)))

		_, err = store.ListParts(ctxT(t), key, id)
		require.ErrorIs(t, err, service.ErrUploadNotFound, "a completed upload is gone")
	})

	// A part sent twice (a retried PUT, a resumed upload) is listed once —
	// SeaweedFS keeps both uploads and lists both — and the listing's
	// version is the one completion assembles.
	t.Run("OKPartSentTwiceListedOnce", func(t *testing.T) {
		t.Parallel()
		store, b := setup(t)
		key := "store/ws/" + ulid.Make().String()
		id, err := store.CreateUpload(ctxT(t), key)
		require.NoError(t, err)
		versions := map[string][]byte{}
		for _, fill := range []byte{'a', 'b'} {
			body := partOf(cairn.MinPartSize, fill)
			status, answer := putPart(t, store, key, id, 1, body)
			require.Equal(t, http.StatusOK, status, answer)
			sum := md5.Sum(body)
			versions[hex.EncodeToString(sum[:])] = body
		}
		parts, err := store.ListParts(ctxT(t), key, id)
		require.NoError(t, err)
		require.Len(t, parts, 1)
		listed, ok := versions[strings.Trim(parts[0].ETag, `"`)]
		require.True(t, ok, "the listed part is one of the two sent: %q", parts[0].ETag)
		require.NoError(t, store.CompleteUpload(ctxT(t), key, id, parts))
		out, err := b.sdk.GetObject(ctxT(t), &awss3.GetObjectInput{Bucket: &b.bucket, Key: &key})
		require.NoError(t, err)
		got, err := io.ReadAll(out.Body)
		require.NoError(t, err)
		require.NoError(t, out.Body.Close())
		require.Equal(t, listed, got, "completion assembles the listed version")
	})

	t.Run("ErrWrongDigestRefused", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key := "store/ws/" + ulid.Make().String()
		id, err := store.CreateUpload(ctxT(t), key)
		require.NoError(t, err)
		body := []byte("declared bytes")
		u, err := store.PresignPart(ctxT(t), key, id, service.PartSpec{Number: 1, Size: int64(len(body)), SHA256B64: sum(body), TTL: time.Minute})
		require.NoError(t, err)

		other := []byte("other   bytes!")
		status, resp := put(t, u, upload{body: other, checksum: sum(body)})
		require.Contains(t, []int{http.StatusBadRequest, http.StatusForbidden}, status, resp)
		status, resp = put(t, u, upload{body: other, checksum: sum(other)})
		require.Equal(t, http.StatusForbidden, status, "another checksum breaks the signature: %s", resp)

		parts, err := store.ListParts(ctxT(t), key, id)
		require.NoError(t, err)
		require.Empty(t, parts, "a refused part is not kept")
	})

	t.Run("ErrCompleteTooSmallPart", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key := "store/ws/" + ulid.Make().String()
		id, err := store.CreateUpload(ctxT(t), key)
		require.NoError(t, err)
		for n, body := range [][]byte{[]byte("small first part"), []byte("tail")} {
			status, resp := putPart(t, store, key, id, n+1, body)
			require.Equal(t, http.StatusOK, status, resp)
		}
		parts, err := store.ListParts(ctxT(t), key, id)
		require.NoError(t, err)

		err = store.CompleteUpload(ctxT(t), key, id, parts)
		require.Equal(t, cairn.ReasonUploadIncomplete, cairn.ErrorReason(err), "a part under 5 MiB but the last is the client's mistake")
		requireNotFound(t, store, key)
	})

	t.Run("OKAbortAndListUploads", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		prefix := "store/" + ulid.Make().String() + "/"
		keys := []string{prefix + "a", prefix + "b", prefix + "c"}
		ids := make([]string, len(keys))
		for i, k := range keys {
			var err error
			ids[i], err = store.CreateUpload(ctxT(t), k)
			require.NoError(t, err)
		}
		status, resp := putPart(t, store, keys[0], ids[0], 1, []byte("held"))
		require.Equal(t, http.StatusOK, status, resp)

		var listed []service.Upload
		after := service.Upload{}
		for {
			page, err := store.ListUploads(ctxT(t), prefix, after, 2)
			require.NoError(t, err)
			listed = append(listed, page...)
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1]
		}
		require.Len(t, listed, 3, "paged by key and upload-ID markers")
		for i, u := range listed {
			require.Equal(t, keys[i], u.Key)
			require.Equal(t, ids[i], u.ID)
			require.WithinDuration(t, time.Now(), u.Initiated, time.Minute)
		}

		require.NoError(t, store.AbortUpload(ctxT(t), keys[0], ids[0]))
		require.NoError(t, store.AbortUpload(ctxT(t), keys[0], ids[0]), "an unknown upload aborts fine")
		_, err := store.ListParts(ctxT(t), keys[0], ids[0])
		require.ErrorIs(t, err, service.ErrUploadNotFound)
		rest, err := store.ListUploads(ctxT(t), prefix, service.Upload{}, 10)
		require.NoError(t, err)
		require.Len(t, rest, 2)
	})

	t.Run("OKPresignGetContentType", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key := newKey()
		putObject(t, store, key, []byte("<html>hi</html>"))
		u, err := store.PresignGet(ctxT(t), key, time.Minute, "text/plain; charset=utf-8")
		require.NoError(t, err)
		status, header, body := get(t, u)
		require.Equal(t, http.StatusOK, status, string(body))
		require.Equal(t, "text/plain; charset=utf-8", header.Get("Content-Type"), "the sniffed type, not the uploader's")
		require.True(t, strings.HasPrefix(header.Get("Content-Disposition"), "attachment"))
	})

	t.Run("OKUnboundPut", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key := newKey()
		u, err := store.PresignPut(ctxT(t), key, service.PutSpec{Size: service.AnySize, TTL: time.Minute})
		require.NoError(t, err)
		require.Equal(t, "host", signedHeaders(t, u), "no length, no checksum bound")
		body := []byte("any length at all")
		status, resp := put(t, u, upload{body: body})
		require.Equal(t, http.StatusOK, status, resp)
		info, err := store.Stat(ctxT(t), key)
		require.NoError(t, err)
		require.Equal(t, int64(len(body)), info.Size)
		require.Regexp(t, `^[0-9a-f]{32}$`, info.ETag, "a single PUT's ETag is the MD5 of its bytes")
	})
}
