package sidecar

import (
	"crypto/sha256"
	"encoding/base64"
	"path/filepath"
	"testing"
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

// largeData spans several head lengths, and no two of its head-sized
// windows are alike.
var largeData = func() []byte {
	b := make([]byte, 3*HeadBytes+17)
	for i := range b {
		b[i] = byte(i * 7 / 5)
	}
	return b
}()

// sourceVolume lays out every kind of source a put may be given.
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

// sourceCase is one source a put may be given and what a put makes of it:
// a valid source's bytes, or a refusal's reason and message.
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
