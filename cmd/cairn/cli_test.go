package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

func uniqueName(prefix string) string { return prefix + "-" + strings.ToLower(ulid.Make().String()) }

// The workspace commands through the built binary against the real server:
// -o json is the REST payload, names and IDs both work, and the exit codes
// come from real refusals.
func TestCLIWorkspaces(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	name := uniqueName("ws")

	created := s.json(t, "ws", "create", name, "--description", "first")
	ws := field[cairn.Workspace](t, created, "workspace")
	require.Equal(t, name, ws.Name)
	requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID)["workspace"], created["workspace"])

	for _, arg := range []string{name, ws.ID} {
		requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID), s.json(t, "ws", "get", arg))
	}
	requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces?name="+name), s.json(t, "ws", "list", "--name", name))
	require.Equal(t, ws.ID+"\n", s.ok(t, "ws", "get", name, "-o", "name").stdout)

	table := s.ok(t, "ws", "list", "--name", name, "-o", "table").stdout
	require.Regexp(t, `^NAME +ID +VOLUME +ARTIFACTS +AGE\n`+name[:7]+`.* NONE +0 +now\n$`, table)
	requireFits(t, table, 80)
	get := s.ok(t, "ws", "get", name, "-o", "table").stdout
	require.Contains(t, get, "Description:  first")
	requireFits(t, get, 80)

	var list map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(s.ok(t, "ws", "list", "--name", name).stdout), &list),
		"stdout is no terminal: JSON by default")

	renamed := uniqueName("renamed")
	doc := s.json(t, "ws", "rename", name, renamed)
	require.Equal(t, renamed, field[cairn.Workspace](t, doc, "workspace").Name)
	doc = s.json(t, "ws", "describe", ws.ID, "--clear")
	require.Nil(t, field[cairn.Workspace](t, doc, "workspace").Description)

	require.Equal(t, "{}\n", s.ok(t, "ws", "setup", renamed, "-o", "json").stdout)
	require.Equal(t, "READY", string(field[cairn.Workspace](t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID), "workspace").VolumeState))
	s.fails(t, 4, "ws", "delete", renamed) // volume_exists
	s.ok(t, "ws", "teardown", renamed)
	r := s.ok(t, "ws", "delete", renamed, "-o", "name")
	require.Equal(t, ws.ID+"\n", r.stdout)
	require.Contains(t, r.stderr, "deleted workspace "+renamed)
	quiet := uniqueName("quiet")
	s.ok(t, "ws", "create", quiet)
	require.Empty(t, s.ok(t, "ws", "delete", quiet, "--quiet").stderr, "--quiet silences messages")

	t.Run("ExitCodes", func(t *testing.T) {
		other := uniqueName("other")
		s.ok(t, "ws", "create", other)
		r := s.fails(t, 3, "ws", "get", uniqueName("missing"))
		require.Contains(t, r.stderr, "workspace_not_found")
		s.fails(t, 3, "ws", "get", "00000000-0000-4000-8000-000000000000")
		r = s.fails(t, 4, "ws", "create", other)
		require.Contains(t, r.stderr, "name_taken")
		require.Contains(t, r.stderr, "HTTP 409")
		s.fails(t, 5, "ws", "list", "--token", "wrong")
		reader := s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": cliReadToken}, "ws", "create", uniqueName("x"))
		require.Equal(t, 5, reader.code, reader.stderr)
		require.Contains(t, reader.stderr, "forbidden")
		s.fails(t, 2, "ws", "list", "--bogus")
		s.fails(t, 2, "ws", "get")
		s.fails(t, 2, "ws", "frobnicate")
		s.fails(t, 2, "ws", "describe", other)
		s.fails(t, 2, "ws", "list", "-o", "yaml")
		s.fails(t, 2, "ws", "list", "--state", "HALF")
		s.fails(t, 1, "ws", "create", "not/a/name")
	})
}

