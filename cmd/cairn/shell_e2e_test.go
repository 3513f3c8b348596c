package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/docker/docker/api/types/container"
	"github.com/gorilla/websocket"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// readSession reads a session's frames until its OUTPUT holds want and
// returns the output read.
func readSession(t *testing.T, sess *ptyshell.Session, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), ptyshelltest.Guard)
	defer cancel()
	var out strings.Builder
	for !strings.Contains(out.String(), want) {
		m, err := sess.Next(ctx)
		require.NoError(t, err, "waiting for %q; output so far: %q", want, out.String())
		out.Write(m.Output)
	}
	return out.String()
}

// exitOf reads a session to its end and returns its EXIT.
func exitOf(t *testing.T, sess *ptyshell.Session) (ptyshell.Exit, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), ptyshelltest.Guard)
	defer cancel()
	var out strings.Builder
	for {
		m, err := sess.Next(ctx)
		if err != nil {
			res := sess.Result()
			require.Equal(t, ptyshell.EndExit, res.Ending, "ended without EXIT: %v (output %q)", err, out.String())
			return res.Exit, out.String()
		}
		out.Write(m.Output)
	}
}

// TestShellEndToEnd runs the numbered shell scenarios (echo, resize, exit
// codes, drops, refusals, list and kill, timers, shutdown, caps, a kill
// across servers, a flood) against real `cairn server` processes sharing
// one database, Postgres, versitygw and Docker: each over v1 and over v2,
// where v2 opens a shell by creating it and attaching with its secret.
// Scenario 7 (leftovers made through Docker) has no protocol and runs
// once.
func TestShellEndToEnd(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{maintainer: true})

	t.Run("StartRefused", func(t *testing.T) {
		exposed := st.start(t, shellServerOpts{exposed: true, refused: true})
		require.Contains(t, exposed.out.String(), "the shell needs auth.tokens when any listener is not on a loopback address")
		noImage := st.start(t, shellServerOpts{image: "cairn-shell:absent", refused: true})
		require.Contains(t, noImage.out.String(), `shell image "cairn-shell:absent" is not on the docker host; build it with 'make images'`)
	})
	t.Run("3CairnShellUnderAPTY", func(t *testing.T) { cairnShellUnderPTY(t, st, a) })
	t.Run("V2", func(t *testing.T) { shellV2EndToEnd(t, st, a) })
	t.Run("7Leftovers", func(t *testing.T) { leftovers(t, st, a) })
	for _, p := range []shellProto{protoV1, protoV2} {
		t.Run(string(p), func(t *testing.T) { shellScenarios(t, st, a, p) })
	}
}

