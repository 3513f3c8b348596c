package s3_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
)

func TestListAndDeleteMany(t *testing.T) {
	t.Parallel()
	store, b := setup(t)
	ctx := context.Background()
	keys := []string{"p/a", "p/b", "p/c", "px/d", "q/e"}
	for _, k := range keys {
		_, err := b.sdk.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b.bucket, Key: aws.String(k), Body: strings.NewReader("x")})
		require.NoError(t, err)
	}

	page, err := store.List(ctx, "p/", "", 2)
	require.NoError(t, err)
	require.Len(t, page, 2)
	require.Equal(t, "p/a", page[0].Key)
	require.Equal(t, int64(1), page[0].Size)
	require.False(t, page[0].LastModified.IsZero())
	page, err = store.List(ctx, "p/", "p/b", 2)
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, "p/c", page[0].Key)
	page, err = store.List(ctx, "p/", "p/c", 2)
	require.NoError(t, err)
	require.Empty(t, page)

	failed, err := store.DeleteMany(ctx, []string{"p/a", "p/b", "p/never-there"})
	require.NoError(t, err)
	require.Empty(t, failed, "a missing key counts as deleted")
	page, err = store.List(ctx, "", "", 10)
	require.NoError(t, err)
	var left []string
	for _, o := range page {
		left = append(left, o.Key)
	}
	require.Equal(t, []string{"p/c", "px/d", "q/e"}, left)
}

func TestPinKeepsThePrefixDirectory(t *testing.T) {
	t.Parallel()
	store, b := setup(t)
	ctx := context.Background()
	keys := func(prefix string) []string {
		page, err := store.List(ctx, prefix, "", 10)
		require.NoError(t, err)
		var out []string
		for _, o := range page {
			out = append(out, o.Key)
		}
		return out
	}
	put := func(key string) {
		_, err := b.sdk.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b.bucket, Key: aws.String(key),
			Body: strings.NewReader("x")})
		require.NoError(t, err)
	}

	// Unpinned, the gateway drops the directory with its last object.
	put("loose/w/a")
	require.NoError(t, store.Delete(ctx, "loose/w/a"))
	require.Empty(t, keys("loose"))

	require.NoError(t, store.Pin(ctx, "pinned"))
	require.NoError(t, store.Pin(ctx, "pinned/"), "pinning twice is harmless")
	put("pinned/w/a")
	require.NoError(t, store.Delete(ctx, "pinned/w/a"))
	require.Equal(t, []string{"pinned/"}, keys("pinned"))
	put("pinned/w/b")
	require.Equal(t, []string{"pinned/", "pinned/w/b"}, keys("pinned"))
}
