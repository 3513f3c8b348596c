package clientconf_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/clientconf"
)

const threeContexts = `# my servers
current-context: staging
contexts:
  - name: prod
    server: https://cairn.example.com
    token_command: [pass, show, cairn/prod]
  - name: staging   # the one I use
    server: https://staging.example.com/
    token_env: STAGING_TOKEN
  - name: dev
    server: http://127.0.0.1:44123
    token_file: ~/dev-token
server: http://127.0.0.1:8080
token: legacy-token
tui:
  theme: dark
`

func TestParse(t *testing.T) {
	t.Parallel()
	f, err := clientconf.Parse("/c.yaml", []byte(threeContexts))
	require.NoError(t, err)
	require.Equal(t, "staging", f.CurrentContext)
	require.Equal(t, []string{"prod", "staging", "dev"}, f.Names())
	require.Equal(t, "http://127.0.0.1:8080", f.Server)
	require.Equal(t, "legacy-token", f.Token)
	prod, ok := f.Context("prod")
	require.True(t, ok)
	require.Equal(t, []string{"pass", "show", "cairn/prod"}, prod.TokenCommand)
	require.Equal(t, "command pass show cairn/prod", prod.TokenSource())
	staging, _ := f.Context("staging")
	require.Equal(t, "env STAGING_TOKEN", staging.TokenSource())
	dev, _ := f.Context("dev")
	require.Equal(t, "file ~/dev-token", dev.TokenSource())
	_, ok = f.Context("nope")
	require.False(t, ok)
	require.Equal(t, "none", clientconf.Context{Name: "x"}.TokenSource())

	empty, err := clientconf.Parse("/c.yaml", nil)
	require.NoError(t, err)
	require.Empty(t, empty.Contexts)
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ yaml, want string }{
		"LiteralToken": {"contexts: [{name: prod, server: 'http://x:1', token: s3cret}]",
			`context "prod": a context never holds its token; use token_file, token_env or token_command`},
		"UnknownKey":   {"contexts: [{name: prod, server: 'http://x:1', tokn_file: /t}]", `context "prod": unknown key "tokn_file"`},
		"NoName":       {"contexts: [{server: 'http://x:1'}]", "contexts[0]: want a name"},
		"BadName":      {"contexts: [{name: 'a b', server: 'http://x:1'}]", `context name "a b": want 1 to 64`},
		"LongName":     {"contexts: [{name: " + string(make65()) + ", server: 'http://x:1'}]", "want 1 to 64"},
		"Twice":        {"contexts: [{name: a, server: 'http://x:1'}, {name: a, server: 'http://y:1'}]", `context "a" is defined twice`},
		"NoServer":     {"contexts: [{name: a, token_env: T}]", `context "a": server "": want an http:// or https:// URL`},
		"BadServer":    {"contexts: [{name: a, server: 'ftp://x'}]", `context "a": server "ftp://x"`},
		"TwoSources":   {"contexts: [{name: a, server: 'http://x:1', token_env: T, token_file: /t}]", `context "a": choose one of`},
		"CommandText":  {"contexts: [{name: a, server: 'http://x:1', token_command: 'pass show x'}]", `context "a": token_command: want a list of arguments`},
		"NotAMapping":  {"contexts: [prod]", "contexts[0]: want a mapping"},
		"NestedServer": {"contexts: [{name: a, server: {url: 'http://x:1'}}]", `context "a": server: want a string`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := clientconf.Parse("/c.yaml", []byte(tc.yaml))
			require.ErrorContains(t, err, "config /c.yaml: ")
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "s3cret")
		})
	}
}

func make65() []byte {
	b := make([]byte, 65)
	for i := range b {
		b[i] = 'a'
	}
	return b
}

func TestNames(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "prod", "stack-b", "my_ctx.2", "A1"} {
		require.NoError(t, clientconf.ValidName(ok), ok)
	}
	for _, bad := range []string{"", "a b", "prod/eu", "ü", string(make65())} {
		require.Error(t, clientconf.ValidName(bad), bad)
	}
	for in, want := range map[string]string{
		"stack-b": "stack-b", ".cairn": "cairn", "my stack": "my-stack", "état": "-tat", "/": "dev", "...": "dev",
		string(make65()): string(make65()[:64]),
	} {
		got := clientconf.NameFor(in)
		require.Equal(t, want, got, in)
		require.NoError(t, clientconf.ValidName(got))
	}
}

func TestDefaultPath(t *testing.T) {
	t.Parallel()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	require.Equal(t, "/x/cairn/config.yaml", clientconf.DefaultPath(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"})))
	require.Equal(t, "/h/.config/cairn/config.yaml", clientconf.DefaultPath(env(map[string]string{"HOME": "/h"})))
	require.Empty(t, clientconf.DefaultPath(env(nil)))
}
