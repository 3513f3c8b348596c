package runtimetest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/wsexec"
)

// lockedBuffer is a bytes.Buffer for one writer goroutine and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testExec(t *testing.T, h Harness) {
	t.Run("OKStdinStdoutStderrExitStatus", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, wsID := provision(t, s)
		ctx := t.Context()
		id := ulid.Make().String()
		p, err := s.Execs.CreateExec(ctx, service.ExecSpec{
			Name: s.AppName + ".exec." + wsID + "." + id, ExecID: id, WorkspaceID: wsID, WorkspaceName: "conformance",
			VolumeName: volume, Argv: []string{"/bin/sh", "-c", "cat > in; pwd; cat in; echo oops >&2; exit 3"},
			Expires: time.Now().Add(time.Hour),
		})
		require.NoError(t, err)
		closed := false
		t.Cleanup(func() {
			if !closed {
				require.NoError(t, p.Close())
			}
		})
		require.NoError(t, p.Start(ctx))
		// Listed while it runs (it waits for stdin's end): a runtime may
		// let the container go as soon as the command has ended.
		list, err := s.Execs.ListExecs(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, id, list[0].ShellID)
		var stdout, stderr lockedBuffer
		outDone := make(chan error, 1)
		go func() { outDone <- p.Output(&stdout, &stderr) }()

		_, err = io.WriteString(p, "from stdin\n")
		require.NoError(t, err)
		require.NoError(t, p.CloseStdin())
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		status, err := p.Wait(wctx)
		require.NoError(t, err)
		require.Equal(t, wsexec.ExitStatus{Code: 3}, status)
		select {
		case err := <-outDone:
			require.NoError(t, err)
		case <-wctx.Done():
			t.Fatal("the output did not end after the exit")
		}
		require.Equal(t, "/mnt/cairn/ws\nfrom stdin\n", stdout.String())
		require.Equal(t, "oops\n", stderr.String())

		closed = true
		require.NoError(t, p.Close())
		list, err = s.Execs.ListExecs(ctx)
		require.NoError(t, err)
		require.Empty(t, list, "the teardown leaves no exec container")
	})

	t.Run("OKDirEnvAndASignal", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, wsID := provision(t, s)
		ctx := t.Context()
		mk, err := s.Execs.CreateExec(ctx, execSpec(s, volume, wsID, service.ExecSpec{Argv: []string{"mkdir", "-p", cairn.MountPath + "/sub"}}))
		require.NoError(t, err)
		status, _ := runToEnd(t, mk, nil)
		require.Equal(t, 0, status.Code)

		id := ulid.Make().String()
		p, err := s.Execs.CreateExec(ctx, execSpec(s, volume, wsID, service.ExecSpec{ExecID: id,
			Dir: cairn.MountPath + "/sub", Env: []string{"GREETING=hello there"},
			Argv: []string{"/bin/sh", "-c", `trap 'echo got-term; exit 7' TERM; pwd; echo "$GREETING"; echo ready; while :; do sleep 0.1; done`}}))
		require.NoError(t, err)
		status, out := runToEnd(t, p, func(out *lockedBuffer) {
			require.Eventually(t, func() bool { return strings.Contains(out.String(), "ready") }, time.Minute, 20*time.Millisecond)
			require.NoError(t, p.Signal(ctx, "TERM"))
		})
		require.Equal(t, cairn.MountPath+"/sub\nhello there\nready\ngot-term\n", out, "its directory, its variable, its signal")
		require.Equal(t, 7, status.Code, "the command's trap decided")
	})
}

// execSpec fills in what every exec of these tests shares.
func execSpec(s *Subject, volume, wsID string, spec service.ExecSpec) service.ExecSpec {
	if spec.ExecID == "" {
		spec.ExecID = ulid.Make().String()
	}
	spec.Name = s.AppName + ".exec." + wsID + "." + spec.ExecID
	spec.WorkspaceID, spec.WorkspaceName, spec.VolumeName = wsID, "conformance", volume
	spec.Expires = time.Now().Add(time.Hour)
	return spec
}

// runToEnd starts p with an empty stdin, runs during (when set) while it
// runs, and returns how it ended and its stdout; p is closed after.
func runToEnd(t *testing.T, p wsexec.Process, during func(out *lockedBuffer)) (wsexec.ExitStatus, string) {
	t.Helper()
	defer func() { require.NoError(t, p.Close()) }()
	ctx := t.Context()
	require.NoError(t, p.Start(ctx))
	var stdout, stderr lockedBuffer
	outDone := make(chan error, 1)
	go func() { outDone <- p.Output(&stdout, &stderr) }()
	require.NoError(t, p.CloseStdin())
	if during != nil {
		during(&stdout)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	status, err := p.Wait(wctx)
	require.NoError(t, err, "stdout %q stderr %q", stdout.String(), stderr.String())
	select {
	case err := <-outDone:
		require.NoError(t, err)
	case <-wctx.Done():
		t.Fatal("the output did not end after the exit")
	}
	return status, stdout.String()
}
