package sidecar

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A link into nowhere is judged by where it points: a sidecar container
// has no /etc, yet a link to /etc/passwd is outside the mount, not missing.
func TestLinksIntoNowhere(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	nowhere := filepath.Join(v.base, "gone", "passwd")
	require.NoError(t, os.Symlink(nowhere, v.at("abs")))
	require.NoError(t, os.Symlink("../gone/passwd", v.at("rel")))
	require.NoError(t, os.Symlink(filepath.Join(v.base, "gone"), v.at("dir")))
	require.NoError(t, os.Symlink(v.at("missing-inside"), v.at("dangling")))
	// Every answer comes before the network: nothing listens here.
	const nowhereURL = "http://127.0.0.1:1/x"

	for _, name := range []string{"abs", "rel"} {
		line, code := runLine(t, []string{CommandPut}, putVars(v, v.at(name), nowhereURL, 100))
		require.Equal(t, ExitFailure, code)
		require.Contains(t, line, `"reason":"`+ReasonPathOutsideMount+`"`, name)
	}
	line, _ := runLine(t, []string{CommandPut}, putVars(v, v.at("dangling"), nowhereURL, 100))
	require.Contains(t, line, `"reason":"`+ReasonSourceNotFound+`"`, "a dangling link inside the mount is a missing file")

	line, _ = runLine(t, []string{CommandDownload}, map[string]string{
		EnvMountRoot: v.ws, EnvTargetPath: v.at("dir/f"), EnvURL: nowhereURL})
	require.Contains(t, line, `"reason":"`+ReasonPathOutsideMount+`"`, "a parent linked outside, even to nothing")
	require.NoDirExists(t, filepath.Join(v.base, "gone"))
}

func TestResolvePath(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	require.NoError(t, os.Symlink("a", v.at("loop-b")))
	require.NoError(t, os.Symlink("loop-b", v.at("a")))
	_, _, err := resolvePath(v.at("a"))
	require.ErrorIs(t, err, errLinkLoop)

	require.NoError(t, os.Mkdir(v.at("d"), 0o755))
	require.NoError(t, os.Symlink(v.outside, v.at("d/out")))
	got, exists, err := resolvePath(v.at("d/out/../outside/secret"))
	require.NoError(t, err)
	require.True(t, exists)
	require.Equal(t, filepath.Join(v.outside, "secret"), got, "'..' applies after the link, as the kernel does")
}
