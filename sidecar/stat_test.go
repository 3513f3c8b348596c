package sidecar

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	helloData = []byte("hello, cairn\n")
	nestedRaw = []byte("nested file\n")
)

// sum is the standard padded base64 of the SHA-256 of data.
func sum(data []byte) string {
	h := sha256.Sum256(data)
	return base64.StdEncoding.EncodeToString(h[:])
}

// validStatLine is the exact line of a valid stat (API.md §8.4), with
// cairn's addition: head, the file's first HeadBytes bytes, omitted when
// the file is empty.
func validStatLine(resolved string, data []byte) string {
	head := ""
	if len(data) > 0 {
		head = `,"head":` + quote(base64.StdEncoding.EncodeToString(data[:min(len(data), HeadBytes)]))
	}
	return `{"resolved_path":` + quote(resolved) + `,"valid":true,"size":` + strconv.Itoa(len(data)) +
		`,"sha256_b64":` + quote(sum(data)) + head + `}`
}

// invalidStatLine is the exact line of an invalid stat; resolved "" is null.
func invalidStatLine(resolved, reason, message string) string {
	path := "null"
	if resolved != "" {
		path = quote(resolved)
	}
	return `{"resolved_path":` + path + `,"valid":false,"size":0,"sha256_b64":"","error":` + quote(message) +
		`,"reason":` + quote(reason) + `}`
}

// largeData spans several head lengths, and no two of its head-sized
// windows are alike.
var largeData = func() []byte {
	b := make([]byte, 3*HeadBytes+17)
	for i := range b {
		b[i] = byte(i * 7 / 5)
	}
	return b
}()

// sourceVolume lays out every kind of source of API.md §5.4.
func sourceVolume(t *testing.T) volume {
	t.Helper()
	v := newVolume(t)
	v.write(t, "file.txt", helloData, 0o644)
	v.write(t, "empty", nil, 0o644)
	v.write(t, "large", largeData, 0o644)
	v.mkdir(t, "dir")
	v.write(t, "dir/nested.txt", nestedRaw, 0o600)
	v.mkfifo(t, "fifo")
	v.socket(t, "sock")
	v.symlink(t, filepath.Join(v.outside, "secret"), "abs-out")
	v.symlink(t, "../outside/secret", "rel-out")
	v.symlink(t, filepath.Join(v.sibling, "file"), "sibling")
	v.symlink(t, v.outside, "out-dir")
	v.symlink(t, v.at("dir/nested.txt"), "abs-in")
	v.symlink(t, "dir/nested.txt", "rel-in")
	v.symlink(t, "dir", "dir-link")
	v.symlink(t, "nowhere", "dangling")
	return v
}

func TestStatSource(t *testing.T) {
	t.Parallel()
	v := sourceVolume(t)
	notFound := func(p string) string { return "source file '" + p + "' does not exist" }
	outside := func(r string) string {
		return "source path resolves to '" + r + "', which is outside the workspace volume mounted at '" + v.ws + "'"
	}
	isDir := func(p string) string { return "source path '" + p + "' is a directory, not a single uploadable file" }
	notRegular := func(p string) string { return "source path '" + p + "' is not a regular file" }

	tests := []struct {
		name   string
		source string
		want   string
	}{
		{"OK", v.at("file.txt"), validStatLine(v.at("file.txt"), helloData)},
		{"OKEmpty", v.at("empty"), validStatLine(v.at("empty"), nil)},
		{"OKHeadIsTheFirstBytes", v.at("large"), validStatLine(v.at("large"), largeData)},
		{"OKAbsoluteSymlinkInMount", v.at("abs-in"), validStatLine(v.at("dir/nested.txt"), nestedRaw)},
		{"OKRelativeSymlinkInMount", v.at("rel-in"), validStatLine(v.at("dir/nested.txt"), nestedRaw)},
		{"OKSymlinkedParentInMount", v.at("dir-link/nested.txt"), validStatLine(v.at("dir/nested.txt"), nestedRaw)},
		{"OKUncleanPath", v.ws + "//dir/../file.txt", validStatLine(v.at("file.txt"), helloData)},

		{"ErrNotFound", v.at("missing"), invalidStatLine("", ReasonSourceNotFound, notFound(v.at("missing")))},
		{"ErrNotFoundDangling", v.at("dangling"), invalidStatLine("", ReasonSourceNotFound, notFound(v.at("dangling")))},
		{"ErrNotFoundMissingParent", v.at("nodir/f"), invalidStatLine("", ReasonSourceNotFound, notFound(v.at("nodir/f")))},
		{"ErrNotFoundUnderAFile", v.at("file.txt/f"), invalidStatLine("", ReasonSourceNotFound, notFound(v.at("file.txt/f")))},

		{"ErrDirectory", v.at("dir"), invalidStatLine(v.at("dir"), ReasonSourceIsDirectory, isDir(v.at("dir")))},
		{"ErrDirectoryThroughSymlink", v.at("dir-link"), invalidStatLine(v.at("dir"), ReasonSourceIsDirectory, isDir(v.at("dir-link")))},
		{"ErrMountRoot", v.ws, invalidStatLine(v.ws, ReasonSourceIsDirectory, isDir(v.ws))},
		{"ErrFIFO", v.at("fifo"), invalidStatLine(v.at("fifo"), ReasonSourceNotRegular, notRegular(v.at("fifo")))},
		{"ErrSocket", v.at("sock"), invalidStatLine(v.at("sock"), ReasonSourceNotRegular, notRegular(v.at("sock")))},

		{"ErrOutsideAbsoluteSymlink", v.at("abs-out"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.outside, "secret")))},
		{"ErrOutsideRelativeSymlink", v.at("rel-out"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.outside, "secret")))},
		{"ErrOutsideSiblingPrefix", v.at("sibling"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.sibling, "file")))},
		{"ErrOutsideSymlinkedParent", v.at("out-dir/secret"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.outside, "secret")))},
		{"ErrOutsideSymlinkedParentMissingFile", v.at("out-dir/missing"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.outside, "missing")))},
		{"ErrOutsideDotDot", v.at("../outside/secret"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.outside, "secret")))},
		{"ErrOutsideSiblingDirectly", filepath.Join(v.sibling, "file"),
			invalidStatLine("", ReasonPathOutsideMount, outside(filepath.Join(v.sibling, "file")))},
		{"ErrRelativePath", "file.txt", invalidStatLine("", ReasonPathOutsideMount,
			"path 'file.txt' must be absolute, and within the workspace volume mounted at '"+v.ws+"'")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, code := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: v.ws, EnvSourcePath: tt.source})
			require.Equal(t, tt.want, line)
			if fields(t, line)["valid"][0] == 't' {
				require.Equal(t, ExitOK, code)
			} else {
				require.Equal(t, ExitFailure, code)
			}
		})
	}
}

