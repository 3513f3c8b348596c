package rest

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/wsexec"
)

// ExecConfig is what the exec route needs (ARCHITECTURE §11.6, package
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
	// Admit answers shell_disabled and server_shutting_down.
	Admit() error
	// OpenExec checks the workspace and the caps and creates the
	// command's container. Reasons: those of Admit, invalid_parameters,
	// workspace_not_found, too_many_shells, volume_not_ready,
	// volume_missing, workspace_busy, docker_unavailable,
	// shell_image_missing, internal.
	OpenExec(ctx context.Context, o cairn.ExecOpen) (ExecSession, error)
}

// ExecSession is an opened exec whose container exists, not started.
type ExecSession interface {
	// Run serves the session with serve and records its end.
	Run(serve func(ctx context.Context, proc wsexec.Process, opts wsexec.ServeOptions) wsexec.ServeResult)
	// Abort tears the session down when the upgrade failed.
	Abort()
}

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
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestTimeout)
	defer cancel()
	sess, err := svc.OpenExec(ctx, cairn.ExecOpen{WorkspaceID: r.PathValue("workspaceID"), Argv: argv, ClientAddr: r.RemoteAddr})
	if err != nil {
		return a.refuseExec(w, r, id, err)
	}
	conn, err := a.execUpgrader(id).Upgrade(hijacker(w), r, http.Header{a.cfg.RequestIDHeader: {id}})
	if err != nil {
		sess.Abort() // the upgrader has answered
		return http.StatusBadRequest
	}
	sess.Run(func(ctx context.Context, proc wsexec.Process, opts wsexec.ServeOptions) wsexec.ServeResult {
		return wsexec.Serve(ctx, conn, proc, opts)
	})
	return http.StatusSwitchingProtocols
}

// execUpgrader upgrades with the subprotocol, no compression, the Origin
// rule and the envelope for a handshake gorilla refuses itself.
func (a *API) execUpgrader(id string) *websocket.Upgrader {
	return &websocket.Upgrader{
		HandshakeTimeout: wsexec.HandshakeTimeout,
		ReadBufferSize:   wsexec.MaxDataPayload + 64,
		WriteBufferSize:  wsexec.MaxDataPayload + 64,
		Subprotocols:     []string{wsexec.Subprotocol},
		CheckOrigin: func(r *http.Request) bool {
			origin := r.Header.Get("Origin")
			return origin == "" || slices.ContainsFunc(a.cfg.Exec.AllowedOrigins, func(o string) bool {
				return strings.EqualFold(o, origin)
			})
		},
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			err := &cairn.Error{Reason: cairn.ReasonWebsocketRequired, Detail: "malformed websocket handshake: " + reason.Error()}
			switch status {
			case http.StatusForbidden:
				err = &cairn.Error{Reason: cairn.ReasonOriginNotAllowed, Detail: "Origin not allowed"}
			case http.StatusInternalServerError:
				err = cairn.Internal("the connection cannot be upgraded", reason)
			}
			a.refuseExec(w, r, id, err)
		},
	}
}

// refuseExec answers a refused handshake with the envelope and returns
// the status; the shell's statuses apply (volume_not_ready is 409).
func (a *API) refuseExec(w http.ResponseWriter, r *http.Request, id string, err error) int {
	return a.refuseUpgrade(w, r, id, err, "Cannot run the command", "exec open failed")
}
