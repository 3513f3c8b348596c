// Package stacktest gives integration tests cairn's real services, started
// once per test binary through package stack (the code `cairn dev` uses)
// and torn down by Main. Each test gets its own slice: a fresh migrated
// database, a unique app name whose volumes and containers are removed in
// t.Cleanup. Under CI=true a missing service fails the test; elsewhere it
// skips with the reason.
package stacktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server/postgres"
)

// Images the tests build and run. The shell image (busybox) stands in for an
// agent's tool container.
const (
	SidecarImage = "cairn-sidecar:latest"
	ShellImage   = "cairn-shell:test"
)

const templateDatabase = "cairn_template"

// lazy starts one service the first time a test asks for it.
type lazy[T any] struct {
	once sync.Once
	val  T
	err  error
}

// get starts the service on first use; with a nil start it only reports
// what an earlier call started (nothing, if none did).
func (l *lazy[T]) get(start func() (T, error)) (T, error) {
	l.once.Do(func() {
		if start != nil {
			l.val, l.err = start()
		}
	})
	return l.val, l.err
}

// services are shared by every test of one test binary. A test harness is
// the one place where process-wide state is the point.
var services struct {
	dir      lazy[string]
	postgres lazy[*stack.Postgres]
	docker   lazy[*client.Client]
	image    lazy[string]
	shell    lazy[string]
	s3       lazy[*stack.S3]
}

// Main runs the tests, then stops every service that was started and runs
// the package's own cleanups.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if pg, err := services.postgres.get(nil); err == nil && pg != nil {
		pg.Stop()
	}
	if s3, err := services.s3.get(nil); err == nil && s3 != nil {
		s3.Stop()
	}
	if dir, err := services.dir.get(nil); err == nil && dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Need fails (CI) or skips (elsewhere) a test whose service is missing.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true: %v", what, err)
	}
	t.Skipf("%s is not available (set CI=true to fail instead): %v", what, err)
}

// stateDir is this binary's scratch directory, traversable by the postgres
// user (t.TempDir's parents are not).
func stateDir() (string, error) {
	return services.dir.get(func() (string, error) {
		dir, err := os.MkdirTemp("", "cairn-test-")
		if err != nil {
			return "", err
		}
		return dir, os.Chmod(dir, 0o755)
	})
}

func startPostgres() (*stack.Postgres, error) {
	dir, err := stateDir()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := stack.StartPostgres(ctx, filepath.Join(dir, "pg"), nil, stack.WithoutFsync())
	if err != nil {
		return nil, err
	}
	if err := pg.CreateDatabase(ctx, templateDatabase, ""); err != nil {
		pg.Stop()
		return nil, err
	}
	if _, err := postgres.Migrate(ctx, pg.DSN(templateDatabase)); err != nil {
		pg.Stop()
		return nil, fmt.Errorf("migrate the template database: %w", err)
	}
	return pg, nil
}

// Postgres returns the shared cluster.
func Postgres(t testing.TB) *stack.Postgres {
	t.Helper()
	pg, err := services.postgres.get(startPostgres)
	Need(t, "PostgreSQL", err)
	return pg
}

// Database returns the URL of a fresh database holding the migrated cairn
// schema, dropped when the test ends.
func Database(t testing.TB) string {
	t.Helper()
	pg := Postgres(t)
	name := "t_" + strings.ToLower(ulid.Make().String())
	ctx := context.Background()
	if err := pg.CreateDatabase(ctx, name, templateDatabase); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.DropDatabase(context.Background(), name); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return pg.DSN(name)
}

// Docker returns a client of the engine.
func Docker(t testing.TB) *client.Client {
	t.Helper()
	cli, err := services.docker.get(func() (*client.Client, error) {
		return stack.DockerClient(context.Background())
	})
	Need(t, "Docker Engine", err)
	return cli
}

// Image builds the sidecar image from the current source, once per test
// binary (EnsureImage skips an up-to-date image), and returns its tag.
func Image(t testing.TB) string {
	t.Helper()
	cli := Docker(t)
	tag, err := services.image.get(func() (string, error) {
		return SidecarImage, buildSidecarImage(cli)
	})
	if err != nil {
		t.Fatalf("build the sidecar image: %v", err)
	}
	return tag
}

// Shell builds the busybox shell image once per test binary and returns its
// tag; its entrypoint is /bin/sh.
func Shell(t testing.TB) string {
	t.Helper()
	cli := Docker(t)
	tag, err := services.shell.get(func() (string, error) {
		files, err := stack.ShellImage()
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		return ShellImage, stack.EnsureImage(ctx, cli, ShellImage, files)
	})
	if err != nil {
		t.Fatalf("build the shell image: %v", err)
	}
	return tag
}

func buildSidecarImage(cli *client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := stack.ModuleRoot()
	if err != nil {
		return err
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "cairn-sidecar")
	if err := stack.BuildSidecarBinary(ctx, root, bin); err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	return stack.EnsureImage(ctx, cli, SidecarImage, stack.SidecarImage(binary))
}

// AppName returns an app name unique to the test. Everything labelled with
// it (volumes, containers) is removed when the test ends.
func AppName(t testing.TB) string {
	t.Helper()
	cli := Docker(t)
	app := "cairnt" + strings.ToLower(ulid.Make().String()[16:])
	t.Cleanup(func() { RemoveApp(t, cli, app) })
	return app
}

// RemoveApp force-removes the containers and volumes of app.
// removeContainer force-removes a container and waits until it is gone: a
// container started with auto-remove may be on its way out already, and
// its volume stays in use until it is.
func removeContainer(t testing.TB, cli *client.Client, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gone, errs := cli.ContainerWait(ctx, id, container.WaitConditionRemoved)
	err := cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "already in progress") {
		t.Errorf("remove container %s: %v", id, err)
		return
	}
	select {
	case <-gone:
	case err := <-errs:
		if !cerrdefs.IsNotFound(err) {
			t.Errorf("wait for container %s to go: %v", id, err)
		}
	}
}

func RemoveApp(t testing.TB, cli *client.Client, app string) {
	ctx := context.Background()
	label := filters.NewArgs(filters.Arg("label", "cairn.app="+app))
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: label})
	if err != nil {
		t.Errorf("list containers of %s: %v", app, err)
	}
	for _, c := range list {
		removeContainer(t, cli, c.ID)
	}
	vols, err := cli.VolumeList(ctx, volumeListOptions(app))
	if err != nil {
		t.Errorf("list volumes of %s: %v", app, err)
	}
	for _, v := range vols.Volumes {
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil {
			t.Errorf("remove volume %s: %v", v.Name, err)
		}
	}
}
