package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/wsexec"
)

// TestExecOptionsEndToEnd: --dir, --env and --timeout reach the command;
// a refused directory or variable runs nothing; a signal sent to cairn
// exec reaches the command, which decides what it means.
func TestExecOptionsEndToEnd(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	t.Cleanup(func() { st.noExecContainers(t) })
	ws := a.readyWorkspace(t)
	r := st.cairnExec(t, a, shellAdminToken, nil, "-n", ws.Name, "--", "sh", "-c", "mkdir -p sub/deep && echo hi > file")
	require.Equal(t, 0, r.code, "stderr %q", r.stderr)

	t.Run("OKDirAndEnv", func(t *testing.T) {
		r := st.cairnExec(t, a, shellAdminToken, nil, "-n", "--dir", "sub/deep", "--env", "GREETING=hello world",
			"-e", "EMPTY=", ws.Name, "--", "sh", "-c", `pwd; echo "$GREETING"; echo "[${EMPTY-unset}]"`)
		require.Equal(t, 0, r.code, "stderr %q", r.stderr)
		require.Equal(t, "/mnt/cairn/ws/sub/deep\nhello world\n[]\n", r.stdout)
	})
	t.Run("OKTimeout", func(t *testing.T) {
		own := a.readyWorkspace(t) // its one exec's rows
		r := st.cairnExec(t, a, shellAdminToken, nil, "-n", "--timeout", "1s", own.Name, "--", "sleep", "60")
		require.NotZero(t, r.code)
		require.Contains(t, r.stderr, "timeout of 1s")
		_, ended := execRows(t, a, own.ID)
		require.Equal(t, string(wsexec.ReasonTimeout), ended["reason"])
	})
	for name, args := range map[string][]string{
		"ErrDirIsAFile":   {"--dir", "file"},
		"ErrDirMissing":   {"--dir", "nope"},
		"ErrDirOutside":   {"--dir", "/etc"},
		"ErrCairnVar":     {"--env", "CAIRN_WORKSPACE_ID=x"},
		"ErrBadName":      {"--env", "1X=y"},
		"ErrTooLong":      {"--timeout", "9999h"},
		"ErrNegativeTime": {"--timeout", "-1s"},
	} {
		t.Run(name, func(t *testing.T) {
			r := st.cairnExec(t, a, shellAdminToken, nil, append(append([]string{"-n"}, args...), ws.Name, "--", "touch", "ran")...)
			require.NotZero(t, r.code)
			require.NotEmpty(t, r.stderr)
		})
	}
	t.Run("NothingRanForARefusal", func(t *testing.T) {
		r := st.cairnExec(t, a, shellAdminToken, nil, "-n", ws.Name, "--", "sh", "-c", "test -e ran && echo ran || echo clean")
		require.Equal(t, "clean\n", r.stdout)
	})
	t.Run("OKSignalForwarded", func(t *testing.T) {
		cli := exec.Command(st.bin, "exec", "-n", ws.Name, "--", "sh", "-c",
			`trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.1; done`)
		cli.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CAIRN_URL=" + a.url,
			"CAIRN_TOKEN=" + shellAdminToken, "XDG_CONFIG_HOME=" + t.TempDir()}
		out, err := cli.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cli.Start())
		t.Cleanup(func() { _ = cli.Process.Kill(); _ = cli.Wait() })
		lines := bufio.NewReader(out)
		line, err := lines.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line)
		require.NoError(t, cli.Process.Signal(syscall.SIGINT))
		line, err = lines.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "got-int\n", strings.TrimPrefix(line, "\r"))
		err = cli.Wait()
		require.Error(t, err)
		require.Equal(t, 7, cli.ProcessState.ExitCode(), "the command's own status after its trap")
	})
}
