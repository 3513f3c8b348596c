package rest

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/server/envelope"
	"github.com/cairn-dev/cairn/server/route"
)

// ShellV2Service is the v2 shell as its routes call it:
// a shell created apart from any connection, attached with its secret,
// watched read-only.
type ShellV2Service interface {
	// CreateShell creates and starts a shell, detached. Reasons: those of
	// OpenShell.
	CreateShell(ctx context.Context, o cairn.ShellOpen) (*cairn.ShellSessionInfo, error)
	// AttachShell connects a new writer to the shell's holder. Reasons:
	// shell_secret_required, shell_secret_invalid, shell_not_found,
	// shell_not_attachable.
	AttachShell(ctx context.Context, id, secret string, size ptyshell.Size, clientAddr string) (ShellBridge, error)
	// WatchShell connects a read-only watcher (audited).
	WatchShell(ctx context.Context, id, clientAddr string) (ShellBridge, error)
	// SignalShell sends a signal by name to the shell's foreground job.
	// Reasons: those of AttachShell, invalid_parameters,
	// docker_unavailable.
	SignalShell(ctx context.Context, id, secret, name string) error
}

// ShellBridge is one connection to a v2 shell's holder, which the upgraded
// client is bridged to frame by frame: the holder serves it.
type ShellBridge = Session[*websocket.Conn, holder.BridgeOptions, holder.BridgeResult]

// bridgeShell bridges the upgraded client to the holder's connection.
func bridgeShell(ctx context.Context, client, shell *websocket.Conn, opts holder.BridgeOptions) holder.BridgeResult {
	if tcp, ok := client.NetConn().(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(shellSendBuffer) // only a bound; the default works too
	}
	return holder.Bridge(ctx, client, shell, opts)
}

// shellV2Routes are mounted when Shell.V2 is set. Watching takes scope
// shell, like attaching: it shows a live terminal, which is as sensitive as
// typing into it; it needs no secret, and every watch is audited.
func (a *API) shellV2Routes() []route.Route {
	if a.cfg.Shell.V2 == nil {
		return nil
	}
	return []route.Route{
		{Method: http.MethodPost, Path: "/v1/workspaces/{workspaceID}/shells", Scope: route.Shell,
			Handler: http.HandlerFunc(a.createShell)},
		{Method: http.MethodGet, Path: "/v1/shells/{shellID}/attach", Scope: route.Shell,
			Handler: a.shellV2Handler(ptyshell.RoleWriter)},
		{Method: http.MethodGet, Path: "/v1/shells/{shellID}/watch", Scope: route.Shell,
			Handler: a.shellV2Handler(ptyshell.RoleWatcher)},
		a.route("POST /v1/shells/{shellID}/signal", route.Shell, a.signalShell),
	}
}

// signalShell answers POST /v1/shells/{shellID}/signal {signal}: the
// signal goes to the shell's foreground job. It takes the shell's secret,
// as typing into it does.
func (a *API) signalShell(r *http.Request) (any, error) {
	id := r.PathValue("shellID")
	var body struct {
		Signal string `json:"signal"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return nil, failed(err, "Unable to parse signal parameters from request")
	}
	if err := a.cfg.Shell.V2.SignalShell(r.Context(), id, r.Header.Get(cairn.ShellSecretHeader), body.Signal); err != nil {
		return nil, failed(err, "Failed to signal shell %s", id)
	}
	return nil, nil
}

// createShell serves POST /v1/workspaces/{workspaceID}/shells: the body's
// size and TERM; the answer carries the shell's ID and its secret, which
// nothing logs. Refusals use the shell's statuses (volume_not_ready
// is 409), as the v1 route does.
func (a *API) createShell(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := envelope.RequestID(r.Header.Get(a.cfg.RequestIDHeader))
	w.Header().Set(a.cfg.RequestIDHeader, id)
	ctx, cancel := context.WithTimeout(cairn.WithRequestID(r.Context(), id), a.cfg.RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	status := http.StatusOK
	var info *cairn.ShellSessionInfo
	var err error
	if r.Header.Get(cairn.HeaderIdempotencyKey) != "" {
		// The answer holds the shell's secret, which is never kept.
		err = cairn.Errorf(cairn.ReasonInvalidParameters,
			"a shell takes no Idempotency-Key: its answer holds the shell's secret, which is never kept")
	} else {
		info, err = a.newShell(r)
	}
	if err != nil {
		status = a.refuseShell(w, r, id, err)
	} else {
		envelope.WriteSuccess(w, id, info)
	}
	a.log.Log(ctx, a.cfg.LogLevel, "request", "method", r.Method, "path", r.URL.Path,
		"status", status, "request_id", id, "duration", time.Since(start))
}

func (a *API) newShell(r *http.Request) (*cairn.ShellSessionInfo, error) {
	if err := a.cfg.Shell.Service.Admit(); err != nil {
		return nil, err
	}
	var body cairn.ShellCreate
	if err := decodeJSON(r, &body); err != nil {
		return nil, err
	}
	return a.cfg.Shell.V2.CreateShell(r.Context(), cairn.ShellOpen{WorkspaceID: r.PathValue("workspaceID"),
		Cols: body.Cols, Rows: body.Rows, Term: body.Term, ClientAddr: r.RemoteAddr, Record: body.Record})
}

// shellV2Handler serves attach (a writer) or watch: the refusals before the
// upgrade in v1's order (shell disabled, shutting down, not a websocket,
// subprotocol not offered — cairn.ptyshell.v2 here — bad terminal size),
// then the shell's own (secret, replica), then the upgrade and the
// connection.
func (a *API) shellV2Handler(role string) http.HandlerFunc {
	return a.websocketRoute(func(w http.ResponseWriter, r *http.Request, id string) int {
		return a.attachHandshake(w, r, id, role)
	})
}

func (a *API) attachHandshake(w http.ResponseWriter, r *http.Request, id, role string) int {
	offersV2 := func(r *http.Request) bool { return ptyshell.Offers(r, ptyshell.SubprotocolV2) }
	if err := upgradeRefusal(r, a.cfg.Shell.Service.Admit, "the shell", ptyshell.SubprotocolV2, offersV2); err != nil {
		return a.refuseShell(w, r, id, err)
	}
	h, err := ptyshell.ParseHandshake(r.URL.Query())
	if err != nil {
		return a.refuseShell(w, r, id, &cairn.Error{Reason: cairn.ReasonInvalidTerminal, Detail: err.Error(), Err: err})
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestTimeout)
	defer cancel()
	var sess ShellBridge
	if role == ptyshell.RoleWriter {
		sess, err = a.cfg.Shell.V2.AttachShell(ctx, r.PathValue("shellID"), r.Header.Get(cairn.ShellSecretHeader), h.Size, r.RemoteAddr)
	} else {
		sess, err = a.cfg.Shell.V2.WatchShell(ctx, r.PathValue("shellID"), r.RemoteAddr)
	}
	if err != nil {
		return a.refuseShell(w, r, id, err)
	}
	return serveUpgraded(w, r, a.shellUpgrader(id, ptyshell.SubprotocolV2), http.Header{a.cfg.RequestIDHeader: {id}},
		sess, bridgeShell)
}
