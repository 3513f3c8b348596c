package sidecar

import (
	"bytes"
	"debug/elf"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// buildSidecar builds the real, static cairn-sidecar into a directory any
// user can reach.
func buildSidecar(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	bin := filepath.Join(sharedTempDir(t), "cairn-sidecar")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/cairn-sidecar")
	build.Dir = ".." // the module root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	exe, err := elf.Open(bin)
	require.NoError(t, err)
	defer func() { _ = exe.Close() }() // read-only
	for _, prog := range exe.Progs {
		require.NotEqual(t, elf.PT_INTERP, prog.Type, "the binary is static, for a FROM scratch image")
	}
	return bin
}

// sharedTempDir is a t.TempDir that an unprivileged user may traverse.
func sharedTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// sidecarRun is one run of the real binary.
type sidecarRun struct {
	args []string
	vars map[string]string
	cred *syscall.Credential // nil runs as the test's user (root)
}

// exec runs the binary with exactly vars as its environment, and checks
// that stdout is one framed result line and stderr is empty.
func (r sidecarRun) exec(t *testing.T, bin string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, r.args...)
	cmd.Env = []string{}
	for k, v := range r.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill() //nolint:errcheck // already failing
		t.Fatalf("%v did not exit within 30s", r.args)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.Empty(t, stderr.String())
	return requireOneLine(t, stdout.String()), code
}

func TestBinary(t *testing.T) {
	t.Parallel()
	bin := buildSidecar(t)
	v := newVolume(t)
	require.NoError(t, os.Chmod(v.base, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(v.base), 0o755))
	v.write(t, "file.txt", helloData, 0o644)
	v.write(t, "locked.txt", helloData, 0o000)

	getter := startStore(t, &store{status: http.StatusOK, body: objectData})
	missing := startStore(t, &store{status: http.StatusNotFound})
	putter := startStore(t, &store{status: http.StatusOK})
	forbidden := startStore(t, &store{status: http.StatusForbidden})
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}
	download := func(target, url string) map[string]string {
		return map[string]string{EnvMountRoot: v.ws, EnvTargetPath: target, EnvURL: url}
	}

	tests := []struct {
		name string
		run  sidecarRun
		code int
		want string
	}{
		{"PutOK", sidecarRun{args: []string{CommandPut}, vars: putVars(v, v.at("file.txt"), putter.url(), 100)},
			ExitOK, putLine(v.at("file.txt"), helloData)},
		{"PutErrUnreadable", sidecarRun{args: []string{CommandPut}, vars: putVars(v, v.at("locked.txt"), putter.url(), 100), cred: nobody},
			ExitFailure, failureLine(ReasonSourceUnreadable, "failed to read source file '"+v.at("locked.txt")+"': permission denied", 0)},
		{"PutErrForbidden", sidecarRun{args: []string{CommandPut}, vars: putVars(v, v.at("file.txt"), forbidden.url(), 100)},
			ExitFailure, failureLine(ReasonStoreRejected, "the object store rejected the upload (HTTP 403)", http.StatusForbidden)},
		{"PutErrEnv", sidecarRun{args: []string{CommandPut}, vars: map[string]string{EnvMountRoot: v.ws}},
			ExitFailure, failureLine(ReasonEnvInvalid, "CAIRN_SOURCE_PATH is not set", 0)},
		{"DownloadOK", sidecarRun{args: []string{CommandDownload}, vars: download(v.at("new.bin"), getter.url())},
			ExitOK, downloadedLine(v.at("new.bin"), len(objectData))},
		{"DownloadErrNotFound", sidecarRun{args: []string{CommandDownload}, vars: download(v.at("other.bin"), missing.url())},
			ExitFailure, failureLine(ReasonObjectNotFound, "the object store returned HTTP 404 for the download", http.StatusNotFound)},
		{"PrepOK", sidecarRun{args: []string{CommandPrep}, vars: map[string]string{EnvMountRoot: v.ws}},
			ExitOK, `{"ok":true,"prepared_path":` + quote(v.ws) + `}`},
		{"ErrUnknownCommand", sidecarRun{args: []string{"bogus"}, vars: map[string]string{EnvMountRoot: v.ws}},
			ExitUsage, failureLine(ReasonEnvInvalid, `unknown command "bogus"`, 0)},
		{"ErrNoCommand", sidecarRun{vars: map[string]string{EnvMountRoot: v.ws}},
			ExitUsage, failureLine(ReasonEnvInvalid, "expected exactly one command: prep, put, download, serve, pack, unpack, watch, snapshot or restore", 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, code := tt.run.exec(t, bin)
			require.Equal(t, tt.want, line)
			require.Equal(t, tt.code, code)
			if url := tt.run.vars[EnvURL]; url != "" {
				requireNoURL(t, line, url)
			}
		})
	}

	got := putter.requests()
	require.Len(t, got, 1, "the unreadable file is never sent")
	requireUnbound(t, got[0], helloData)
	require.Equal(t, objectData, readFile(t, v.at("new.bin")))
	requireAbsent(t, v.at("other.bin"))
}