// shellScenarios runs every numbered scenario but 7 over p.
func shellScenarios(t *testing.T, st *shellStack, a *shellServer, p shellProto) {
	ctx := t.Context()
	size := ptyshell.Size{Cols: 120, Rows: 40}
	t.Run("1EchoRoundTrip", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		sess := a.open(t, p, ws.ID, size)
		defer func() { _ = sess.Close() }() // always nil
		token := strings.ToLower(ulid.Make().String())
		_, err := sess.Write([]byte(`echo hel""lo-` + token + "\r"))
		require.NoError(t, err)
		readSession(t, sess, "hello-"+token)
		status := sess.Result().Status
		require.Equal(t, ws.ID, status.WorkspaceID)
		require.Equal(t, ws.Name, status.WorkspaceName)
		require.Equal(t, st.app+".shell."+ws.ID+"."+status.ShellID, status.Container)
	})

	t.Run("2SizeAndResize", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		sess := a.open(t, p, ws.ID, size)
		defer func() { _ = sess.Close() }() // always nil
		_, err := sess.Write([]byte("stty size; echo sz-\"\"one\r"))
		require.NoError(t, err)
		require.Contains(t, readSession(t, sess, "sz-one"), "40 120")
		require.NoError(t, sess.Resize(ptyshell.Size{Cols: 100, Rows: 30}))
		// The resize and the typed line travel apart; the shell waits to see
		// the new size before it reports it.
		_, err = sess.Write([]byte(`while [ "$(stty size)" != "30 100" ]; do usleep 20000; done; stty size; echo sz-""two` + "\r"))
		require.NoError(t, err)
		require.Contains(t, readSession(t, sess, "sz-two"), "30 100")
	})

	t.Run("3ExitCode", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		conn, _ := a.dialAs(t, p, ws.ID, size)
		require.NoError(t, conn.SendInput([]byte("exit 42\r")))
		tr := conn.Collect()
		require.Equal(t, 1, tr.Exits)
		require.Equal(t, 42, tr.Exit.ExitCode)
		require.Equal(t, ptyshell.ReasonExited, tr.Exit.Reason)
		require.Equal(t, 1000, tr.CloseCode)
		require.Zero(t, tr.AfterExit, "nothing but the close follows EXIT")
	})

	t.Run("4OutputBeforeExit", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		sess := a.open(t, p, ws.ID, size)
		defer func() { _ = sess.Close() }() // always nil
		_, err := sess.Write([]byte(`i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done; exit 3` + "\r"))
		require.NoError(t, err)
		exit, out := exitOf(t, sess)
		require.Equal(t, 3, exit.ExitCode)
		for _, n := range []int{0, 1, 999, 1998, 1999} {
			require.Contains(t, out, "line"+strconv.Itoa(n)+"\r\n")
		}
		require.Equal(t, 2000, strings.Count(out, "\r\nline")+boolInt(strings.HasPrefix(out, "line")), "every line arrived")
	})

	t.Run("5DropWithoutCloseFrame", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		if p == protoV2 {
			dropThenReattach(t, st, a, ws, size)
			return
		}
		conn, status := a.dialAs(t, p, ws.ID, size)
		_, err := conn.ReadOutput("#")
		require.NoError(t, err)
		require.Equal(t, 1, st.count(t, "cairn.shell="+status.ShellID))
		start := time.Now()
		require.NoError(t, conn.NetConn().Close(), "TCP goes, with no close frame")
		require.Eventually(t, func() bool { return st.count(t, "cairn.shell="+status.ShellID) == 0 },
			20*time.Second, 50*time.Millisecond, "the container goes with the connection")
		t.Logf("container gone %s after the drop (bound: stopSecs + 5 s)", time.Since(start).Round(time.Millisecond))
		row := a.closedRow(t, ws.ID, status.ShellID)
		require.Equal(t, "client_gone", row["reason"])
	})

	t.Run("6TeardownRefusedWhileOpen", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		conn, status := a.dialAs(t, p, ws.ID, size)
		_, err := conn.ReadOutput("#")
		require.NoError(t, err)
		err = a.admin.TeardownVolume(ctx, ws.ID)
		require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err), "err: %v", err)
		var ce *cairn.Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, http.StatusConflict, ce.Status)
		require.Contains(t, ce.Detail, status.ShellID, "the refusal names the open shell")
		require.Contains(t, ce.Detail, "DELETE /v1/shells/{id}")
		d, err := a.admin.InspectWorkspace(ctx, ws.ID)
		require.NoError(t, err)
		require.Equal(t, cairn.VolumeReady, d.Workspace.VolumeState)
		require.Equal(t, 1, d.MountCount, "the open shell counts as a mount")

		require.NoError(t, conn.SendInput([]byte("exit\r")))
		require.Equal(t, 1, conn.Collect().Exits)
		require.Eventually(t, func() bool { return a.admin.TeardownVolume(ctx, ws.ID) == nil },
			20*time.Second, 100*time.Millisecond, "teardown succeeds once the shell is gone")
	})

	t.Run("8Refusals", func(t *testing.T) {
		if p == protoV2 {
			refusalsV2(t, st, a)
			return
		}
		ready, none := a.readyWorkspace(t), a.readyWorkspace(t)
		require.NoError(t, a.admin.TeardownVolume(ctx, none.ID))
		disabled := st.start(t, shellServerOpts{disabled: true})
		before := st.count(t, "cairn.app="+st.app)
		for _, tc := range []struct {
			name   string
			srv    *shellServer
			ws     string
			set    func(r *http.Request)
			status int
			reason cairn.Reason
		}{
			{"Origin", a, ready.ID, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, cairn.ReasonOriginNotAllowed},
			{"Host", a, ready.ID, func(r *http.Request) { r.Host = "evil.example" }, 403, cairn.ReasonHostNotAllowed},
			{"NoToken", a, ready.ID, func(r *http.Request) { r.Header.Del("Authorization") }, 401, cairn.ReasonUnauthenticated},
			{"NoShellScope", a, ready.ID, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+shellNoShellToken) }, 403, cairn.ReasonForbidden},
			{"VolumeNone", a, none.ID, nil, 409, cairn.ReasonVolumeNotReady},
			{"Disabled", disabled, ready.ID, nil, 404, cairn.ReasonShellDisabled},
			{"NotWebsocket", a, ready.ID, func(r *http.Request) { r.Header.Del("Upgrade") }, 400, cairn.ReasonWebsocketRequired},
			{"NoSubprotocol", a, ready.ID, func(r *http.Request) { r.Header.Set("Sec-WebSocket-Protocol", "other") }, 400, cairn.ReasonSubprotocolRequired},
			{"BadSize", a, ready.ID, func(r *http.Request) { r.URL.RawQuery = "cols=0&rows=40" }, 400, cairn.ReasonInvalidTerminal},
			{"NoWorkspace", a, "00000000-0000-4000-8000-000000000000", nil, 404, cairn.ReasonWorkspaceNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, env, hdr := tc.srv.rawShellRequest(t, "/v1/workspaces/"+tc.ws+"/shell?cols=80&rows=24", func(r *http.Request) {
					r.Header.Set("X-Request-ID", "req-"+tc.name)
					if tc.set != nil {
						tc.set(r)
					}
				})
				require.Equal(t, tc.status, status)
				require.Equal(t, false, env["success"])
				require.Equal(t, "req-"+tc.name, env["request_id"])
				require.Equal(t, "req-"+tc.name, hdr.Get("X-Request-ID"))
				e, _ := env["error"].(map[string]any)
				require.Equal(t, string(tc.reason), e["reason"])
				require.Equal(t, float64(tc.status), e["code"])
				require.NotEmpty(t, e["message"])
			})
		}
		require.Equal(t, before, st.count(t, "cairn.app="+st.app), "no refusal made a container")
	})

	t.Run("9ListAndKill", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		conn, status := a.dialAs(t, p, ws.ID, size)
		require.NoError(t, conn.SendInput([]byte("echo ty\"\"ped\r")))
		_, err := conn.ReadOutput("typed")
		require.NoError(t, err)
		list, err := a.admin.FindShells(ctx, ws.ID)
		require.NoError(t, err)
		require.True(t, list.Enabled)
		require.Len(t, list.Shells, 1)
		sh := list.Shells[0]
		require.Equal(t, status.ShellID, sh.ID)
		require.Equal(t, ws.ID, sh.WorkspaceID)
		require.Equal(t, status.Container, sh.Container)
		require.Equal(t, a.instance, sh.Instance)
		require.Equal(t, "running", sh.State)
		require.Equal(t, "admin", sh.TokenName)
		require.True(t, sh.Local)
		require.NotEmpty(t, sh.ClientAddr)
		require.NotNil(t, sh.LastInputAt)
		require.True(t, sh.ExpiresAt.After(sh.StartedAt))

		require.NoError(t, a.admin.KillShell(ctx, status.ShellID))
		tr := conn.Collect()
		require.Equal(t, ptyshell.ReasonTerminated, tr.Exit.Reason)
		require.Equal(t, ptyshell.CloseTerminated, tr.CloseCode)
		err = a.admin.KillShell(ctx, status.ShellID)
		require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err), "err: %v", err)
		row := a.closedRow(t, ws.ID, status.ShellID)
		require.Equal(t, "terminated", row["reason"])
		require.Equal(t, "admin", row["killed_by"])
	})

	t.Run("10IdleAndLifetime", func(t *testing.T) {
		// Both clocks start once the container runs, before a v2 shell's
		// creator has attached: 4 s of idle leaves a loaded machine room
		// for the attach and the first keystroke, and the lifetime stays
		// 2 s past it, so the typing shell cannot end idle first.
		tight := st.start(t, shellServerOpts{shell: "timeouts: {idleSecs: 4, idleWarningSecs: 1, maxLifetimeSecs: 6}"})
		idleWS, lifeWS := a.readyWorkspace(t), a.readyWorkspace(t)

		idle, _ := tight.dialAs(t, p, idleWS.ID, size)
		tr := idle.Collect() // answers pings, sends nothing
		require.Equal(t, ptyshell.ReasonIdleTimeout, tr.Exit.Reason)
		require.Equal(t, ptyshell.CloseIdleTimeout, tr.CloseCode)
		// A lifetime shorter than its 300 s warning is announced at once.
		require.Contains(t, tr.Notices, ptyshell.Notice{Code: ptyshell.NoticeIdleWarning, SecondsLeft: 1})

		life, _ := tight.dialAs(t, p, lifeWS.ID, size)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if life.SendInput([]byte(" ")) != nil {
						return
					}
				}
			}
		})
		tr = life.Collect()
		close(stop)
		wg.Wait()
		require.Equal(t, ptyshell.ReasonMaxLifetime, tr.Exit.Reason)
		require.Equal(t, ptyshell.CloseMaxLifetime, tr.CloseCode)
	})

	t.Run("11ShutdownWithTwoShells", func(t *testing.T) {
		d := st.start(t, shellServerOpts{})
		ws := a.readyWorkspace(t)
		one, _ := d.dialAs(t, p, ws.ID, size)
		two, _ := d.dialAs(t, p, ws.ID, size)
		require.Equal(t, 2, st.count(t, "cairn.instance="+d.instance))
		require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
		var wg sync.WaitGroup
		trs := make([]ptyshelltest.Transcript, 2)
		for i, c := range []*ptyshelltest.Conn{one, two} {
			wg.Go(func() { trs[i] = c.Collect() })
		}
		wg.Wait()
		if p == protoV2 {
			// The shells live in their containers: the stop cuts the
			// connections (the clients reattach elsewhere) and ends nothing.
			for _, tr := range trs {
				require.Zero(t, tr.Exits, "no EXIT: the shell did not end")
				require.Equal(t, websocket.CloseAbnormalClosure, tr.CloseCode, "cut, as a lost connection")
			}
			require.NoError(t, d.cmd.Wait(), "output:\n%s", d.out)
			list, err := a.admin.FindShells(ctx, ws.ID)
			require.NoError(t, err)
			require.Len(t, list.Shells, 2, "both shells outlive their server")
			for _, sh := range list.Shells {
				require.True(t, sh.Local && *sh.Detached, "each answers through another server, detached")
				require.NoError(t, a.admin.KillShell(ctx, sh.ID))
			}
			require.Zero(t, st.count(t, "cairn.instance="+d.instance), "no shell container is left")
			return
		}
		for _, tr := range trs {
			require.Equal(t, ptyshell.ReasonServerShutdown, tr.Exit.Reason)
			require.Equal(t, 1001, tr.CloseCode)
		}
		require.NoError(t, d.cmd.Wait(), "output:\n%s", d.out)
		require.Zero(t, st.count(t, "cairn.instance="+d.instance), "no shell container is left")
	})

	t.Run("12Caps", func(t *testing.T) {
		capped := st.start(t, shellServerOpts{shell: "limits: {maxSessionsPerWorkspace: 1}"})
		ws := a.readyWorkspace(t)
		_, status := capped.dialAs(t, p, ws.ID, size)
		require.Equal(t, 1, st.count(t, "cairn.workspace="+ws.ID))
		code, env, _ := capped.rawShellRequest(t, "/v1/workspaces/"+ws.ID+"/shell?cols=80&rows=24", nil)
		if p == protoV2 {
			code, env, _ = capped.rawCreateRequest(t, ws.ID, `{"cols":80,"rows":24}`, nil)
		}
		require.Equal(t, http.StatusTooManyRequests, code)
		require.Equal(t, "too_many_shells", env["error"].(map[string]any)["reason"])
		require.Equal(t, 1, st.count(t, "cairn.workspace="+ws.ID), "no container for the refused open")
		require.NoError(t, capped.admin.KillShell(ctx, status.ShellID))
		other, _ := capped.dialAs(t, p, ws.ID, size)
		require.NoError(t, other.SendInput([]byte("exit\r")))
		require.Equal(t, 1, other.Collect().Exits, "the slot is free again")
	})

	t.Run("13WriteTimeoutDoesNotCut", func(t *testing.T) {
		// A request's own bound is the write timeout less 5 s (at least
		// 1 s), and a v2 shell is created by a request: 10 s leaves its
		// container 5 s to start on a loaded engine (2 s left 1 s, and CI
		// hit it). The shell then outlives the write timeout.
		short := st.start(t, shellServerOpts{writeTimeout: 10})
		ws := a.readyWorkspace(t)
		conn, _ := short.dialAs(t, p, ws.ID, size)
		require.NoError(t, conn.SendInput([]byte("sleep 12; echo slept-\"\"ok\r")))
		_, err := conn.ReadOutput("slept-ok")
		require.NoError(t, err)
		require.NoError(t, conn.SendInput([]byte("echo still-\"\"here\r")))
		_, err = conn.ReadOutput("still-here")
		require.NoError(t, err)
	})

	t.Run("14CrossServerKill", func(t *testing.T) {
		b := st.start(t, shellServerOpts{})
		ws := a.readyWorkspace(t)
		conn, status := a.dialAs(t, p, ws.ID, size)
		_, err := conn.ReadOutput("#")
		require.NoError(t, err)
		list, err := b.admin.FindShells(ctx, ws.ID)
		require.NoError(t, err)
		require.Len(t, list.Shells, 1)
		if p == protoV1 {
			require.False(t, list.Shells[0].Local, "B lists A's v1 shell, without A's details")
			require.Empty(t, list.Shells[0].ClientAddr)
		} else {
			require.True(t, list.Shells[0].Local, "B reaches the v2 shell's holder for its live details")
			require.NotNil(t, list.Shells[0].Detached)
			require.False(t, *list.Shells[0].Detached, "A's writer is attached")
			attachThroughOtherReplica(t, a, b, ws, size)
		}
		require.NoError(t, b.admin.KillShell(ctx, status.ShellID))
		tr := conn.Collect()
		require.Equal(t, ptyshell.ReasonTerminated, tr.Exit.Reason)
		require.Equal(t, ptyshell.CloseTerminated, tr.CloseCode)
	})

	t.Run("15FloodThenCtrlC", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		conn, _ := a.dialAs(t, p, ws.ID, size)
		_, err := conn.ReadOutput("#")
		require.NoError(t, err)
		before := vmRSS(t, a.cmd.Process.Pid)
		require.NoError(t, conn.SendInput([]byte("yes\r")))
		// A slow client: it reads a little, then nothing while the flood
		// fills every queue on the way.
		_, err = conn.ReadOutput("y\r\ny\r\n")
		require.NoError(t, err)
		time.Sleep(time.Second) // the client being slow is the point here, not synchronisation
		during := vmRSS(t, a.cmd.Process.Pid)
		start := time.Now()
		require.NoError(t, conn.SendInput([]byte{0x03}))
		require.NoError(t, conn.SendInput([]byte("echo back-\"\"ok\r")))
		_, err = conn.ReadOutput("back-ok")
		require.NoError(t, err)
		t.Logf("prompt back %s after Ctrl-C; server RSS %d KiB before, %d KiB during the flood",
			time.Since(start).Round(time.Millisecond), before>>10, during>>10)
		require.Less(t, during-before, int64(32<<20), "the server's memory stays bounded")
	})
}

