package config_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/clientconf"
	"github.com/cairn-dev/cairn/tui/config"
)

// contextsFile has two contexts, b current, and cairn-tui's own section.
const contextsFile = `current-context: b
contexts:
  - {name: a, server: 'http://a.example:1', token_env: A_TOKEN}
  - {name: b, server: 'http://b.example:2/', token_env: B_TOKEN}
tui:
  theme: light
`

// withEnv is the contexts' token variables, and extra.
func withEnv(extra map[string]string) map[string]string {
	out := map[string]string{"A_TOKEN": "tok-a", "B_TOKEN": "tok-b"}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func TestContexts(t *testing.T) {
	t.Parallel()
	t.Run("CurrentContext", func(t *testing.T) {
		t.Parallel()
		c, err := config.Load(setup(t, contextsFile, 0o600, withEnv(nil)))
		require.NoError(t, err)
		require.Equal(t, "b", c.Context)
		require.Equal(t, []string{"a", "b"}, c.Contexts)
		require.Equal(t, "http://b.example:2", c.Server)
		require.Equal(t, "tok-b", c.Token)
		require.Equal(t, "file "+c.ConfigPath+" (current-context)", c.Sources["context"])
		require.Equal(t, "context b (file "+c.ConfigPath+")", c.Sources["server"])
		require.Equal(t, "context b (token_env B_TOKEN)", c.Sources["token"])
		require.Equal(t, "light", c.Theme, "the tui section still applies")
		require.Empty(t, c.Warnings, "contexts and current-context are known keys")
	})
	t.Run("FlagBeatsEnv", func(t *testing.T) {
		t.Parallel()
		in := setup(t, contextsFile, 0o600, withEnv(map[string]string{"CAIRN_CONTEXT": "b"}))
		in.Args = []string{"--context", "a"}
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Equal(t, "a", c.Context)
		require.Equal(t, "flag --context", c.Sources["context"])
		require.Equal(t, "tok-a", c.Token)
	})
	t.Run("EnvContextBeatsEnvURL", func(t *testing.T) {
		t.Parallel()
		in := setup(t, contextsFile, 0o600, withEnv(map[string]string{"CAIRN_CONTEXT": "a",
			"CAIRN_URL": "http://env:3", "CAIRN_TOKEN": "env-tok"}))
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Equal(t, "http://a.example:1", c.Server)
		require.Equal(t, "tok-a", c.Token)
		require.Equal(t, "env CAIRN_CONTEXT", c.Sources["context"])
	})
	t.Run("EnvURLBeatsCurrentContext", func(t *testing.T) {
		t.Parallel()
		c, err := config.Load(setup(t, contextsFile, 0o600, withEnv(map[string]string{"CAIRN_URL": "http://env:3"})))
		require.NoError(t, err)
		require.Equal(t, "http://env:3", c.Server)
		require.Empty(t, c.Token, "b's token is not sent to another server")
		require.Empty(t, c.Context)
	})
	t.Run("FlagServerKeepsTheTokenAway", func(t *testing.T) {
		t.Parallel()
		in := setup(t, contextsFile, 0o600, withEnv(nil))
		in.Args = []string{"--server", "http://elsewhere:9"}
		c, err := config.Load(in)
		require.NoError(t, err)
		require.Equal(t, "http://elsewhere:9", c.Server)
		require.Empty(t, c.Token)
	})
}

func TestContextErrors(t *testing.T) {
	t.Parallel()
	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		in := setup(t, contextsFile, 0o600, withEnv(nil))
		in.Args = []string{"--context", "qa"}
		_, err := config.Load(in)
		var unknown *clientconf.UnknownContextError
		require.ErrorAs(t, err, &unknown)
		require.ErrorContains(t, err, `no context "qa" (from flag --context)`)
		require.ErrorContains(t, err, "known: a, b")
	})
	t.Run("TokenSourceMissing", func(t *testing.T) {
		t.Parallel()
		_, err := config.Load(setup(t, contextsFile, 0o600, nil))
		var ce *clientconf.ContextError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "b", ce.Context)
		require.ErrorContains(t, err, `context "b": token_env B_TOKEN: not set or empty`)
	})
	t.Run("LiteralToken", func(t *testing.T) {
		t.Parallel()
		_, err := config.Load(setup(t, "contexts: [{name: a, server: 'http://a:1', token: s3cret}]\n", 0o600, nil))
		require.ErrorContains(t, err, `context "a": a context never holds its token`)
		require.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("UnknownKey", func(t *testing.T) {
		t.Parallel()
		_, err := config.Load(setup(t, "contexts: [{name: a, server: 'http://a:1', theme: dark}]\n", 0o600, nil))
		require.ErrorContains(t, err, `context "a": unknown key "theme"`)
	})
}

// A context's token file that others can read warns, as the file's own
// token does.
func TestContextTokenFilePermissions(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "tok"), []byte("file-tok\n"), 0o644))
	in := setup(t, "current-context: a\ncontexts: [{name: a, server: 'http://a:1', token_file: ~/tok}]\n", 0o600,
		map[string]string{"HOME": home})
	c, err := config.Load(in)
	require.NoError(t, err)
	require.Equal(t, "file-tok", c.Token, "~/ is $HOME")
	require.Len(t, c.Warnings, 1)
	require.Contains(t, c.Warnings[0], filepath.Join(home, "tok")+" holds a token and is readable by others")
}

