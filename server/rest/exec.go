package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/wsexec"
)

// ExecConfig is what the exec route needs (its protocol is package
// wsexec).
type ExecConfig struct {
	// Service runs commands; nil leaves the route unmounted.
	Service ExecService
	// AllowedOrigins is api.cors.allowedOrigins, checked again at the
	// upgrade as for the shell.
	AllowedOrigins []string
}

// ExecService is the exec rules as the route calls them.
type ExecService interface {
	Admitter
	// OpenExec checks the workspace and the caps and creates the
	// command's container. Reasons: those of Admit, invalid_parameters,
	// workspace_not_found, too_many_shells, volume_not_ready,
	// volume_missing, workspace_busy, docker_unavailable,
	// shell_image_missing, internal.
	OpenExec(ctx context.Context, o cairn.ExecOpen) (ExecSession, error)
}

// ExecSession is an opened exec whose container exists, not started.
type ExecSession = Session[wsexec.Process, wsexec.ServeOptions, wsexec.ServeResult]

// execRoutes is the one exec route, scope shell; never an MCP tool.
func (a *API) execRoutes() []route.Route {
	if a.cfg.Exec.Service == nil {
		return nil
	}
	return []route.Route{{Method: http.MethodGet, Path: "/v1/workspaces/{workspaceID}/exec", Scope: route.Shell,
		Handler: a.websocketRoute(a.execHandshake)}}
}

// execHandshake serves GET /v1/workspaces/{workspaceID}/exec: every
// refusal as an envelope before the upgrade, then the upgrade, then the
// session, which runs to its end inside it.
func (a *API) execHandshake(w http.ResponseWriter, r *http.Request, id string) int {
	svc := a.cfg.Exec.Service
	if err := upgradeRefusal(r, svc.Admit, "exec", wsexec.Subprotocol, wsexec.Offered); err != nil {
		return a.refuseExec(w, r, id, err)
	}
	argv, err := wsexec.DecodeArgv(r.Header.Get(wsexec.ArgvHeader))
	if err != nil {
		return a.refuseExec(w, r, id, &cairn.Error{Reason: cairn.ReasonInvalidParameters, Detail: err.Error(), Err: err})
	}
	opts, err := wsexec.DecodeOptions(r.Header.Get(wsexec.OptionsHeader))
	if err != nil {
		return a.refuseExec(w, r, id, &cairn.Error{Reason: cairn.ReasonInvalidParameters, Detail: err.Error(), Err: err})
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestTimeout)
	defer cancel()
	sess, err := svc.OpenExec(ctx, cairn.ExecOpen{WorkspaceID: r.PathValue("workspaceID"), Argv: argv, ClientAddr: r.RemoteAddr,
		Dir: opts.Dir, Env: opts.EnvList(), Timeout: time.Duration(opts.TimeoutS) * time.Second})
	if err != nil {
		return a.refuseExec(w, r, id, err)
	}
	up := upgrader(wsexec.Subprotocol, wsexec.MaxDataPayload+64, wsexec.MaxDataPayload+64, a.cfg.Exec.AllowedOrigins,
		func(w http.ResponseWriter, r *http.Request, err error) int { return a.refuseExec(w, r, id, err) })
	return serveUpgraded(w, r, up, http.Header{a.cfg.RequestIDHeader: {id}}, sess, wsexec.Serve)
}

// refuseExec answers a refused handshake with the envelope and returns
// the status; the shell's statuses apply (volume_not_ready is 409).
func (a *API) refuseExec(w http.ResponseWriter, r *http.Request, id string, err error) int {
	return a.refuseUpgrade(w, r, id, err, "Cannot run the command", "exec open failed")
}
