package runtimetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/server/service"
)

// holderConfig is a v2 shell's holder as the service configures it; the
// runtime supplies the shell's argv.
func holderConfig(spec service.ShellSpec) holder.Config {
	return holder.Config{
		ShellID: spec.ShellID, WorkspaceID: spec.WorkspaceID, WorkspaceName: spec.WorkspaceName, Container: spec.Name,
		Cols: spec.Cols, Rows: spec.Rows, Term: spec.Term, Scrollback: 100,
		Detached: time.Minute, MaxLifetime: time.Hour, Stop: time.Second, Drain: time.Second, Record: true,
	}
}

func testHolder(t *testing.T, h Harness) {
	// A shell lives in its container's holder: a writer types and leaves,
	// the shell runs on detached, the next connection starts from the
	// screen's render, the end comes with the recording it announced, and
	// the engine kept no byte of the session. Released, the holder exits;
	// removed, its container can no longer be reached.
	t.Run("OKKeepsTheShellAcrossConnections", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		spec := shellSpec(s, volume, id)
		key := make([]byte, sha256.Size)
		_, _ = rand.Read(key) // never fails
		// The start may take longer than Guard: the first fills Docker's
		// holder volume, a pod waits to be scheduled.
		sctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		start := time.Now()
		created, err := s.Shells.StartHolder(sctx, spec, holderConfig(spec), key)
		require.NoError(t, err)
		// The service reaches the container by the name it gave (mixed
		// case: ULIDs), not by what the runtime made of it.
		name := spec.Name
		t.Logf("the holder started in %s", time.Since(start).Round(time.Millisecond))
		t.Cleanup(func() { _ = s.Shells.RemoveContainer(context.Background(), name) }) // gone already if the test got that far
		links := holder.NewLinks(s.Shells.DialHolder)
		t.Cleanup(links.Close)
		client := holder.NewClient(links.For(name), key)

		marker := "mark-" + ulid.Make().String()
		w := attachHolder(t, client)
		require.NoError(t, w.SendInput([]byte("echo held-$((6*7)) "+marker+"\r")))
		_, err = readHolderOutput(w, "held-42 "+marker)
		require.NoError(t, err)
		require.NoError(t, w.Close(), "the connection goes without a word, as a lost one does")
		require.Eventually(t, func() bool {
			st, err := client.State(guarded(t))
			return err == nil && st.Running && st.Detached
		}, ptyshelltest.Guard, 50*time.Millisecond, "the shell runs on, detached")

		again := attachHolder(t, client)
		render, err := nextOutput(again) // the first: the screen's render
		require.NoError(t, err)
		require.Contains(t, string(render), "held-42", "the next connection starts from the screen")
		require.NoError(t, again.Close())

		st, err := client.End(guarded(t))
		require.NoError(t, err)
		require.False(t, st.Running)
		require.Equal(t, ptyshell.ReasonTerminated, st.End.Reason)
		require.NotNil(t, st.End.Recording)
		cast := readRecording(t, client)
		sum := sha256.Sum256(cast)
		require.Equal(t, st.End.Recording.SHA256, hex.EncodeToString(sum[:]))
		require.Contains(t, string(cast), "held-42")

		require.NoError(t, client.Release(guarded(t)))
		require.Eventually(t, func() bool { return shellState(t, s, spec.ShellID) == "exited" },
			ptyshelltest.Guard, 50*time.Millisecond, "released, the holder exits and its container with it")
		logs := s.Logs(t, created) // the engine's own name of it
		require.NotContains(t, string(logs), marker)
		require.Empty(t, string(logs), "the container's own output carries nothing of the session")

		require.NoError(t, s.Shells.RemoveContainer(guarded(t), name))
		_, err = s.Shells.DialHolder(guarded(t), name)
		require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err), "err: %v", err)
	})
}

// guarded is a context that ends with the test or after Guard.
func guarded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), ptyshelltest.Guard)
	t.Cleanup(cancel)
	return ctx
}

func attachHolder(t *testing.T, c *holder.Client) *ptyshelltest.Conn {
	t.Helper()
	conn, err := c.Attach(guarded(t), ptyshell.RoleWriter, ptyshell.Size{Cols: 80, Rows: 24})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() }) // closed already on the way
	return &ptyshelltest.Conn{Conn: conn}
}

// readHolderOutput reads OUTPUT until want has shown, past the STATUS
// frames a connection carries.
func readHolderOutput(c *ptyshelltest.Conn, want string) ([]byte, error) {
	var out []byte
	for !strings.Contains(string(out), want) {
		f, err := nextOutput(c)
		if err != nil {
			return out, fmt.Errorf("waiting for %q in %q: %w", want, out, err)
		}
		out = append(out, f...)
	}
	return out, nil
}

// nextOutput is the next OUTPUT's payload, past STATUS frames.
func nextOutput(c *ptyshelltest.Conn) ([]byte, error) {
	for {
		f, err := c.Next()
		if err != nil {
			return nil, err
		}
		switch f.Type {
		case ptyshell.FrameOutput:
			return f.Payload, nil
		case ptyshell.FrameStatus:
		default:
			return nil, fmt.Errorf("frame 0x%02x where output was due", byte(f.Type))
		}
	}
}

func readRecording(t *testing.T, c *holder.Client) []byte {
	t.Helper()
	body, err := c.Recording(guarded(t))
	require.NoError(t, err)
	defer body.Close()
	b, err := io.ReadAll(body)
	require.NoError(t, err)
	return b
}

// shellState is the state ListShells reports for the shell, "" when it
// lists none or the list failed.
func shellState(t *testing.T, s *Subject, shellID string) string {
	list, err := s.Shells.ListShells(guarded(t))
	if err != nil {
		return ""
	}
	for _, sc := range list {
		if sc.ShellID == shellID {
			return sc.State
		}
	}
	return ""
}