// requireFits checks that no line of out is wider than width.
func requireFits(t *testing.T, out string, width int) {
	t.Helper()
	for line := range strings.Lines(out) {
		require.LessOrEqual(t, len([]rune(strings.TrimRight(line, "\n"))), width, "%q", line)
	}
}

func TestCLIArtifacts(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	dir := t.TempDir()
	wsName := uniqueName("arts")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	src, sum := randomFile(t, dir, "report.v1.bin", 1<<20+3)

	up := s.json(t, "art", "upload", wsName, src, "--description", "the report")
	a := field[cairn.Artifact](t, up, "artifact")
	require.Equal(t, "report_v1_bin", a.Name)
	require.Equal(t, sum, *a.SHA256B64)
	requireSameJSON(t, s.rest(t, "GET", "/v1/artifacts/"+a.ID)["artifact"], up["artifact"])
	ref := wsName + "/" + a.Name
	for _, arg := range []string{ref, a.ID} {
		requireSameJSON(t, s.rest(t, "GET", "/v1/artifacts/"+a.ID), s.json(t, "art", "get", arg))
	}
	requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID+"/artifacts?state=RECORDED&state=MISSING_OBJECT"),
		s.json(t, "art", "list", wsName))
	requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID+"/artifacts?state=RECORDED"),
		s.json(t, "art", "list", ws.ID, "--state", "RECORDED"))
	table := s.ok(t, "art", "list", wsName, "-o", "table").stdout
	require.Regexp(t, `NAME +ID +SIZE +STATE +AGE\nreport_v1_bin +`+a.ID+` +1\.0 MiB +RECORDED +now\n`, table)
	requireFits(t, table, 80)
	requireFits(t, s.ok(t, "art", "get", ref, "-o", "table").stdout, 80)

	withURL := s.json(t, "art", "get", ref, "--url", "--ttl", "2m")
	require.Contains(t, field[string](t, withURL, "get_url"), a.ObjectKey)
	urlLine := s.ok(t, "art", "get", ref, "--url", "-o", "table").stdout
	require.Regexp(t, `^http://\S+`+a.ObjectKey+`\S*\n$`, urlLine, "-o table prints only the URL")

	out := filepath.Join(dir, "out.bin")
	down := s.json(t, "art", "download", ref, out)
	require.Equal(t, out, field[string](t, down, "path"))
	require.Equal(t, sum, stacktest.FileSHA256(t, out))
	s.fails(t, 1, "art", "download", ref, out)
	s.ok(t, "art", "download", ref, out, "--overwrite")
	r := s.ok(t, "art", "download", a.ID, dir, "-o", "name")
	require.Equal(t, filepath.Join(dir, a.Name)+"\n", r.stdout, "a directory DEST gets the artifact's name")
	require.Contains(t, r.stderr, "SHA-256 verified")
	cwd := t.TempDir()
	r = s.cliIn(t, cwd, "art", "download", ref, "-o", "name")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, sum, stacktest.FileSHA256(t, filepath.Join(cwd, a.Name)), "no DEST: the name, here")
	piped := s.ok(t, "art", "download", ref, "-", "--ttl", "2m")
	require.Len(t, piped.stdout, int(a.Size), "DEST '-' is stdout")

	next, nextSum := randomFile(t, dir, "v2", 4096)
	require.Equal(t, nextSum, *field[cairn.Artifact](t, s.json(t, "art", "replace", ref, next), "artifact").SHA256B64)
	renamed := field[cairn.Artifact](t, s.json(t, "art", "rename", ref, "report"), "artifact")
	require.Equal(t, "report", renamed.Name)
	described := field[cairn.Artifact](t, s.json(t, "art", "describe", wsName+"/report", "--description", "v2"), "artifact")
	require.Equal(t, "v2", *described.Description)

	t.Run("ExitCodes", func(t *testing.T) {
		s.fails(t, 3, "art", "get", wsName+"/absent")
		s.fails(t, 3, "art", "get", uniqueName("nows")+"/x")
		s.fails(t, 3, "art", "list", uniqueName("nows"))
		s.fails(t, 4, "art", "upload", wsName, next, "--name", "report")
		s.ok(t, "art", "upload", wsName, next, "--name", "other")
		s.fails(t, 4, "art", "rename", wsName+"/report", "other")
		s.ok(t, "art", "rename", wsName+"/report", "report") // renaming to itself is fine
	})
	require.Equal(t, a.ID+"\n", s.ok(t, "art", "delete", wsName+"/report", "-o", "name").stdout)
	s.fails(t, 3, "art", "get", a.ID)
	s.fails(t, 2, "art", "get", "no-slash")
	s.fails(t, 2, "art", "get", wsName+"/x", "--ttl", "5m")
	s.fails(t, 2, "art", "upload", wsName)
	s.fails(t, 2, "art", "download", ref, "--rate-limit", "fast")
	s.fails(t, 2, "art", "download", ref, "-", "--ttl", "0s")
}

