package sidecar

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// objectData is the stored object: more than one streaming chunk.
var objectData = func() []byte {
	b := make([]byte, chunk+chunk/2+3)
	for i := range b {
		b[i] = byte(i*31 + i/chunk)
	}
	return b
}()

// runDownload downloads url to target inside v's mount.
func runDownload(t *testing.T, v volume, target, url string) (string, int) {
	t.Helper()
	return runLine(t, []string{CommandDownload}, map[string]string{EnvMountRoot: v.ws, EnvTargetPath: target, EnvURL: url})
}

func downloadedLine(path string, size int) string {
	return `{"ok":true,"downloaded_path":` + quote(path) + `,"size":` + strconv.Itoa(size) + `}`
}

func isDirectoryMessage(p string) string {
	return "destination path '" + p + "' is a directory, not a file to write"
}

func requireMode(t *testing.T, path string, mode fs.FileMode) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "%s is a regular file", path)
	require.Equal(t, mode, fi.Mode().Perm())
	return fi.Sys().(*syscall.Stat_t)
}

// The umask is process-wide, so this test does not run in parallel (and
// parallel tests wait until every sequential one is done).
func TestDownloadNewFileIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)

	v := newVolume(t)
	st := startStore(t, &store{status: http.StatusOK, body: objectData})
	line, code := runDownload(t, v, v.at("new.bin"), st.url())
	require.Equal(t, ExitOK, code)
	require.Equal(t, downloadedLine(v.at("new.bin"), len(objectData)), line)
	require.Equal(t, objectData, readFile(t, v.at("new.bin")))
	sys := requireMode(t, v.at("new.bin"), 0o666)
	require.Equal(t, uint32(os.Getuid()), sys.Uid, "a new file belongs to the sidecar's user")
}