// dropThenReattach is row 5 over v2: a writer gone without a close frame
// leaves its shell detached with its container running, and an attach with
// the secret resumes it, the screen rendered.
func dropThenReattach(t *testing.T, st *shellStack, a *shellServer, ws *cairn.Workspace, size ptyshell.Size) {
	info, err := a.admin.CreateShell(t.Context(), ws.ID, size, "")
	require.NoError(t, err)
	conn, _ := a.attach(t, info.ShellID, info.Secret, size)
	require.NoError(t, conn.SendInput([]byte("echo before-\"\"drop\r")))
	_, err = conn.ReadOutput("before-drop")
	require.NoError(t, err)
	require.NoError(t, conn.NetConn().Close(), "TCP goes, with no close frame")
	require.Eventually(t, func() bool {
		list, err := a.admin.FindShells(t.Context(), ws.ID)
		require.NoError(t, err)
		return len(list.Shells) == 1 && list.Shells[0].Detached != nil && *list.Shells[0].Detached
	}, 20*time.Second, 50*time.Millisecond, "the shell is listed detached")
	require.Equal(t, 1, st.count(t, "cairn.shell="+info.ShellID), "its container runs on")

	back, _ := a.attach(t, info.ShellID, info.Secret, size)
	_, err = back.ReadOutput("before-drop") // the render: the command's output line
	require.NoError(t, err)
	require.NoError(t, back.SendInput([]byte("exit 4\r")))
	tr := back.Collect()
	require.Equal(t, 4, tr.Exit.ExitCode)
	require.Equal(t, "exited", a.closedRow(t, ws.ID, info.ShellID)["reason"])
	require.Eventually(t, func() bool { return st.count(t, "cairn.shell="+info.ShellID) == 0 },
		20*time.Second, 50*time.Millisecond, "the container goes with the shell's exit")
}

