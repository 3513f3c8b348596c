package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// isolate points the config lookup at an empty directory.
func isolate(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("CAIRN_URL", "")
	t.Setenv("CAIRN_TOKEN", "")
	t.Setenv("NO_COLOR", "")
	return dir
}

func runArgs(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	isolate(t)
	code, out, _ := runArgs("--version")
	require.Equal(t, 0, code)
	require.Contains(t, out, "cairn-tui dev")

	code, _, errs := runArgs()
	require.Equal(t, 2, code)
	require.Contains(t, errs, "no server: pass --server, set CAIRN_URL, or run 'cairn dev'")

	code, _, errs = runArgs("--server", "http://x:1", "--theme", "neon")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `invalid tui.theme "neon" (from flag --theme)`)

	code, _, _ = runArgs("--bogus")
	require.Equal(t, 2, code)

	code, out, _ = runArgs("-h")
	require.Equal(t, 0, code)
	require.Contains(t, out, "-read-only")
}

func TestPrintConfigReadsTheDevFileAndHidesTheToken(t *testing.T) {
	dir := isolate(t)
	path := filepath.Join(dir, "cairn", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("server: http://127.0.0.1:8080\ntoken: s3cret-token\n"), 0o600))
	code, out, _ := runArgs("--print-config")
	require.Equal(t, 0, code)
	require.Contains(t, out, "http://127.0.0.1:8080")
	require.Contains(t, out, "(set, redacted)")
	require.NotContains(t, out, "s3cret-token")
}