func TestDownload(t *testing.T) {
	t.Parallel()
	st := startStore(t, &store{status: http.StatusOK, body: objectData})

	t.Run("OKEmptyObject", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		empty := startStore(t, &store{status: http.StatusOK})
		line, code := runDownload(t, v, v.at("empty"), empty.url())
		require.Equal(t, ExitOK, code)
		require.Equal(t, downloadedLine(v.at("empty"), 0), line)
		require.Empty(t, readFile(t, v.at("empty")))
		requireMode(t, v.at("empty"), 0o666)
	})
	t.Run("OKUncleanPathReportsResolved", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		v.symlink(t, "dir", "dir-link")
		line, code := runDownload(t, v, v.ws+"//dir-link/../dir-link/f", st.url())
		require.Equal(t, ExitOK, code)
		require.Equal(t, downloadedLine(v.at("dir/f"), len(objectData)), line)
		require.Equal(t, objectData, readFile(t, v.at("dir/f")))
	})
	t.Run("OKExistingFileKeepsOwnerAndMode", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "old.bin", make([]byte, 3*chunk), 0o600)
		require.NoError(t, os.Chown(v.at("old.bin"), 1234, 1234))
		line, code := runDownload(t, v, v.at("old.bin"), st.url())
		require.Equal(t, ExitOK, code)
		require.Equal(t, downloadedLine(v.at("old.bin"), len(objectData)), line)
		require.Equal(t, objectData, readFile(t, v.at("old.bin")), "the longer old content is truncated")
		sys := requireMode(t, v.at("old.bin"), 0o600)
		require.Equal(t, uint32(1234), sys.Uid)
		require.Equal(t, uint32(1234), sys.Gid)
	})
	t.Run("OKSymlinkOutsideIsReplaced", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		secret := filepath.Join(v.outside, "secret")
		v.symlink(t, secret, "link")
		line, code := runDownload(t, v, v.at("link"), st.url())
		require.Equal(t, ExitOK, code)
		require.Equal(t, downloadedLine(v.at("link"), len(objectData)), line)
		requireMode(t, v.at("link"), 0o666)
		require.Equal(t, objectData, readFile(t, v.at("link")))
		require.Equal(t, "top secret", string(readFile(t, secret)), "never written through the link")
	})
	t.Run("OKDanglingSymlinkIsReplaced", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.symlink(t, filepath.Join(v.outside, "planted"), "link")
		line, code := runDownload(t, v, v.at("link"), st.url())
		require.Equal(t, ExitOK, code)
		require.Equal(t, downloadedLine(v.at("link"), len(objectData)), line)
		requireMode(t, v.at("link"), 0o666)
		requireAbsent(t, filepath.Join(v.outside, "planted"))
	})

	t.Run("ErrParentMissing", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		for _, target := range []string{v.at("nodir/f"), v.at("nodir/deeper/f")} {
			line, code := runDownload(t, v, target, st.url())
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonTargetDirMissing, "destination directory '"+filepath.Dir(target)+
				"' does not exist; create it before downloading into it", 0), line)
		}
		requireAbsent(t, v.at("nodir"))
	})
	t.Run("ErrParentIsAFile", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "file", helloData, 0o644)
		line, code := runDownload(t, v, v.at("file/f"), st.url())
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonTargetDirMissing, "destination directory '"+v.at("file")+
			"' does not exist; create it before downloading into it", 0), line)
		require.Equal(t, helloData, readFile(t, v.at("file")))
	})
	t.Run("ErrParentIsAFIFO", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkfifo(t, "fifo")
		line, code := runDownload(t, v, v.at("fifo/f"), st.url())
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonTargetDirMissing, "destination directory '"+v.at("fifo")+
			"' does not exist; create it before downloading into it", 0), line)
	})
	t.Run("ErrDirectory", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		for _, target := range []string{v.at("dir"), v.at("dir/"), v.at("dir/."), v.at("dir//")} {
			line, code := runDownload(t, v, target, st.url())
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonTargetIsDirectory, isDirectoryMessage(target), 0), line)
		}
		entries, err := os.ReadDir(v.at("dir"))
		require.NoError(t, err)
		require.Empty(t, entries, "nothing is written into the directory")
	})
	t.Run("ErrSymlinkToDirectory", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		v.symlink(t, "dir", "in-link")
		v.symlink(t, v.outside, "out-link")
		for _, name := range []string{"in-link", "out-link"} {
			line, code := runDownload(t, v, v.at(name), st.url())
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonTargetIsDirectory, isDirectoryMessage(v.at(name)), 0), line)
			fi, err := os.Lstat(v.at(name))
			require.NoError(t, err)
			require.Equal(t, fs.ModeSymlink, fi.Mode().Type(), "the link is left alone")
		}
		entries, err := os.ReadDir(v.outside)
		require.NoError(t, err)
		require.Len(t, entries, 1, "nothing is written outside")
	})
	t.Run("ErrMountRoot", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		for _, target := range []string{v.ws, v.ws + "/", v.at("."), v.at("dir/..")} {
			line, code := runDownload(t, v, target, st.url())
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonPathIsMountRoot, "destination path '"+target+
				"' is the workspace volume mount point itself, not a file to write", 0), line)
		}
	})
	t.Run("ErrParentOutside", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.symlink(t, v.outside, "out-dir")
		v.symlink(t, v.sibling, "sib-dir")
		v.symlink(t, "../outside", "rel-out-dir")
		tests := []struct{ target, resolved string }{
			{v.at("out-dir/f"), filepath.Join(v.outside, "f")},
			{v.at("rel-out-dir/f"), filepath.Join(v.outside, "f")},
			{v.at("sib-dir/f"), filepath.Join(v.sibling, "f")},
			{v.at("../outside/f"), filepath.Join(v.outside, "f")},
			{v.at("out-dir/secret"), filepath.Join(v.outside, "secret")},
		}
		for _, tt := range tests {
			line, code := runDownload(t, v, tt.target, st.url())
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonPathOutsideMount, "path '"+tt.target+"' resolves to '"+tt.resolved+
				"', which is outside the workspace volume mounted at '"+v.ws+"'", 0), line)
		}
		requireAbsent(t, filepath.Join(v.outside, "f"))
		requireAbsent(t, filepath.Join(v.sibling, "f"))
		require.Equal(t, "top secret", string(readFile(t, filepath.Join(v.outside, "secret"))))
	})
	t.Run("ErrParentSwappedForSymlinkDuringGet", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		swapping := startStore(t, &store{status: http.StatusOK, body: objectData})
		swapping.before = func() {
			require.NoError(t, os.Rename(v.at("dir"), v.at("moved")))
			require.NoError(t, os.Symlink(v.outside, v.at("dir")))
		}
		line, code := runDownload(t, v, v.at("dir/f"), swapping.url())
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonPathOutsideMount, "path '"+v.at("dir/f")+
			"' leads outside the workspace volume mounted at '"+v.ws+"'", 0), line)
		requireAbsent(t, filepath.Join(v.outside, "f"))
	})
	t.Run("ErrRelativePath", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		line, code := runDownload(t, v, "f", st.url())
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonPathOutsideMount,
			"path 'f' must be absolute, and within the workspace volume mounted at '"+v.ws+"'", 0), line)
	})
	t.Run("ErrFIFOTarget", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkfifo(t, "fifo")
		line, code := runDownload(t, v, v.at("fifo"), st.url())
		require.Equal(t, ExitFailure, code, "refused at once with no reader")
		require.Equal(t, ReasonWriteFailed, decodeResult(t, line).ReasonText())

		reader, err := os.OpenFile(v.at("fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		require.NoError(t, err)
		defer reader.Close()
		line, code = runDownload(t, v, v.at("fifo"), st.url())
		require.Equal(t, ExitFailure, code, "refused with a reader too")
		require.Equal(t, failureLine(ReasonWriteFailed, "failed to write destination file '"+v.at("fifo")+
			"': it is not a regular file", 0), line)
		n, err := reader.Read(make([]byte, 1))
		require.Zero(t, n, "nothing was written into the FIFO (%v)", err)
	})

	for _, tt := range []struct {
		name   string
		status int
		reason string
	}{
		{"ErrStoreNotFound", http.StatusNotFound, ReasonObjectNotFound},
		{"ErrStoreForbidden", http.StatusForbidden, ReasonStoreRejected},
		{"ErrStoreBadRequest", http.StatusBadRequest, ReasonStoreRejected},
		{"ErrStoreInternal", http.StatusInternalServerError, ReasonStoreError},
		{"ErrStoreUnavailable", http.StatusServiceUnavailable, ReasonStoreError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.write(t, "keep", helloData, 0o640)
			refusing := startStore(t, &store{status: tt.status, body: []byte("<Error><Code>NoSuchKey</Code></Error>")})
			line, code := runDownload(t, v, v.at("keep"), refusing.url())
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(tt.reason, "the object store returned HTTP "+strconv.Itoa(tt.status)+" for the download", tt.status), line)
			require.Equal(t, helloData, readFile(t, v.at("keep")), "a refused download does not truncate the target")
			requireMode(t, v.at("keep"), 0o640)
			requireNoURL(t, line, refusing.url())
		})
	}
	t.Run("ErrStoreUnreachable", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "keep", helloData, 0o644)
		url := closedURL(t)
		line, code := runDownload(t, v, v.at("keep"), url)
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonStoreUnreachable,
			"the object store could not be reached for the download: connection refused", 0), line)
		requireNoURL(t, line, url)
		require.Equal(t, helloData, readFile(t, v.at("keep")))
	})
	t.Run("ErrStoreBreaksOff", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		breaking := startStore(t, &store{answer: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(objectData)))
			w.Write(objectData[:1000]) //nolint:errcheck // the point is to stop short
		}})
		line, code := runDownload(t, v, v.at("f"), breaking.url())
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonStoreUnreachable,
			"the download from the object store broke off: network error", 0), line)
		requireNoURL(t, line, breaking.url())
		require.NotContains(t, line, breaking.Listener.Addr().String())
	})

	t.Run("ErrEnv", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		for _, tt := range []struct {
			vars    map[string]string
			message string
		}{
			{map[string]string{EnvTargetPath: v.at("f"), EnvURL: st.url()}, "CAIRN_MOUNT_ROOT is not set"},
			{map[string]string{EnvMountRoot: v.ws, EnvURL: st.url()}, "CAIRN_TARGET_PATH is not set"},
			{map[string]string{EnvMountRoot: v.ws, EnvTargetPath: v.at("f")}, "CAIRN_URL is not set"},
			{map[string]string{EnvMountRoot: v.ws, EnvTargetPath: v.at("f"), EnvURL: ""}, "CAIRN_URL is not set"},
		} {
			line, code := runLine(t, []string{CommandDownload}, tt.vars)
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonEnvInvalid, tt.message, 0), line)
		}
		requireAbsent(t, v.at("f"))
	})
}

