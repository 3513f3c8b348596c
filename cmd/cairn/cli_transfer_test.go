package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// A 100 MiB file goes up and comes back with the same SHA-256; without a
// terminal, stderr carries no progress bar.
func TestCLIRoundTrip100MiB(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	dir := t.TempDir()
	wsName := uniqueName("big")
	s.ok(t, "ws", "create", wsName)
	src, sum := randomFile(t, dir, "big.bin", 100<<20)

	up := s.ok(t, "art", "upload", wsName, src, "-o", "json")
	require.NotContains(t, up.stderr, "\r", "no progress bar when stderr is no terminal")
	out := filepath.Join(dir, "back.bin")
	down := s.ok(t, "art", "download", wsName+"/big_bin", out)
	require.NotContains(t, down.stderr, "\r")
	require.Equal(t, sum, stacktest.FileSHA256(t, out))
	require.NoFileExists(t, out+".part")
}

// Bytes changed in the store behind cairn's back fail verification: no
// dest, no part file, a non-zero exit.
func TestCLIDownloadOfChangedObject(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	dir := t.TempDir()
	wsName := uniqueName("tamper")
	s.ok(t, "ws", "create", wsName)
	src, _ := randomFile(t, dir, "orig", 1<<20)
	a := field[cairn.Artifact](t, s.json(t, "art", "upload", wsName, src), "artifact")

	forged, err := os.ReadFile(src)
	require.NoError(t, err)
	forged[len(forged)/2] ^= 0xff // same size, one byte flipped
	s.putObject(t, a.ObjectKey, forged)

	dest := filepath.Join(dir, "dest")
	r := s.fails(t, 1, "art", "download", a.ID, dest)
	require.Contains(t, r.stderr, "not the artifact's")
	require.NoFileExists(t, dest)
	require.NoFileExists(t, dest+".part")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the source is left")

	piped := s.fails(t, 1, "art", "download", a.ID, "-")
	require.Contains(t, piped.stderr, "not the artifact's", "streamed bytes are checked at the end too")
}

// Ctrl-C in the middle of a transfer stops it: a download leaves neither
// the part file nor dest, an upload registers nothing. The progress bar
// that shows the transfer is under way is the terminal's.
func TestCLIInterrupt(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	dir := t.TempDir()
	wsName := uniqueName("sigint")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	src, _ := randomFile(t, dir, "payload", 32<<20)
	s.ok(t, "art", "upload", wsName, src, "--name", "payload")

	t.Run("Download", func(t *testing.T) {
		dest := filepath.Join(dir, "interrupted")
		p := s.onTerminal(t, "art", "download", wsName+"/payload", dest, "--rate-limit", "8MiB")
		p.waitProgress(t)
		require.Regexp(t, `downloading payload \[`, p.output())
		require.FileExists(t, dest+".part", "the bytes go to the part file")
		code := p.interrupt(t)
		require.Equal(t, 1, code, "output: %s", p.output())
		require.Contains(t, p.output(), "cairn: interrupted")
		require.NoFileExists(t, dest+".part")
		require.NoFileExists(t, dest)
	})
	t.Run("Upload", func(t *testing.T) {
		p := s.onTerminal(t, "art", "upload", wsName, src, "--name", "never", "--rate-limit", "8MiB")
		// The hash pass has its own line to the end, then the upload starts
		// over at 0; its time left shows once the samples span a second
		// (termkit.Meter).
		p.waitFor(t, regexp.MustCompile(`hashing payload \[#+\] 100%  32\.0 MiB/32\.0 MiB`))
		p.waitFor(t, regexp.MustCompile(`uploading payload \[\.+\]   0%  0 B/32\.0 MiB`))
		p.waitFor(t, regexp.MustCompile(`uploading payload \[#*\.+\] +\d+%  [\d.]+ [KM]iB/32\.0 MiB  [\d.]+ [KM]iB/s  ETA \d+s`))
		require.NotContains(t, p.output(), "hashing…", "no static first line")
		require.Equal(t, 1, p.interrupt(t), "output: %s", p.output())
		list := s.rest(t, "GET", "/v1/workspaces/"+ws.ID+"/artifacts?name=never&state=RECORDED&state=MISSING_OBJECT")
		require.NotContains(t, list, "artifacts", "nothing was registered")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "no part file of any kind")
	})
}

// terminalRun is the CLI running with its stderr on a pseudo-terminal.
type terminalRun struct {
	cmd  *exec.Cmd
	term *stacktest.SyncBuffer
	done chan struct{} // closed when the terminal's output is drained
}

func (s *cliServer) onTerminal(t *testing.T, args ...string) *terminalRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Cols: 100, Rows: 30}))
	cmd := s.command(t.Context(), map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": s.token}, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, tty
	require.NoError(t, cmd.Start())
	require.NoError(t, tty.Close())
	p := &terminalRun{cmd: cmd, term: &stacktest.SyncBuffer{}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_, _ = io.Copy(p.term, ptmx) // ends with EIO once the process closed the terminal
		ptmx.Close()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // a failed test must not leave it running
			_ = cmd.Wait()
		}
	})
	return p
}

var percent = regexp.MustCompile(`\s([1-9]\d?)%\s`)

// waitProgress waits until the bar shows bytes moved and the transfer not
// finished.
func (p *terminalRun) waitProgress(t *testing.T) {
	t.Helper()
	p.waitFor(t, percent)
}

// waitFor waits until the terminal's output matches re.
func (p *terminalRun) waitFor(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if re.MatchString(p.output()) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s on the terminal: %q", re, p.output())
}

// interrupt sends Ctrl-C and returns the exit code.
func (p *terminalRun) interrupt(t *testing.T) int {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	err := p.cmd.Wait()
	<-p.done
	var exit *exec.ExitError
	require.True(t, err == nil || errors.As(err, &exit), "%v", err)
	return p.cmd.ProcessState.ExitCode()
}

func (p *terminalRun) output() string { return p.term.String() }

// The CLI's memory does not grow with the file: peak RSS during a 1 GiB
// upload and a 1 GiB download stays under 64 MiB each.
func TestCLIPeakRSS(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	dir := t.TempDir()
	wsName := uniqueName("rss")
	s.ok(t, "ws", "create", wsName)
	src, sum := randomFile(t, dir, "gib", 1<<30)

	up := s.ok(t, "art", "upload", wsName, src, "-o", "name")
	require.NoError(t, os.Remove(src)) // room on the disk
	out := filepath.Join(dir, "back")
	down := s.ok(t, "art", "download", strings.TrimSpace(up.stdout), out)
	require.Equal(t, sum, stacktest.FileSHA256(t, out))
	t.Logf("peak RSS of the CLI: upload of 1 GiB %.1f MiB, download %.1f MiB (budget 64 MiB)",
		float64(up.maxRSS)/(1<<20), float64(down.maxRSS)/(1<<20))
	require.Less(t, up.maxRSS, int64(64<<20))
	require.Less(t, down.maxRSS, int64(64<<20))
	require.Positive(t, up.maxRSS, "the kernel reported the peak")
}
