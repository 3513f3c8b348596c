package config_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/config"
)

// setup writes a config file under a fresh XDG_CONFIG_HOME and returns the
// input reading it with env.
func setup(t *testing.T, file string, mode fs.FileMode, env map[string]string) config.Input {
	t.Helper()
	dir := t.TempDir()
	if file != "" {
		path := filepath.Join(dir, "cairn", "config.yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(file), mode))
	}
	vars := map[string]string{"XDG_CONFIG_HOME": dir}
	for k, v := range env {
		vars[k] = v
	}
	return config.Input{Getenv: func(k string) string { return vars[k] }}
}

const devFile = "# written by 'cairn dev'\nserver: http://127.0.0.1:8080\ntoken: file-token\n"

func TestPrecedence(t *testing.T) {
	t.Parallel()
	t.Run("FileAlone", func(t *testing.T) {
		t.Parallel()
		c, err := config.Load(setup(t, devFile, 0o600, nil))
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:8080", c.Server)
		require.Equal(t, "file-token", c.Token)
		require.Contains(t, c.Sources["server"], "file ")
	})
	t.Run("EnvOverFile", func(t *testing.T) {
		t.Parallel()
		in := setup(t, devFile, 0o600, map[string]string{"CAIRN_TOKEN": "env-token", "CAIRN_TUI_READ_ONLY": "true"})
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Equal(t, "env-token", c.Token)
		require.True(t, c.ReadOnly)
		require.Equal(t, "env CAIRN_TUI_READ_ONLY", c.Sources["tui.read_only"])
	})
	t.Run("FlagOverEnv", func(t *testing.T) {
		t.Parallel()
		in := setup(t, devFile, 0o600, map[string]string{"CAIRN_URL": "http://env:1", "CAIRN_TUI_EVENTS_MODE": "poll"})
		in.Args = []string{"--server", "http://flag:2/", "--events", "off"}
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Equal(t, "http://flag:2", c.Server)
		require.Equal(t, "off", c.EventsMode)
		require.Equal(t, "flag --events", c.Sources["tui.events.mode"])
	})
	t.Run("FileTokenOnlyForFileServer", func(t *testing.T) {
		t.Parallel()
		in := setup(t, devFile, 0o600, map[string]string{"CAIRN_URL": "http://elsewhere:9"})
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Empty(t, c.Token)
	})
	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		in := setup(t, "", 0, nil)
		in.Args = []string{"--server", "http://x:1"}
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Equal(t, 5*time.Second, c.PollInterval)
		require.Equal(t, 2*time.Second, c.Highlight)
		require.Equal(t, 50000, c.CacheMaxArtifacts)
		require.Equal(t, "ws", c.EventsMode)
	})
}

func TestTuiKeys(t *testing.T) {
	t.Parallel()
	file := devFile + `tui:
  theme: high-contrast
  highlight: 0s
  events: {mode: poll, poll_interval: 1s}
  cache: {max_artifacts: 10}
  transfer: {rate_limit: 16MiB}
  preview: {mime_allow: [application/json]}
  keys: {ws_delete: [X], shell: [s]}
  colour: never
`
	c, err := config.Load(setup(t, file, 0o600, nil))
	require.NoError(t, err)
	require.Equal(t, "high-contrast", c.Theme)
	require.Zero(t, c.Highlight)
	require.Equal(t, "poll", c.EventsMode)
	require.Equal(t, 2*time.Second, c.PollInterval, "the floor is 2 s")
	require.Equal(t, 10, c.CacheMaxArtifacts)
	require.Equal(t, int64(16<<20), c.RateLimit)
	require.Equal(t, []string{"application/json"}, c.PreviewMIMEAllow)
	require.Equal(t, map[string][]string{"ws_delete": {"X"}, "shell": {"s"}}, c.Keys)
	require.Len(t, c.Warnings, 1)
	require.Contains(t, c.Warnings[0], "unknown key tui.colour")
}

