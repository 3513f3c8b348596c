package stacktest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
)

// StoreKind is the S3 implementation the tests run against:
// $CAIRN_TEST_STORE (versitygw or seaweedfs), versitygw by default. `make
// test` runs the store-conformance tests once more with seaweedfs.
func StoreKind() string {
	if k := os.Getenv("CAIRN_TEST_STORE"); k != "" {
		return k
	}
	return stack.StoreVersitygw
}

func startS3() (*stack.S3, error) {
	dir, err := stateDir()
	if err != nil {
		return nil, err
	}
	return startStore(filepath.Join(dir, "s3"))
}

func startStore(dir string) (*stack.S3, error) {
	bin, err := stack.FindStore(StoreKind())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return stack.StartS3(ctx, bin, dir, nil)
}

// S3 returns the shared store of StoreKind.
func S3(t testing.TB) *stack.S3 {
	t.Helper()
	store, err := services.s3.get(startS3)
	Need(t, StoreKind(), err)
	return store
}

// PrivateS3 starts a store of StoreKind of the test's own, for tests that
// stop or kill it (the shared one keeps serving the others); it is stopped
// when the test ends.
func PrivateS3(t testing.TB) *stack.S3 {
	t.Helper()
	store, err := startStore(t.TempDir())
	Need(t, StoreKind(), err)
	t.Cleanup(func() { _ = store.Stop() }) // the test is over: a kill is as good
	return store
}

// Bucket creates a bucket of the test's own in the shared store, emptied and
// removed when the test ends, and returns its name.
func Bucket(t testing.TB) string {
	t.Helper()
	store := S3(t)
	name := "t-" + strings.ToLower(ulid.Make().String())
	ctx := context.Background()
	if err := store.CreateBucket(ctx, name); err != nil {
		t.Fatalf("create test bucket: %v", err)
	}
	t.Cleanup(func() { removeBucket(t, store.Client(), name) })
	return name
}

func removeBucket(t testing.TB, cl *s3.Client, name string) {
	ctx := context.Background()
	remove := func(key string) {
		if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(key)}); err != nil {
			t.Errorf("empty test bucket %s: %v", name, err)
		}
	}
	var markers []string
	pages := s3.NewListObjectsV2Paginator(cl, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Errorf("list test bucket %s: %v", name, err)
			return
		}
		for _, obj := range page.Contents {
			if strings.HasSuffix(aws.ToString(obj.Key), "/") {
				markers = append(markers, aws.ToString(obj.Key))
				continue
			}
			remove(aws.ToString(obj.Key))
		}
	}
	// Directory markers go last, deepest first, once what they hold is gone.
	slices.Reverse(markers)
	for _, key := range markers {
		remove(key)
	}
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Errorf("remove test bucket %s: %v", name, err)
	}
}

// ObjectKeys lists the keys in bucket of store, sorted.
func ObjectKeys(t testing.TB, store *stack.S3, bucket string) []string {
	t.Helper()
	var keys []string
	pages := s3.NewListObjectsV2Paginator(store.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		require.NoError(t, err)
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	slices.Sort(keys)
	return keys
}
