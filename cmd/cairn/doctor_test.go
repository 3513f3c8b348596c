package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestDoctor: against the real stack every check passes and doctor exits
// 0; with a presign endpoint no sidecar reaches, that check fails naming
// the endpoint and the fix, and doctor exits non-zero; a store that takes
// checksums on faith fails the integrity check.
func TestDoctor(t *testing.T) {
	pg, store := stacktest.Postgres(t), stacktest.S3(t)
	dsn := stacktest.Database(t)
	db := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	bucket, image := stacktest.Bucket(t), stacktest.Image(t)
	env := map[string]string{"CAIRN_APP_SQL_PASSWORD": pg.Password, "CAIRN_S3_ACCESS_KEY": store.AccessKey,
		"CAIRN_S3_SECRET_KEY": store.SecretKey}
	config := func(endpoint, presign string) string {
		return writeConfig(t, fmt.Sprintf(`appName: %s
persistence:
  sql:
    app: {host: 127.0.0.1, port: %d, db: %s, user: %s}
artifact:
  s3: {endpoint: %q, presignEndpoint: %q, useTLS: false}
  store: {bucket: %s}
  sidecar: {image: %s, networkMode: host}
`, stacktest.AppName(t), pg.Port, db, pg.User, endpoint, presign, bucket, image))
	}

	t.Run("Healthy", func(t *testing.T) {
		out, err := execute(t, env, "doctor", "-c", config(store.Endpoint, ""))
		require.NoError(t, err, out)
		for _, check := range []string{"database", "object store", "runtime", "integrity", "presign endpoint"} {
			require.Regexp(t, `(?m)^✓ `+check+` `, out)
		}
		require.NotContains(t, out, "✕")
	})

	t.Run("WrongPresignEndpoint", func(t *testing.T) {
		wrong := "127.0.0.1:9" // discard: nothing answers there
		out, err := execute(t, env, "doctor", "-c", config(store.Endpoint, wrong))
		require.Error(t, err)
		require.Regexp(t, `(?m)^✓ integrity `, out)
		require.Regexp(t, `(?m)^✕ presign endpoint .*http://`+wrong, out)
		require.Contains(t, out, "fix: set artifact.s3.presignEndpoint")
		require.NotContains(t, out, "X-Amz-Signature", "no presigned URL is printed")
	})

	t.Run("LaxStore", func(t *testing.T) {
		lax := stacktest.NewLaxStore(t, store)
		out, err := execute(t, env, "doctor", "-c", config(lax.Endpoint, ""))
		require.Error(t, err)
		require.Regexp(t, `(?m)^✕ integrity .*it kept an upload whose bytes do not match`, out)
		require.Contains(t, out, "artifact.s3.verify: server")
	})
}
