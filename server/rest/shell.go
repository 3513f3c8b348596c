package rest

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/route"
)

// ShellConfig is what the shell routes need.
type ShellConfig struct {
	// Service opens, lists and ends shells; nil leaves the three shell
	// routes unmounted.
	Service ShellService
	// AllowedOrigins is api.cors.allowedOrigins. server/auth has refused
	// any other Origin already; the upgrade checks again.
	AllowedOrigins []string
	// V2, if set, mounts the v2 routes (create, attach, watch).
	V2 ShellV2Service
}

// ShellService is the shell rules as the routes call them.
type ShellService interface {
	cairn.ShellService
	Admitter
	// OpenShell answers the refusals from workspace_not_found on and
	// creates the container. Reasons: shell_disabled, server_shutting_down,
	// invalid_terminal, workspace_not_found, too_many_shells,
	// volume_not_ready, volume_missing, workspace_busy, docker_unavailable,
	// shell_image_missing, internal.
	OpenShell(ctx context.Context, o cairn.ShellOpen) (ShellSession, error)
}

// ShellSession is an opened shell (or a v2 shell lent to a connection)
// whose container exists, not started.
type ShellSession = Session[ptyshell.Stream, ptyshell.ServeOptions, ptyshell.ServeResult]

// shellSendBuffer bounds the kernel's send buffer of a shell connection.
const shellSendBuffer = 128 << 10

func (a *API) shellRoutes() []route.Route {
	return append([]route.Route{
		{Method: http.MethodGet, Path: "/v1/workspaces/{workspaceID}/shell", Scope: route.Shell,
			Handler: a.websocketRoute(a.shellHandshake)},
		a.route("GET /v1/shells", route.Read, a.listShells),
		a.route("DELETE /v1/shells/{shellID}", route.Admin, a.killShell),
	}, a.shellV2Routes()...)
}

// shellHandshake serves GET /v1/workspaces/{workspaceID}/shell: every
// refusal in the order docs/protocols.md lists them, as an envelope before
// any upgrade (origin, host, token and scope are server/auth's), then the
// upgrade, then the session, which runs to its end inside it. It is not
// wrapped by serve: once upgraded the connection belongs to the session,
// and nothing may write an HTTP answer.
func (a *API) shellHandshake(w http.ResponseWriter, r *http.Request, id string) int {
	svc := a.cfg.Shell.Service
	if err := upgradeRefusal(r, svc.Admit, "the shell", ptyshell.Subprotocol, ptyshell.Offered); err != nil {
		return a.refuseShell(w, r, id, err)
	}
	h, err := ptyshell.ParseHandshake(r.URL.Query())
	if err != nil {
		return a.refuseShell(w, r, id, &cairn.Error{Reason: cairn.ReasonInvalidTerminal, Detail: err.Error(), Err: err})
	}
	record, err := recordQuery(r)
	if err != nil {
		return a.refuseShell(w, r, id, err)
	}
	o := cairn.ShellOpen{WorkspaceID: r.PathValue("workspaceID"), Cols: h.Size.Cols, Rows: h.Size.Rows, Term: h.Term,
		ClientAddr: r.RemoteAddr, Record: record}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestTimeout)
	defer cancel()
	sess, err := svc.OpenShell(ctx, o)
	if err != nil {
		return a.refuseShell(w, r, id, err)
	}
	return serveUpgraded(w, r, a.shellUpgrader(id, ptyshell.Subprotocol), http.Header{a.cfg.RequestIDHeader: {id}},
		sess, serveShell)
}

// serveShell is ptyshell.Serve on a connection whose kernel send buffer is
// bounded: left to autotuning the kernel buffers megabytes of a flood on
// loopback, which Ctrl-C then waits behind.
func serveShell(ctx context.Context, conn *websocket.Conn, stream ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult {
	if tcp, ok := conn.NetConn().(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(shellSendBuffer) // only a bound; the default works too
	}
	return ptyshell.Serve(ctx, conn, stream, opts)
}

// shellUpgrader upgrades a shell connection offering sub (v1 or v2), with
// api.cors.allowedOrigins checked again.
func (a *API) shellUpgrader(id, sub string) *websocket.Upgrader {
	return upgrader(sub, 4<<10, ptyshell.MaxDataPayload+64, a.cfg.Shell.AllowedOrigins,
		func(w http.ResponseWriter, r *http.Request, err error) int { return a.refuseShell(w, r, id, err) })
}

// refuseShell answers a refused handshake with the envelope (its detail
// the refusal's sentence) and returns the status.
func (a *API) refuseShell(w http.ResponseWriter, r *http.Request, id string, err error) int {
	return a.refuseUpgrade(w, r, id, err, "Cannot open a shell", "shell open failed")
}

// listShells serves GET /v1/shells[?workspace_id=ID].
func (a *API) listShells(r *http.Request) (any, error) {
	list, err := a.cfg.Shell.Service.FindShells(r.Context(), r.URL.Query().Get("workspace_id"))
	if err != nil {
		return nil, failed(err, "Failed to list shells")
	}
	return list, nil
}

// killShell serves DELETE /v1/shells/{shellID}.
func (a *API) killShell(r *http.Request) (any, error) {
	if err := a.cfg.Shell.Service.KillShell(r.Context(), r.PathValue("shellID")); err != nil {
		return nil, failed(err, "Failed to end the shell")
	}
	return nil, nil
}

// recordQuery reads the v1 handshake's optional record=true|false, which
// asks for the session's recording. Reasons: invalid_query.
func recordQuery(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if !q.Has("record") {
		return false, nil
	}
	v, err := strconv.ParseBool(q.Get("record"))
	if err != nil {
		return false, cairn.Errorf(cairn.ReasonInvalidQuery, "'record' must be true or false")
	}
	return v, nil
}
