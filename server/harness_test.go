package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

// testConfig is a loopback server config over the shared test services: a
// fresh database, bucket and app name; MCP on.
func testConfig(t *testing.T) (server.Config, server.Secrets) {
	t.Helper()
	pg := stacktest.Postgres(t)
	dsn := stacktest.Database(t)
	cfg, secrets := configOn(t, pg)
	cfg.Persistence.SQL.App.DB = dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	return cfg, secrets
}

// configOn is testConfig on a Postgres of the test's own (its database
// "cairn", migrated at Open).
func configOn(t *testing.T, pg *stack.Postgres) (server.Config, server.Secrets) {
	t.Helper()
	store := stacktest.S3(t)
	cfg := server.DefaultConfig()
	cfg.AppName = stacktest.AppName(t)
	cfg.Persistence.SQL.App.Host, cfg.Persistence.SQL.App.Port = pg.Host, pg.Port
	cfg.Persistence.SQL.App.User, cfg.Persistence.SQL.App.DB = pg.User, pg.Database
	cfg.API.Service.ListenOn, cfg.API.Service.AppPort = "127.0.0.1", 0
	cfg.Metrics.Service.ListenOn, cfg.Metrics.Service.AppPort = "127.0.0.1", 0
	cfg.Artifact.S3.Endpoint, cfg.Artifact.S3.UseTLS, cfg.Artifact.S3.Region = store.Endpoint, false, "us-east-1"
	cfg.Artifact.Store.Bucket = stacktest.Bucket(t)
	cfg.Artifact.Sidecar.Image = stacktest.Image(t)
	cfg.Artifact.Sidecar.NetworkMode = "host"
	cfg.API.APIs.MCP.Enable = true
	return cfg, server.Secrets{SQLPassword: pg.Password, S3AccessKey: store.AccessKey, S3SecretKey: store.SecretKey}
}

// startServer opens and serves cfg (schema applied) until the test ends.
func startServer(t *testing.T, cfg server.Config, secrets server.Secrets, log *slog.Logger) *server.Server {
	t.Helper()
	require.NoError(t, cfg.Validate())
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg, secrets, server.Options{Migrate: true, Logger: log})
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		srv.Close()
	})
	return srv
}

// call sends one request and returns the status and body.
func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
