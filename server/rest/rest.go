// Package rest is cairn's REST front door (ID-addressed). Each handler
// decodes a request, makes one service call and encodes the answer; every
// failure goes through one error writer with one status table.
package rest

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/server/service"
)

// Readiness answers whether the server can serve: the database live, the
// other dependencies from a recent check. Its error names the failing one.
// Integrity says who checks stored bytes: "store" or "server".
type Readiness interface {
	Ready(ctx context.Context) error
	Integrity() string
}

// Config holds the front door's settings; zero values take defaults.
type Config struct {
	RequestIDHeader string        // default "X-Request-ID"
	RequestTimeout  time.Duration // per-request deadline; default 655 s
	LogLevel        slog.Level    // level of the per-request log line
	HealthLogLevel  slog.Level    // the same for /liveness routes
	Logger          *slog.Logger
	// Maintenance runs on-demand reconciliation passes; nil leaves
	// POST /v1/maintenance/sweep unmounted (a process without a reconciler).
	Maintenance cairn.MaintenanceService
	// Shell serves the shell routes; a nil Shell.Service leaves them
	// unmounted.
	Shell ShellConfig
	Exec  ExecConfig // GET /v1/workspaces/{id}/exec; a nil Exec.Service leaves it unmounted
	// Info is what GET /v1/info answers, but the caller's scopes; nil
	// leaves the route unmounted.
	Info *cairn.Info
	// MaxFileWrite bounds a file write's body (files.write.maxBytes);
	// default cairn.DefaultMaxFileWriteBytes.
	MaxFileWrite int64
}

// Services is what the front door calls; the service layer implements all
// of it.
type Services interface {
	cairn.WorkspaceService
	cairn.ArtifactService
	cairn.VolumeTransferService
	cairn.FileService
	cairn.FileWriter
	cairn.FileFinder
	cairn.AuditService
	cairn.WebhookService
	cairn.SnapshotService
	cairn.LifecycleService
	// Once runs a request carrying an Idempotency-Key at most once.
	Once(ctx context.Context, key, fingerprint string, lease time.Duration, do func() service.KeyedAnswer) (service.KeyedAnswer, bool, error)
	Readiness
}

// API serves the REST routes over the service interfaces.
type API struct {
	svc Services
	cfg Config
	log *slog.Logger
}

// New returns the REST front door.
func New(svc Services, cfg Config) *API {
	cfg.RequestIDHeader = cmp.Or(cfg.RequestIDHeader, "X-Request-ID")
	cfg.RequestTimeout = cmp.Or(cfg.RequestTimeout, 655*time.Second)
	return &API{
		svc: svc,
		cfg: cfg,
		log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
	}
}

