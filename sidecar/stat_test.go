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

// sourceCase is one source of API.md §5.4's table and what stat and put
// make of it: a valid source's bytes, or a refusal's reason and message.
type sourceCase struct {
	name, source string
	// resolved is where the source leads inside the mount; "" when it does
	// not resolve to something there.
	resolved        string
	data            []byte // a valid source's content
	reason, message string // a refusal; "" for a valid source
}

// sourceCases walks every row of the source table over sourceVolume.
func sourceCases(v volume) []sourceCase {
	notFound := func(p string) string { return "source file '" + p + "' does not exist" }
	outside := func(r string) string {
		return "source path resolves to '" + r + "', which is outside the workspace volume mounted at '" + v.ws + "'"
	}
	isDir := func(p string) string { return "source path '" + p + "' is a directory, not a single uploadable file" }
	notRegular := func(p string) string { return "source path '" + p + "' is not a regular file" }
	secret, sibling := filepath.Join(v.outside, "secret"), filepath.Join(v.sibling, "file")
	return []sourceCase{
		{name: "OK", source: v.at("file.txt"), resolved: v.at("file.txt"), data: helloData},
		{name: "OKEmpty", source: v.at("empty"), resolved: v.at("empty"), data: []byte{}},
		{name: "OKHeadIsTheFirstBytes", source: v.at("large"), resolved: v.at("large"), data: largeData},
		{name: "OKAbsoluteSymlinkInMount", source: v.at("abs-in"), resolved: v.at("dir/nested.txt"), data: nestedRaw},
		{name: "OKRelativeSymlinkInMount", source: v.at("rel-in"), resolved: v.at("dir/nested.txt"), data: nestedRaw},
		{name: "OKSymlinkedParentInMount", source: v.at("dir-link/nested.txt"), resolved: v.at("dir/nested.txt"), data: nestedRaw},
		{name: "OKUncleanPath", source: v.ws + "//dir/../file.txt", resolved: v.at("file.txt"), data: helloData},

		{name: "ErrNotFound", source: v.at("missing"), reason: ReasonSourceNotFound, message: notFound(v.at("missing"))},
		{name: "ErrNotFoundDangling", source: v.at("dangling"), reason: ReasonSourceNotFound, message: notFound(v.at("dangling"))},
		{name: "ErrNotFoundMissingParent", source: v.at("nodir/f"), reason: ReasonSourceNotFound, message: notFound(v.at("nodir/f"))},
		{name: "ErrNotFoundUnderAFile", source: v.at("file.txt/f"), reason: ReasonSourceNotFound, message: notFound(v.at("file.txt/f"))},

		{name: "ErrDirectory", source: v.at("dir"), resolved: v.at("dir"), reason: ReasonSourceIsDirectory, message: isDir(v.at("dir"))},
		{name: "ErrDirectoryThroughSymlink", source: v.at("dir-link"), resolved: v.at("dir"), reason: ReasonSourceIsDirectory,
			message: isDir(v.at("dir-link"))},
		{name: "ErrMountRoot", source: v.ws, resolved: v.ws, reason: ReasonSourceIsDirectory, message: isDir(v.ws)},
		{name: "ErrFIFO", source: v.at("fifo"), resolved: v.at("fifo"), reason: ReasonSourceNotRegular, message: notRegular(v.at("fifo"))},
		{name: "ErrSocket", source: v.at("sock"), resolved: v.at("sock"), reason: ReasonSourceNotRegular, message: notRegular(v.at("sock"))},

		{name: "ErrOutsideAbsoluteSymlink", source: v.at("abs-out"), reason: ReasonPathOutsideMount, message: outside(secret)},
		{name: "ErrOutsideRelativeSymlink", source: v.at("rel-out"), reason: ReasonPathOutsideMount, message: outside(secret)},
		{name: "ErrOutsideSiblingPrefix", source: v.at("sibling"), reason: ReasonPathOutsideMount, message: outside(sibling)},
		{name: "ErrOutsideSymlinkedParent", source: v.at("out-dir/secret"), reason: ReasonPathOutsideMount, message: outside(secret)},
		{name: "ErrOutsideSymlinkedParentMissingFile", source: v.at("out-dir/missing"), reason: ReasonPathOutsideMount,
			message: outside(filepath.Join(v.outside, "missing"))},
		{name: "ErrOutsideDotDot", source: v.at("../outside/secret"), reason: ReasonPathOutsideMount, message: outside(secret)},
		{name: "ErrOutsideSiblingDirectly", source: sibling, reason: ReasonPathOutsideMount, message: outside(sibling)},
		{name: "ErrRelativePath", source: "file.txt", reason: ReasonPathOutsideMount,
			message: "path 'file.txt' must be absolute, and within the workspace volume mounted at '" + v.ws + "'"},
	}
}

func TestStatSource(t *testing.T) {
	t.Parallel()
	v := sourceVolume(t)
	for _, tc := range sourceCases(v) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			line, code := runLine(t, []string{CommandStat}, map[string]string{EnvMountRoot: v.ws, EnvSourcePath: tc.source})
			if tc.reason == "" {
				require.Equal(t, validStatLine(tc.resolved, tc.data), line)
				require.Equal(t, ExitOK, code)
				return
			}
			require.Equal(t, invalidStatLine(tc.resolved, tc.reason, tc.message), line)
			require.Equal(t, ExitFailure, code)
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