// attachThroughOtherReplica is row 14's v2 half: a shell created through
// a is attached, watched and killed through b, which bridges to its holder
// as a would; b's writer takes over from a's.
func attachThroughOtherReplica(t *testing.T, a, b *shellServer, ws *cairn.Workspace, size ptyshell.Size) {
	info, err := a.admin.CreateShell(t.Context(), ws.ID, size, "")
	require.NoError(t, err)
	first, _ := a.attach(t, info.ShellID, info.Secret, size)
	require.NoError(t, first.SendInput([]byte("echo via-\"\"a\r")))
	_, err = first.ReadOutput("via-a")
	require.NoError(t, err)

	second, _ := b.attach(t, info.ShellID, info.Secret, size)
	_, err = second.ReadOutput("via-a") // the screen's render, through b
	require.NoError(t, err)
	tr := first.Collect()
	require.Equal(t, ptyshell.ReasonTakenOver, tr.Exit.Reason, "a's writer is taken over by b's")
	watcher := b.watch(t, info.ShellID)
	require.NoError(t, second.SendInput([]byte("echo via-\"\"b\r")))
	_, err = watcher.ReadOutput("via-b")
	require.NoError(t, err)
	require.NoError(t, b.admin.KillShell(t.Context(), info.ShellID), "b kills it through the registry")
	require.Equal(t, ptyshell.ReasonTerminated, second.Collect().Exit.Reason)
}

