package sidecar

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) Env {
	return func(k string) string { return vars[k] }
}

func run(t *testing.T, args []string, vars map[string]string) (Result, int) {
	t.Helper()
	var out bytes.Buffer
	code := Main(args, env(vars), strings.NewReader(""), &out)
	r, ok := ParseResult(out.Bytes())
	require.True(t, ok, "output %q has a result line", out.String())
	return r, code
}

func TestMainUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"bogus"}, {"prep", "extra"}} {
		r, code := run(t, args, nil)
		require.Equal(t, ExitUsage, code)
		require.False(t, r.OK)
		require.Equal(t, ReasonEnvInvalid, r.ReasonText())
	}
}

func TestPrep(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		root := filepath.Join(t.TempDir(), "ws")
		require.NoError(t, os.Mkdir(root, 0o700))

		r, code := run(t, []string{CommandPrep}, map[string]string{EnvMountRoot: root})
		require.Equal(t, ExitOK, code)
		require.True(t, r.OK)
		require.Equal(t, root, r.PreparedPath)

		fi, err := os.Stat(root)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o777)|os.ModeDir, fi.Mode(), "mode is 0777 without the sticky bit")
	})
	t.Run("ErrMissingRoot", func(t *testing.T) {
		t.Parallel()
		r, code := run(t, []string{CommandPrep}, map[string]string{EnvMountRoot: filepath.Join(t.TempDir(), "absent")})
		require.Equal(t, ExitFailure, code)
		require.Equal(t, ReasonPrepFailed, r.ReasonText())
		require.NotContains(t, r.ErrorText(), "absent", "no host path is echoed")
	})
	t.Run("ErrEnv", func(t *testing.T) {
		t.Parallel()
		for _, root := range []string{"", "relative/ws"} {
			r, code := run(t, []string{CommandPrep}, map[string]string{EnvMountRoot: root})
			require.Equal(t, ExitFailure, code)
			require.Equal(t, ReasonEnvInvalid, r.ReasonText())
		}
	})
}
