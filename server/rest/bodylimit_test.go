package rest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// A request that declares a body over the 1 MiB bound is refused at once,
// before a byte of it is read, on every REST route that takes a body — not
// read up to the bound while the client trickles it.
func TestDeclaredBodyOverBound(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	ws := h.newWorkspace(t)
	for _, path := range []string{"/v1/workspaces", "/v1/workspaces/" + ws + "/new-staging",
		"/v1/workspaces/" + ws + "/new-staging/parts", "/v1/workspaces/" + ws + "/artifacts"} {
		require.Equal(t, http.StatusRequestEntityTooLarge, stacktest.DeclareHugeBody(t, h.url+path, 64<<20, nil), path)
	}
	// At the bound it is read and judged as usual.
	require.Equal(t, http.StatusBadRequest, do(t, http.MethodPost, h.url+"/v1/workspaces", "{").status)
}
