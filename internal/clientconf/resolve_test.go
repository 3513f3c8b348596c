package clientconf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/clientconf"
)

// fixture is a config file with contexts whose token sources work: prod's
// command prints its token, staging's variable is set, dev's file exists.
type fixture struct {
	file *clientconf.File
	env  map[string]string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "dev-token"), []byte("dev-tok\n"), 0o600))
	yaml := strings.Replace(threeContexts, "[pass, show, cairn/prod]", "[sh, -c, 'echo \"  prod-tok  \"']", 1)
	f, err := clientconf.Parse("/c.yaml", []byte(yaml))
	require.NoError(t, err)
	return &fixture{file: f, env: map[string]string{"HOME": home, "STAGING_TOKEN": "staging-tok"}}
}

func (fx *fixture) resolve(t *testing.T, in clientconf.Input) (clientconf.Result, error) {
	t.Helper()
	in.File = fx.file
	in.Getenv = func(k string) string { return fx.env[k] }
	return clientconf.Resolve(t.Context(), in)
}

func (fx *fixture) ok(t *testing.T, in clientconf.Input) clientconf.Result {
	t.Helper()
	r, err := fx.resolve(t, in)
	require.NoError(t, err)
	return r
}

func TestResolveOrder(t *testing.T) {
	t.Parallel()
	t.Run("CurrentContext", func(t *testing.T) {
		t.Parallel()
		r := setup(t).ok(t, clientconf.Input{})
		require.Equal(t, clientconf.Result{Context: "staging", ContextFrom: "file /c.yaml (current-context)",
			Server: "https://staging.example.com/", ServerFrom: "context staging (file /c.yaml)",
			Token: "staging-tok", TokenFrom: "context staging (token_env STAGING_TOKEN)"}, r)
	})
	t.Run("FlagContextBeatsEnvContext", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_CONTEXT"] = "dev"
		r := fx.ok(t, clientconf.Input{Context: "prod"})
		require.Equal(t, "prod", r.Context)
		require.Equal(t, "flag --context", r.ContextFrom)
		require.Equal(t, "https://cairn.example.com", r.Server)
		require.Equal(t, "prod-tok", r.Token, "stdout trimmed")
		require.Equal(t, "context prod (token_command sh)", r.TokenFrom)
	})
	t.Run("EnvContextBeatsEnvURL", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_CONTEXT"], fx.env["CAIRN_URL"], fx.env["CAIRN_TOKEN"] = "dev", "http://env:1", "env-tok"
		r := fx.ok(t, clientconf.Input{})
		require.Equal(t, "dev", r.Context)
		require.Equal(t, "env CAIRN_CONTEXT", r.ContextFrom)
		require.Equal(t, "http://127.0.0.1:44123", r.Server)
		require.Equal(t, "dev-tok", r.Token, "a chosen context is used whole")
		require.Equal(t, filepath.Join(fx.env["HOME"], "dev-token"), r.TokenPath, "~/ is $HOME")
	})
	t.Run("EnvBeatsCurrentContext", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_URL"], fx.env["CAIRN_TOKEN"] = "http://env:1", "env-tok"
		r := fx.ok(t, clientconf.Input{})
		require.Equal(t, clientconf.Result{Server: "http://env:1", ServerFrom: "env CAIRN_URL",
			Token: "env-tok", TokenFrom: "env CAIRN_TOKEN"}, r)
	})
	t.Run("EnvTokenGoesToTheCurrentContextsServer", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_TOKEN"] = "env-tok"
		r := fx.ok(t, clientconf.Input{})
		require.Equal(t, "https://staging.example.com/", r.Server)
		require.Equal(t, "env-tok", r.Token)
	})
	t.Run("FlagsWin", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_URL"], fx.env["CAIRN_TOKEN"] = "http://env:1", "env-tok"
		r := fx.ok(t, clientconf.Input{Server: "http://flag:2", Token: "flag-tok", Context: "prod"})
		require.Equal(t, "http://flag:2", r.Server)
		require.Equal(t, "flag --server", r.ServerFrom)
		require.Equal(t, "flag-tok", r.Token)
		require.Equal(t, "flag --token", r.TokenFrom)
		require.Equal(t, "prod", r.Context, "the chosen context is still named")
	})
	t.Run("TopLevel", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.file.CurrentContext = ""
		r := fx.ok(t, clientconf.Input{})
		require.Equal(t, clientconf.Result{Server: "http://127.0.0.1:8080", ServerFrom: "file /c.yaml",
			Token: "legacy-token", TokenFrom: "file /c.yaml", TokenPath: "/c.yaml"}, r)
	})
	t.Run("NothingAtAll", func(t *testing.T) {
		t.Parallel()
		r, err := clientconf.Resolve(t.Context(), clientconf.Input{Getenv: func(string) string { return "" }})
		require.NoError(t, err)
		require.Equal(t, clientconf.Result{}, r)
	})
}

