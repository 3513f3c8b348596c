package sidecar

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// unpackCase is one archive and the refusal it must meet.
type unpackCase struct {
	name    string
	entries []hostile
	reason  string
	message string // the whole message, when it is stable; else a part of it
	formats []string
	vars    map[string]string
}

var bothFormats = []string{FormatTarGz, FormatZip}

func unpackCases() []unpackCase {
	long := strings.Repeat("n", 300)
	deep := strings.Repeat(strings.Repeat("d", 200)+"/", 21) + "f"
	many := make([]hostile, 10001)
	for i := range many {
		many[i] = hfile(fmt.Sprintf("f%05d", i), "")
	}
	zeros := strings.Repeat("\x00", 50<<20)
	unsafe := ReasonArchiveUnsafePath
	return []unpackCase{
		{name: "Absolute", entries: []hostile{hfile("/abs", "x")}, reason: unsafe,
			message: `archive entry "/abs" is refused: its name is an absolute path`},
		{name: "DriveLetter", entries: []hostile{hfile(`C:\x`, "x")}, reason: unsafe,
			message: `archive entry "C:\\x" is refused: its name starts with a drive letter`},
		{name: "DriveLetterSlash", entries: []hostile{hfile("c:/x", "x")}, reason: unsafe,
			message: `archive entry "c:/x" is refused: its name starts with a drive letter`},
		{name: "Backslash", entries: []hostile{hfile(`a\..\evil`, "x")}, reason: unsafe,
			message: `archive entry "a\\..\\evil" is refused: its name holds a backslash`},
		{name: "DotDot", entries: []hostile{hfile("../evil", "x")}, reason: unsafe,
			message: `archive entry "../evil" is refused: its name has a '..' component`},
		{name: "DotDotInside", entries: []hostile{hdir("a/"), hfile("a/../../evil", "x")}, reason: unsafe,
			message: `archive entry "a/../../evil" is refused: its name has a '..' component`},
		{name: "EmptySegment", entries: []hostile{hfile("a//b", "x")}, reason: unsafe,
			message: `archive entry "a//b" is refused: its name has an empty segment`},
		{name: "FileWithSlash", entries: []hostile{patched(hfile("a_", "x"), "a/")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "a/" is refused: its name has an empty segment`},
		{name: "LongComponent", entries: []hostile{hfile(long, "x")}, reason: unsafe,
			message: "a component of its name is longer than 255 bytes"},
		{name: "LongName", entries: []hostile{hfile(deep, "x")}, reason: unsafe,
			message: "its name is longer than 4096 bytes"},
		{name: "NotUTF8", entries: []hostile{hfile("bad\xff", "x")}, reason: unsafe,
			message: `archive entry "bad\xff" is refused: its name is not UTF-8`},
		{name: "ControlCharacter", entries: []hostile{hfile("a\nb", "x")}, reason: unsafe,
			message: `archive entry "a\nb" is refused: its name holds a control character`},
		{name: "Duplicate", entries: []hostile{hfile("a", "1"), hfile("a", "2")}, reason: unsafe,
			message: `archive entry "a" is refused: another entry of the archive has the same name`},
		{name: "DuplicateCleaned", entries: []hostile{hfile("a/b", "1"), hfile("a/./b", "2")}, reason: unsafe,
			message: `archive entry "a/./b" is refused: another entry of the archive has the same name`},
		{name: "DirAfterFile", entries: []hostile{hfile("a", "1"), hdir("a/")}, reason: unsafe,
			message: `archive entry "a/" is refused: another entry of the archive has the same name`},
		{name: "LinkToRootThenThrough", entries: []hostile{hlink("a", "/"), hfile("a/etc/passwd", "root::0:0")}, reason: unsafe,
			message: `archive entry "a" is refused: it is a symlink to an absolute path`},
		{name: "ThroughSafeLink", entries: []hostile{hdir("d/"), hlink("a", "d"), hfile("a/x", "x")}, reason: unsafe,
			message: `archive entry "a/x" is refused: its parent "a" is not a directory of the archive`},
		{name: "ThroughFile", entries: []hostile{hfile("f", "x"), hfile("f/x", "x")}, reason: unsafe,
			message: `archive entry "f/x" is refused: its parent "f" is not a directory of the archive`},
		{name: "LinkAbsolute", entries: []hostile{hlink("l", "/etc")}, reason: unsafe,
			message: `archive entry "l" is refused: it is a symlink to an absolute path`},
		{name: "LinkUp", entries: []hostile{hlink("l", "../x")}, reason: unsafe,
			message: `archive entry "l" is refused: it is a symlink leading out of the unpacked directory`},
		{name: "LinkUpDeep", entries: []hostile{hdir("d/"), hlink("d/l", "../e/../../x")}, reason: unsafe,
			message: `archive entry "d/l" is refused: it is a symlink leading out of the unpacked directory`},
		{name: "LinkThroughLink", entries: []hostile{hlink("x", "."), hlink("y", "x/..")}, reason: unsafe,
			message: `archive entry "y" is refused: it is a symlink through another symlink of the archive`},
		{name: "LinkThroughLaterLink", entries: []hostile{hlink("y", "x/.."), hlink("x", ".")}, reason: unsafe,
			message: `archive entry "y" is refused: it is a symlink through another symlink of the archive`},
		{name: "LinkEmpty", entries: []hostile{hlink("l", "")}, reason: unsafe,
			message: `archive entry "l" is refused: it is a symlink to nothing`},
		{name: "HardLinkOut", entries: []hostile{hhard("h", "../../etc/passwd")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "h" is refused: its hard link target "../../etc/passwd" is not a safe name`},
		{name: "HardLinkAbsolute", entries: []hostile{hhard("h", "/etc/passwd")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "h" is refused: its hard link target "/etc/passwd" is not a safe name`},
		{name: "HardLinkLater", entries: []hostile{hhard("h", "f"), hfile("f", "x")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "h" is refused: it is a hard link to "f", which is not an earlier regular file of the archive`},
		{name: "HardLinkToDir", entries: []hostile{hdir("d/"), hhard("h", "d")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "h" is refused: it is a hard link to "d", which is not an earlier regular file of the archive`},
		{name: "HardLinkToLink", entries: []hostile{hlink("l", "f"), hhard("h", "l")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "h" is refused: it is a hard link to "l", which is not an earlier regular file of the archive`},
		{name: "FIFO", entries: []hostile{hother("p", tar.TypeFifo)}, reason: unsafe, message: `archive entry "p" is refused: `},
		{name: "Device", entries: []hostile{hother("null", tar.TypeChar)}, reason: unsafe, message: `archive entry "null" is refused: `},
		{name: "RootAsFile", entries: []hostile{patched(hfile("._", "x"), "./")}, reason: unsafe, formats: []string{FormatTarGz},
			message: `archive entry "./" is refused: its name has an empty segment`},
		{name: "RootAsLink", entries: []hostile{hlink(".", "x")}, reason: unsafe,
			message: `archive entry "." is refused: it names the unpacked directory itself, as something other than a directory`},
		{name: "TooManyEntries", entries: many, reason: ReasonArchiveTooLarge, message: "more than 10000"},
		{name: "TooManyBytes", entries: []hostile{hfile("a", strings.Repeat("a", 600)), hfile("b", strings.Repeat("b", 600))},
			reason: ReasonArchiveTooLarge, message: "the archive unpacks to more than 1000 bytes", vars: map[string]string{EnvMaxBytes: "1000"}},
		{name: "Bomb", entries: []hostile{hfile("zeros", zeros)}, reason: ReasonArchiveRatio, message: "the archive unpacks to more than 200 times"},
		{name: "LyingZip", entries: []hostile{{name: "lie", kind: tar.TypeReg, body: strings.Repeat("x", 1<<20), mode: 0o644, declared: 10}},
			formats: []string{FormatZip}, reason: ReasonArchiveInvalid},
		{name: "OverMaxSize", entries: []hostile{hfile("a", "hello")}, reason: ReasonArchiveTooLarge,
			message: "over the 20 byte cap", vars: map[string]string{EnvMaxSize: "20"}},
	}
}

// TestUnpackRefused unpacks each hostile archive in both formats: each is
// refused with its reason, the target is never created, no staging
// directory is left, and nothing outside the target is written.
func TestUnpackRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range unpackCases() {
		formats := tc.formats
		if formats == nil {
			formats = bothFormats
		}
		for _, format := range formats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				archive := buildZip
				if format == FormatTarGz {
					archive = buildTarGz
				}
				line := requireUnpackRefused(t, format, archive(t, tc.entries...), tc.vars, tc.reason)
				if tc.message != "" {
					require.Contains(t, decodeLine(t, line).ErrorText(), tc.message)
				}
			})
		}
	}
}