// Routes declares every REST route with the one scope it needs, as the
// route tables of docs/api.md give it: where the coarse rules overlap, the
// specific assignment wins (GET /v1/audit is admin, not read; deleting a
// workspace is admin, not write). server/auth mounts them.
func (a *API) Routes() []route.Route {
	rs := []route.Route{
		a.health("GET /liveness/alive", a.alive),
		a.health("GET /liveness/ready", a.ready),

		a.route("POST /v1/workspaces", route.Write, a.createWorkspace),
		a.route("GET /v1/workspaces", route.Read, a.listWorkspaces),
		a.route("GET /v1/workspaces/{workspaceID}", route.Read, a.getWorkspace),
		a.route("DELETE /v1/workspaces/{workspaceID}", route.Admin, a.deleteWorkspace),
		a.route("PUT /v1/workspaces/{workspaceID}/name", route.Write, a.renameWorkspace),
		a.route("PUT /v1/workspaces/{workspaceID}/description", route.Write, a.describeWorkspace),
		a.route("PUT /v1/workspaces/{workspaceID}/volume-metadata", route.Write, a.setVolumeMetadata),
		a.route("PUT /v1/workspaces/{workspaceID}/lifecycle", route.Write, a.setLifecycle),
		a.route("POST /v1/workspaces/{workspaceID}/touch", route.Write, a.touchWorkspace),
		a.route("POST /v1/workspaces/{workspaceID}/volume", route.Admin, a.setupVolume),
		a.route("DELETE /v1/workspaces/{workspaceID}/volume", route.Admin, a.teardownVolume),

		a.route("POST /v1/workspaces/{workspaceID}/new-staging", route.Write, a.mintStaging),
		a.route("POST /v1/workspaces/{workspaceID}/new-staging/parts", route.Write, a.mintParts),
		a.route("GET /v1/workspaces/{workspaceID}/new-staging/parts", route.Write, a.uploadedParts),
		a.route("DELETE /v1/workspaces/{workspaceID}/new-staging/parts", route.Write, a.abortUpload),
		a.route("POST /v1/workspaces/{workspaceID}/artifacts", route.Write, a.registerArtifact),
		a.route("GET /v1/workspaces/{workspaceID}/artifacts", route.Read, a.listArtifacts),
		a.route("GET /v1/artifacts/{artifactID}", route.Read, a.getArtifact),
		a.route("DELETE /v1/artifacts/{artifactID}", route.Write, a.deleteArtifact),
		a.route("PUT /v1/artifacts/{artifactID}/name", route.Write, a.renameArtifact),
		a.route("PUT /v1/artifacts/{artifactID}/description", route.Write, a.describeArtifact),
		a.route("PUT /v1/artifacts/{artifactID}/content", route.Write, a.replaceContent),

		a.route("POST /v1/workspaces/{workspaceID}/artifact-from-volume", route.Write, a.artifactFromVolume),
		a.route("POST /v1/artifacts/{artifactID}/update-from-volume", route.Write, a.updateFromVolume),
		a.route("POST /v1/artifacts/{artifactID}/load-in-volume", route.Write, a.loadInVolume),
		a.route("POST /v1/artifacts/{artifactID}/unpack-in-volume", route.Write, a.unpackInVolume),
		a.route("GET /v1/workspaces/{workspaceID}/files", route.Read, a.listFiles),
		a.route("GET /v1/workspaces/{workspaceID}/files/content", route.Read, a.readFile),
		a.bodyRoute("PUT /v1/workspaces/{workspaceID}/files/content", route.Write, a.maxFileWrite(), a.writeFile),
		a.route("GET /v1/workspaces/{workspaceID}/files/search", route.Read, a.searchFiles),
		a.route("GET /v1/workspaces/{workspaceID}/files/tree", route.Read, a.fileTree),
		a.route("GET /v1/workspaces/{workspaceID}/files/stat", route.Read, a.statFile),
		a.route("DELETE /v1/workspaces/{workspaceID}/files", route.Write, a.removePath),
		a.route("POST /v1/workspaces/{workspaceID}/files/mkdir", route.Write, a.makeDir),
		a.route("POST /v1/workspaces/{workspaceID}/files/move", route.Write, a.movePath),

		a.route("POST /v1/workspaces/{workspaceID}/snapshots", route.Write, a.createSnapshot),
		a.route("GET /v1/workspaces/{workspaceID}/snapshots", route.Read, a.listSnapshots),
		a.route("GET /v1/snapshots/{snapshotID}", route.Read, a.getSnapshot),
		a.route("DELETE /v1/snapshots/{snapshotID}", route.Write, a.deleteSnapshot),
		a.route("POST /v1/workspaces/{workspaceID}/restore", route.Write, a.restoreSnapshot),
		a.route("POST /v1/workspaces/{workspaceID}/fork", route.Write, a.forkWorkspace),

		a.route("GET /v1/audit", route.Admin, a.listAudit),
		a.route("GET /v1/webhooks/deliveries", route.Admin, a.listDeliveries),
		a.route("POST /v1/webhooks/deliveries/{deliveryID}/retry", route.Admin, a.retryDelivery),
	}
	if a.cfg.Info != nil {
		rs = append(rs, a.route("GET /v1/info", route.Any, a.info))
	}
	if a.cfg.Maintenance != nil {
		rs = append(rs, a.route("POST /v1/maintenance/sweep", route.Admin, a.sweep))
	}
	if a.cfg.Shell.Service != nil {
		rs = append(rs, a.shellRoutes()...)
	}
	rs = append(rs, a.execRoutes()...)
	return rs
}

// endpoint is one route's logic: a payload to merge into the envelope, or
// an error (normally a *routeError carrying the route's message).
type endpoint func(r *http.Request) (any, error)

func (a *API) route(pattern string, scope route.Scope, h endpoint) route.Route {
	method, path, _ := strings.Cut(pattern, " ")
	keys := keysTaken(method, path)
	return route.Route{Method: method, Path: path, Scope: scope, Handler: a.serve(h, a.cfg.LogLevel, keys)}
}

// bodyRoute declares a route whose body may be larger than the guard's
// bound for every other route.
func (a *API) bodyRoute(pattern string, scope route.Scope, maxBody int64, h endpoint) route.Route {
	rt := a.route(pattern, scope, h)
	rt.MaxBody = maxBody
	return rt
}

// health declares a probe: public, and logged at its own level.
func (a *API) health(pattern string, h endpoint) route.Route {
	method, path, _ := strings.Cut(pattern, " ")
	return route.Route{Method: method, Path: path, Scope: route.Public, Handler: a.serve(h, a.cfg.HealthLogLevel, keysIgnored)}
}

// serve wraps an endpoint with the request ID, the request deadline, the
// envelope, the Idempotency-Key rule of the route and the request log
// line.
func (a *API) serve(h endpoint, level slog.Level, keys keyRule) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := envelope.RequestID(r.Header.Get(a.cfg.RequestIDHeader))
		w.Header().Set(a.cfg.RequestIDHeader, id)
		ctx, cancel := context.WithTimeout(cairn.WithRequestID(r.Context(), id), a.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)

		var status int
		if key := r.Header.Get(cairn.HeaderIdempotencyKey); key != "" && keys != keysIgnored {
			status = a.answerOnce(w, r, id, key, keys, h)
		} else {
			status = a.answer(w, r, id, h)
		}
		a.log.Log(ctx, level, "request", "method", r.Method, "path", r.URL.Path,
			"status", status, "request_id", id, "duration", time.Since(start))
	})
}

// answer runs the endpoint and writes its answer; it returns the status.
func (a *API) answer(w http.ResponseWriter, r *http.Request, id string, h endpoint) int {
	payload, err := h(r)
	switch rp, ok := payload.(responder); {
	case err != nil:
		return a.writeError(w, r, id, err)
	case ok:
		return rp.respond(w, id)
	}
	envelope.WriteSuccess(w, id, payload)
	return http.StatusOK
}