func TestPrintShowsContext(t *testing.T) {
	t.Parallel()
	c, err := config.Load(setup(t, contextsFile, 0o600, withEnv(nil)))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, c.Print(&b, nil))
	lines := strings.Split(b.String(), "\n")
	require.Contains(t, lines, fmt.Sprintf("%-30s %-24s # %s", "context", "b", "file "+c.ConfigPath+" (current-context)"))
	require.Contains(t, lines, fmt.Sprintf("%-30s %-24s # %s", "contexts", "[a, b]", "file "+c.ConfigPath))
	require.Contains(t, lines, fmt.Sprintf("%-30s %-24s # %s", "token", "(set, redacted)", "context b (token_env B_TOKEN)"))
	require.NotContains(t, b.String(), "tok-b")

	c, err = config.Load(setup(t, devFile, 0o600, nil))
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, c.Print(&b, nil))
	require.Contains(t, b.String(), fmt.Sprintf("%-30s %-24s # %s", "context", "(none)", "default"))
}

// OpenContext reads the file as it is now: a context added after start
// opens, whole, whatever the start's flags said.
func TestOpenContext(t *testing.T) {
	t.Parallel()
	in := setup(t, contextsFile, 0o600, withEnv(map[string]string{"C_TOKEN": "tok-c"}))
	in.Args = []string{"--server", "http://flag:1", "--token", "flag-tok"}
	c, err := config.Load(in)
	require.NoError(t, err)

	e, err := c.OpenContext("a")
	require.NoError(t, err)
	require.Equal(t, config.Endpoint{Context: "a", Server: "http://a.example:1", Token: "tok-a"}, e)

	_, err = c.OpenContext("c")
	require.ErrorContains(t, err, `no context "c"`)
	require.NoError(t, clientconf.SaveContext(c.ConfigPath, clientconf.Context{Name: "c", Server: "http://c.example:3/", TokenEnv: "C_TOKEN"}, false))
	e, err = c.OpenContext("c")
	require.NoError(t, err)
	require.Equal(t, config.Endpoint{Context: "c", Server: "http://c.example:3", Token: "tok-c"}, e)

	require.NoError(t, clientconf.SaveContext(c.ConfigPath, clientconf.Context{Name: "d", Server: "http://d:4", TokenEnv: "D_TOKEN"}, false))
	_, err = c.OpenContext("d")
	var ce *clientconf.ContextError
	require.ErrorAs(t, err, &ce)
	require.ErrorContains(t, err, `context "d": token_env D_TOKEN`)

	require.NoError(t, os.WriteFile(c.ConfigPath, []byte("contexts: [{name: a, server: 'http://a:1', token: x}]\n"), 0o600))
	_, err = c.OpenContext("a")
	require.ErrorContains(t, err, `context "a"`)
	require.Equal(t, []string{"a", "b"}, c.Contexts, "the Config itself is not changed")
}