// requireUnpackRefused unpacks data and checks it is refused with reason,
// leaving the target absent, no staging directory, the volume otherwise
// as it was.
func requireUnpackRefused(t *testing.T, format string, data []byte, extra map[string]string, reason string) string {
	t.Helper()
	v := fastVolume(t)
	v.mkdir(t, "out")
	b := startBucket(t)
	vars := unpackVars(v, b.keep("archive", data), v.at("out/tree"), format)
	for k, val := range extra {
		vars[k] = val
	}
	line, code := runLine(t, []string{CommandUnpack}, vars)
	require.Equal(t, ExitFailure, code, line)
	require.Equal(t, reason, decodeLine(t, line).ReasonText(), line)
	requireNoURL(t, line, vars[EnvURL])
	requireAbsent(t, v.at("out/tree"))
	requireNoStaging(t, v.at("out"))
	requireVolume(t, v, map[string]string{"out": "dir"})
	return line
}

// requireVolume checks the volume holds exactly want (name: kind), and
// that the neighbours of the mount are as newVolume left them.
func requireVolume(t *testing.T, v volume, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for name, n := range snapshot(t, v.ws, 1) {
		got[name] = n.kind
	}
	require.Equal(t, want, got)
	require.Equal(t, []byte("top secret"), readFile(t, v.outside+"/secret"))
	ents, err := os.ReadDir(v.outside)
	require.NoError(t, err)
	require.Len(t, ents, 1, "nothing was written beside the mount")
}