func TestInvalid(t *testing.T) {
	t.Parallel()
	cases := map[string]config.Input{
		"BadTheme":   setup(t, devFile+"tui:\n  theme: neon\n", 0o600, nil),
		"BadEnvBool": setup(t, devFile, 0o600, map[string]string{"CAIRN_TUI_READ_ONLY": "maybe"}),
		"BadServer":  setup(t, "", 0, map[string]string{"CAIRN_URL": "ftp://x"}),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(in)
			var inv *config.InvalidError
			require.ErrorAs(t, err, &inv)
			require.NotEmpty(t, inv.Source)
		})
	}
	t.Run("NoServer", func(t *testing.T) {
		t.Parallel()
		_, err := config.Load(setup(t, "", 0, nil))
		require.ErrorIs(t, err, config.ErrNoServer)
	})
	t.Run("MissingExplicitFile", func(t *testing.T) {
		t.Parallel()
		in := setup(t, "", 0, nil)
		in.Args = []string{"--config", filepath.Join(t.TempDir(), "nope.yaml")}
		_, err := config.Load(in)
		require.Error(t, err)
	})
}

func TestTokenFileAndPermissions(t *testing.T) {
	t.Parallel()
	in := setup(t, devFile, 0o644, nil)
	c, err := config.Load(in)
	require.NoError(t, err)
	require.Len(t, c.Warnings, 1)
	require.Contains(t, c.Warnings[0], "chmod 600")

	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("from-file\n"), 0o600))
	in = setup(t, "", 0, nil)
	in.Args = []string{"--server", "http://x:1", "--token-file", tokenFile}
	c, err = config.Load(in)
	require.NoError(t, err)
	require.Equal(t, "from-file", c.Token)
	require.Empty(t, c.Warnings)
}

func TestColourAndGlyphs(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string, args ...string) *config.Config {
		in := setup(t, devFile, 0o600, env)
		in.Args = args
		c, err := config.Load(in)
		require.NoError(t, err)
		return c
	}
	require.True(t, load(map[string]string{"NO_COLOR": "1"}).NoColor(true))
	require.True(t, load(nil, "--no-color").NoColor(true))
	require.True(t, load(nil).NoColor(false), "not a terminal")
	require.False(t, load(nil).NoColor(true))
	require.True(t, load(map[string]string{"LANG": "C"}).ASCII())
	require.False(t, load(map[string]string{"LANG": "en_US.UTF-8"}).ASCII())
	require.False(t, load(map[string]string{"LC_ALL": "C.utf8", "LANG": "C"}).ASCII())
	require.True(t, load(map[string]string{"LANG": "en_US.UTF-8"}, "--glyphs", "ascii").ASCII())
}

func TestPrintRedactsToken(t *testing.T) {
	t.Parallel()
	c, err := config.Load(setup(t, devFile, 0o600, nil))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, c.Print(&b, nil))
	require.NotContains(t, b.String(), "file-token")
	require.Contains(t, b.String(), "(set, redacted)")
}

// TestSizeKeys: a size key reads what termkit.ParseSize reads, and keeps
// its floor.
func TestSizeKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env, value string
		want       int64
		get        func(*config.Config) int64
	}{
		{"CAIRN_TUI_PREVIEW_MAX_BYTES", "256KiB", 256 << 10, func(c *config.Config) int64 { return c.PreviewMaxBytes }},
		{"CAIRN_TUI_PREVIEW_MAX_BYTES", "512", 512, func(c *config.Config) int64 { return c.PreviewMaxBytes }},
		{"CAIRN_TUI_PREVIEW_INLINE_MAX_BYTES", "16 KB", 16 << 10, func(c *config.Config) int64 { return c.PreviewInlineMaxBytes }},
		{"CAIRN_TUI_PREVIEW_INLINE_MAX_BYTES", "0", 0, func(c *config.Config) int64 { return c.PreviewInlineMaxBytes }},
		{"CAIRN_TUI_TRANSFER_RATE_LIMIT", "1.5MiB", 3 << 19, func(c *config.Config) int64 { return c.RateLimit }},
		{"CAIRN_TUI_TRANSFER_RATE_LIMIT", "2G", 2 << 30, func(c *config.Config) int64 { return c.RateLimit }},
	} {
		c, err := config.Load(setup(t, devFile, 0o600, map[string]string{tc.env: tc.value}))
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, tc.get(c), tc.value)
	}
	for _, bad := range []map[string]string{
		{"CAIRN_TUI_PREVIEW_MAX_BYTES": "lots"},
		{"CAIRN_TUI_PREVIEW_MAX_BYTES": "0"},
		{"CAIRN_TUI_TRANSFER_RATE_LIMIT": "-1"},
	} {
		_, err := config.Load(setup(t, devFile, 0o600, bad))
		var inv *config.InvalidError
		require.ErrorAs(t, err, &inv, "%v", bad)
	}
}

func TestAbandonKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"ctrl+]", "ctrl+]"}, {"ctrl+x", "ctrl+x"}, {" CTRL+A ", "ctrl+a"}, {"ctrl-]", "ctrl-]"}, {"none", "none"},
	} {
		c, err := config.Load(setup(t, devFile, 0o600, map[string]string{"CAIRN_TUI_SHELL_ABANDON_KEY": tc.in}))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, c.ShellAbandonKey, tc.in)
	}
	for _, tc := range []struct {
		name   string
		in     config.Input
		value  string
		source string
	}{
		{"FileDigit", setup(t, devFile+"tui:\n  shell: {abandon_key: ctrl+1}\n", 0o600, nil), "ctrl+1", "file "},
		{"EnvAlt", setup(t, devFile, 0o600, map[string]string{"CAIRN_TUI_SHELL_ABANDON_KEY": "alt+x"}), "alt+x", "env CAIRN_TUI_SHELL_ABANDON_KEY"},
		{"EnvPlainLetter", setup(t, devFile, 0o600, map[string]string{"CAIRN_TUI_SHELL_ABANDON_KEY": "q"}), "q", "env CAIRN_TUI_SHELL_ABANDON_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(tc.in)
			var inv *config.InvalidError
			require.ErrorAs(t, err, &inv)
			require.Equal(t, "tui.shell.abandon_key", inv.Key)
			require.Equal(t, tc.value, inv.Value)
			require.Contains(t, inv.Source, tc.source)
			require.ErrorContains(t, err, `invalid tui.shell.abandon_key "`+tc.value+`" (from `+tc.source)
		})
	}
}

func TestDetachKeyNamesTheAbandonKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   config.Input
		want string
	}{
		{"File", setup(t, devFile+"tui:\n  shell: {detach_key: ctrl+x}\n", 0o600, nil),
			"tui.shell.detach_key ignored — cairn-tui's shell detach key is tui.shell.abandon_key"},
		{"FileTopLevel", setup(t, devFile+"shell: {detach_key: ctrl+x}\n", 0o600, nil),
			"shell.detach_key ignored — cairn-tui's shell detach key is tui.shell.abandon_key"},
		{"Env", setup(t, devFile, 0o600, map[string]string{"CAIRN_TUI_SHELL_DETACH_KEY": "ctrl+x"}),
			"env CAIRN_TUI_SHELL_DETACH_KEY ignored — cairn-tui's shell detach key is tui.shell.abandon_key (CAIRN_TUI_SHELL_ABANDON_KEY)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(tc.in)
			require.NoError(t, err)
			require.Len(t, c.Warnings, 1)
			require.Contains(t, c.Warnings[0], tc.want)
			require.NotContains(t, c.Warnings[0], "unknown key")
			require.Equal(t, "ctrl+]", c.ShellAbandonKey, "the misnamed key changes nothing")
		})
	}
}

func TestPrintShowsListsAndKeys(t *testing.T) {
	t.Parallel()
	in := setup(t, devFile+"tui:\n  preview: {mime_allow: [application/json, text/x-log]}\n  keys: {ws_delete: [X], shell: [ctrl+q]}\n", 0o600, nil)
	c, err := config.Load(in)
	require.NoError(t, err)
	file := "file " + c.ConfigPath
	var b bytes.Buffer
	require.NoError(t, c.Print(&b, []config.Binding{
		{Action: "help", Keys: "?"}, {Action: "ws_delete", Keys: "X"}, {Action: "shell", Keys: "s", Ignored: true},
	}))
	lines := strings.Split(b.String(), "\n")
	for _, want := range []string{
		fmt.Sprintf("%-30s %-24s # %s", "tui.preview.mime_allow", "[application/json, text/x-log]", file),
		fmt.Sprintf("%-30s %-24s # %s", "tui.keys.help", "?", "default"),
		fmt.Sprintf("%-30s %-24s # %s", "tui.keys.ws_delete", "X", file),
		fmt.Sprintf("%-30s %-24s # default (%s ignored, see the warning)", "tui.keys.shell", "s", file),
	} {
		require.Contains(t, lines, want)
	}

	c, err = config.Load(setup(t, devFile, 0o600, nil))
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, c.Print(&b, nil))
	require.Contains(t, b.String(), fmt.Sprintf("%-30s %-24s # default", "tui.preview.mime_allow", "["+strings.Join(config.Defaults().PreviewMIMEAllow, ", ")+"]"))
}
