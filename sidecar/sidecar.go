package sidecar

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Env reads one environment variable; the real binary passes os.Getenv.
type Env func(string) string

// Main runs one command and writes its result line to out; serve, pack,
// watch, snapshot and restore also converse over in and out. It returns the process exit code.
func Main(args []string, env Env, in io.Reader, out io.Writer) int {
	if len(args) != 1 {
		return emit(out, Failure(ReasonEnvInvalid, "expected exactly one command: prep, put, download, serve, pack, unpack, watch, snapshot or restore"), ExitUsage)
	}
	switch args[0] {
	case CommandPrep:
		return finish(out, prep(env))
	case CommandPut:
		return finish(out, putSource(env, in, out))
	case CommandDownload:
		return finish(out, download(env, in, out))
	case CommandServe:
		return serve(env, in, out)
	case CommandPack:
		return finish(out, pack(env, in, out))
	case CommandUnpack:
		return finish(out, unpack(env, in, out))
	case CommandWatch:
		return watch(env, in, out)
	case CommandSnapshot:
		return finish(out, snapshotVolume(env, in, out))
	case CommandRestore:
		return finish(out, restoreVolume(env, in, out))
	default:
		return emit(out, Failure(ReasonEnvInvalid, fmt.Sprintf("unknown command %q", args[0])), ExitUsage)
	}
}

// finish prints r and maps its verdict to the exit code.
func finish(out io.Writer, r Result) int {
	if r.OK {
		return emit(out, r, ExitOK)
	}
	return emit(out, r, ExitFailure)
}

// emit writes r as one compact JSON line, framed by newlines so that it
// stands alone in a TTY's merged output.
func emit(out io.Writer, r any, code int) int {
	line, err := json.Marshal(r)
	if err != nil {
		line = []byte(`{"ok":false,"error":"cannot encode result","reason":"env_invalid"}`)
		code = ExitUsage
	}
	fmt.Fprintf(out, "\n%s\n", line)
	return code
}

// mountRoot reads and checks CAIRN_MOUNT_ROOT.
func mountRoot(env Env) (string, *Result) {
	root := env(EnvMountRoot)
	if root == "" {
		r := Failure(ReasonEnvInvalid, EnvMountRoot+" is not set")
		return "", &r
	}
	if !filepath.IsAbs(root) {
		r := Failure(ReasonEnvInvalid, fmt.Sprintf("%s %q is not an absolute path", EnvMountRoot, root))
		return "", &r
	}
	return filepath.Clean(root), nil
}

// prep makes the mount root usable by tool containers of any UID: owned by
// root, mode 0777 (no sticky bit), non-recursive.
func prep(env Env) Result {
	root, fail := mountRoot(env)
	if fail != nil {
		return *fail
	}
	if err := os.Chown(root, 0, 0); err != nil {
		return Failure(ReasonPrepFailed, fmt.Sprintf("chown of the mount root failed: %v", describe(err)))
	}
	if err := os.Chmod(root, 0o777); err != nil {
		return Failure(ReasonPrepFailed, fmt.Sprintf("chmod of the mount root failed: %v", describe(err)))
	}
	return Result{OK: true, PreparedPath: root}
}

// describe keeps the OS error's own words without the path it carries.
func describe(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
