package rest

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/route"
)

// ShellConfig is what the shell routes need (PTYSHELL.md §3, §8).
type ShellConfig struct {
	// Service opens, lists and ends shells; nil leaves the three shell
	// routes unmounted.
	Service ShellService
	// AllowedOrigins is api.cors.allowedOrigins. server/auth has refused
	// any other Origin already; the upgrade checks again (§3.2 row 1).
	AllowedOrigins []string
	// V2, if set, mounts the v2 routes (create, attach, watch).
	V2 ShellV2Service
}

// ShellService is the shell rules as the routes call them.
type ShellService interface {
	cairn.ShellService
	// Admit answers §3.2 rows 5 and 6. Reasons: shell_disabled,
	// server_shutting_down.
	Admit() error
	// OpenShell answers rows 10–16 and creates the container. Reasons:
	// those of rows 5–16, workspace_busy.
	OpenShell(ctx context.Context, o cairn.ShellOpen) (ShellSession, error)
}

// ShellSession is an opened shell whose container exists, not started.
type ShellSession interface {
	// Run serves the session with serve and records its end.
	Run(serve func(ctx context.Context, stream ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult)
	// Abort tears the session down when the upgrade failed.
	Abort()
}

// shellSendBuffer bounds the kernel's send buffer of a shell connection.
const shellSendBuffer = 128 << 10

// shellStatuses are the shell routes' own statuses where they depart from
// the one table (cairn.Reason.HTTPStatus): a workspace without a volume is a
// conflict with its state here, not a malformed transfer request.
var shellStatuses = map[cairn.Reason]int{
	cairn.ReasonVolumeNotReady: http.StatusConflict,
}

func (a *API) shellRoutes() []route.Route {
	return append([]route.Route{
		{Method: http.MethodGet, Path: "/v1/workspaces/{workspaceID}/shell", Scope: route.Shell,
			Handler: a.websocketRoute(a.shellHandshake)},
		a.route("GET /v1/shells", route.Read, a.listShells),
		a.route("DELETE /v1/shells/{shellID}", route.Admin, a.killShell),
	}, a.shellV2Routes()...)
}

// shellHandshake serves GET /v1/workspaces/{workspaceID}/shell: every
// refusal of §3.2 rows 5–16 in order, as an envelope before any upgrade
// (rows 1–4 are server/auth's), then the upgrade, then the session, which
// runs to its end inside it. It is not wrapped by serve: once upgraded the
// connection belongs to the session, and nothing may write an HTTP answer.
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
	up := a.shellUpgrader(id)
	conn, err := up.Upgrade(hijacker(w), r, http.Header{a.cfg.RequestIDHeader: {id}})
	if err != nil {
		sess.Abort() // the upgrader has answered
		return http.StatusBadRequest
	}
	if tcp, ok := conn.NetConn().(*net.TCPConn); ok {
		// Left to autotuning the kernel buffers megabytes of a flood on
		// loopback, which Ctrl-C then waits behind (§6.4).
		_ = tcp.SetWriteBuffer(shellSendBuffer) // only a bound; the default works too
	}
	sess.Run(func(ctx context.Context, stream ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult {
		return ptyshell.Serve(ctx, conn, stream, opts)
	})
	return http.StatusSwitchingProtocols
}

// shellUpgrader upgrades with the subprotocol, no compression (§6.3), the
// Origin rule of row 1 (never a blanket yes) and the envelope for a
// handshake gorilla refuses itself.
func (a *API) shellUpgrader(id string) *websocket.Upgrader {
	return &websocket.Upgrader{
		HandshakeTimeout: ptyshell.HandshakeTimeout,
		ReadBufferSize:   4 << 10,
		WriteBufferSize:  ptyshell.MaxDataPayload + 64,
		Subprotocols:     []string{ptyshell.Subprotocol},
		CheckOrigin:      a.shellOriginAllowed,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			err := &cairn.Error{Reason: cairn.ReasonWebsocketRequired, Detail: "malformed websocket handshake: " + reason.Error()}
			switch status {
			case http.StatusForbidden:
				err = &cairn.Error{Reason: cairn.ReasonOriginNotAllowed, Detail: "Origin not allowed"}
			case http.StatusInternalServerError:
				err = cairn.Internal("the connection cannot be upgraded", reason)
			}
			a.refuseShell(w, r, id, err)
		},
	}
}

// shellOriginAllowed is §3.2 row 1: no Origin (the Go client sends none),
// or one listed in api.cors.allowedOrigins.
func (a *API) shellOriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	return origin == "" || slices.ContainsFunc(a.cfg.Shell.AllowedOrigins, func(o string) bool {
		return strings.EqualFold(o, origin)
	})
}

// refuseShell answers a refused handshake with the envelope (its detail
// the refusal's sentence) and returns the status.
func (a *API) refuseShell(w http.ResponseWriter, r *http.Request, id string, err error) int {
	return a.refuseUpgrade(w, r, id, err, "Cannot open a shell", "shell open failed")
}

// listShells serves GET /v1/shells[?workspace_id=ID] (§8.1).
func (a *API) listShells(r *http.Request) (any, error) {
	list, err := a.cfg.Shell.Service.FindShells(r.Context(), r.URL.Query().Get("workspace_id"))
	if err != nil {
		return nil, failed(err, "Failed to list shells")
	}
	return list, nil
}

// killShell serves DELETE /v1/shells/{shellID} (§8.2).
func (a *API) killShell(r *http.Request) (any, error) {
	if err := a.cfg.Shell.Service.KillShell(r.Context(), r.PathValue("shellID")); err != nil {
		return nil, failed(err, "Failed to end the shell")
	}
	return nil, nil
}

// hijacker finds the http.Hijacker under decorators that wrap the
// ResponseWriter (the HTTP metrics recorder offers only Unwrap), since
// gorilla's upgrader asks w itself.
func hijacker(w http.ResponseWriter) http.ResponseWriter {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return w
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
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