// A token from a context or the top level goes only to that entry's own
// server.
func TestResolveTokenStaysWithItsServer(t *testing.T) {
	t.Parallel()
	t.Run("FlagServerElsewhere", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_TOKEN"] = "env-tok"
		r := fx.ok(t, clientconf.Input{Context: "prod", Server: "http://other:1"})
		require.Empty(t, r.Token, "neither prod's token nor the environment's: prod was chosen whole")
	})
	t.Run("FlagServerSameAsContext", func(t *testing.T) {
		t.Parallel()
		r := setup(t).ok(t, clientconf.Input{Context: "staging", Server: "https://staging.example.com"})
		require.Equal(t, "staging-tok", r.Token, "a trailing / is the same server")
	})
	t.Run("EnvURLElsewhere", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_URL"] = "http://other:1"
		r := fx.ok(t, clientconf.Input{})
		require.Empty(t, r.Token)
		require.Empty(t, r.Context)
	})
	t.Run("EnvURLIsTheCurrentContextsServer", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_URL"] = "https://staging.example.com"
		r := fx.ok(t, clientconf.Input{})
		require.Equal(t, "staging-tok", r.Token)
		require.Equal(t, "context staging (token_env STAGING_TOKEN)", r.TokenFrom)
	})
	t.Run("EnvURLIsTheTopLevelServer", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.env["CAIRN_URL"] = "http://127.0.0.1:8080/"
		r := fx.ok(t, clientconf.Input{})
		require.Equal(t, "legacy-token", r.Token)
	})
	t.Run("UnusedSourceNotRead", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		delete(fx.env, "STAGING_TOKEN")
		r := fx.ok(t, clientconf.Input{Token: "flag-tok"})
		require.Equal(t, "flag-tok", r.Token, "staging's missing variable does not matter")
	})
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	t.Run("UnknownContext", func(t *testing.T) {
		t.Parallel()
		_, err := setup(t).resolve(t, clientconf.Input{Context: "qa"})
		var unknown *clientconf.UnknownContextError
		require.ErrorAs(t, err, &unknown)
		require.Equal(t, "qa", unknown.Name)
		require.EqualError(t, err, `no context "qa" (from flag --context) in config /c.yaml; known: prod, staging, dev`)
	})
	t.Run("UnknownCurrentContext", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		fx.file.CurrentContext = "gone"
		_, err := fx.resolve(t, clientconf.Input{})
		require.ErrorContains(t, err, `no context "gone" (from current-context)`)
	})
	t.Run("NoFile", func(t *testing.T) {
		t.Parallel()
		_, err := clientconf.Resolve(t.Context(), clientconf.Input{File: &clientconf.File{Path: "/c.yaml"}, Context: "qa",
			Getenv: func(string) string { return "" }})
		require.EqualError(t, err, `no context "qa" (from flag --context) in config /c.yaml, which defines none`)
	})
	for name, tc := range map[string]struct {
		yaml, source, want string
	}{
		"FileMissing":     {"token_file: /nonexistent/t", "token_file /nonexistent/t", "no such file"},
		"EnvUnset":        {"token_env: UNSET_TOKEN", "token_env UNSET_TOKEN", "not set or empty"},
		"CommandFails":    {"token_command: [sh, -c, 'echo locked >&2; exit 3']", "token_command sh", "exit status 3: locked"},
		"CommandNotFound": {"token_command: [/nonexistent/pass]", "token_command /nonexistent/pass", "no such file"},
		"CommandSilent":   {"token_command: ['true']", "token_command true", "printed nothing"},
		"CommandFlood":    {"token_command: [sh, -c, 'yes tok']", "token_command sh", "printed more than 64 KiB"},
		"CommandSlow":     {"token_command: [sh, -c, 'sleep 30; echo tok']", "token_command sh", "did not finish within 200ms"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := clientconf.Parse("/c.yaml", []byte("contexts:\n  - name: prod\n    server: http://x:1\n    "+tc.yaml+"\n"))
			require.NoError(t, err)
			start := time.Now()
			_, err = clientconf.Resolve(t.Context(), clientconf.Input{File: f, Context: "prod",
				Getenv: func(string) string { return "" }, CommandTimeout: 200 * time.Millisecond})
			var ce *clientconf.ContextError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "prod", ce.Context)
			require.Equal(t, tc.source, ce.Source)
			require.ErrorContains(t, err, `context "prod": `+tc.source+": ")
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "tok\n")
			require.Less(t, time.Since(start), 5*time.Second, "a slow command is cut at the timeout")
		})
	}
	t.Run("EmptyTokenFile", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "t")
		require.NoError(t, os.WriteFile(path, []byte("\n"), 0o600))
		f := &clientconf.File{Path: "/c.yaml", Contexts: []clientconf.Context{{Name: "prod", Server: "http://x:1", TokenFile: path}}}
		_, err := clientconf.Resolve(t.Context(), clientconf.Input{File: f, Context: "prod", Getenv: func(string) string { return "" }})
		require.ErrorContains(t, err, "is empty")
	})
	t.Run("TopLevelTokenFileMissing", func(t *testing.T) {
		t.Parallel()
		f := &clientconf.File{Path: "/c.yaml", Server: "http://x:1", TokenFile: "/nonexistent/t"}
		_, err := clientconf.Resolve(t.Context(), clientconf.Input{File: f, Getenv: func(string) string { return "" }})
		var ce *clientconf.ContextError
		require.ErrorAs(t, err, &ce)
		require.Empty(t, ce.Context)
		require.ErrorContains(t, err, "config /c.yaml: token_file /nonexistent/t: ")
	})
}

func TestResolveTopLevelTokenFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t")
	require.NoError(t, os.WriteFile(path, []byte("file-tok\n"), 0o600))
	f := &clientconf.File{Path: "/c.yaml", Server: "http://x:1", TokenFile: path}
	r, err := clientconf.Resolve(t.Context(), clientconf.Input{File: f, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	require.Equal(t, "file-tok", r.Token)
	require.Equal(t, "file /c.yaml (token_file)", r.TokenFrom)
	require.Equal(t, path, r.TokenPath)

	f.Token = "literal"
	r, err = clientconf.Resolve(t.Context(), clientconf.Input{File: f, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	require.Equal(t, "literal", r.Token, "a literal token beats token_file")

	r, err = clientconf.Resolve(t.Context(), clientconf.Input{File: f, TokenFile: path, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	require.Equal(t, "file-tok", r.Token)
	require.Equal(t, "flag --token-file (token_file)", r.TokenFrom)
}
