package s3_test

import (
	"net/http"
	"testing"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/s3"
)

// TestProbeIntegrity: the store under test refuses every upload whose
// bytes are not the ones its URL binds, and the probe leaves nothing
// behind; a store that takes checksums on faith fails each check, named.
func TestProbeIntegrity(t *testing.T) {
	t.Parallel()
	t.Run(stacktest.StoreKind(), func(t *testing.T) {
		store, b := setup(t)
		p, err := store.ProbeIntegrity(ctxT(t), "staging/probe")
		require.NoError(t, err)
		require.True(t, p.Trusted(), "%s failed the probe: %q", stacktest.StoreKind(), p.Failures)
		// SeaweedFS computes the SHA-256 of a PUT whose URL names the
		// algorithm; versitygw computes none without a value to check.
		require.Equal(t, stacktest.StoreKind() == stack.StoreSeaweedFS, p.HashesStreams, "hashes streams")
		requireNothingUnder(t, b, "staging/probe/")
	})
	t.Run("Lax", func(t *testing.T) {
		gw := stacktest.S3(t)
		lax := stacktest.NewLaxStore(t, gw)
		bucket := stacktest.Bucket(t)
		store, err := s3.New(s3.Config{Endpoint: "http://" + lax.Endpoint, Region: gw.Region, Bucket: bucket,
			AccessKey: gw.AccessKey, SecretKey: gw.SecretKey, HTTPClient: &http.Client{}})
		require.NoError(t, err)
		p, err := store.ProbeIntegrity(ctxT(t), "staging/probe")
		require.NoError(t, err)
		require.Equal(t, []string{
			"it kept an upload whose bytes do not match the SHA-256 its URL binds",
			"it kept an upload shorter than the length its URL binds",
			"it kept a multipart part whose bytes do not match the SHA-256 its URL binds",
		}, p.Failures)
		requireNothingUnder(t, &bundle{bucket: bucket, sdk: gw.Client()}, "staging/probe/")
	})
}

// requireNothingUnder fails if any object or unfinished upload is left
// under prefix.
func requireNothingUnder(t *testing.T, b *bundle, prefix string) {
	t.Helper()
	objs, err := b.sdk.ListObjectsV2(ctxT(t), &awss3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &prefix})
	require.NoError(t, err)
	require.Empty(t, objs.Contents, "objects left under %s", prefix)
	ups, err := b.sdk.ListMultipartUploads(ctxT(t), &awss3.ListMultipartUploadsInput{Bucket: &b.bucket, Prefix: &prefix})
	require.NoError(t, err)
	require.Empty(t, ups.Uploads, "uploads left under %s", prefix)
}
