package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// letters is an endless run of 'a' that allocates nothing.
type letters struct{}

func (letters) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestBodiesAreBounded sends 256 MiB to the MCP endpoint and to a REST
// route, with and without a Content-Length: each is refused with 413, and
// the process allocates far less than the body while refusing it.
func TestBodiesAreBounded(t *testing.T) {
	cfg, secrets := testConfig(t)
	base := "http://" + startServer(t, cfg, secrets, nil).APIAddr()
	const size = 256 << 20
	for _, path := range []string{"/v1/mcp", "/v1/workspaces"} {
		for _, known := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/length=%v", path, known), func(t *testing.T) {
				// A JSON document that only gets too long, so that nothing
				// but its size can refuse it.
				body := io.MultiReader(strings.NewReader(`{"name":"`), io.LimitReader(letters{}, size))
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, body)
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.ContentLength = -1
				if known {
					req.ContentLength = size + int64(len(`{"name":"`))
				}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				runtime.ReadMemStats(&after)
				require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s", answer)
				require.Contains(t, string(answer), "body_too_large")
				grew := after.TotalAlloc - before.TotalAlloc
				t.Logf("allocated %d KiB while refusing a %d MiB body", grew>>10, size>>20)
				require.Less(t, grew, uint64(16<<20), "memory grows with the body")
			})
		}
	}
}

