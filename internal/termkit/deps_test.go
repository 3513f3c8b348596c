package termkit_test

import (
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImports keeps termkit importable from the tea-free packages (tui/live,
// tui/config) and the client: the standard library and three small
// libraries, never a Bubble Tea package.
func TestImports(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	allowed := map[string]bool{
		"github.com/docker/go-units":     true,
		"github.com/cenkalti/backoff/v5": true,
		"github.com/mattn/go-runewidth":  true,
	}
	for _, p := range pkg.Imports {
		first, _, _ := strings.Cut(p, "/")
		require.True(t, allowed[p] || !strings.Contains(first, "."), "termkit imports %s", p)
	}
}