// refusalsV2 is row 8 over v2: the create route refuses as v1's open does,
// and the attach route refuses a missing or wrong secret, an unknown
// shell, a plain request and a wrong subprotocol — all before the upgrade,
// with no container made and the secret in no log line or audit row.
func refusalsV2(t *testing.T, st *shellStack, a *shellServer) {
	ready, none := a.readyWorkspace(t), a.readyWorkspace(t)
	require.NoError(t, a.admin.TeardownVolume(t.Context(), none.ID))
	disabled := st.start(t, shellServerOpts{disabled: true})
	before := st.count(t, "cairn.app="+st.app)
	const okBody = `{"cols":80,"rows":24}`
	for _, tc := range []struct {
		name   string
		srv    *shellServer
		ws     string
		body   string
		set    func(r *http.Request)
		status int
		reason cairn.Reason
	}{
		{"Origin", a, ready.ID, okBody, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, cairn.ReasonOriginNotAllowed},
		{"Host", a, ready.ID, okBody, func(r *http.Request) { r.Host = "evil.example" }, 403, cairn.ReasonHostNotAllowed},
		{"NoToken", a, ready.ID, okBody, func(r *http.Request) { r.Header.Del("Authorization") }, 401, cairn.ReasonUnauthenticated},
		{"NoShellScope", a, ready.ID, okBody, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+shellNoShellToken) }, 403, cairn.ReasonForbidden},
		{"VolumeNone", a, none.ID, okBody, nil, 409, cairn.ReasonVolumeNotReady},
		{"Disabled", disabled, ready.ID, okBody, nil, 404, cairn.ReasonShellDisabled},
		{"BadSize", a, ready.ID, `{"cols":0,"rows":40}`, nil, 400, cairn.ReasonInvalidTerminal},
		{"NoWorkspace", a, "00000000-0000-4000-8000-000000000000", okBody, nil, 404, cairn.ReasonWorkspaceNotFound},
	} {
		t.Run("Create"+tc.name, func(t *testing.T) {
			status, env, _ := tc.srv.rawCreateRequest(t, tc.ws, tc.body, tc.set)
			require.Equal(t, tc.status, status, "envelope %v", env)
			require.Equal(t, false, env["success"])
			e, _ := env["error"].(map[string]any)
			require.Equal(t, string(tc.reason), e["reason"])
		})
	}
	require.Equal(t, before, st.count(t, "cairn.app="+st.app), "no refused create made a container")

	info, err := a.admin.CreateShell(t.Context(), ready.ID, ptyshell.Size{Cols: 80, Rows: 24}, "")
	require.NoError(t, err)
	v2 := func(secret string) func(r *http.Request) {
		return func(r *http.Request) {
			r.Header.Set("Sec-WebSocket-Protocol", ptyshell.SubprotocolV2)
			if secret != "" {
				r.Header.Set(cairn.ShellSecretHeader, secret)
			}
		}
	}
	wrong := strings.Repeat("A", len(info.Secret))
	for _, tc := range []struct {
		name   string
		shell  string
		set    func(r *http.Request)
		status int
		reason cairn.Reason
	}{
		{"NoSecret", info.ShellID, v2(""), 401, cairn.ReasonShellSecretRequired},
		{"WrongSecret", info.ShellID, v2(wrong), 403, cairn.ReasonShellSecretInvalid},
		{"NoShell", "00000000-0000-4000-8000-000000000000", v2(info.Secret), 404, cairn.ReasonShellNotFound},
		{"NotWebsocket", info.ShellID, func(r *http.Request) { v2(info.Secret)(r); r.Header.Del("Upgrade") }, 400, cairn.ReasonWebsocketRequired},
		{"V1Subprotocol", info.ShellID, func(r *http.Request) {
			v2(info.Secret)(r)
			r.Header.Set("Sec-WebSocket-Protocol", ptyshell.Subprotocol)
		}, 400, cairn.ReasonSubprotocolRequired},
	} {
		t.Run("Attach"+tc.name, func(t *testing.T) {
			status, env, _ := a.rawShellRequest(t, "/v1/shells/"+tc.shell+"/attach?cols=80&rows=24", tc.set)
			require.Equal(t, tc.status, status, "envelope %v", env)
			e, _ := env["error"].(map[string]any)
			require.Equal(t, string(tc.reason), e["reason"])
		})
	}
	list, err := a.admin.FindShells(t.Context(), ready.ID)
	require.NoError(t, err)
	require.Len(t, list.Shells, 1)
	require.True(t, *list.Shells[0].Detached, "no refused attach became its writer")
	require.NoError(t, a.admin.KillShell(t.Context(), info.ShellID))
	a.closedRow(t, ready.ID, info.ShellID)
	require.NotContains(t, a.out.String(), info.Secret, "the secret is in no server log line")
	require.NotContains(t, a.out.String(), wrong, "nor a wrong one")
	events, err := a.admin.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: ready.ID})
	require.NoError(t, err)
	for _, ev := range events {
		require.NotContains(t, fmt.Sprint(ev.Metadata), info.Secret, "the secret is in no audit row")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// leftovers is scenario 7: shell containers made behind the servers'
// backs, and which reaper takes which.
func leftovers(t *testing.T, st *shellStack, a *shellServer) {
	ctx := t.Context()
	ws := a.readyWorkspace(t)
	now := time.Now()
	create := func(app, instance string, expires time.Time, labelled bool) string {
		labels := map[string]string{"cairn.app": app, "cairn.kind": "shell", "cairn.shell": ulid.Make().String(),
			"cairn.workspace": ws.ID, "cairn.instance": instance, "cairn.expires": strconv.FormatInt(expires.Unix(), 10)}
		if !labelled {
			labels = map[string]string{"cairn.test": st.app}
		}
		resp, err := st.docker.ContainerCreate(ctx, &container.Config{Image: st.image, Cmd: []string{"-c", "sleep 300"},
			Labels: labels}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = st.docker.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}) // may be gone
		})
		require.NoError(t, st.docker.ContainerStart(ctx, resp.ID, container.StartOptions{}))
		return resp.ID
	}
	exists := func(id string) bool {
		_, err := st.docker.ContainerInspect(ctx, id)
		return err == nil
	}
	later, past := now.Add(time.Hour), now.Add(-2*time.Minute)
	ownNotRegistered := create(st.app, a.instance, later, true)
	otherExpired := create(st.app, "other-host:1", past, true)
	otherLive := create(st.app, "other-host:1", later, true)
	unlabelled := create(st.app, "", past, false)
	otherApp := create(st.app+"x", a.instance, past, true)

	require.Eventually(t, func() bool { return !exists(ownNotRegistered) }, 20*time.Second, 100*time.Millisecond,
		"the server's reaper takes its own instance's container that is not in its registry")
	res, err := a.admin.Sweep(ctx, "")
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.ContainersRemoved, 1)
	require.False(t, exists(otherExpired), "the maintainer takes an expired shell of another instance")
	for name, id := range map[string]string{"another instance's live shell": otherLive, "an unlabelled container": unlabelled,
		"another app's shell": otherApp} {
		require.True(t, exists(id), "%s is left alone", name)
	}
	// The server's reaper has had its chance at the survivors too.
	reaped := strings.Count(a.out.String(), "removed a leftover shell container")
	require.Equal(t, 1, reaped, "output:\n%s", a.out)
}