// The volume transfers, through sidecars on the real Docker.
func TestCLIVolumeTransfers(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	wsName := uniqueName("vol")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	s.ok(t, "ws", "setup", wsName)
	stacktest.RunInVolume(t, s.app, ws.VolumeName, "printf %s 'volume bytes' > "+cairn.MountPath+"/notes.txt")

	saved := field[cairn.Artifact](t, s.json(t, "art", "save", wsName, cairn.MountPath+"/notes.txt"), "artifact")
	require.Equal(t, "notes_txt", saved.Name)
	require.Equal(t, int64(len("volume bytes")), saved.Size)
	s.fails(t, 4, "art", "save", wsName, cairn.MountPath+"/notes.txt")
	s.fails(t, 1, "art", "save", wsName, cairn.MountPath+"/absent", "--name", "absent") // source_not_found: 400

	s.ok(t, "art", "load", wsName+"/notes_txt", cairn.MountPath+"/copy.txt")
	require.Equal(t, "volume bytes", stacktest.RunInVolume(t, s.app, ws.VolumeName, "cat "+cairn.MountPath+"/copy.txt"))

	stacktest.RunInVolume(t, s.app, ws.VolumeName, "printf %s 'newer' > "+cairn.MountPath+"/notes.txt")
	updated := field[cairn.Artifact](t, s.json(t, "art", "update", saved.ID, cairn.MountPath+"/notes.txt"), "artifact")
	require.Equal(t, int64(5), updated.Size)
	require.NotEqual(t, saved.SHA256B64, updated.SHA256B64)
}

func TestCLISweepAndAudit(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	wsName := uniqueName("swept")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")

	sweep := field[cairn.SweepResult](t, s.json(t, "sweep", "--ws", wsName), "sweep")
	require.Equal(t, ws.ID, sweep.WorkspaceID)
	require.Equal(t, 1, sweep.VolumesExamined)
	full := field[cairn.SweepResult](t, s.json(t, "sweep"), "sweep")
	require.Empty(t, full.WorkspaceID)
	require.Contains(t, s.ok(t, "sweep", "-o", "table").stdout, "Scope:")

	s.ok(t, "ws", "rename", wsName, wsName+"-2")
	requireSameJSON(t, s.rest(t, "GET", "/v1/audit?workspace_id="+ws.ID), s.json(t, "audit", "--ws", ws.ID))
	renames := field[[]cairn.AuditEvent](t, s.json(t, "audit", "--ws", wsName+"-2", "--type", "RENAME_WORKSPACE"), "audit_events")
	require.Len(t, renames, 1)
	require.Equal(t, "admin", *renames[0].Actor)
	table := s.ok(t, "audit", "--ws", ws.ID, "-o", "table").stdout
	require.Regexp(t, `^AGE +TYPE +ACTOR +SUBJECT\nnow +NEW_WORKSPACE +admin +`, table)
	requireFits(t, table, 80)

	s.fails(t, 3, "sweep", "--ws", uniqueName("nows"))
	s.fails(t, 2, "audit", "--type", "NOPE")
	reader := s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": cliReadToken}, "audit")
	require.Equal(t, 5, reader.code, "audit needs admin: %s", reader.stderr)
}

