package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/keys"
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

// writeConfig writes the config file the lookup under dir finds.
func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "cairn", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

// runBounded is runArgs with a deadline, so that a run that wrongly starts
// the TUI ends instead of hanging the test.
func runBounded(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestKeyConflictExitsTwoBeforeTheAltScreen(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		want       []string
	}{
		{"ListsAndWorkspaces", "{ws_new: [s]}", []string{`key "s" is bound to both`, "shell", "ws_new"}},
		{"GlobalAndArtifacts", "{art_upload: [r]}", []string{`key "r" is bound to both`, "refresh", "art_upload"}},
		{"IndistinctKey", "{help: [ctrl+i]}", []string{"tui.keys.help", `"ctrl+i"`, `"tab"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolate(t)
			path := writeConfig(t, dir, "server: http://127.0.0.1:1\ntui:\n  keys: "+tc.keys+"\n")
			code, out, errs := runBounded(t)
			require.Equal(t, 2, code, "stderr: %s", errs)
			require.Empty(t, out, "nothing drawn: the alt screen was never entered")
			require.NotContains(t, errs, "\x1b[?1049h")
			require.Contains(t, errs, "cairn-tui: invalid tui.keys (from file "+path+")")
			for _, w := range tc.want {
				require.Contains(t, errs, w)
			}
			code, _, _ = runBounded(t, "--print-config")
			require.Equal(t, 2, code, "--print-config refuses the same file")
		})
	}
}

func TestPrintConfigShowsKeysAndMimeAllow(t *testing.T) {
	dir := isolate(t)
	path := writeConfig(t, dir, "server: http://127.0.0.1:8080\ntui:\n"+
		"  preview: {mime_allow: [application/json, text/x-log]}\n"+
		"  keys: {ws_delete: [X, delete], shell: [hyper+x]}\n")
	code, out, errs := runArgs("--print-config")
	require.Equal(t, 0, code, errs)
	file := "file " + path
	lines := strings.Split(out, "\n")
	for _, want := range []string{
		fmt.Sprintf("%-30s %-24s # %s", "tui.preview.mime_allow", "[application/json, text/x-log]", file),
		fmt.Sprintf("%-30s %-24s # %s", "tui.keys.ws_delete", "X/delete", file),
		fmt.Sprintf("%-30s %-24s # default", "tui.keys.art_delete", "D/delete"),
		fmt.Sprintf("%-30s %-24s # default", "tui.keys.help", "?"),
		fmt.Sprintf("%-30s %-24s # default (%s ignored, see the warning)", "tui.keys.shell", "s", file),
	} {
		require.Contains(t, lines, want, out)
	}
	require.Contains(t, out, "# warning: tui.keys.shell:", "the refused override is explained")
	require.Equal(t, len(keys.Defaults()), countActions(out), "one line an action")
}

// countActions counts the tui.keys lines of a printout.
func countActions(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "tui.keys.") {
			n++
		}
	}
	return n
}

func TestAbandonKeyCheckedAtStart(t *testing.T) {
	dir := isolate(t)
	path := writeConfig(t, dir, "server: http://127.0.0.1:1\ntui:\n  shell: {abandon_key: ctrl+1}\n")
	code, out, errs := runBounded(t)
	require.Equal(t, 2, code, errs)
	require.Empty(t, out)
	require.Contains(t, errs, `cairn-tui: invalid tui.shell.abandon_key "ctrl+1" (from file `+path+`)`)

	writeConfig(t, dir, "server: http://127.0.0.1:1\n")
	t.Setenv("CAIRN_TUI_SHELL_ABANDON_KEY", "alt+q")
	code, _, errs = runBounded(t)
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, `invalid tui.shell.abandon_key "alt+q" (from env CAIRN_TUI_SHELL_ABANDON_KEY)`)
}
