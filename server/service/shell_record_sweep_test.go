package service_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/server/service"
)

// TestSweepRecordingsRemovesOnlyAbandonedFiles: a recording whose writer
// died is removed; one still held by a live process (this one, or another
// server sharing the directory) stays, as does anything that is not a
// recording.
func TestSweepRecordingsRemovesOnlyAbandonedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(`{"version":2}`+"\n"), 0o600))
		return p
	}
	orphan := file("cairn-shell-a-1.cast")
	crashed := file("cairn-shell-b-2.cast")
	live := file("cairn-shell-c-3.cast")
	other := file("notes.cast")

	held, err := os.Open(live)
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, syscall.Flock(int(held.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))

	// Another process holds crashed until it is killed, as a server that
	// crashes mid-recording lets go of its file: sh opens it, flock(1) locks
	// that open file, and sh becomes sleep keeping it — one process, no
	// child that could hold it a moment longer.
	holder := exec.Command("sh", "-c", `exec 9<"$0" && flock 9 && exec sleep 600`, crashed)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill() })
	require.Eventually(t, func() bool {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", holder.Process.Pid))
		return err == nil && string(comm) == "sleep\n"
	}, ptyshelltest.Guard, 5*time.Millisecond, "the holder locked the file and sleeps")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.Equal(t, 1, service.SweepRecordings(dir, log), "only the unheld one goes while the holder lives")
	require.NoFileExists(t, orphan)
	require.FileExists(t, crashed)

	require.NoError(t, holder.Process.Kill())
	_ = holder.Wait() // killed: its status is the signal
	require.Equal(t, 1, service.SweepRecordings(dir, log))
	require.NoFileExists(t, crashed)
	require.FileExists(t, live, "this process still holds it")
	require.FileExists(t, other, "not a recording")
}