// TestUnpackCorrupt refuses what is not an archive of its format, or is
// cut short, as archive_invalid.
func TestUnpackCorrupt(t *testing.T) {
	t.Parallel()
	good := map[string][]byte{
		FormatTarGz: buildTarGz(t, hfile("a", strings.Repeat("hello ", 1000))),
		FormatZip:   buildZip(t, hfile("a", strings.Repeat("hello ", 1000))),
	}
	for _, format := range bothFormats {
		for name, data := range map[string][]byte{
			"Empty":     {},
			"Garbage":   []byte("this is not an archive at all, not even close"),
			"Truncated": good[format][:len(good[format])/2],
			"Flipped":   flip(good[format], len(good[format])/3),
			"Other":     good[otherFormat(format)],
		} {
			t.Run(name+"/"+format, func(t *testing.T) {
				t.Parallel()
				requireUnpackRefused(t, format, data, nil, ReasonArchiveInvalid)
			})
		}
	}
}

func otherFormat(f string) string {
	if f == FormatZip {
		return FormatTarGz
	}
	return FormatZip
}

func flip(data []byte, at int) []byte {
	out := bytes.Clone(data)
	out[at] ^= 0xff
	return out
}

// TestUnpackDigest checks the archive against CAIRN_ARCHIVE_SHA256: a
// match unpacks, anything else is archive_invalid before the rename.
func TestUnpackDigest(t *testing.T) {
	t.Parallel()
	for _, format := range bothFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			build := buildZip
			if format == FormatTarGz {
				build = buildTarGz
			}
			data := build(t, hdir("d/"), hfile("d/a", "hello"), hlink("l", "d/a"))
			other := build(t, hfile("x", "x"))
			line := requireUnpackRefused(t, format, data, map[string]string{EnvArchiveSHA256: sum(other)}, ReasonArchiveInvalid)
			require.Equal(t, "the archive's SHA-256 is "+sum(data)+", not the "+sum(other)+" recorded for it", decodeLine(t, line).ErrorText())

			v := newVolume(t)
			b := startBucket(t)
			vars := unpackVars(v, b.keep("archive", data), v.at("tree"), format)
			vars[EnvArchiveSHA256] = sum(data)
			line, code := runLine(t, []string{CommandUnpack}, vars)
			require.Equal(t, ExitOK, code, line)
			require.Equal(t, "hello", string(readFile(t, v.at("tree/l"))))
		})
	}
}

