package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server"
)

const committed = "../../docs/configuration.md"

// TestReferenceIsCurrent fails while docs/configuration.md differs from
// what the config structs, their defaults and rules would make of it.
func TestReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	d, err := fieldDocs("..")
	require.NoError(t, err)
	want, err := render(d)
	require.NoError(t, err)
	got, err := os.ReadFile(committed)
	require.NoError(t, err)
	if line, w, g := firstDifference(string(want), string(got)); line > 0 {
		t.Fatalf("docs/configuration.md is stale: run `go generate ./server/...` (or `make docs`) and commit it\n"+
			"line %d should be:\n\t%s\nbut is:\n\t%s", line, w, g)
	}
}

// firstDifference finds the first line where got differs from want, by
// number (0 if none), with both versions of it.
func firstDifference(want, got string) (line int, w, g string) {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		w, g = "(end of file)", "(end of file)"
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return i + 1, w, g
		}
	}
	return 0, "", ""
}

func TestUndocumentedKeyFails(t *testing.T) {
	t.Parallel()
	d, err := fieldDocs("..")
	require.NoError(t, err)
	delete(d["ShellLimits"], "Pids")
	delete(d["Config"], "Files")
	_, err = render(d)
	require.ErrorContains(t, err, "shell.limits.pids: server.ShellLimits.Pids has no doc comment")
	require.ErrorContains(t, err, "files: server.Config.Files has no doc comment")
}

func TestMinimalExampleValidates(t *testing.T) {
	t.Parallel()
	c, warnings, err := server.ParseConfig([]byte(minimalExample))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.NoError(t, c.Validate())
}

func TestRequiredKeysComeFromValidate(t *testing.T) {
	t.Parallel()
	required, err := requiredKeys()
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"artifact.s3.endpoint": true, "artifact.store.bucket": true}, required)
}
