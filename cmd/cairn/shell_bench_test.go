package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
)

// shellPrompt is what busybox ash prints last before it waits for a line.
var shellPrompt = []byte("# ")

// BenchmarkShell measures the shell against its targets, side by side in
// one run, on a real server:
//
//   - Open: from the start of the dial to the first prompt in OUTPUT,
//     against `docker run -it` of the same image with the same hardening
//     in a PTY until its first prompt; the medians of 20 runs each, and
//     their ratio (target ≤ 1.3);
//   - Echo: single keystrokes typed at an idle prompt, each timed until
//     its echo is in OUTPUT; the p99 (target < 5 ms).
func BenchmarkShell(b *testing.B) {
	st := newShellStack(b)
	srv := st.start(b, shellServerOpts{})
	ws := srv.readyWorkspace(b)
	size := ptyshell.Size{Cols: 120, Rows: 40}

	b.Run("Open", func(b *testing.B) {
		var cairnTimes, dockerTimes []time.Duration
		for range b.N {
			for range 20 {
				cairnTimes = append(cairnTimes, openToPrompt(b, srv, ws.ID, size))
				dockerTimes = append(dockerTimes, dockerRunToPrompt(b, st, ws.VolumeName))
			}
		}
		c, d := median(cairnTimes), median(dockerTimes)
		b.ReportMetric(float64(c.Microseconds())/1000, "cairn-ms")
		b.ReportMetric(float64(d.Microseconds())/1000, "docker-run-ms")
		b.ReportMetric(float64(c)/float64(d), "ratio")
		b.Logf("open to first prompt, median of %d: cairn shell %s, docker run -it %s, ratio %.2f (target ≤ 1.3)",
			len(cairnTimes), c.Round(time.Millisecond), d.Round(time.Millisecond), float64(c)/float64(d))
	})

	b.Run("Echo", func(b *testing.B) {
		conn, _ := srv.dial(b, ws.ID, size)
		_, err := conn.ReadOutput(string(shellPrompt))
		require.NoError(b, err)
		var samples []time.Duration
		for range b.N {
			for i := range 1000 {
				if i%100 == 0 {
					// Ctrl-U empties the line, so it never wraps.
					require.NoError(b, conn.SendInput([]byte{0x15}))
				}
				start := time.Now()
				require.NoError(b, conn.SendInput([]byte("a")))
				_, err := conn.ReadOutput("a")
				require.NoError(b, err)
				samples = append(samples, time.Since(start))
			}
		}
		slices.Sort(samples)
		p50, p99 := samples[len(samples)/2], samples[len(samples)*99/100]
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		b.Logf("keystroke echo over %d keystrokes: p50 %s, p99 %s (target < 5 ms)", len(samples), p50, p99)
	})
}

// openToPrompt opens a shell through the client and times it to the first
// prompt; the shell is then left.
func openToPrompt(b *testing.B, srv *shellServer, wsID string, size ptyshell.Size) time.Duration {
	b.Helper()
	start := time.Now()
	sess, err := srv.admin.Shell(b.Context(), wsID, size, "")
	require.NoError(b, err)
	defer func() { _ = sess.Close() }() // always nil
	var out []byte
	for !bytes.Contains(out, shellPrompt) {
		m, err := sess.Next(b.Context())
		require.NoError(b, err)
		out = append(out, m.Output...)
	}
	return time.Since(start)
}

// dockerRunToPrompt is the same shell by `docker run -it --rm`, in a PTY,
// with the hardening the server gives a shell container.
func dockerRunToPrompt(b *testing.B, st *shellStack, volume string) time.Duration {
	b.Helper()
	start := time.Now()
	cmd := exec.CommandContext(b.Context(), "docker", "run", "-it", "--rm", "--init", "--read-only",
		"--tmpfs", "/tmp:rw,nosuid,nodev,size=64m,mode=1777", "--tmpfs", "/home/cairn:rw,nosuid,nodev,size=64m,mode=1777",
		"--cap-drop", "ALL", "--cap-add", "DAC_OVERRIDE", "--security-opt", "no-new-privileges", "--network", "none",
		"--memory", "512m", "--memory-swap", "512m", "--cpus", "1", "--pids-limit", "256",
		"--ulimit", "nofile=1024:1024", "--log-driver", "none", "--stop-signal", "SIGHUP",
		"-v", volume+":/mnt/cairn/ws", "-w", "/mnt/cairn/ws", "-e", "TERM=xterm-256color", "-e", "HOME=/home/cairn",
		"--label", "cairn.app="+st.app, "--entrypoint", "/bin/sh", st.image,
		"-c", "umask 0000; if command -v bash >/dev/null 2>&1; then exec bash; fi; exec sh")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	require.NoError(b, err)
	defer f.Close()
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(out, shellPrompt) {
		n, err := f.Read(buf)
		require.NoError(b, err, "docker run output: %q", out)
		out = append(out, buf[:n]...)
	}
	took := time.Since(start)
	_, err = f.Write([]byte("exit\r"))
	require.NoError(b, err)
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(f) }() // drain until the PTY closes
	require.NoError(b, cmd.Wait(), "docker run: %s", strconv.Quote(string(out)))
	return took
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