// ptyRunner returns a runner of the built `cairn shell ARGS` on a real
// terminal, speaking proto (CAIRN_SHELL_PROTOCOL), with its state (the v2
// secrets) under state. typed drives the terminal; kill SIGKILLs the CLI.
// cursorQuery asks a terminal where its cursor is; cursorAnswer is a
// terminal's answer.
const (
	cursorQuery  = "\x1b[6n"
	cursorAnswer = "\x1b[1;1R"
)

// cliStart is the output the CLI wrote before its banner. Only its
// queries are answered: the remote shell's own (busybox asks at each
// prompt) go unanswered, so that an answer never reaches the CLI in one
// read with a key a test types — the detach key counts only alone.
func cliStart(out string) string {
	if i := strings.Index(out, "cairn shell ▸"); i >= 0 {
		return out[:i]
	}
	return out
}

func ptyRunner(st *shellStack, a *shellServer, proto, state string) func(*testing.T, string, func(f *os.File, seen func(string) string)) (string, int) {
	return func(t *testing.T, arg string, typed func(f *os.File, seen func(string) string)) (string, int) {
		t.Helper()
		args := append([]string{"shell"}, strings.Fields(arg)...)
		cmd := exec.Command(st.bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm-256color",
			"CAIRN_URL=" + a.url, "CAIRN_TOKEN=" + shellAdminToken, "XDG_CONFIG_HOME=" + t.TempDir(),
			"XDG_STATE_HOME=" + state, "CAIRN_SHELL_PROTOCOL=" + proto}
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
		require.NoError(t, err)
		defer f.Close()
		var mu sync.Mutex
		var out strings.Builder
		changed := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 4096)
			answered := 0
			for {
				n, err := f.Read(buf)
				mu.Lock()
				out.Write(buf[:n])
				asked := strings.Count(cliStart(out.String()), cursorQuery)
				mu.Unlock()
				// Answered as every terminal does: the CLI's terminal
				// library asks at start and waits 5 s for each answer.
				for ; answered < asked; answered++ {
					_, _ = f.Write([]byte(cursorAnswer))
				}
				select {
				case changed <- struct{}{}:
				default:
				}
				if err != nil {
					return // EIO once the process is gone
				}
			}
		}()
		// seen waits for want in the terminal output and answers the
		// output so far.
		seen := func(want string) string {
			t.Helper()
			deadline := time.After(ptyshelltest.Guard)
			for {
				mu.Lock()
				so := out.String()
				mu.Unlock()
				if strings.Contains(so, want) {
					return so
				}
				select {
				case <-changed:
				case <-done:
					mu.Lock()
					defer mu.Unlock()
					require.Contains(t, out.String(), want)
					return out.String()
				case <-deadline:
					t.Fatalf("no %q in the terminal output, which ends: %q", want, so[max(0, len(so)-2048):])
				}
			}
		}
		if typed != nil {
			typed(f, seen)
		}
		err = cmd.Wait()
		<-done
		if _, exited := err.(*exec.ExitError); err != nil && !exited {
			require.NoError(t, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return out.String(), cmd.ProcessState.ExitCode()
	}
}

