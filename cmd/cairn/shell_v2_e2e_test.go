package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/screen"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/cast"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// shellV2EndToEnd runs the v2 rows against the real binaries: the CLI's
// create + attach, a shell that survives its client and is reattached with
// --attach, a watcher, and the detached timeout with no container left.
func shellV2EndToEnd(t *testing.T, st *shellStack, a *shellServer) {
	size := ptyshell.Size{Cols: 100, Rows: 30}
	t.Run("Exit42", func(t *testing.T) {
		run := ptyRunner(st, a, "v2", t.TempDir())
		ws := a.readyWorkspace(t)
		out, code := run(t, ws.Name, func(f *os.File, seen func(string) string) {
			seen("detaches; the shell keeps running")
			seen("#") // the prompt; a render may position the cursor instead of printing its space
			_, err := f.Write([]byte("exit 42\r"))
			require.NoError(t, err)
		})
		require.Equal(t, 42, code, "terminal output: %q", out)
		require.Contains(t, out, "[cairn: shell exited with status 42]")
	})

	t.Run("SurvivesAKilledClientThenAttach", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		info, err := a.admin.CreateShell(t.Context(), ws.ID, size, "")
		require.NoError(t, err)
		sess, err := a.admin.AttachShell(t.Context(), info.ShellID, info.Secret, size)
		require.NoError(t, err)
		_, err = sess.Write([]byte("sleep 3; echo done-$((40+2))\r"))
		require.NoError(t, err)
		waitOutput(t, sess, "sleep 3")
		require.NoError(t, sess.Close()) // the client goes; the shell stays
		require.Equal(t, 1, st.count(t, "cairn.shell="+info.ShellID))

		state := t.TempDir()
		dir := filepath.Join(state, "cairn", "shells")
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, info.ShellID), []byte(info.Secret), 0o600))
		run := ptyRunner(st, a, "v2", state)
		out, code := run(t, "--attach "+info.ShellID, func(f *os.File, seen func(string) string) {
			seen("done-42")
			_, err := f.Write([]byte("exit 5\r"))
			require.NoError(t, err)
		})
		require.Equal(t, 5, code, "terminal output: %q", out)
		require.NotContains(t, a.out.String(), info.Secret, "the secret is in no server log line")
		attaches, err := a.admin.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: ws.ID,
			Types: []cairn.AuditType{cairn.AuditShellAttached}})
		require.NoError(t, err)
		require.Len(t, attaches, 2, "the first attach and the CLI's, each audited")
		require.Equal(t, "admin", attaches[0].Metadata["token_name"])
	})

	t.Run("SignalReachesTheForegroundJob", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		info, err := a.admin.CreateShell(t.Context(), ws.ID, size, "")
		require.NoError(t, err)
		sess, err := a.admin.AttachShell(t.Context(), info.ShellID, info.Secret, size)
		require.NoError(t, err)
		defer sess.Close() //nolint:errcheck // the test is over
		_, err = sess.Write([]byte(`sh -c 'trap "echo got-int; exit 3" INT; echo trap""ping; while :; do sleep 1; done'; echo job-ended-$?` + "\r"))
		require.NoError(t, err)
		waitOutput(t, sess, "trapping")
		require.Equal(t, cairn.ReasonShellSecretInvalid,
			cairn.ErrorReason(a.admin.SignalShell(t.Context(), info.ShellID, "not-the-secret", "INT")))
		require.Equal(t, cairn.ReasonInvalidParameters,
			cairn.ErrorReason(a.admin.SignalShell(t.Context(), info.ShellID, info.Secret, "SEGV")))
		require.NoError(t, a.admin.SignalShell(t.Context(), info.ShellID, info.Secret, "INT"))
		waitOutput(t, sess, "job-ended-3")
	})

	t.Run("WatcherSeesTheWriterAndChangesNothing", func(t *testing.T) {
		ws := a.readyWorkspace(t)
		info, err := a.admin.CreateShell(t.Context(), ws.ID, size, "")
		require.NoError(t, err)
		w, err := a.admin.AttachShell(t.Context(), info.ShellID, info.Secret, size)
		require.NoError(t, err)
		defer func() { _ = w.Close() }()
		watch, err := a.admin.WatchShell(t.Context(), info.ShellID, size)
		require.NoError(t, err)
		defer func() { _ = watch.Close() }()
		_, err = watch.Write([]byte("echo from-watcher-$((1+1))\r"))
		require.NoError(t, err)
		_, err = w.Write([]byte("echo from-writer-$((2+2))\r"))
		require.NoError(t, err)
		seen := waitOutput(t, watch, "from-writer-4")
		require.NotContains(t, seen, "from-watcher-2")
		mine := waitOutput(t, w, "from-writer-4")
		require.NotContains(t, mine, "from-watcher")
		require.NoError(t, a.admin.KillShell(t.Context(), info.ShellID))
	})

	t.Run("RacingAttachesLeaveOneWriter", func(t *testing.T) { racingAttaches(t, st, a, size) })

	t.Run("DetachedTimeoutLeavesNoContainer", func(t *testing.T) {
		// 5 s: the container is counted after the create has answered,
		// which a loaded engine may take a second or two to list.
		tight := st.start(t, shellServerOpts{shell: "timeouts: {detachedSecs: 5}"})
		ws := tight.readyWorkspace(t)
		info, err := tight.admin.CreateShell(t.Context(), ws.ID, size, "")
		require.NoError(t, err)
		require.Equal(t, 5, info.DetachedTimeoutSecs)
		require.Equal(t, 1, st.count(t, "cairn.shell="+info.ShellID))
		require.Eventually(t, func() bool { return st.count(t, "cairn.shell="+info.ShellID) == 0 },
			20*time.Second, 50*time.Millisecond, "the detached shell ends")
		row := tight.closedRow(t, ws.ID, info.ShellID)
		require.Equal(t, string(ptyshell.ReasonDetachedTimeout), row["reason"])
	})

	t.Run("RecordingPlaysToTheLastScreen", func(t *testing.T) { recordingEndToEnd(t, st, size) })
}

