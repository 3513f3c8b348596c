package s3_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/service"
)

func TestPut(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		store, b := setup(t)
		key, body := "store/ws/"+ulid.Make().String(), []byte(`{"version": 2, "width": 80, "height": 24}`+"\n")
		d := sha256.Sum256(body)
		require.NoError(t, store.Put(ctxT(t), key, bytes.NewReader(body), int64(len(body)), d[:], "application/x-asciicast"))

		head, err := b.sdk.HeadObject(ctxT(t), &awss3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
		require.NoError(t, err)
		require.Equal(t, "application/x-asciicast", aws.ToString(head.ContentType))
		info, err := store.Stat(ctxT(t), key)
		require.NoError(t, err)
		require.Equal(t, int64(len(body)), info.Size)
		require.Equal(t, sum(body), info.SHA256B64, "the store verified and kept the checksum")
	})

	t.Run("ErrWrongChecksum", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key, body := "store/ws/"+ulid.Make().String(), []byte("what the shell printed")
		d := sha256.Sum256([]byte("something else"))
		err := store.Put(ctxT(t), key, bytes.NewReader(body), int64(len(body)), d[:], "application/x-asciicast")
		var ce *cairn.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, cairn.ReasonStoreUnavailable, ce.Reason)
		requireNotFound(t, store, key)
	})

	t.Run("ErrShortBody", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		key, body := "store/ws/"+ulid.Make().String(), []byte("twelve bytes")
		d := sha256.Sum256(body)
		err := store.Put(ctxT(t), key, strings.NewReader("twelve"), int64(len(body)), d[:], "")
		require.Error(t, err)
		requireNotFound(t, store, key)
	})
}

// TestStreamedPut: a URL that binds no checksum but asks the store to hash
// what it receives. SeaweedFS reports the SHA-256 of the bytes it got —
// whatever they are, which is why a register compares it with the
// uploader's; on versitygw, which computes none, the adapter refuses to
// presign one.
func TestStreamedPut(t *testing.T) {
	t.Parallel()
	store, _ := setup(t)
	key := "store/ws/" + ulid.Make().String()
	body := []byte("a file the client never hashed before sending it")
	spec := service.PutSpec{Size: int64(len(body)), StoreHashes: true, TTL: time.Minute}
	url, err := store.PresignPut(ctxT(t), key, spec)
	if stacktest.StoreKind() != stack.StoreSeaweedFS {
		require.ErrorIs(t, err, service.ErrStoreCannotHash)
		return
	}
	require.NoError(t, err)
	require.Contains(t, url, "X-Amz-Checksum-Algorithm=SHA256", "the URL alone asks for the hash")
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPut, url, bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	info, err := store.Stat(ctxT(t), key)
	require.NoError(t, err)
	require.Equal(t, sum(body), info.SHA256B64, "the store hashed what it received")

	short, err := http.NewRequestWithContext(ctxT(t), http.MethodPut, url, bytes.NewReader(body[1:]))
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(short)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "the length is still bound")
}
