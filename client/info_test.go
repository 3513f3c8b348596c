package client_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

// TestInfo: GET /v1/info answers any valid token with that token's scopes,
// the bounds the server applies (its config, defaults filled) and the
// features it serves; no token is 401.
func TestInfo(t *testing.T) {
	t.Parallel()
	url := newBackend(t).remote(t, func(cfg *server.Config) {
		cfg.Artifact.Store.PartSize = 16 << 20
		cfg.Files.Unpack.MaxEntries = 1234
		cfg.Files.Write.MaxBytes = 2 << 20
		cfg.API.APIs.MCP.Enable = true
	})

	admin, err := newClient(t, url).Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"read", "write", "admin"}, admin.Scopes)
	require.Equal(t, "v1", admin.APIVersion)
	require.Equal(t, cairn.InfoBounds{
		MaxBodyBytes: 1 << 20, MaxObjectSize: 8 << 20, SinglePutMax: 8 << 20, MultipartThreshold: 1 << 30,
		PartSize: 16 << 20, PartsPerRequest: 100, ListLimit: 1000, PutURLTTLSecs: 360, GetURLMaxTTLSecs: 900,
		FileReadMaxBytes: 1 << 20, UnpackMaxEntries: 1234, UnpackMaxBytes: 10 << 30, UnpackMaxRatio: 200,
		FileWriteMaxBytes: 2 << 20,
	}, admin.Bounds)
	require.Equal(t, cairn.InfoFeatures{Runtime: "docker", Shell: true, MCP: true, Integrity: "store",
		StreamUploads: stacktest.StoreKind() == stack.StoreSeaweedFS, FilesWrite: true, Watch: true}, admin.Features)

	reader, err := newClient(t, url, client.WithToken(readToken)).Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"read"}, reader.Scopes, "the caller's own scopes")
	require.Equal(t, admin.Bounds, reader.Bounds)

	_, err = newClient(t, url, client.WithToken("")).Info(t.Context())
	e := requireReason(t, err, cairn.ReasonUnauthenticated)
	require.Equal(t, http.StatusUnauthorized, e.Status)
}