// TestDatabaseOutage stops the server's Postgres: requests answer 503
// database_unavailable, not 500; once it is back they succeed without a
// restart of the server.
func TestDatabaseOutage(t *testing.T) {
	dir, err := os.MkdirTemp("", "cairn-outage-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg, err := stack.StartPostgres(t.Context(), dir, nil, stack.WithoutFsync())
	require.NoError(t, err)
	t.Cleanup(func() { pg.Stop() })
	cfg, secrets := configOn(t, pg)
	base := "http://" + startServer(t, cfg, secrets, nil).APIAddr()

	status, body := call(t, "POST", base+"/v1/workspaces", `{"name":"before"}`)
	require.Equal(t, http.StatusOK, status, body)
	ws := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(body)[1]
	register := func() (int, string) {
		return call(t, "POST", base+"/v1/workspaces/"+ws+"/artifacts",
			`{"name":"a","staging_object_key":"staging/`+ws+`/01ARZ3NDEKTSV4RRFFQ69G5FAV"}`)
	}

	require.NoError(t, pg.Stop())
	for name, req := range map[string]func() (int, string){
		"list":     func() (int, string) { return call(t, "GET", base+"/v1/workspaces", "") },
		"create":   func() (int, string) { return call(t, "POST", base+"/v1/workspaces", `{"name":"during"}`) },
		"register": register,
	} {
		status, body := req()
		require.Equal(t, http.StatusServiceUnavailable, status, "%s: %s", name, body)
		require.Contains(t, body, `"reason":"database_unavailable"`, name)
	}

	pg, err = stack.StartPostgres(t.Context(), dir, nil, stack.WithoutFsync())
	require.NoError(t, err)
	// The pool drops each dead connection on its first use, so the first
	// requests after the restart may still meet one.
	require.Eventually(t, func() bool {
		status, _ := call(t, "GET", base+"/v1/workspaces", "")
		return status == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool {
		status, _ := call(t, "POST", base+"/v1/workspaces", `{"name":"after"}`)
		return status == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond)
	content := []byte("back again")
	status, body = upload(t, base, ws, content, content)
	require.Equal(t, http.StatusOK, status, body)
}

// TestTransferMetrics checks that a volume transfer moves the sidecar and
// byte counters by exactly what it did.
func TestTransferMetrics(t *testing.T) {
	cfg, secrets := testConfig(t)
	srv := startServer(t, cfg, secrets, nil)
	base, metrics := "http://"+srv.APIAddr(), "http://"+srv.MetricsAddr()+cfg.Metrics.MetricsEndpoint
	ws, art := savedFile(t, base, cfg.AppName, "head -c 12345 /dev/zero > /mnt/cairn/ws/f")
	require.NotEmpty(t, ws)
	status, body := call(t, "POST", base+"/v1/artifacts/"+art+"/load-in-volume", `{"target_path":"/mnt/cairn/ws/g"}`)
	require.Equal(t, http.StatusOK, status, body)

	_, scrape := call(t, "GET", metrics, "")
	for _, want := range []string{
		`cairn_sidecar_runs_total{command="prep",result="ok"} 1`,
		`cairn_sidecar_runs_total{command="put",result="ok"} 1`,
		`cairn_sidecar_runs_total{command="download",result="ok"} 1`,
		`cairn_sidecar_duration_seconds_count{command="put"} 1`,
		`cairn_transfer_bytes_total{direction="volume_to_store"} 12345`,
		`cairn_transfer_bytes_total{direction="store_to_volume"} 12345`,
		`cairn_sidecars_running 0`,
	} {
		require.Contains(t, scrape, want)
	}
}

// TestCancelledRequestsLeaveNothing hangs up on requests at several points —
// list and get as soon as they are sent, each transfer as a sidecar is
// created, started or ends — and checks, as soon as the server has finished
// with each request, that no container of the stack is left and that
// nothing was logged at error level.
func TestCancelledRequestsLeaveNothing(t *testing.T) {
	cfg, secrets := testConfig(t)
	logs := &lockedBuffer{}
	srv := startServer(t, cfg, secrets, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	base := "http://" + srv.APIAddr()
	cli := stacktest.Docker(t)
	ws, art := savedFile(t, base, cfg.AppName, "head -c 4000000 /dev/urandom > /mnt/cairn/ws/f")

	appLabel := filters.NewArgs(filters.Arg("label", "cairn.app="+cfg.AppName))
	// hangUp sends a request and cancels it on the nth container event of
	// action (0: once the request is written), then waits for the server's
	// log line that ends the request.
	hangUp := func(t *testing.T, method, path, body string, action events.Action, nth int) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if action != "" {
			f := appLabel.Clone()
			f.Add("type", string(events.ContainerEventType))
			f.Add("event", string(action))
			msgs, _ := cli.Events(ctx, events.ListOptions{Filters: f})
			go func() {
				for seen := 0; seen < nth; seen++ {
					select {
					case <-msgs:
					case <-ctx.Done():
						return
					}
				}
				cancel()
			}()
		} else {
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }})
		}
		id := uuid.NewString()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Request-ID", id)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck // the request may finish before the hang-up
			resp.Body.Close()
		}
		require.Eventually(t, func() bool {
			return strings.Contains(logs.String(), `"msg":"request","method":"`+method+`"`) &&
				strings.Contains(logs.String(), `"request_id":"`+id+`"`)
		}, time.Minute, 10*time.Millisecond,
			"the server ends the request")
		left, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: appLabel})
		require.NoError(t, err)
		require.Empty(t, left, "containers left when the request ended")
	}

	t.Run("List", func(t *testing.T) { hangUp(t, "GET", "/v1/workspaces", "", "", 0) })
	t.Run("Get", func(t *testing.T) { hangUp(t, "GET", "/v1/workspaces/"+ws, "", "", 0) })
	n := 0
	for _, point := range []struct {
		action events.Action
		nth    int
	}{{events.ActionCreate, 1}, {events.ActionStart, 1}, {events.ActionDie, 1}} {
		n++
		t.Run(fmt.Sprintf("FromVolume/%s#%d", point.action, point.nth), func(t *testing.T) {
			hangUp(t, "POST", "/v1/workspaces/"+ws+"/artifact-from-volume",
				fmt.Sprintf(`{"name":"cut%d","source_path":"/mnt/cairn/ws/f"}`, n), point.action, point.nth)
		})
		t.Run(fmt.Sprintf("UpdateFromVolume/%s#%d", point.action, point.nth), func(t *testing.T) {
			hangUp(t, "POST", "/v1/artifacts/"+art+"/update-from-volume", `{"source_path":"/mnt/cairn/ws/f"}`,
				point.action, point.nth)
		})
		t.Run(fmt.Sprintf("Load/%s#%d", point.action, point.nth), func(t *testing.T) {
			hangUp(t, "POST", "/v1/artifacts/"+art+"/load-in-volume", `{"target_path":"/mnt/cairn/ws/g"}`,
				point.action, point.nth)
		})
	}
	require.NotContains(t, logs.String(), `"level":"ERROR"`, "a client hanging up is not a server error")
	require.Contains(t, logs.String(), `"reason":"client_gone"`, "the hang-ups were seen")
}

// savedFile makes a workspace with a READY volume, runs script in it (to
// write /mnt/cairn/ws/f), and saves that file as an artifact; it returns
// both IDs.
func savedFile(t *testing.T, base, app, script string) (workspaceID, artifactID string) {
	t.Helper()
	status, body := call(t, "POST", base+"/v1/workspaces", `{"name":"`+uuid.NewString()[:8]+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	workspaceID = regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(body)[1]
	volume := regexp.MustCompile(`"volume_name":"([^"]+)"`).FindStringSubmatch(body)[1]
	status, body = call(t, "POST", base+"/v1/workspaces/"+workspaceID+"/volume", "")
	require.Equal(t, http.StatusOK, status, body)
	stacktest.RunInVolume(t, app, volume, script)
	status, body = call(t, "POST", base+"/v1/workspaces/"+workspaceID+"/artifact-from-volume",
		`{"name":"f","source_path":"/mnt/cairn/ws/f"}`)
	require.Equal(t, http.StatusOK, status, body)
	return workspaceID, regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(body)[1]
}
