package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/clientconf"
)

// fakeServer records the Authorization header of every request; it lists
// one workspace and answers anything else 404.
type fakeServer struct {
	url   string
	mu    sync.Mutex
	auths []string
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	s := &fakeServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if r.URL.Path == "/v1/workspaces" {
			answer(w, http.StatusOK, map[string]any{"workspaces": []cairn.Workspace{{ID: fakeWorkspaceID, Name: "w"}}})
			return
		}
		refuse(w, http.StatusNotFound, "route_not_found", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// seen returns the Authorization headers received since the last call.
func (s *fakeServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.auths
	s.auths = nil
	return out
}

// contextSetup is two fake servers and a config file with a context for
// each: a (token_file, current) and b (token_env B_TOKEN).
type contextSetup struct {
	a, b      *fakeServer
	path      string
	tokenFile string
}

func setupContexts(t *testing.T) *contextSetup {
	t.Helper()
	cs := &contextSetup{a: newFakeServer(t), b: newFakeServer(t)}
	cs.tokenFile = filepath.Join(t.TempDir(), "a-token")
	require.NoError(t, os.WriteFile(cs.tokenFile, []byte("tok-a\n"), 0o600))
	cs.path = useConfigFile(t, "# mine\ncurrent-context: a\ncontexts:\n"+
		"  - {name: a, server: '"+cs.a.url+"', token_file: '"+cs.tokenFile+"'}\n"+
		"  - {name: b, server: '"+cs.b.url+"', token_env: B_TOKEN}\n"+
		"tui:\n  theme: dark\n")
	t.Setenv("B_TOKEN", "tok-b")
	return cs
}

// useConfigFile writes the client config under a fresh XDG_CONFIG_HOME and
// clears the variables that would override it.
func useConfigFile(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	for _, k := range []string{"CAIRN_URL", "CAIRN_TOKEN", "CAIRN_CONTEXT"} {
		t.Setenv(k, "")
	}
	t.Setenv("XDG_CONFIG_HOME", home)
	path := filepath.Join(home, "cairn", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// runCLI runs the CLI in-process, as main would: stdout, stderr with the
// error line, and the exit code.
func runCLI(t *testing.T, args ...string) fsRun {
	t.Helper()
	var stdout bytes.Buffer
	r := runCLIWith(t, nil, &stdout, args...)
	r.stdout = stdout.String()
	return r
}

func TestCLIContextSelectsServer(t *testing.T) {
	cs := setupContexts(t)
	reaches := func(want *fakeServer, token string, args ...string) {
		t.Helper()
		r := runCLI(t, args...)
		require.NotEqual(t, 2, r.code, "cairn %v: %s", args, r.stderr)
		other := cs.a
		if want == cs.a {
			other = cs.b
		}
		seen := want.seen()
		require.NotEmpty(t, seen, "cairn %v reached the wrong server: %s", args, r.stderr)
		require.Equal(t, "Bearer "+token, seen[0], "cairn %v", args)
		require.Empty(t, other.seen(), "cairn %v", args)
	}
	reaches(cs.a, "tok-a", "ws", "list")
	reaches(cs.b, "tok-b", "ws", "list", "--context", "b")
	reaches(cs.b, "tok-b", "--context", "b", "ws", "list")
	reaches(cs.b, "tok-b", "art", "list", "w", "--context", "b")
	reaches(cs.b, "tok-b", "sweep", "--context", "b")
	reaches(cs.b, "tok-b", "audit", "--context", "b")
	reaches(cs.b, "tok-b", "fs", "ls", "w", "--context", "b")

	t.Setenv("CAIRN_CONTEXT", "b")
	reaches(cs.b, "tok-b", "ws", "list")
	reaches(cs.a, "tok-a", "ws", "list", "--context", "a")
	t.Setenv("CAIRN_URL", cs.a.url)
	t.Setenv("CAIRN_TOKEN", "env-tok")
	reaches(cs.b, "tok-b", "ws", "list") // a chosen context beats CAIRN_URL and CAIRN_TOKEN
	t.Setenv("CAIRN_CONTEXT", "")
	reaches(cs.a, "env-tok", "ws", "list")
	reaches(cs.b, "flag-tok", "ws", "list", "--context", "a", "--server", cs.b.url, "--token", "flag-tok")
}

// --context is a persistent flag of every client command group, so every
// command under them takes it.
func TestCLIContextFlagOnEveryClientCommand(t *testing.T) {
	root := newRootCommand()
	groups := []string{"ws", "art", "sweep", "audit", "events", "shell", "fs"}
	seen := 0
	for _, name := range groups {
		group, _, err := root.Find([]string{name})
		require.NoError(t, err, name)
		require.Equal(t, name, group.Name())
		walk(group, func(c *cobra.Command) {
			seen++
			require.NoError(t, c.ParseFlags([]string{"--context", "x"}), "%s takes no --context", c.CommandPath())
			require.Equal(t, "x", c.Flags().Lookup("context").Value.String())
		})
	}
	require.Greater(t, seen, len(groups), "the groups' sub-commands were walked")
}

func walk(c *cobra.Command, visit func(*cobra.Command)) {
	visit(c)
	for _, sub := range c.Commands() {
		walk(sub, visit)
	}
}

func TestCLIUseContext(t *testing.T) {
	cs := setupContexts(t)
	r := runCLI(t, "config", "use-context", "b")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, `switched to context "b"`)
	data, err := os.ReadFile(cs.path)
	require.NoError(t, err)
	require.Contains(t, string(data), "current-context: b")
	require.Contains(t, string(data), "# mine", "the rest of the file is kept")
	require.Contains(t, string(data), "tui:\n  theme: dark\n")

	require.Equal(t, 0, runCLI(t, "ws", "list").code)
	require.Equal(t, []string{"Bearer tok-b"}, cs.b.seen(), "a plain command goes to the new current context")
	require.Equal(t, "b\n", runCLI(t, "config", "current-context").stdout)

	r = runCLI(t, "config", "use-context", "nope")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `no context "nope"`)
	require.Contains(t, r.stderr, "known: a, b")
	require.Equal(t, 2, runCLI(t, "config", "use-context").code, "NAME is required")

	t.Setenv("CAIRN_CONTEXT", "a")
	r = runCLI(t, "config", "current-context")
	require.Equal(t, "a\n", r.stdout, "CAIRN_CONTEXT is the context in use")
	require.Contains(t, r.stderr, "CAIRN_CONTEXT=a overrides the file's current-context")
}

func TestCLIGetContexts(t *testing.T) {
	cs := setupContexts(t)
	useConfigFile(t, "current-context: b\ncontexts:\n"+
		"  - {name: a, server: '"+cs.a.url+"', token_file: '"+cs.tokenFile+"'}\n"+
		"  - {name: b, server: '"+cs.b.url+"', token_env: B_TOKEN}\n"+
		"  - {name: c, server: 'https://c.example.com', token_command: [pass, show, cairn/c]}\n")
	r := runCLI(t, "config", "get-contexts", "-o", "table")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, lines, 4)
	require.Regexp(t, `^CURRENT +NAME +SERVER +TOKEN SOURCE$`, lines[0])
	require.Regexp(t, `^ +a +`+cs.a.url+` +file /\S+$`, lines[1], "the long path is cut to 80 columns")
	require.Regexp(t, `^\* +b +`+cs.b.url+` +env B_TOKEN$`, lines[2])
	require.Regexp(t, `^ +c +https://c.example.com +command pass show cairn/c$`, lines[3])

	r = runCLI(t, "config", "get-contexts")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		CurrentContext string `json:"current_context"`
		Contexts       []struct {
			Name, Server string
			TokenSource  string `json:"token_source"`
			Current      bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "JSON when stdout is no terminal: %s", r.stdout)
	require.Equal(t, "b", doc.CurrentContext)
	require.Len(t, doc.Contexts, 3)
	require.True(t, doc.Contexts[1].Current)
	require.Equal(t, "env B_TOKEN", doc.Contexts[1].TokenSource)
	require.Equal(t, "file "+cs.tokenFile, doc.Contexts[0].TokenSource)

	require.Equal(t, "a\nb\nc\n", runCLI(t, "config", "get-contexts", "-o", "name").stdout)
	for _, out := range []string{r.stdout, r.stderr, runCLI(t, "config", "get-contexts", "-o", "table").stdout} {
		require.NotContains(t, out, "tok-a", "no token is ever printed")
		require.NotContains(t, out, "tok-b")
	}
	require.Empty(t, cs.a.seen(), "no server is asked")
}

func TestCLIContextErrorsExit2(t *testing.T) {
	for name, tc := range map[string]struct{ source, want string }{
		"MissingTokenFile": {"token_file: /nonexistent/token", `context "x": token_file /nonexistent/token: `},
		"UnsetTokenEnv":    {"token_env: CAIRN_TEST_UNSET_TOKEN", `context "x": token_env CAIRN_TEST_UNSET_TOKEN: not set or empty`},
		"FailingCommand":   {"token_command: [sh, -c, 'echo vault sealed >&2; exit 1']", `context "x": token_command sh: exit status 1: vault sealed`},
		"LiteralToken":     {"token: s3cret", `context "x": a context never holds its token; use token_file, token_env or token_command`},
	} {
		t.Run(name, func(t *testing.T) {
			s := newFakeServer(t)
			useConfigFile(t, "current-context: x\ncontexts:\n  - name: x\n    server: "+s.url+"\n    "+tc.source+"\n")
			t.Setenv("CAIRN_TEST_UNSET_TOKEN", "")
			for _, args := range [][]string{{"ws", "list"}, {"ws", "list", "--context", "x"}} {
				r := runCLI(t, args...)
				require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
				require.Contains(t, r.stderr, tc.want)
				require.NotContains(t, r.stderr, "s3cret")
			}
			require.Empty(t, s.seen(), "nothing was sent")
		})
	}
	t.Run("UnknownContext", func(t *testing.T) {
		setupContexts(t)
		for _, run := range []func() fsRun{
			func() fsRun { return runCLI(t, "ws", "list", "--context", "qa") },
			func() fsRun { t.Setenv("CAIRN_CONTEXT", "qa"); return runCLI(t, "art", "list", "w") },
		} {
			r := run()
			require.Equal(t, 2, r.code, r.stderr)
			require.Contains(t, r.stderr, `no context "qa"`)
			require.Contains(t, r.stderr, "known: a, b")
		}
	})
}

// A context's token file that others can read is warned about, as the
// legacy file's token was.
func TestCLIContextTokenFileShared(t *testing.T) {
	cs := setupContexts(t)
	require.NoError(t, os.Chmod(cs.tokenFile, 0o644))
	r := runCLI(t, "ws", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, cs.tokenFile+" holds a token and is readable by others; chmod 600 it")
}

// 'cairn dev' records its stack as a context named after the state dir,
// made current, keeps the rest of the file, and drops the top-level
// server and token an older 'cairn dev' wrote for this same stack.
func TestDevWritesContext(t *testing.T) {
	s := newFakeServer(t)
	state := filepath.Join(t.TempDir(), "stack-b")
	require.NoError(t, os.MkdirAll(state, 0o700))
	require.NoError(t, os.WriteFile(devTokenPath(state), []byte("dev-tok\n"), 0o600))
	path := useConfigFile(t, "# written by 'cairn dev'\nserver: "+s.url+"\ntoken: dev-tok\ntui:\n  theme: dark\n")

	for range 2 { // a restart updates the same context
		got, name, err := writeClientConfig(s.url, state, "dev-tok")
		require.NoError(t, err)
		require.Equal(t, path, got)
		require.Equal(t, "stack-b", name)
	}
	f, err := clientconf.Read(path)
	require.NoError(t, err)
	require.Equal(t, "stack-b", f.CurrentContext)
	require.Equal(t, []clientconf.Context{{Name: "stack-b", Server: s.url, TokenFile: devTokenPath(state)}}, f.Contexts)
	require.Empty(t, f.Server, "the old top-level server went")
	require.Empty(t, f.Token)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), "tui:\n  theme: dark\n")
	require.NotContains(t, string(data), "dev-tok\n", "the token is in the state dir only")

	require.Equal(t, 0, runCLI(t, "ws", "list").code)
	require.Equal(t, []string{"Bearer dev-tok"}, s.seen(), "a plain command reaches the stack")

	t.Run("KeepsAnotherTopLevel", func(t *testing.T) {
		path := useConfigFile(t, "server: https://prod.example.com\ntoken: prod-tok\n")
		_, _, err := writeClientConfig(s.url, state, "dev-tok")
		require.NoError(t, err)
		f, err := clientconf.Read(path)
		require.NoError(t, err)
		require.Equal(t, "https://prod.example.com", f.Server)
		require.Equal(t, "prod-tok", f.Token)
		require.Equal(t, "stack-b", f.CurrentContext)
	})
	t.Run("NoAuth", func(t *testing.T) {
		path := useConfigFile(t, "")
		_, _, err := writeClientConfig(s.url, state, "")
		require.NoError(t, err)
		f, err := clientconf.Read(path)
		require.NoError(t, err)
		require.Equal(t, []clientconf.Context{{Name: "stack-b", Server: s.url}}, f.Contexts)
	})
}

// A file without contexts works as before: its top-level token goes only
// to its top-level server.
func TestCLILegacyTopLevel(t *testing.T) {
	s, other := newFakeServer(t), newFakeServer(t)
	useConfigFile(t, "server: "+s.url+"\ntoken: file-tok\n")
	require.Equal(t, 0, runCLI(t, "ws", "list").code)
	require.Equal(t, []string{"Bearer file-tok"}, s.seen())
	t.Setenv("CAIRN_URL", other.url)
	require.Equal(t, 0, runCLI(t, "ws", "list").code)
	require.Equal(t, []string{""}, other.seen(), "the file's token is not sent to another server")
	t.Setenv("CAIRN_TOKEN", "env-tok")
	require.Equal(t, 0, runCLI(t, "ws", "list").code)
	require.Equal(t, []string{"Bearer env-tok"}, other.seen())
}