func TestStatDevice(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	// /dev/null's numbers; the test filesystem may be mounted nodev, in
	// which case opening it fails and it must still be judged by its type.
	if err := syscall.Mknod(v.at("null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		skipUnlessCI(t, "mknod needs CAP_MKNOD: %v", err)
	}
	line, code := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: v.ws, EnvSourcePath: v.at("null")})
	require.Equal(t, ExitFailure, code)
	require.Equal(t, invalidStatLine(v.at("null"), ReasonSourceNotRegular, "source path '"+v.at("null")+"' is not a regular file"), line)
}

// The sidecar runs as root with DAC_OVERRIDE, and so do these tests, so a
// mode-0000 file is still readable here (the real binary is run as an
// unprivileged user in TestBinary for that case). A read error is simulated
// with /proc/self/mem, which opens but answers EIO at offset 0.
func TestStatUnreadable(t *testing.T) {
	t.Parallel()
	line, code := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: "/proc/self", EnvSourcePath: "/proc/self/mem"})
	require.Equal(t, ExitFailure, code)
	require.Equal(t, invalidStatLine("/proc/self/mem", ReasonSourceUnreadable,
		"failed to read source file '/proc/self/mem': input/output error"), line)
}

func TestStatMountRootThroughSymlink(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "file.txt", helloData, 0o644)
	link := filepath.Join(v.base, "mnt")
	require.NoError(t, os.Symlink(v.ws, link))

	line, code := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: link + "/", EnvSourcePath: link + "/file.txt"})
	require.Equal(t, ExitOK, code)
	require.Equal(t, validStatLine(link+"/file.txt", helloData), line, "resolved_path is reported under the mount path the caller knows")
}

func TestStatLargeFile(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	data := make([]byte, 3*chunk+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	v.write(t, "big", data, 0o644)
	line, code := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: v.ws, EnvSourcePath: v.at("big")})
	require.Equal(t, ExitOK, code)
	require.Equal(t, validStatLine(v.at("big"), data), line)
}

func TestStatEnv(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "file.txt", helloData, 0o644)
	tests := []struct {
		name    string
		vars    map[string]string
		message string
	}{
		{"ErrNoMountRoot", map[string]string{EnvSourcePath: v.at("file.txt")}, "CAIRN_MOUNT_ROOT is not set"},
		{"ErrEmptyMountRoot", map[string]string{EnvMountRoot: "", EnvSourcePath: v.at("file.txt")}, "CAIRN_MOUNT_ROOT is not set"},
		{"ErrRelativeMountRoot", map[string]string{EnvMountRoot: "mnt/ws", EnvSourcePath: v.at("file.txt")},
			`CAIRN_MOUNT_ROOT "mnt/ws" is not an absolute path`},
		{"ErrNoSource", map[string]string{EnvMountRoot: v.ws}, "CAIRN_SOURCE_PATH is not set"},
		{"ErrMissingMountRoot", map[string]string{EnvMountRoot: filepath.Join(v.base, "gone"), EnvSourcePath: v.at("file.txt")},
			"the mount root " + filepath.Join(v.base, "gone") + " cannot be resolved: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, code := runLine(t, []string{CommandStat}, tt.vars)
			require.Equal(t, ExitFailure, code)
			f := fields(t, line)
			require.JSONEq(t, `false`, string(f["ok"]), "an env failure carries ok:false")
			require.JSONEq(t, `null`, string(f["resolved_path"]))
			require.JSONEq(t, `false`, string(f["valid"]))
			require.JSONEq(t, `0`, string(f["size"]))
			require.JSONEq(t, `""`, string(f["sha256_b64"]))
			require.JSONEq(t, quote(ReasonEnvInvalid), string(f["reason"]))
			require.JSONEq(t, quote(tt.message), string(f["error"]))
			require.Len(t, f, 7)
		})
	}
}

// A valid stat decodes into the server's view of the line.
func TestStatResultDecodes(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "file.txt", helloData, 0o644)
	line, _ := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: v.ws, EnvSourcePath: v.at("file.txt")})
	raw, ok := LastObject([]byte("noise\r\n" + line + "\r\n"))
	require.True(t, ok)
	var r StatResult
	require.NoError(t, json.Unmarshal(raw, &r))
	require.True(t, r.Valid)
	require.Nil(t, r.OK)
	require.Equal(t, int64(len(helloData)), r.Size)
	require.Empty(t, r.ErrorText())
	require.Empty(t, r.ReasonText())
	got, err := base64.StdEncoding.DecodeString(r.SHA256B64)
	require.NoError(t, err)
	require.Len(t, got, sha256.Size)
}
