package kube

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cairn binary links only the API groups api.go speaks, and never
// client-go's Clientset: the binary is the CLI too, and the groups it would
// bring cost every CLI run memory (the 2 GiB resume test's peak RSS went
// from 63 to 38 MiB without them).
func TestBinaryLinksOnlyItsAPIGroups(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/cairn-dev/cairn/cmd/cairn").Output()
	require.NoError(t, err)
	var groups []string
	for _, pkg := range strings.Fields(string(out)) {
		require.False(t, strings.HasPrefix(pkg, "k8s.io/client-go/kubernetes"), "cmd/cairn links %s", pkg)
		if strings.HasPrefix(pkg, "k8s.io/api/") {
			groups = append(groups, pkg)
		}
	}
	require.Equal(t, []string{"k8s.io/api/core/v1", "k8s.io/api/storage/v1"}, groups)
}
