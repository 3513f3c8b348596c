package stack

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// requireService skips the test when a service or binary it needs is missing,
// except under CI=true, where that is a failure.
func requireService(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(err)
	}
	t.Skip(err) // outside CI only

}

// postgresDir returns a fresh directory that user postgres can reach: a
// t.TempDir() and its parent are 0700.
func postgresDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	_, err := postgresBinDir()
	requireService(t, err)
	ctx := t.Context()
	dir := postgresDir(t)

	began := time.Now()
	pg, err := StartPostgres(ctx, dir, t.Output(), WithoutFsync())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Stop() })
	t.Logf("initdb and start: %s", time.Since(began))

	fi, err := os.Stat(filepath.Join(dir, pgPassFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	conn, err := pgx.Connect(ctx, pg.DSN(pg.Database))
	require.NoError(t, err)
	var one int
	require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	require.Equal(t, 1, one)
	var fsync string
	require.NoError(t, conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync))
	require.Equal(t, "off", fsync)
	_, err = conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('survives')")
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	t.Run("CloneFromTemplate", func(t *testing.T) {
		require.NoError(t, pg.CreateDatabase(ctx, "tmpl", ""))
		tmpl, err := pgx.Connect(ctx, pg.DSN("tmpl"))
		require.NoError(t, err)
		_, err = tmpl.Exec(ctx, "CREATE TABLE migrated (id int)")
		require.NoError(t, err)
		require.NoError(t, tmpl.Close(ctx))

		require.NoError(t, pg.CreateDatabase(ctx, "clone", "tmpl"))
		require.Error(t, pg.CreateDatabase(ctx, "clone", "tmpl"), "a second create of the same name")
		clone, err := pgx.Connect(ctx, pg.DSN("clone"))
		require.NoError(t, err)
		var n int
		require.NoError(t, clone.QueryRow(ctx, "SELECT count(*) FROM migrated").Scan(&n))
		require.Equal(t, 0, n)
		// Left open on purpose: DropDatabase closes it.
		require.NoError(t, pg.DropDatabase(ctx, "clone"))
		require.NoError(t, pg.DropDatabase(ctx, "clone"), "idempotent")
		_, err = pgx.Connect(ctx, pg.DSN("clone"))
		require.Error(t, err)
	})

	t.Run("RestartKeepsData", func(t *testing.T) {
		port, password := pg.Port, pg.Password
		require.NoError(t, pg.Stop())
		require.NoError(t, pg.Stop(), "idempotent")

		began := time.Now()
		again, err := StartPostgres(ctx, dir, t.Output(), WithoutFsync())
		require.NoError(t, err)
		t.Cleanup(func() { _ = again.Stop() })
		t.Logf("restart: %s", time.Since(began))
		require.Equal(t, port, again.Port)
		require.Equal(t, password, again.Password)

		conn, err := pgx.Connect(ctx, again.DSN(again.Database))
		require.NoError(t, err)
		defer conn.Close(ctx)
		var v string
		require.NoError(t, conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v))
		require.Equal(t, "survives", v)

		// A crash leaves postmaster.pid behind; the next start recovers.
		again.proc.kill()
		recovered, err := StartPostgres(ctx, dir, t.Output(), WithoutFsync())
		require.NoError(t, err)
		t.Cleanup(func() { _ = recovered.Stop() })
		conn2, err := pgx.Connect(ctx, recovered.DSN(recovered.Database))
		require.NoError(t, err)
		defer conn2.Close(ctx)
		require.NoError(t, conn2.QueryRow(ctx, "SELECT v FROM kept").Scan(&v))
		require.Equal(t, "survives", v)
	})
}

func TestStartPostgres_ErrUntraversableParent(t *testing.T) {
	t.Parallel()
	_, err := postgresBinDir()
	requireService(t, err)
	parent := t.TempDir() // 0700, like its own parent
	_, err = StartPostgres(t.Context(), filepath.Join(parent, "pg"), io.Discard)
	require.ErrorContains(t, err, "cannot traverse")
}

// TestS3 starts, restarts, kills and starts again each kind of store the
// stack runs, keeping its keys, port and objects throughout.
func TestS3(t *testing.T) {
	for _, kind := range StoreKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			bin, err := FindStore(kind)
			requireService(t, err)
			testStore(t, bin)
		})
	}
}

