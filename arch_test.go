package cairn_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/cairn-dev/cairn"

// TestDependencyRules enforces the import rules of ARCHITECTURE.md §3 on the
// non-test code of every package.
func TestDependencyRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)

	adapters := []string{"/server/postgres", "/server/s3", "/server/docker"}
	frontDoors := []string{"/server/rest", "/server/mcp"}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		pkg, imports := strings.TrimPrefix(fields[0], module), fields[1:]
		for _, imp := range imports {
			local := strings.HasPrefix(imp, module)
			rel := strings.TrimPrefix(imp, module)
			switch {
			case pkg == "" || strings.HasPrefix(pkg, "/sidecar"):
				require.True(t, isStdlib(imp), "%s must import only the standard library, not %s", fields[0], imp)
			case hasPrefix(pkg, adapters...):
				require.False(t, local && hasPrefix(rel, append(adapters, frontDoors...)...) && rel != pkg,
					"adapter %s must not import %s", fields[0], imp)
			case hasPrefix(pkg, frontDoors...):
				require.False(t, local && hasPrefix(rel, adapters...), "front door %s must not import adapter %s", fields[0], imp)
			case hasPrefix(pkg, "/client", "/tui", "/ptyshell"):
				require.False(t, local && hasPrefix(rel, "/server"), "%s must not import %s", fields[0], imp)
			}
		}
	}
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

// isStdlib reports a standard-library import path: its first element has no
// dot.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
