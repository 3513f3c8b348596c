package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/migrations"
)

func TestMain(m *testing.M) {
	stacktest.Main(m, func() {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
	})
}

// binDir is where binaries built them, removed when the tests end.
var binDir string

// execute runs the root command in-process with args and the given
// environment overrides, returning its output and error.
func execute(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// noSecrets clears the environment variables that would fill the flags.
var noSecrets = map[string]string{
	"CAIRN_APP_SQL_PASSWORD": "", "CAIRN_S3_ACCESS_KEY": "", "CAIRN_S3_SECRET_KEY": "", "CAIRN_CONFIG_FILE": "",
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	return p
}

const minimalConfig = "artifact:\n  s3:\n    endpoint: 127.0.0.1:9000\n  store:\n    bucket: b\n"

func TestVersion(t *testing.T) {
	out, err := execute(t, nil, "version")
	require.NoError(t, err)
	require.Equal(t, "cairn dev\n", out)
}

func TestServerRefusesBadStart(t *testing.T) {
	t.Run("ErrNoConfigFile", func(t *testing.T) {
		_, err := execute(t, noSecrets, "server")
		require.ErrorContains(t, err, "-c FILE")
	})
	t.Run("ErrInvalidConfigNamesTheKey", func(t *testing.T) {
		cfg := writeConfig(t, minimalConfig+"appName: -bad\nmaintenance:\n  sweepIntSec: 0\n")
		_, err := execute(t, noSecrets, "server", "-c", cfg, "--sql-pw", "x")
		require.ErrorContains(t, err, "appName")
		require.ErrorContains(t, err, "maintenance.sweepIntSec")
	})
	t.Run("ErrUnknownKey", func(t *testing.T) {
		cfg := writeConfig(t, minimalConfig+"api:\n  servce: {}\n")
		_, err := execute(t, noSecrets, "svr", "-c", cfg)
		require.ErrorContains(t, err, `"api.servce"`)
	})
	t.Run("ErrMissingSecretsNamed", func(t *testing.T) {
		cfg := writeConfig(t, minimalConfig)
		_, err := execute(t, noSecrets, "server", "-c", cfg)
		require.ErrorContains(t, err, "--sql-pw (CAIRN_APP_SQL_PASSWORD)")
		require.ErrorContains(t, err, "--s3-access-key")
		require.ErrorContains(t, err, "--s3-secret-key")
	})
	t.Run("ErrBadLogLevel", func(t *testing.T) {
		_, err := execute(t, noSecrets, "server", "-l", "loud")
		require.ErrorContains(t, err, "--log-level")
	})
}

func TestMigrateCommand(t *testing.T) {
	pg := stacktest.Postgres(t)
	ctx := context.Background()
	db := "migcmd"
	require.NoError(t, pg.CreateDatabase(ctx, db, ""))
	t.Cleanup(func() {
		if err := pg.DropDatabase(context.Background(), db); err != nil {
			t.Errorf("drop database %s: %v", db, err)
		}
	})
	cfg := writeConfig(t, minimalConfig+"persistence:\n  sql:\n    app:\n      host: 127.0.0.1\n      port: "+
		strconv.Itoa(pg.Port)+"\n      db: "+db+"\n      user: "+pg.User+"\n")

	for range 2 {
		out, err := execute(t, map[string]string{"CAIRN_APP_SQL_PASSWORD": pg.Password}, "migrate", "-c", cfg)
		require.NoError(t, err)
		files, err := fs.Glob(migrations.FS, "*.sql")
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("schema at version %d\n", len(files)), out, "idempotent")
	}
	_, err := execute(t, map[string]string{"CAIRN_APP_SQL_PASSWORD": "wrong"}, "migrate", "-c", cfg)
	require.Error(t, err)
	require.NotContains(t, err.Error(), pg.Password)
}

// binaries builds cairn and cairn-sidecar side by side, once.
var binaries = sync.OnceValues(func() (string, error) {
	root, err := stack.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "cairn-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/cairn", "./cmd/cairn-sidecar")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", &buildError{string(out)}
	}
	return dir, nil
})

type buildError struct{ out string }

func (e *buildError) Error() string { return "go build: " + strings.TrimSpace(e.out) }
