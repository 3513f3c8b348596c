package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

// eventsServer runs a real server in this process on a fresh database and
// returns its base URL.
func eventsServer(t *testing.T, tokens ...server.TokenConfig) string {
	t.Helper()
	srv := inProcessServer(t, func(cfg *server.Config) { cfg.Auth.Tokens = tokens })
	return "http://" + srv.APIAddr()
}

// inProcessServer runs a real server in this process on a fresh database,
// the store and the sidecar image of the stack, with edit applied to its
// config; it is stopped when the test ends.
func inProcessServer(t *testing.T, edit func(*server.Config)) *server.Server {
	t.Helper()
	pg, gw, dsn := stacktest.Postgres(t), stacktest.S3(t), stacktest.Database(t)
	cfg := server.DefaultConfig()
	cfg.AppName = stacktest.AppName(t)
	cfg.Persistence.SQL.App.Host, cfg.Persistence.SQL.App.Port = pg.Host, pg.Port
	cfg.Persistence.SQL.App.User = pg.User
	cfg.Persistence.SQL.App.DB = dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	cfg.API.Service.ListenOn, cfg.API.Service.AppPort = "127.0.0.1", 0
	cfg.Metrics.Service.ListenOn, cfg.Metrics.Service.AppPort = "127.0.0.1", 0
	cfg.Artifact.S3.Endpoint, cfg.Artifact.S3.UseTLS, cfg.Artifact.S3.Region = gw.Endpoint, false, gw.Region
	cfg.Artifact.Store.Bucket = stacktest.Bucket(t)
	cfg.Artifact.Sidecar.Image = stacktest.Image(t)
	edit(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg, server.Secrets{SQLPassword: pg.Password, S3AccessKey: gw.AccessKey,
		S3SecretKey: gw.SecretKey}, server.Options{})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-served)
		srv.Close()
	})
	return srv
}

// runEvents runs `cairn events args…` in-process until stop interrupts it
// or it ends by itself (done); lines yields its stdout a line at a time.
func runEvents(t *testing.T, args ...string) (lines *bufio.Scanner, stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	cmd := newRootCommand()
	cmd.SetOut(w)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(append([]string{"events"}, args...))
	ended := make(chan error, 1)
	result := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		w.Close() //nolint:errcheck // a pipe writer's Close never fails
		ended <- err
		result <- err
	}()
	stop = func() error {
		cancel()
		go io.Copy(io.Discard, out) //nolint:errcheck // drain whatever is still written
		return <-result
	}
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, out) //nolint:errcheck // drain whatever is still written
	})
	return bufio.NewScanner(out), stop, ended
}

// nextLine reads one NDJSON line as an event, failing on anything else.
func nextLine(t *testing.T, lines *bufio.Scanner) cairn.Event {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- lines.Scan() }()
	select {
	case ok := <-got:
		require.True(t, ok, "the command ended: %v", lines.Err())
	case <-time.After(time.Minute):
		t.Fatal("no line within a minute")
	}
	var ev cairn.Event
	require.NoError(t, json.Unmarshal(lines.Bytes(), &ev), lines.Text())
	return ev
}

func TestEventsCommand(t *testing.T) {
	t.Parallel()
	base := eventsServer(t)
	ctx := context.Background()
	cl, err := client.New(base)
	require.NoError(t, err)
	watched, err := cl.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "watched"})
	require.NoError(t, err)
	other, err := cl.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "other"})
	require.NoError(t, err)

	lines, stop, _ := runEvents(t, "--server", base, "--ws", "watched", "-o", "json")
	ev := nextLine(t, lines)
	require.Equal(t, cairn.EventHello, ev.Type)
	// Until the server's listener is up it may miss a change; it says so
	// with resync, and the next change arrives. A frame of an earlier
	// change (the create, an earlier round) may come first: each loads the
	// row as it is then, so only the round's own description ends the wait.
	waitRound := func(desc string) bool {
		for {
			ev = nextLine(t, lines)
			if ev.Type == cairn.EventResync {
				return false
			}
			require.Equal(t, cairn.EventWorkspaceUpserted, ev.Type)
			require.Equal(t, watched.ID, ev.ID)
			if d := ev.Workspace.Description; d != nil && *d == desc {
				return true
			}
		}
	}
	for i := 0; ; i++ {
		desc := "round " + string(rune('a'+i))
		_, err := cl.SetWorkspaceDescription(ctx, watched.ID, &desc)
		require.NoError(t, err)
		if waitRound(desc) {
			break
		}
	}
	_, err = cl.RenameWorkspace(ctx, other.ID, "other2")
	require.NoError(t, err)
	_, err = cl.RenameWorkspace(ctx, watched.ID, "watched2")
	require.NoError(t, err)
	// A late frame of the description rounds may still come first (each
	// loads the row as it is then); none may be of the other workspace.
	for {
		ev = nextLine(t, lines)
		require.Equal(t, cairn.EventWorkspaceUpserted, ev.Type)
		require.Equal(t, watched.ID, ev.ID, "--ws filters the other workspace out")
		require.Positive(t, ev.Seq)
		if ev.Workspace.Name == "watched2" {
			break
		}
	}
	require.NoError(t, stop(), "an interrupt is the normal end")
}

func TestEventsCommandRefusedToken(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("events-cli-writer-0123456789abcdef"))
	base := eventsServer(t, server.TokenConfig{Name: "writer", SHA256: hex.EncodeToString(sum[:]), Scopes: []string{"write"}})
	_, _, noScope := runEvents(t, "--server", base, "--token", "events-cli-writer-0123456789abcdef")
	_, _, wrong := runEvents(t, "--server", base, "--token", "not-a-token-0123456789abcdef")
	for _, done := range []<-chan error{noScope, wrong} {
		select {
		case err := <-done: // it ends by itself: a refused token is not retried
			var code exitError
			require.True(t, errors.As(err, &code), "%v", err)
			require.Equal(t, exitNotAllowed, code)
		case <-time.After(time.Minute):
			t.Fatal("the command did not end")
		}
	}
}
