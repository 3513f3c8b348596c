// Package s3test builds the store adapter on a test store the way the
// server builds it at start: probed.
package s3test

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server/s3"
)

// Open returns a Store on bucket of gw, presigning for presignAt (empty:
// the endpoint), after the integrity probe the server runs at start — the
// probe picks how multipart uploads start on this store. A store that
// fails the probe fails the test.
func Open(t testing.TB, gw *stack.S3, bucket, presignAt string) *s3.Store {
	t.Helper()
	store, err := s3.New(s3.Config{Endpoint: "http://" + gw.Endpoint, PresignEndpoint: presignAt, Region: gw.Region,
		Bucket: bucket, AccessKey: gw.AccessKey, SecretKey: gw.SecretKey})
	if err != nil {
		t.Fatalf("store adapter: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := store.ProbeIntegrity(ctx, "staging/integrity-probe")
	if err != nil {
		t.Fatalf("integrity probe of %s: %v", gw.Kind, err)
	}
	if !p.Trusted() {
		t.Fatalf("%s failed the integrity probe: %q", gw.Kind, p.Failures)
	}
	return store
}
