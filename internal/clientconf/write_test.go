package clientconf_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/clientconf"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cairn", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func read(t *testing.T, path string) (string, *clientconf.File) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := clientconf.Parse(path, data)
	require.NoError(t, err)
	return string(data), f
}

func TestUseContext(t *testing.T) {
	t.Parallel()
	path := writeFile(t, threeContexts)
	require.NoError(t, clientconf.UseContext(path, "prod"))
	text, f := read(t, path)
	require.Equal(t, "prod", f.CurrentContext)
	require.Contains(t, text, "# my servers", "comments kept")
	require.Contains(t, text, "# the one I use")
	require.Contains(t, text, "tui:\n  theme: dark\n", "the tui section kept")
	require.Contains(t, text, "token: legacy-token")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "rewritten 0600")

	err = clientconf.UseContext(path, "qa")
	var unknown *clientconf.UnknownContextError
	require.ErrorAs(t, err, &unknown)
	require.ErrorContains(t, err, "known: prod, staging, dev")
	_, f = read(t, path)
	require.Equal(t, "prod", f.CurrentContext, "unchanged")

	err = clientconf.UseContext(filepath.Join(t.TempDir(), "none.yaml"), "prod")
	require.ErrorAs(t, err, &unknown, "an absent file defines no context")
}

func TestSaveContext(t *testing.T) {
	t.Parallel()
	t.Run("CreatesTheFile", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "new", "cairn", "config.yaml")
		require.NoError(t, clientconf.SaveContext(path, clientconf.Context{Name: "a", Server: "http://a:1", TokenFile: "/a/t"}, true))
		_, f := read(t, path)
		require.Equal(t, "a", f.CurrentContext)
		require.Equal(t, []clientconf.Context{{Name: "a", Server: "http://a:1", TokenFile: "/a/t"}}, f.Contexts)
		dir, err := os.Stat(filepath.Dir(path))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
		entries, err := os.ReadDir(filepath.Dir(path))
		require.NoError(t, err)
		require.Len(t, entries, 1, "no temporary file left behind")
	})
	t.Run("UpdatesInPlace", func(t *testing.T) {
		t.Parallel()
		path := writeFile(t, threeContexts)
		require.NoError(t, clientconf.SaveContext(path, clientconf.Context{Name: "staging", Server: "https://s2.example.com",
			TokenCommand: []string{"vault", "read", "x"}}, false))
		text, f := read(t, path)
		require.Equal(t, "staging", f.CurrentContext)
		require.Equal(t, []string{"prod", "staging", "dev"}, f.Names(), "same place")
		c, _ := f.Context("staging")
		require.Equal(t, clientconf.Context{Name: "staging", Server: "https://s2.example.com",
			TokenCommand: []string{"vault", "read", "x"}}, c, "the old token_env is gone")
		require.Contains(t, text, "# the one I use")
		require.Contains(t, text, "tui:\n  theme: dark\n")
	})
	t.Run("AppendsAndMakesCurrent", func(t *testing.T) {
		t.Parallel()
		path := writeFile(t, "server: http://old:1\ntui:\n  events: {mode: poll}\n")
		require.NoError(t, clientconf.SaveContext(path, clientconf.Context{Name: "b", Server: "http://b:1"}, true))
		text, f := read(t, path)
		require.Equal(t, "b", f.CurrentContext)
		require.Equal(t, "http://old:1", f.Server)
		require.Contains(t, text, "events: {mode: poll}")
	})
	t.Run("Refuses", func(t *testing.T) {
		t.Parallel()
		path := writeFile(t, threeContexts)
		require.Error(t, clientconf.SaveContext(path, clientconf.Context{Name: "bad name", Server: "http://x:1"}, true))
		require.Error(t, clientconf.SaveContext(path, clientconf.Context{Name: "x", Server: "x:1"}, true))
		broken := writeFile(t, "contexts: [{name: a, server: 'http://a:1', token: lit}]\n")
		require.ErrorContains(t, clientconf.SaveContext(broken, clientconf.Context{Name: "b", Server: "http://b:1"}, true),
			"never holds its token", "a file it cannot read is not rewritten")
		text, _ := read(t, path)
		require.Equal(t, threeContexts, text, "untouched")
	})
	t.Run("ConcurrentWritersKeepBoth", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "config.yaml")
		var wg sync.WaitGroup
		names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		for _, n := range names {
			wg.Go(func() {
				require.NoError(t, clientconf.SaveContext(path, clientconf.Context{Name: n, Server: "http://" + n + ":1"}, true))
			})
		}
		wg.Wait()
		_, f := read(t, path)
		require.ElementsMatch(t, names, f.Names())
	})
	t.Run("ThroughASymlink", func(t *testing.T) {
		t.Parallel()
		target := writeFile(t, "tui: {theme: dark}\n")
		link := filepath.Join(t.TempDir(), "config.yaml")
		require.NoError(t, os.Symlink(target, link))
		require.NoError(t, clientconf.SaveContext(link, clientconf.Context{Name: "a", Server: "http://a:1"}, true))
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		require.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link stays a link")
		_, f := read(t, target)
		require.Equal(t, "a", f.CurrentContext)
	})
}

func TestDropLegacy(t *testing.T) {
	t.Parallel()
	const old = "# written by 'cairn dev'\nserver: http://127.0.0.1:44123\ntoken: dev-tok\ntui:\n  theme: dark\n"
	t.Run("WhatDevWrote", func(t *testing.T) {
		t.Parallel()
		path := writeFile(t, old)
		require.NoError(t, clientconf.SaveContext(path, clientconf.Context{Name: "dev", Server: "http://127.0.0.1:44123", TokenFile: "/s/dev-token"}, true))
		dropped, err := clientconf.DropLegacy(path, "http://127.0.0.1:44123", "dev-tok")
		require.NoError(t, err)
		require.True(t, dropped)
		text, f := read(t, path)
		require.Empty(t, f.Server)
		require.Empty(t, f.Token)
		require.NotContains(t, text, "token: dev-tok")
		require.Contains(t, text, "tui:\n  theme: dark\n")
		require.Equal(t, "dev", f.CurrentContext)
	})
	for name, content := range map[string]string{
		"OtherServer":    "server: http://elsewhere:1\ntoken: dev-tok\n",
		"OtherToken":     "server: http://127.0.0.1:44123\ntoken: mine\n",
		"TokenFile":      "server: http://127.0.0.1:44123\ntoken: dev-tok\ntoken_file: /t\n",
		"NoLegacyServer": "tui: {theme: dark}\n",
	} {
		t.Run("Keeps"+name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, content)
			dropped, err := clientconf.DropLegacy(path, "http://127.0.0.1:44123", "dev-tok")
			require.NoError(t, err)
			require.False(t, dropped)
			text, _ := read(t, path)
			require.Equal(t, content, text, "untouched")
		})
	}
}
