package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

func TestShellSecretsKeepLookupForget(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shells")
	keep := client.ShellSecrets{Dir: dir}
	_, ok := keep.Lookup("01ABC")
	require.False(t, ok, "nothing kept yet")

	require.NoError(t, keep.Keep(cairn.ShellSessionInfo{ShellID: "01ABC", Secret: "s3cr3t", DetachedTimeoutSecs: 300}))
	info, ok := keep.Lookup("01ABC")
	require.True(t, ok)
	require.Equal(t, cairn.ShellSessionInfo{ShellID: "01ABC", Secret: "s3cr3t"}, info, "the file holds the secret alone")
	st, err := os.Stat(filepath.Join(dir, "01ABC"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dirSt, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dirSt.Mode().Perm())

	keep.Forget("01ABC")
	_, ok = keep.Lookup("01ABC")
	require.False(t, ok)
	keep.Forget("01ABC") // forgetting twice is no error
}

func TestShellSecretsRefuseIDsThatArePaths(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	keep := client.ShellSecrets{Dir: filepath.Join(base, "shells")}
	outside := filepath.Join(base, "victim")
	require.NoError(t, os.WriteFile(outside, []byte("keep me"), 0o600))
	for _, id := range []string{"", ".", "..", "../victim", "a/b", "/etc/passwd"} {
		require.Error(t, keep.Keep(cairn.ShellSessionInfo{ShellID: id, Secret: "x"}), "%q", id)
		_, ok := keep.Lookup(id)
		require.False(t, ok, "%q", id)
		keep.Forget(id)
	}
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(b), "no ID reached a file outside the directory")
}
