package mcp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/mcp"
)

// A JSON-RPC message that declares a body over the bound is answered 413
// at once, before a byte of it is read.
func TestDeclaredBodyOverBound(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	status := stacktest.DeclareHugeBody(t, h.url, 64<<20, map[string]string{"Accept": "application/json, text/event-stream"})
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
}