// TestUnpackTarget checks the target: it must not exist (a dangling
// symlink counts), its parent must exist inside the mount.
func TestUnpackTarget(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "taken")
	v.symlink(t, "nowhere", "dangling")
	v.write(t, "file", helloData, 0o644)
	v.symlink(t, "../outside", "escape")
	b := startBucket(t)
	url := b.keep("archive", buildTarGz(t, hfile("a", "hello")))
	for _, tc := range []struct {
		name, target, reason, message string
	}{
		{"Exists", v.at("taken"), ReasonTargetExists, "the target '" + v.at("taken") + "' already exists; unpack creates a new directory"},
		{"ExistsSlash", v.at("taken/"), ReasonTargetExists, "the target '" + v.at("taken") + "' already exists; unpack creates a new directory"},
		{"Dangling", v.at("dangling"), ReasonTargetExists, "the target '" + v.at("dangling") + "' already exists; unpack creates a new directory"},
		{"ParentMissing", v.at("none/tree"), ReasonTargetDirMissing, "the directory '" + v.at("none") + "' to unpack into does not exist; create it first"},
		{"ParentFile", v.at("file/tree"), ReasonTargetDirMissing, "the directory '" + v.at("file") + "' to unpack into does not exist; create it first"},
		{"Outside", v.at("escape/tree"), ReasonPathOutsideMount,
			"path '" + v.at("escape/tree") + "' resolves to '" + v.outside + "/tree', which is outside the workspace volume mounted at '" + v.ws + "'"},
		{"MountRoot", v.ws, ReasonPathIsMountRoot, "target path '" + v.ws + "' is the workspace volume mount point itself, not a new directory"},
		{"Dot", v.at("taken/."), ReasonTargetExists, "target path '" + v.at("taken/.") + "' names an existing directory; unpack creates a new one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, code := runLine(t, []string{CommandUnpack}, unpackVars(v, url, tc.target, FormatTarGz))
			require.Equal(t, failureLine(tc.reason, tc.message, 0), line)
			require.Equal(t, ExitFailure, code)
		})
	}
	requireNoStaging(t, v.ws)
	requireNoStaging(t, v.at("taken"))
	ents, err := os.ReadDir(v.at("taken"))
	require.NoError(t, err)
	require.Empty(t, ents)
}

// TestUnpackTargetRace: a target created while the archive unpacks wins;
// the unpack is refused at the rename and removes its staging directory.
func TestUnpackTargetRace(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	st, m := stageFor(t, v)
	defer m.close()
	v.mkdir(t, "tree")
	v.write(t, "tree/theirs", helloData, 0o644)
	require.Nil(t, st.finish())
	f := st.commit("tree", v.at("tree"))
	require.NotNil(t, f)
	require.Equal(t, ReasonTargetExists, f.reason)
	st.abort()
	requireNoStaging(t, v.ws)
	require.Equal(t, helloData, readFile(t, v.at("tree/theirs")))
}

// stageFor opens a staging directory in the mount root, as unpack does.
func stageFor(t *testing.T, v volume) (*stage, *mount) {
	t.Helper()
	m, f := openMount(v.ws)
	require.Nil(t, f)
	parent, err := m.root.OpenRoot(".")
	require.NoError(t, err)
	t.Cleanup(func() { parent.Close() })
	dir, err := parent.Open(".")
	require.NoError(t, err)
	t.Cleanup(func() { dir.Close() })
	st, f := newStage(parent, dir, v.ws)
	require.Nil(t, f)
	return st, m
}

// TestUnpackRootEntry: an archive's "./" entry gives the target its mode;
// without one the target is 0777.
func TestUnpackRootEntry(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	b := startBucket(t)
	root := hdir("./")
	root.mode = 0o750
	for i, format := range bothFormats {
		build := buildZip
		if format == FormatTarGz {
			build = buildTarGz
		}
		target := v.at("with" + strconv.Itoa(i))
		line, code := runLine(t, []string{CommandUnpack}, unpackVars(v, b.keep("with", build(t, root, hfile("./a", "x"))), target, format))
		require.Equal(t, ExitOK, code, line)
		requireTargetMode(t, target, 0o750)
		target = v.at("without" + strconv.Itoa(i))
		line, code = runLine(t, []string{CommandUnpack}, unpackVars(v, b.keep("without", build(t, hfile("a/b", "x"))), target, format))
		require.Equal(t, ExitOK, code, line)
		requireTargetMode(t, target, 0o777)
		requireTargetMode(t, target+"/a", 0o777)
	}
}

// TestUnpackStore maps the store's answers: a missing object, a server
// error, an unreachable store.
func TestUnpackStore(t *testing.T) {
	t.Parallel()
	for _, format := range bothFormats {
		v := newVolume(t)
		b := startBucket(t)
		line, _ := runLine(t, []string{CommandUnpack}, unpackVars(v, b.keyURL("missing"), v.at("tree"), format))
		require.Equal(t, failureLine(ReasonObjectNotFound, "the object store returned HTTP 404 for the download", 404), line)
		line, _ = runLine(t, []string{CommandUnpack}, unpackVars(v, closedURL(t), v.at("tree"), format))
		require.Equal(t, ReasonStoreUnreachable, decodeLine(t, line).ReasonText())
		requireNoURL(t, line, closedURL(t))
		requireAbsent(t, v.at("tree"))
		requireNoStaging(t, v.ws)
	}
}

