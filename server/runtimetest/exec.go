package runtimetest

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

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
}