// cairnShellUnderPTY runs the built `cairn shell WS` on a real terminal:
// it exits with the shell's status after restoring the terminal and
// printing the summary; detaching exits 0; a refusal before the upgrade
// exits like any client command, naming the reason.
func cairnShellUnderPTY(t *testing.T, st *shellStack, a *shellServer) {
	ws := a.readyWorkspace(t)
	run := ptyRunner(st, a, "v1", t.TempDir()) // the v1 rows; cairnShellV2UnderPTY has v2's

	t.Run("Exit42", func(t *testing.T) {
		out, code := run(t, ws.Name, func(f *os.File, seen func(string) string) {
			seen("ends the session")
			seen("# ")
			_, err := f.Write([]byte("exit 42\r"))
			require.NoError(t, err)
		})
		require.Equal(t, 42, code, "terminal output: %q", out)
		require.Contains(t, out, "cairn shell ▸ "+ws.Name+" (/mnt/cairn/ws) — Ctrl-] ends the session")
		require.Contains(t, out, "[cairn: shell exited with status 42]")
	})

	t.Run("DetachExits0", func(t *testing.T) {
		out, code := run(t, ws.ID, func(f *os.File, seen func(string) string) {
			seen("# ")
			_, err := f.Write([]byte{0x1d})
			require.NoError(t, err)
		})
		require.Equal(t, 0, code, "terminal output: %q", out)
		require.Contains(t, out, "[cairn: left the shell; the server ends it]")
	})

	t.Run("RefusedExitsAsAClientCommand", func(t *testing.T) {
		none := a.readyWorkspace(t)
		require.NoError(t, a.admin.TeardownVolume(t.Context(), none.ID))
		out, code := run(t, none.Name, nil)
		require.Equal(t, int(exitConflict), code, "terminal output: %q", out)
		require.Contains(t, out, "cairn: ")
		require.Contains(t, out, "(volume_not_ready, HTTP 409")
	})
}