func testStore(t *testing.T, bin StoreBinary) {
	ctx := t.Context()
	dir := t.TempDir()

	began := time.Now()
	s, err := StartS3(ctx, bin, dir, t.Output())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	t.Logf("%s start: %s", bin.Kind, time.Since(began))
	require.Equal(t, "us-east-1", s.Region)
	require.Equal(t, bin.Kind, s.Kind)

	require.NoError(t, s.CreateBucket(ctx, "cairn-test"))
	require.NoError(t, s.CreateBucket(ctx, "cairn-test"), "idempotent")

	cl := s.Client()
	_, err = cl.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("cairn-test"),
		Key:    aws.String("dir/hello.txt"),
		Body:   strings.NewReader("hello, store"),
	})
	require.NoError(t, err)
	requireObject(t, cl, "hello, store")

	t.Run("Restart", func(t *testing.T) {
		began := time.Now()
		require.NoError(t, s.Restart(ctx))
		t.Logf("%s restart: %s", bin.Kind, time.Since(began))
		requireObject(t, cl, "hello, store")
	})

	t.Run("KillThenRestart", func(t *testing.T) {
		s.Kill()
		_, err := s.Client(func(o *s3.Options) { o.RetryMaxAttempts = 1 }).
			ListBuckets(ctx, &s3.ListBucketsInput{})
		require.Error(t, err, "the store is down")
		require.NoError(t, s.Restart(ctx))
		requireObject(t, cl, "hello, store")
	})

	t.Run("StartAgainInSameDir", func(t *testing.T) {
		require.NoError(t, s.Stop())
		require.NoError(t, s.Stop(), "idempotent")
		again, err := StartS3(ctx, bin, dir, t.Output())
		require.NoError(t, err)
		t.Cleanup(func() { _ = again.Stop() })
		require.Equal(t, s.Endpoint, again.Endpoint)
		require.Equal(t, s.AccessKey, again.AccessKey)
		require.Equal(t, s.SecretKey, again.SecretKey)
		requireObject(t, again.Client(), "hello, store")
	})
}

func requireObject(t *testing.T, cl *s3.Client, want string) {
	t.Helper()
	out, err := cl.GetObject(t.Context(), &s3.GetObjectInput{
		Bucket: aws.String("cairn-test"),
		Key:    aws.String("dir/hello.txt"),
	})
	require.NoError(t, err)
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

func TestFindStore_ErrSaysHowToInstall(t *testing.T) {
	t.Setenv("CAIRN_VERSITYGW", filepath.Join(t.TempDir(), "nope"))
	t.Setenv("CAIRN_WEED", filepath.Join(t.TempDir(), "nope"))
	for kind, env := range map[string]string{StoreVersitygw: "CAIRN_VERSITYGW", StoreSeaweedFS: "CAIRN_WEED"} {
		_, err := FindStore(kind)
		require.ErrorContains(t, err, env)
	}
	_, err := FindStore("minio")
	require.ErrorContains(t, err, "not a store kind")
}

func TestDockerClient_ErrSaysHowToStart(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	_, err := DockerClient(t.Context())
	require.ErrorContains(t, err, "make deps")
}

func TestImages(t *testing.T) {
	t.Parallel()
	cli, err := DockerClient(t.Context())
	requireService(t, err)
	t.Cleanup(func() { cli.Close() })

	t.Run("SidecarLike", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		bin := buildHello(t)
		tag := testTag(t, cli, "sidecar")

		began := time.Now()
		built, err := ensureImage(ctx, cli, tag, SidecarImage(bin))
		require.NoError(t, err)
		require.True(t, built)
		t.Logf("sidecar-like image build: %s", time.Since(began))
		first, err := cli.ImageInspect(ctx, tag)
		require.NoError(t, err)

		built, err = ensureImage(ctx, cli, tag, SidecarImage(bin))
		require.NoError(t, err)
		require.False(t, built, "an unchanged context is not rebuilt")
		second, err := cli.ImageInspect(ctx, tag)
		require.NoError(t, err)
		require.Equal(t, first.ID, second.ID)

		changed := SidecarImage(bin)
		changed["extra"] = []byte("a new file")
		built, err = ensureImage(ctx, cli, tag, changed)
		require.NoError(t, err)
		require.True(t, built, "a changed context is rebuilt")
		third, err := cli.ImageInspect(ctx, tag)
		require.NoError(t, err)
		require.NotEqual(t, first.ID, third.ID)
		_, err = cli.ImageInspect(ctx, first.ID)
		require.True(t, cerrdefs.IsNotFound(err), "the replaced image is removed: %v", err)

		require.Equal(t, "hello from a sidecar\n", runContainer(t, cli, tag, nil))
	})

	t.Run("Shell", func(t *testing.T) {
		t.Parallel()
		files, err := ShellImage()
		requireService(t, err)
		tag := testTag(t, cli, "shell")
		began := time.Now()
		require.NoError(t, EnsureImage(t.Context(), cli, tag, files))
		t.Logf("shell image build: %s", time.Since(began))
		require.Contains(t, strings.Fields(runContainer(t, cli, tag, []string{"-c", "ls /"})), "bin")
	})

	t.Run("ErrBuildStep", func(t *testing.T) {
		t.Parallel()
		tag := testTag(t, cli, "broken")
		err := EnsureImage(t.Context(), cli, tag, map[string][]byte{
			"Dockerfile": []byte("FROM scratch\nCOPY missing /missing\n"),
		})
		require.ErrorContains(t, err, "missing")
	})

	t.Run("ErrNoDockerfile", func(t *testing.T) {
		t.Parallel()
		err := EnsureImage(t.Context(), cli, "cairn-stack-test/none:x", map[string][]byte{"a": nil})
		require.ErrorContains(t, err, "no Dockerfile")
	})
}