// TestUnpackZipRequests reads a zip of many entries in a handful of range
// requests: the tail, then one stream front to back.
func TestUnpackZipRequests(t *testing.T) {
	t.Parallel()
	entries := make([]hostile, 0, 2000)
	for i := range 2000 {
		entries = append(entries, hfile(fmt.Sprintf("d%d/f%04d", i%10, i), strings.Repeat(strconv.Itoa(i), 200)))
	}
	noise := make([]byte, 3<<20)
	_, _ = rand.Read(noise)
	entries = append(entries, hfile("noise", string(noise)))
	data := buildZip(t, entries...)
	v := fastVolume(t)
	b := startBucket(t)
	vars := unpackVars(v, b.keep("archive", data), v.at("tree"), FormatZip)
	vars[EnvArchiveSHA256] = sum(data)
	line, code := runLine(t, []string{CommandUnpack}, vars)
	require.Equal(t, ExitOK, code, line)
	gets := b.getsSoFar()
	require.LessOrEqual(t, len(gets), 4, "range requests: %v", gets)
	require.Equal(t, "bytes=-1048576", gets[0])
	require.Equal(t, noise, readFile(t, v.at("tree/noise")))
}

// TestUnpackOwners restores numeric owners, and gives what the archive
// leaves unowned the owner of the target's parent.
func TestUnpackOwners(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "home")
	require.NoError(t, os.Chown(v.at("home"), 4321, 8765))
	b := startBucket(t)
	tarData := buildTarGzOwned(t, 1234, 5678)
	line, code := runLine(t, []string{CommandUnpack}, unpackVars(v, b.keep("t", tarData), v.at("home/t"), FormatTarGz))
	require.Equal(t, ExitOK, code, line)
	requireOwner(t, v.at("home/t/f"), 1234, 5678)
	requireOwner(t, v.at("home/t"), 4321, 8765)
	line, code = runLine(t, []string{CommandUnpack}, unpackVars(v, b.keep("z", buildZip(t, hfile("d/f", "x"))), v.at("home/z"), FormatZip))
	require.Equal(t, ExitOK, code, line)
	requireOwner(t, v.at("home/z/d/f"), 4321, 8765)
	requireOwner(t, v.at("home/z/d"), 4321, 8765)
}

// TestUnpackOwnersUnderSetGID unpacks entries owned by the unpack's own
// IDs below a set-group-ID directory of another group, where a new file
// is born with the directory's group: each still gets the group the
// archive gives it, so an unpack skips a chown only where the kernel
// already gave the owner.
func TestUnpackOwnersUnderSetGID(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "shared")
	require.NoError(t, os.Chown(v.at("shared"), os.Geteuid(), 8765))
	require.NoError(t, os.Chmod(v.at("shared"), 0o777|os.ModeSetgid))
	require.Equal(t, [2]int{0, 0}, [2]int{os.Geteuid(), os.Getegid()}, "the unpack runs as root, the owner of the archive's entries")
	b := startBucket(t)
	data := buildTarGz(t, hdir("d/"), hfile("d/f", "x"), hfile("top", "y"), hlink("l", "d/f")) // owned 0:0
	line, code := runLine(t, []string{CommandUnpack}, unpackVars(v, b.keep("t", data), v.at("shared/t"), FormatTarGz))
	require.Equal(t, ExitOK, code, line)
	for _, name := range []string{"d", "d/f", "top", "l"} {
		requireOwner(t, v.at("shared/t/"+name), 0, 0)
	}
	requireOwner(t, v.at("shared/t"), 0, 8765) // no root entry: the parent's owner
}

func buildTarGzOwned(t *testing.T, uid, gid int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o640, Size: 1, Uid: uid, Gid: gid}))
	_, err := tw.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func requireOwner(t *testing.T, p string, uid, gid uint32) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	require.Equal(t, [2]uint32{uid, gid}, [2]uint32{st.Uid, st.Gid}, p)
}

// TestUnpackEnv refuses bad bounds before fetching anything.
func TestUnpackEnv(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	for _, tc := range []struct{ key, value, message string }{
		{EnvFormat, "7z", "CAIRN_FORMAT must be tar.gz or zip"},
		{EnvMaxEntries, "0", "CAIRN_MAX_ENTRIES must be a positive decimal integer"},
		{EnvMaxBytes, "lots", "CAIRN_MAX_BYTES must be a positive decimal integer"},
		{EnvMaxRatio, "-3", "CAIRN_MAX_RATIO must be a positive decimal integer"},
		{EnvArchiveSHA256, "abc", "CAIRN_ARCHIVE_SHA256 must be a SHA-256 in standard base64"},
	} {
		vars := unpackVars(v, closedURL(t), v.at("tree"), FormatTarGz)
		vars[tc.key] = tc.value
		line, _ := runLine(t, []string{CommandUnpack}, vars)
		require.Equal(t, failureLine(ReasonEnvInvalid, tc.message, 0), line)
	}
}