// TestCLIInfo: `cairn info` is GET /v1/info, for any token, in each format.
func TestCLIInfo(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	requireSameJSON(t, s.rest(t, "GET", "/v1/info"), s.json(t, "info"))
	info := field[cairn.Info](t, s.json(t, "info"), "info")
	require.Equal(t, []string{"read", "write", "admin"}, info.Scopes)
	table := s.ok(t, "info", "-o", "table").stdout
	require.Contains(t, table, "Scopes:")
	require.Contains(t, table, "read, write, admin")
	require.Contains(t, table, "Runtime:")
	requireFits(t, table, 100)

	reader := s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": cliReadToken}, "info", "-o", "json")
	require.Zero(t, reader.code, reader.stderr)
	require.Contains(t, reader.stdout, `"scopes": [`)
	require.Contains(t, reader.stdout, `"read"`)
	require.NotContains(t, reader.stdout, `"admin"`, "a read token is told its own scopes")
}

// Where the server and token come from: flag > env > the file cairn dev
// writes; the file's token goes only to the file's server.
func TestCLIConfigPrecedence(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "cairn"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, "cairn", "config.yaml"),
		[]byte("server: "+s.url+"\ntoken: "+cliAdminToken+"\ntui:\n  theme: dark\n"), 0o600))
	closed := closedPort(t)
	run := func(env map[string]string, args ...string) result {
		env["XDG_CONFIG_HOME"] = home
		return s.cliEnv(t, env, args...)
	}

	require.Equal(t, 0, run(map[string]string{}, "ws", "list").code, "the file alone")
	require.Equal(t, 5, run(map[string]string{"CAIRN_TOKEN": "wrong"}, "ws", "list").code, "env beats the file")
	r := run(map[string]string{"CAIRN_TOKEN": "wrong"}, "ws", "list", "--token", cliAdminToken)
	require.Equal(t, 0, r.code, "the flag beats env")
	require.Contains(t, r.stderr, "prefer CAIRN_TOKEN")
	require.Equal(t, 6, run(map[string]string{}, "ws", "list", "--server", closed).code, "the flag beats the file")
	require.Equal(t, 6, run(map[string]string{"CAIRN_URL": closed}, "ws", "list").code, "env beats the file")

	other := startCLIServer(t)
	r = run(map[string]string{"CAIRN_URL": other.url}, "ws", "list")
	require.Equal(t, 5, r.code, "the file's token is not sent to another server: %s", r.stderr)

	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(cliAdminToken+"\n"), 0o600))
	viaFile := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(viaFile, "cairn"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(viaFile, "cairn", "config.yaml"),
		[]byte("server: "+s.url+"\ntoken_file: "+tokenFile+"\n"), 0o644))
	r = s.cliEnv(t, map[string]string{"XDG_CONFIG_HOME": viaFile}, "ws", "list")
	require.Equal(t, 0, r.code, "token_file: %s", r.stderr)
	require.NotContains(t, r.stderr, "readable by others", "the file holds no token itself")
	require.NoError(t, os.WriteFile(filepath.Join(viaFile, "cairn", "config.yaml"),
		[]byte("server: "+s.url+"\ntoken: "+cliAdminToken+"\n"), 0o644))
	r = s.cliEnv(t, map[string]string{"XDG_CONFIG_HOME": viaFile}, "ws", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "holds a token and is readable by others; chmod 600 it")

	r = s.cliEnv(t, map[string]string{}, "ws", "list")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "no server: pass --server, set CAIRN_URL, or run 'cairn dev'")
}

// A stopped server is exit 6, after the idempotent list was retried.
func TestCLIStoppedServer(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	s.ok(t, "ws", "list")
	s.stop(t)
	r := s.fails(t, 6, "ws", "list")
	require.Contains(t, r.stderr, "unreachable")
	s.fails(t, 6, "ws", "create", uniqueName("x"))
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}
