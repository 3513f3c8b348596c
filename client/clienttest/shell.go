package clienttest

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// SetShellEnabled says whether the server has the shell on: off, GET
// /v1/shells says enabled false and the shell route answers 404
// shell_disabled.
func (s *Server) SetShellEnabled(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shellEnabled = on
}

// OnShell sets up the process behind each shell opened from now on
// (ExitOnCommand by default).
func (s *Server) OnShell(f func(wsID string, st *ptyshelltest.Stream)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onShell = f
}

var exitLine = regexp.MustCompile(`(?:^|[\r\n])exit ([0-9]{1,3})[\r\n]`)

// ExitOnCommand makes a shell that echoes its input and exits with N once
// it reads a line "exit N".
func ExitOnCommand(_ string, st *ptyshelltest.Stream) {
	var mu sync.Mutex
	var typed []byte
	st.Echo = true
	st.OnInput = func(st *ptyshelltest.Stream, p []byte) {
		mu.Lock()
		typed = append(typed, p...)
		m := exitLine.FindSubmatch(typed)
		mu.Unlock()
		if m != nil {
			code, _ := strconv.Atoi(string(m[1])) // the pattern holds digits only
			st.Exit(code)
		}
	}
}

func (s *Server) listShells(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	on := s.shellEnabled
	s.mu.Unlock()
	reply(w, map[string]any{"shells": []*cairn.Shell{}, "enabled": on})
}

// shell runs the shell route's refusals, then ptyshell.Serve over a
// scripted process.
func (s *Server) shell(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	on, setup := s.shellEnabled, s.onShell
	x, found := s.ws[r.PathValue("id")]
	var ws cairn.Workspace
	if found {
		ws = *x
	}
	s.mu.Unlock()
	h, herr := ptyshell.ParseHandshake(r.URL.Query())
	switch {
	case !on:
		fail(w, &cairn.Error{Reason: cairn.ReasonShellDisabled, Detail: "the shell is turned off"})
		return
	case !websocket.IsWebSocketUpgrade(r):
		fail(w, cairn.Errorf(cairn.ReasonWebsocketRequired, "a shell needs a websocket upgrade"))
		return
	case !ptyshell.Offered(r):
		fail(w, cairn.Errorf(cairn.ReasonSubprotocolRequired, "offer %s", ptyshell.Subprotocol))
		return
	case herr != nil:
		fail(w, &cairn.Error{Reason: cairn.ReasonInvalidTerminal, Detail: herr.Error()})
		return
	case !found:
		fail(w, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "workspace '%s' does not exist", r.PathValue("id")))
		return
	case ws.VolumeState != cairn.VolumeReady:
		fail(w, &cairn.Error{Reason: cairn.ReasonVolumeNotReady, Status: volumeRouteStatus(), Detail: "workspace " + ws.Name + " has no volume"})
		return
	}
	up := websocket.Upgrader{Subprotocols: []string{ptyshell.Subprotocol}, CheckOrigin: upgrader.CheckOrigin}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered
	}
	st := ptyshelltest.NewStream()
	setup(ws.ID, st)
	s.shellDone.Add(1)
	defer s.shellDone.Done()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		select {
		case <-s.closing:
			cancel(errors.New("clienttest closed"))
		case <-ctx.Done():
		}
	}()
	ptyshell.Serve(ctx, conn, st, ptyshell.ServeOptions{
		Status: ptyshell.Status{ShellID: "shell-" + ws.ID, Container: "clienttest", WorkspaceID: ws.ID, WorkspaceName: ws.Name},
		Size:   h.Size,
	})
}
