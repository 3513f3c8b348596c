package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/volume"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// devStackProcess is one `cairn dev` started by a test.
type devStackProcess struct {
	cmd       *exec.Cmd
	url       string
	stateDir  string
	configDir string
	app       string
	bin       string
	output    *stacktest.SyncBuffer // read while the process writes
	token     string                // the stack's admin token, from the client config it wrote
}

// startDev runs the real binary as `cairn dev` on a free port with its own
// state dir and app name (through -c, which also proves overrides work),
// unless the first override sets the app name itself.
func startDev(t *testing.T, overrides ...string) *devStackProcess {
	t.Helper()
	return startDevWith(t, nil, overrides...)
}

// startDevWith is startDev with more flags of `cairn dev`.
func startDevWith(t *testing.T, flags []string, overrides ...string) *devStackProcess {
	t.Helper()
	stacktest.Docker(t)
	dir, err := binaries()
	require.NoError(t, err)
	port, err := stack.FreePort()
	require.NoError(t, err)
	state, err := os.MkdirTemp("", "cairn-dev-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(state, 0o755))
	d := &devStackProcess{
		url:       "http://127.0.0.1:" + strconv.Itoa(port),
		stateDir:  filepath.Join(state, "stack"),
		configDir: t.TempDir(),
		app:       "cairnd" + strings.ToLower(ulid.Make().String()[18:]),
		bin:       filepath.Join(dir, "cairn"),
		output:    &stacktest.SyncBuffer{},
	}
	override := filepath.Join(state, "override.yaml")
	yaml := strings.Join(overrides, "\n")
	if app, ok := strings.CutPrefix(yaml, "appName: "); ok {
		d.app = strings.TrimSpace(app)
	} else {
		yaml = "appName: " + d.app + "\n" + yaml
	}
	require.NoError(t, os.WriteFile(override, []byte(yaml), 0o644))
	args := append([]string{"dev", "--state-dir", d.stateDir, "--listen", "127.0.0.1:" + strconv.Itoa(port), "-c", override}, flags...)
	d.cmd = exec.Command(d.bin, args...)
	d.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+d.configDir)
	d.cmd.Stdout, d.cmd.Stderr = d.output, d.output
	require.NoError(t, d.cmd.Start())
	t.Cleanup(func() {
		d.stop(t)
		d.purge(t)
		os.RemoveAll(state)
	})
	d.waitReady(t)
	clientCfg, err := os.ReadFile(filepath.Join(d.configDir, "cairn", "config.yaml"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^current-context: \S+$`, string(clientCfg), "cairn dev makes its context current")
	token, err := os.ReadFile(filepath.Join(d.stateDir, "dev-token"))
	require.NoError(t, err, "the context's token_file")
	d.token = strings.TrimSpace(string(token))
	return d
}

func (d *devStackProcess) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(d.url + "/liveness/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if stacktest.Exited(d.cmd.Process) {
			_ = d.cmd.Wait() // reaps it and copies the last of its output
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cairn dev did not become ready; output:\n%s", d.output)
}

// stop sends Ctrl-C and waits for the process to exit.
func (d *devStackProcess) stop(t *testing.T) {
	t.Helper()
	if d.cmd.ProcessState != nil {
		return
	}
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "cairn dev exits cleanly on Ctrl-C; output:\n%s", d.output)
	case <-time.After(45 * time.Second):
		_ = d.cmd.Process.Kill() // the test fails either way; this only frees the port
		t.Fatalf("cairn dev did not stop within 45 s after Ctrl-C")
	}
}

func (d *devStackProcess) purge(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(d.bin, "dev", "purge", "--state-dir", d.stateDir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// call sends one JSON request and decodes the envelope, which must say
// success.
func (d *devStackProcess) call(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	status, env := d.try(t, method, path, body)
	require.Equal(t, true, env["success"], "%s %s: %d %v", method, path, status, env)
	return env
}

// try sends one JSON request and returns the status and the envelope.
func (d *devStackProcess) try(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, d.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env map[string]any
	require.NoError(t, json.Unmarshal(raw, &env), "%s", raw)
	return resp.StatusCode, env
}

// processesUsing lists the PIDs whose command line mentions dir.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir)) {
			pids = append(pids, e.Name()+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return pids
}

func TestDevStacksSideBySide(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no ~/.ssh: each stack makes an SSH key pair
	a, b := startDev(t), startDev(t)
	devWorkbenchOverSSH(t, a)

	// Separate databases: the same name is free in each.
	wsA := a.call(t, "POST", "/v1/workspaces", `{"name":"same"}`)["workspace"].(map[string]any)
	b.call(t, "POST", "/v1/workspaces", `{"name":"same"}`)
	id := wsA["id"].(string)
	require.Equal(t, a.app+"-"+id, wsA["volume_name"], "the -c override's appName is in force")

	a.call(t, "POST", "/v1/workspaces/"+id+"/volume", "")
	cli := stacktest.Docker(t)
	_, err := cli.VolumeInspect(context.Background(), a.app+"-"+id)
	require.NoError(t, err, "the volume exists")

	clientCfg, err := os.ReadFile(filepath.Join(a.configDir, "cairn", "config.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(clientCfg), "server: "+a.url)
	require.Contains(t, a.output.String(), "server     "+a.url)
	metrics := regexp.MustCompile(`metrics    (\S+)`).FindStringSubmatch(a.output.String())
	require.Len(t, metrics, 2, "cairn dev prints its metrics address")
	resp, err := http.Get(metrics[1])
	require.NoError(t, err)
	scrape, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(scrape), `http_request_total{method="POST",status="2XX"}`)

	a.stop(t)
	require.Empty(t, processesUsing(t, a.stateDir), "Ctrl-C stops Postgres and the store too")
	b.call(t, "GET", "/liveness/ready", "")
	anonymous, err := http.Get(b.url + "/v1/workspaces")
	require.NoError(t, err)
	anonymous.Body.Close()
	require.Equal(t, http.StatusUnauthorized, anonymous.StatusCode, "the dev stack requires its token")

	a.purge(t)
	_, err = cli.VolumeInspect(context.Background(), a.app+"-"+id)
	require.Error(t, err, "purge removes the stack's volumes")
	require.NoDirExists(t, a.stateDir)
}

func TestDevRestartKeepsData(t *testing.T) {
	d := startDev(t)
	d.call(t, "POST", "/v1/workspaces", `{"name":"kept"}`)
	d.stop(t)

	again := *d
	again.output = &stacktest.SyncBuffer{}
	again.cmd = exec.Command(d.cmd.Path, d.cmd.Args[1:]...)
	again.cmd.Env, again.cmd.Stdout, again.cmd.Stderr = d.cmd.Env, again.output, again.output
	require.NoError(t, again.cmd.Start())
	t.Cleanup(func() { again.stop(t) })
	again.waitReady(t)
	list := again.call(t, "GET", "/v1/workspaces?name=kept", "")
	require.Len(t, list["workspaces"], 1)
}

// The dev stack runs the maintainer: a volume removed behind cairn's back is
// noticed by the loop, and a pass can be asked for over REST.
func TestDevMaintainer(t *testing.T) {
	d := startDev(t, "maintenance:\n  sweepIntSec: 1")
	ws := d.call(t, "POST", "/v1/workspaces", `{"name":"healed"}`)["workspace"].(map[string]any)
	id := ws["id"].(string)
	d.call(t, "POST", "/v1/workspaces/"+id+"/volume", "")
	cli := stacktest.Docker(t)
	require.NoError(t, cli.VolumeRemove(context.Background(), d.app+"-"+id, true))

	require.Eventually(t, func() bool {
		got := d.call(t, "GET", "/v1/workspaces/"+id, "")["workspace"].(map[string]any)
		return got["volume_state"] == "NONE"
	}, 30*time.Second, 250*time.Millisecond, "the maintainer clears the state of a vanished volume")
	audit := d.call(t, "GET", "/v1/audit?workspace_id="+id+"&type=WORKSPACE_VOLUME_STATE", "")["audit_events"].([]any)
	last := audit[len(audit)-1].(map[string]any)
	require.Equal(t, "maintainer", last["actor"])

	sweep := d.call(t, "POST", "/v1/maintenance/sweep?workspace_id="+id, "")["sweep"].(map[string]any)
	require.Equal(t, id, sweep["workspace_id"])
	require.EqualValues(t, 1, sweep["volumes_examined"])
}

// TestDevPurgeOnlyItsOwn runs two stacks with the same app name on one
// engine, each with a READY workspace holding a file and a container
// mounting it: purging one touches nothing of the other's, nor a volume of
// the app's naming shape that nobody's database names.
func TestDevPurgeOnlyItsOwn(t *testing.T) {
	a, b := startDev(t, "appName: cairn"), startDev(t, "appName: cairn")
	cli := stacktest.Docker(t)
	ctx := context.Background()
	volumeOf := func(d *devStackProcess) (id, volume string) {
		ws := d.call(t, "POST", "/v1/workspaces", `{"name":"kept"}`)["workspace"].(map[string]any)
		id = ws["id"].(string)
		d.call(t, "POST", "/v1/workspaces/"+id+"/volume", "")
		volume = ws["volume_name"].(string)
		stacktest.RunInVolume(t, "purge-test", volume, "echo from-"+d.url[len("http://127.0.0.1:"):]+" > /mnt/cairn/ws/f")
		return id, volume
	}
	_, volA := volumeOf(a)
	idB, volB := volumeOf(b)
	stopA := stacktest.StartMounting(t, "cairn", volA)
	t.Cleanup(stacktest.StartMounting(t, "cairn", volB))

	stray := "cairn-" + uuid.NewString()
	_, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: stray, Labels: map[string]string{"cairn.app": "cairn"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.VolumeRemove(context.Background(), stray, true) })

	instanceOf := func(d *devStackProcess) string {
		b, err := os.ReadFile(filepath.Join(d.stateDir, "instance"))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	leftover := func(d *devStackProcess) string {
		resp, err := cli.ContainerCreate(ctx, &container.Config{Image: stacktest.Shell(t), Cmd: []string{"-c", "true"},
			Labels: map[string]string{"cairn.app": "cairn", "cairn.role": "sidecar", "cairn.instance": instanceOf(d)}},
			nil, nil, nil, "")
		require.NoError(t, err)
		t.Cleanup(func() { _ = cli.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}) })
		return resp.ID
	}
	leftA, leftB := leftover(a), leftover(b)
	require.NotEqual(t, instanceOf(a), instanceOf(b), "the instance is unique per state dir")

	a.stop(t)
	out, err := exec.Command(a.bin, "dev", "purge", "--state-dir", a.stateDir).CombinedOutput()
	require.Error(t, err, "a volume still mounted is left in place: %s", out)
	require.Contains(t, string(out), volA)
	require.DirExists(t, a.stateDir, "kept, so purge can finish later")
	stopA()
	a.purge(t)

	_, err = cli.VolumeInspect(ctx, volA)
	require.Error(t, err, "the purged stack's volume is gone")
	_, err = cli.ContainerInspect(ctx, leftA)
	require.Error(t, err, "the purged stack's leftover container is gone")
	_, err = cli.ContainerInspect(ctx, leftB)
	require.NoError(t, err, "the other stack's container is untouched")
	_, err = cli.VolumeInspect(ctx, stray)
	require.NoError(t, err, "a volume no database names is untouched")
	require.Equal(t, "from-"+b.url[len("http://127.0.0.1:"):], stacktest.RunInVolume(t, "purge-test", volB, "cat /mnt/cairn/ws/f"))
	got := b.call(t, "GET", "/v1/workspaces/"+idB, "")
	require.EqualValues(t, 1, got["mount_count"], "the other stack's container still mounts its volume")
	require.NoDirExists(t, a.stateDir)
}

// TestDevConfigSweepsEveryMinute: the dev stack's maintainer passes every
// 60 s, so a vanished object shows within a minute; a -c file still wins.
func TestDevConfigSweepsEveryMinute(t *testing.T) {
	t.Parallel()
	s3 := &stack.S3{Endpoint: "127.0.0.1:9", Region: "us-east-1"}
	cfg, err := devConfig("127.0.0.1:0", s3, "cairn-dev-test", "")
	require.NoError(t, err)
	require.Equal(t, 60, cfg.Maintenance.SweepIntSec)
	require.Equal(t, int64(5<<40), cfg.Artifact.Store.MaxObjectSize, "artifacts of any size on the local stack")
	require.NoError(t, cfg.Validate())

	overrides := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(overrides, []byte("maintenance: {sweepIntSec: 5}\n"), 0o600))
	cfg, err = devConfig("127.0.0.1:0", s3, "cairn-dev-test", overrides)
	require.NoError(t, err)
	require.Equal(t, 5, cfg.Maintenance.SweepIntSec)
}

// TestDevHA runs `cairn dev --ha`, kills its primary database with SIGKILL
// and promotes the standby by hand: the same server takes writes again and
// still has what it acknowledged before, and purge finds the volumes of
// workspaces made after the failover.
func TestDevHA(t *testing.T) {
	d := startDevWith(t, []string{"--ha"})
	standby := regexp.MustCompile(`standby    127\.0\.0\.1:(\d+), synchronous`).FindStringSubmatch(d.output.String())
	require.Len(t, standby, 2, "cairn dev --ha prints its standby; output:\n%s", d.output)
	before := d.call(t, "POST", "/v1/workspaces", `{"name":"before"}`)["workspace"].(map[string]any)

	// The postmaster names itself on the first line of postmaster.pid (a
	// backend just forked carries the same command line for a moment).
	pidFile, err := os.ReadFile(filepath.Join(d.stateDir, devPostgresDir, "pgdata", "postmaster.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pidFile), "\n", 2)[0]))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	password, err := os.ReadFile(filepath.Join(d.stateDir, devPostgresDir, "pg-password"))
	require.NoError(t, err)
	conn, err := pgx.Connect(t.Context(), fmt.Sprintf("postgres://cairn:%s@127.0.0.1:%s/postgres?sslmode=disable",
		strings.TrimSpace(string(password)), standby[1]))
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), "SELECT pg_promote()")
	require.NoError(t, err)
	require.NoError(t, conn.Close(t.Context()))

	var after map[string]any
	require.Eventually(t, func() bool {
		status, env := d.try(t, "POST", "/v1/workspaces", `{"name":"after"}`)
		if status == http.StatusOK {
			after = env["workspace"].(map[string]any)
			return true
		}
		require.Equal(t, http.StatusServiceUnavailable, status, "while the primary is gone: %v", env)
		return false
	}, 30*time.Second, 100*time.Millisecond, "the server takes writes on the promoted standby")
	require.Equal(t, "before", d.call(t, "GET", "/v1/workspaces/"+before["id"].(string), "")["workspace"].(map[string]any)["name"])
	id := after["id"].(string)
	d.call(t, "POST", "/v1/workspaces/"+id+"/volume", "")

	d.stop(t)
	require.Contains(t, d.purge(t), d.app+"-"+id, "purge reads the promoted standby")
}