// racingAttaches sends 50 writer attaches at one shell at once, spread
// over two replicas: every one is admitted in turn by the shell's holder
// and each takes the shell over from the one before, so 49 end with EXIT
// taken_over and exactly one is left typing.
func racingAttaches(t *testing.T, st *shellStack, a *shellServer, size ptyshell.Size) {
	const n = 50
	replicas := []*shellServer{a, st.start(t, shellServerOpts{})}
	ws := a.readyWorkspace(t)
	info, err := a.admin.CreateShell(t.Context(), ws.ID, size, "")
	require.NoError(t, err)
	sessions := make([]*ptyshell.Session, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sessions[i], errs[i] = replicas[i%2].admin.AttachShell(t.Context(), info.ShellID, info.Secret, size)
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err, "every attach with the secret is admitted")
	}
	ended := make(chan int, n)
	for i, sess := range sessions {
		go func() {
			for {
				if _, err := sess.Next(context.Background()); err != nil {
					ended <- i
					return
				}
			}
		}()
	}
	gone := map[int]bool{}
	for len(gone) < n-1 {
		select {
		case i := <-ended:
			res := sessions[i].Result()
			require.Equal(t, ptyshell.EndExit, res.Ending, "attach %d: %v", i, res.Err)
			require.Equal(t, ptyshell.ReasonTakenOver, res.Exit.Reason)
			gone[i] = true
		case <-time.After(ptyshelltest.Guard):
			t.Fatalf("%d of %d attaches were taken over", len(gone), n-1)
		}
	}
	writer := -1
	for i := range n {
		if !gone[i] {
			writer = i
		}
	}
	_, err = sessions[writer].Write([]byte("exit 9\r"))
	require.NoError(t, err)
	select {
	case i := <-ended:
		require.Equal(t, writer, i)
		require.Equal(t, 9, sessions[writer].Result().Exit.ExitCode, "the one writer left typed into the shell")
	case <-time.After(ptyshelltest.Guard):
		t.Fatal("the last writer's exit did not end the shell")
	}
	require.Eventually(t, func() bool { return st.count(t, "cairn.shell="+info.ShellID) == 0 },
		20*time.Second, 50*time.Millisecond, "one container, gone with the shell")
}

// recordingEndToEnd runs a recorded v2 shell to its exit, then downloads
// its recording through the client and plays it into the emulator: it ends
// on the screen the client saw last.
func recordingEndToEnd(t *testing.T, st *shellStack, size ptyshell.Size) {
	rec := st.start(t, shellServerOpts{shell: "record: {enable: true}"})
	ws := rec.readyWorkspace(t)
	info, err := rec.admin.CreateShell(t.Context(), ws.ID, size, "")
	require.NoError(t, err)
	sess, err := rec.admin.AttachShell(t.Context(), info.ShellID, info.Secret, size)
	require.NoError(t, err)
	defer func() { _ = sess.Close() }()
	live := screen.New(size.Cols, size.Rows, 0)
	_, err = sess.Write([]byte("printf 'cairn-%d\\n' 42; exit\r"))
	require.NoError(t, err)
	exit := untilExit(t, sess, live)
	require.Equal(t, ptyshell.ReasonExited, exit.Reason)
	rec.closedRow(t, ws.ID, info.ShellID) // written once the recording is stored

	name := "shell-" + info.ShellID + "_cast"
	arts, err := rec.admin.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{name}})
	require.NoError(t, err)
	require.Len(t, arts, 1, "the recording is an artifact of the workspace; server output:\n%s", rec.out)
	require.Equal(t, cast.MIME, arts[0].MIMEType)
	require.Contains(t, *arts[0].Description, "reason exited")
	var data bytes.Buffer
	_, err = rec.admin.DownloadTo(t.Context(), arts[0].ID, &data, client.DownloadOptions{})
	require.NoError(t, err)
	require.Equal(t, arts[0].Size, int64(data.Len()))

	played := screen.New(1, 1, 0)
	_, _, err = cast.Play(&data, played)
	require.NoError(t, err)
	text := played.State().Text
	require.Contains(t, text, "cairn-42")
	require.Equal(t, live.State().Text, text, "the recording ends on the session's last screen")
	require.NotContains(t, rec.out.String(), info.Secret, "the secret is in no server log line")
}

// untilExit feeds the session's output into term until its EXIT.
func untilExit(t *testing.T, s *ptyshell.Session, term *screen.Screen) *ptyshell.Exit {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(t.Context(), ptyshelltest.Guard)
		m, err := s.Next(ctx)
		cancel()
		require.NoError(t, err, "waiting for the exit; screen:\n%s", term.State().Text)
		if m.Exit != nil {
			return m.Exit
		}
		_, _ = term.Write(m.Output) // an in-memory terminal
	}
}

// waitOutput reads the session until its output contains want, and
// returns what it read.
func waitOutput(t *testing.T, s *ptyshell.Session, want string) string {
	t.Helper()
	var out strings.Builder
	for !strings.Contains(out.String(), want) {
		ctx, cancel := context.WithTimeout(t.Context(), ptyshelltest.Guard)
		m, err := s.Next(ctx)
		cancel()
		require.NoError(t, err, "waiting for %q; got %q", want, out.String())
		out.Write(m.Output)
	}
	return out.String()
}
