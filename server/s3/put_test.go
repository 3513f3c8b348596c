package s3_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
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