// buildHello builds a static program printing one line, standing in for the
// sidecar binary.
func buildHello(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(
		"package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from a sidecar\") }\n"), 0o644))
	out := filepath.Join(dir, "hello")
	require.NoError(t, goBuildStatic(t.Context(), dir, ".", out))
	require.NoError(t, requireStatic(out))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	return b
}

// testTag returns an image tag unique to this test and removes its image at
// cleanup.
func testTag(t *testing.T, cli *client.Client, name string) string {
	t.Helper()
	tag := "cairn-stack-test/" + name + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = cli.ImageRemove(ctx, tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	return tag
}

// runContainer runs img with cmd to completion, requires exit status 0 and
// returns its standard output. The container is removed at cleanup.
func runContainer(t *testing.T, cli *client.Client, img string, cmd []string) string {
	t.Helper()
	ctx := t.Context()
	created, err := cli.ContainerCreate(ctx,
		&container.Config{Image: img, Cmd: cmd, Labels: map[string]string{"cairn.test": t.Name()}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cli.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true})
	})
	require.NoError(t, cli.ContainerStart(ctx, created.ID, container.StartOptions{}))
	waitCh, errCh := cli.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
	var status int64
	select {
	case w := <-waitCh:
		status = w.StatusCode
	case err := <-errCh:
		require.NoError(t, err)
	}
	logs, err := cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	require.NoError(t, err)
	defer logs.Close()
	var stdout, stderr bytes.Buffer
	_, err = stdcopy.StdCopy(&stdout, &stderr, logs)
	require.NoError(t, err)
	require.Zero(t, status, "exit status; stderr: %s", stderr.String())
	return stdout.String()
}

func TestBuildSidecarBinary(t *testing.T) {
	t.Parallel()
	root, err := ModuleRoot()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "cairn-sidecar")
	require.NoError(t, BuildSidecarBinary(t.Context(), root, out))
	require.NoError(t, requireStatic(out))
}

func TestBuildContext(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"Dockerfile": []byte("FROM scratch\n"),
		"bin":        []byte("\x7fELF rest"),
		"script":     []byte("#!/bin/sh\n"),
	}
	a, b := buildContext(files), buildContext(files)
	require.Equal(t, a, b, "the same files give the same bytes")

	modes := map[string]int64{}
	tr := tar.NewReader(bytes.NewReader(a))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		modes[hdr.Name] = hdr.Mode
	}
	require.Equal(t, map[string]int64{"Dockerfile": 0o644, "bin": 0o755, "script": 0o755}, modes)
}

func TestModuleRoot(t *testing.T) {
	t.Parallel()
	root, err := ModuleRoot()
	require.NoError(t, err)
	require.True(t, isCairnModule(filepath.Join(root, "go.mod")))
}

// TestFreePort and TestChoosePort are not parallel: a port another test takes
// in between would fail them.
func TestFreePort(t *testing.T) {
	p, err := FreePort()
	require.NoError(t, err)
	require.True(t, portFree(p))
}

func TestChoosePort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "port")
	p, err := choosePort(path)
	require.NoError(t, err)
	again, err := choosePort(path)
	require.NoError(t, err)
	require.Equal(t, p, again, "a free recorded port is reused")
}

func TestReadOrCreateSecret(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret")
	s, err := readOrCreateSecret(path, 16)
	require.NoError(t, err)
	require.Len(t, s, 32)
	again, err := readOrCreateSecret(path, 16)
	require.NoError(t, err)
	require.Equal(t, s, again)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestRequireStatic_ErrDynamic(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, requireStatic("/bin/ls"), "dynamically linked") // Debian's ls uses libc
}
