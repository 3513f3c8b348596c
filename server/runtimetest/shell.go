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

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/service"
)

// screen collects a terminal's output as it arrives, bounded.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

const maxScreen = 1 << 20

func watchScreen(st ptyshell.Stream) *screen {
	sc := &screen{done: make(chan struct{})}
	go func() {
		defer close(sc.done)
		p := make([]byte, 4096)
		for {
			n, err := st.Read(p)
			sc.mu.Lock()
			if sc.buf.Len() < maxScreen {
				sc.buf.Write(p[:n])
			}
			sc.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return sc
}

func (sc *screen) contains(s string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return strings.Contains(sc.buf.String(), s)
}

func (sc *screen) String() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.buf.String()
}

func shellSpec(s *Subject, volume, workspaceID string) service.ShellSpec {
	id := ulid.Make().String()
	return service.ShellSpec{
		Name: s.AppName + ".shell." + workspaceID + "." + id, ShellID: id, WorkspaceID: workspaceID,
		WorkspaceName: "conformance", VolumeName: volume, Term: "xterm", Cols: 80, Rows: 24,
		Expires: time.Now().Add(time.Hour),
	}
}

func testShell(t *testing.T, h Harness) {
	t.Run("OKOutputResizeExitStatus", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		ctx := t.Context()
		st, err := s.Shells.CreateShell(ctx, shellSpec(s, volume, id))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, st.Close()) })
		require.NoError(t, st.Start(ctx))
		sc := watchScreen(st)

		_, err = io.WriteString(st, "echo cairn-$((6*7)) > ws-file; cat ws-file\n")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return sc.contains("cairn-42") }, time.Minute, 20*time.Millisecond,
			"the shell runs in the workspace; screen: %q", sc)

		// The first resize may land while the terminal is still being set
		// up (Serve retries it): ask again until stty sees it.
		require.Eventually(t, func() bool {
			if st.Resize(ctx, ptyshell.Size{Cols: 101, Rows: 31}) != nil {
				return false
			}
			_, err := io.WriteString(st, "stty size\n")
			return err == nil && sc.contains("31 101")
		}, time.Minute, 250*time.Millisecond, "stty sees the resize; screen: %q", sc)

		_, err = io.WriteString(st, "exit 7\n")
		require.NoError(t, err)
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		status, err := st.Wait(wctx)
		require.NoError(t, err)
		require.Equal(t, ptyshell.ExitStatus{Code: 7}, status)
		select {
		case <-sc.done:
		case <-wctx.Done():
			t.Fatal("the output did not end after the exit")
		}
	})

	t.Run("OKStopEndsAndListsShell", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		ctx := t.Context()
		spec := shellSpec(s, volume, id)
		st, err := s.Shells.CreateShell(ctx, spec)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, st.Close()) })
		require.NoError(t, st.Start(ctx))

		list, err := s.Shells.ListShells(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, spec.ShellID, list[0].ShellID)
		require.Equal(t, spec.Name, list[0].Name)
		require.Equal(t, id, list[0].WorkspaceID)
		require.Equal(t, spec.Expires.Unix(), list[0].Expires.Unix())

		require.NoError(t, st.Stop(ctx))
		status, err := st.Wait(ctx)
		require.NoError(t, err)
		require.False(t, status.Removed, "cairn's own stop is no removal")
		require.NotEqual(t, 0, status.Code)
		require.NoError(t, st.Close())
		err = s.Runtime.RemoveVolume(ctx, volume)
		require.NoError(t, err, "a closed shell no longer mounts the volume")
	})
}
