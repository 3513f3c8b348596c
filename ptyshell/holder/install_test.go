package holder_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell/holder"
)

// TestInstallCopiesTheBinary: install-holder, run from the built binary as
// an init container runs it, leaves an exact, read-and-execute-only copy
// and nothing else in the directory; the copy runs.
func TestInstallCopiesTheBinary(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "cairn-sidecar")
	out, err := exec.Command(holderBin, holder.CommandInstall, dest).CombinedOutput()
	require.NoError(t, err, "output: %s", out)
	require.Empty(t, out)

	want, err := os.ReadFile(holderBin)
	require.NoError(t, err)
	got, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "the copy is the binary")
	fi, err := os.Stat(dest)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o555), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")

	again := filepath.Join(dir, "again")
	out, err = exec.Command(dest, holder.CommandInstall, again).CombinedOutput()
	require.NoError(t, err, "the copy runs; output: %s", out)
	_, err = os.Stat(again)
	require.NoError(t, err)
}

// TestInstallRefusesNoDestination: without a path, or into a directory
// that does not exist, it fails and writes nothing.
func TestInstallRefusesNoDestination(t *testing.T) {
	out, err := exec.Command(holderBin, holder.CommandInstall).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "destination")

	missing := filepath.Join(t.TempDir(), "absent", "cairn-sidecar")
	require.Error(t, holder.Install(missing))
	_, err = os.Stat(filepath.Dir(missing))
	require.ErrorIs(t, err, os.ErrNotExist)
}