// A full volume is simulated with a 64 KiB tmpfs mounted as the mount
// root: the download is volume_full, the target keeps its old bytes and
// nothing is left beside it.
func TestDownloadVolumeFull(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	if err := syscall.Mount("tmpfs", ws, "tmpfs", 0, "size=64k"); err != nil {
		skipUnlessCI(t, "mounting a tmpfs needs CAP_SYS_ADMIN: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(ws, syscall.MNT_DETACH) }) //nolint:errcheck // best effort

	st := startStore(t, &store{status: http.StatusOK, body: objectData})
	for _, name := range []string{"old", "new"} {
		target := filepath.Join(ws, name)
		if name == "old" {
			require.NoError(t, os.WriteFile(target, helloData, 0o640))
		}
		line, code := runLine(t, []string{CommandDownload}, map[string]string{EnvMountRoot: ws, EnvTargetPath: target, EnvURL: st.url()})
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonVolumeFull, "failed to write destination file '"+target+"': no space left on device", 0), line)
		if name == "old" {
			require.Equal(t, helloData, readFile(t, target), "the target keeps its old bytes")
			requireMode(t, target, 0o640)
		} else {
			requireAbsent(t, target)
		}
		requireOnly(t, ws, "old")
	}
}

// A store that breaks off midway leaves the existing target as it was and
// no temporary file beside it.
func TestDownloadBrokenOffKeepsTarget(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "keep", helloData, 0o640)
	breaking := startStore(t, &store{answer: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(objectData)))
		w.Write(objectData[:chunk+10]) //nolint:errcheck // the point is to stop short
	}})
	line, code := runDownload(t, v, v.at("keep"), breaking.url())
	require.Equal(t, ExitFailure, code)
	require.Equal(t, ReasonStoreUnreachable, decodeResult(t, line).ReasonText())
	require.Equal(t, helloData, readFile(t, v.at("keep")))
	requireMode(t, v.at("keep"), 0o640)
	requireOnly(t, v.ws, "keep")
}

// requireOnly requires dir to hold exactly the entries names.
func requireOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	require.ElementsMatch(t, names, got, "what %s holds", dir)
}

func decodeResult(t *testing.T, line string) Result {
	t.Helper()
	r, ok := ParseResult([]byte(line))
	require.True(t, ok, "line %q decodes", line)
	return r
}
