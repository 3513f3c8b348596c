// Package rest is cairn's REST front door (ID-addressed). Each handler
// decodes a request, makes one service call and encodes the answer; every
// failure goes through one error writer with one status table.
package rest

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
)

// Readiness answers whether the server can serve: the database live, the
// other dependencies from a recent check. Its error names the failing one.
type Readiness interface {
	Ready(ctx context.Context) error
}

// Config holds the front door's settings; zero values take defaults.
type Config struct {
	PathPrefix      string        // e.g. "/api"; "/" or "" mounts at the root
	RequestIDHeader string        // default "X-Request-ID"
	RequestTimeout  time.Duration // per-request deadline; default 655 s
	LogLevel        slog.Level    // level of the per-request log line
	HealthLogLevel  slog.Level    // the same for /liveness routes
	Logger          *slog.Logger
	// Maintenance runs on-demand reconciliation passes; nil leaves
	// POST /v1/maintenance/sweep unmounted (a process without a reconciler).
	Maintenance cairn.MaintenanceService
}

// Services is what the front door calls; the service layer implements all
// of it.
type Services interface {
	cairn.WorkspaceService
	cairn.ArtifactService
	cairn.VolumeTransferService
	cairn.AuditService
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
	cfg.PathPrefix = strings.TrimRight(cfg.PathPrefix, "/")
	cfg.RequestIDHeader = cmp.Or(cfg.RequestIDHeader, "X-Request-ID")
	cfg.RequestTimeout = cmp.Or(cfg.RequestTimeout, 655*time.Second)
	return &API{
		svc: svc,
		cfg: cfg,
		log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
	}
}

// Handler returns the router. Unknown paths get the standard library's
// plain 404, a known path with a wrong method a 405 with Allow, and a
// non-canonical path a 301 to its cleaned form.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	a.health(mux, "GET /liveness/alive", a.alive)
	a.health(mux, "GET /liveness/ready", a.ready)

	a.route(mux, "POST /v1/workspaces", a.createWorkspace)
	a.route(mux, "GET /v1/workspaces", a.listWorkspaces)
	a.route(mux, "GET /v1/workspaces/{workspaceID}", a.getWorkspace)
	a.route(mux, "DELETE /v1/workspaces/{workspaceID}", a.deleteWorkspace)
	a.route(mux, "PUT /v1/workspaces/{workspaceID}/name", a.renameWorkspace)
	a.route(mux, "PUT /v1/workspaces/{workspaceID}/description", a.describeWorkspace)
	a.route(mux, "PUT /v1/workspaces/{workspaceID}/volume-metadata", a.setVolumeMetadata)
	a.route(mux, "POST /v1/workspaces/{workspaceID}/volume", a.setupVolume)
	a.route(mux, "DELETE /v1/workspaces/{workspaceID}/volume", a.teardownVolume)

	a.route(mux, "POST /v1/workspaces/{workspaceID}/new-staging", a.mintStaging)
	a.route(mux, "POST /v1/workspaces/{workspaceID}/artifacts", a.registerArtifact)
	a.route(mux, "GET /v1/workspaces/{workspaceID}/artifacts", a.listArtifacts)
	a.route(mux, "GET /v1/artifacts/{artifactID}", a.getArtifact)
	a.route(mux, "DELETE /v1/artifacts/{artifactID}", a.deleteArtifact)
	a.route(mux, "PUT /v1/artifacts/{artifactID}/name", a.renameArtifact)
	a.route(mux, "PUT /v1/artifacts/{artifactID}/description", a.describeArtifact)
	a.route(mux, "PUT /v1/artifacts/{artifactID}/content", a.replaceContent)

	a.route(mux, "POST /v1/workspaces/{workspaceID}/artifact-from-volume", a.artifactFromVolume)
	a.route(mux, "POST /v1/artifacts/{artifactID}/update-from-volume", a.updateFromVolume)
	a.route(mux, "POST /v1/artifacts/{artifactID}/load-in-volume", a.loadInVolume)

	a.route(mux, "GET /v1/audit", a.listAudit)
	if a.cfg.Maintenance != nil {
		a.route(mux, "POST /v1/maintenance/sweep", a.sweep)
	}
	return canonical(mux)
}

// canonical answers a non-canonical path (with "//", "/./" or "/../") with
// a 301 to its cleaned form (API.md §1.1) before the mux sees it: the
// standard library's mux (Go 1.26) redirects with a 307 instead.
func canonical(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		clean := path.Clean("/" + p)
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if r.Method != http.MethodConnect && clean != p {
			if r.URL.RawQuery != "" {
				clean += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", clean)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// endpoint is one route's logic: a payload to merge into the envelope, or
// an error (normally a *routeError carrying the route's message).
type endpoint func(r *http.Request) (any, error)

func (a *API) route(mux *http.ServeMux, pattern string, h endpoint) {
	mux.Handle(a.pattern(pattern), a.serve(h, a.cfg.LogLevel))
}

func (a *API) health(mux *http.ServeMux, pattern string, h endpoint) {
	mux.Handle(a.pattern(pattern), a.serve(h, a.cfg.HealthLogLevel))
}

// pattern puts the configured prefix in front of the path.
func (a *API) pattern(p string) string {
	method, path, _ := strings.Cut(p, " ")
	return method + " " + a.cfg.PathPrefix + path
}

// serve wraps an endpoint with the request ID, the request deadline, the
// envelope and the request log line.
func (a *API) serve(h endpoint, level slog.Level) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r.Header.Get(a.cfg.RequestIDHeader))
		w.Header().Set(a.cfg.RequestIDHeader, id)
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestTimeout)
		defer cancel()

		payload, err := h(r.WithContext(ctx))
		status := http.StatusOK
		if err != nil {
			status = a.writeError(w, r, id, err)
		} else {
			writeSuccess(w, id, payload)
		}
		a.log.Log(ctx, level, "request", "method", r.Method, "path", r.URL.Path,
			"status", status, "request_id", id, "duration", time.Since(start))
	})
}
