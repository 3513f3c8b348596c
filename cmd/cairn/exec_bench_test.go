package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// execBenchBytes is what each run pipes through cat.
const execBenchBytes = 100 << 20

// BenchmarkExecThroughput pipes 100 MiB through `cat` with the built
// `cairn exec` (CLI → websocket → server → Docker attach → container and
// back) and, as the floor, with `docker run -i --rm --entrypoint cat IMAGE` on the same
// engine, alternately in each iteration. It reports both rates and
// cairn's time over docker's (ratio; 1 is the floor).
func BenchmarkExecThroughput(b *testing.B) {
	st := newShellStack(b)
	srv := st.start(b, shellServerOpts{})
	ws := srv.readyWorkspace(b)
	in := randomInput(b)
	env := []string{"CAIRN_URL=" + srv.url, "CAIRN_TOKEN=" + shellAdminToken}
	var cairnTook, dockerTook time.Duration
	b.SetBytes(execBenchBytes)
	for range b.N {
		cairnTook += timePipe(b, in, env, st.bin, "exec", ws.ID, "--", "cat")
		dockerTook += timePipe(b, in, nil, "docker", "run", "-i", "--rm", "--network", "none", "--entrypoint", "cat", st.image)
	}
	mib := float64(execBenchBytes) / (1 << 20) * float64(b.N)
	b.ReportMetric(mib/cairnTook.Seconds(), "cairn-MiB/s")
	b.ReportMetric(mib/dockerTook.Seconds(), "docker-MiB/s")
	b.ReportMetric(cairnTook.Seconds()/dockerTook.Seconds(), "ratio")
}

func randomInput(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "in")
	f, err := os.Create(path)
	require.NoError(b, err)
	_, err = io.CopyN(f, rand.Reader, execBenchBytes)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	return path
}

// timePipe runs name with the file in on stdin and times it to its end,
// checking that every byte came back on stdout.
func timePipe(b *testing.B, in string, env []string, name string, args ...string) time.Duration {
	b.Helper()
	f, err := os.Open(in)
	require.NoError(b, err)
	defer f.Close()
	cmd := exec.CommandContext(b.Context(), name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = f, &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	start := time.Now()
	require.NoError(b, cmd.Start())
	n, err := io.Copy(io.Discard, out)
	require.NoError(b, err)
	require.NoError(b, cmd.Wait(), "%s: %s", name, stderr.String())
	took := time.Since(start)
	require.Equal(b, int64(execBenchBytes), n, "%s: every byte back", name)
	return took
}
