package sidecar

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// smallBundleFileMax makes the tests' "large" files small: anything over
// it goes up alone.
const smallBundleFileMax = 64 << 10

func snapVars() map[string]string {
	return map[string]string{EnvBundleFileMax: strconv.Itoa(smallBundleFileMax)}
}

// noise is n random bytes.
func noise(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// manySmall is how many distinct small files the rich tree holds: more
// than one bundle's members.
const manySmall = BundleMaxMembers + 50

// richTree builds a tree with every kind of entry a snapshot records and
// the metadata it keeps: owners, set-uid, set-gid and sticky bits, ns
// mtimes, symlinks of every sort, empty files, files of the same content,
// files too large for a bundle and more small ones than one bundle holds.
func richTree(t *testing.T, v volume) {
	t.Helper()
	for _, d := range []string{"src", "src/deep", "src/deep/er", "shared", "shared/sub", "tmp", "many", "dup", "locked"} {
		v.mkdir(t, d)
	}
	v.write(t, "src/main.go", []byte("package main\n"), 0o644)
	v.write(t, "src/run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	v.write(t, "src/deep/er/notes.txt", helloData, 0o640)
	v.write(t, "suid", []byte("set-uid program"), 0o755)
	require.NoError(t, os.Chmod(v.at("suid"), 0o755|os.ModeSetuid))
	v.write(t, "sgid", []byte("set-gid program"), 0o755)
	require.NoError(t, os.Chmod(v.at("sgid"), 0o755|os.ModeSetgid))
	v.write(t, "secret", []byte("mine only"), 0o600)
	require.NoError(t, os.Chown(v.at("secret"), 1234, 5678))
	require.NoError(t, os.Chown(v.at("shared"), 4321, 8765))
	require.NoError(t, os.Chmod(v.at("shared"), 0o775|os.ModeSetgid))
	v.write(t, "shared/team.txt", []byte("ours"), 0o664)
	require.NoError(t, os.Chown(v.at("shared/team.txt"), 4321, 8765))
	require.NoError(t, os.Chmod(v.at("tmp"), 0o777|os.ModeSticky))
	v.write(t, "empty", nil, 0o644)
	v.write(t, "src/empty", nil, 0o600)
	for _, p := range []string{"dup/a", "dup/b", "src/deep/er/c"} {
		v.write(t, p, []byte("the same content in three places\n"), 0o644)
	}
	big := noise(t, 3*smallBundleFileMax+123)
	v.write(t, "big.bin", big, 0o644)
	v.write(t, "dup/big-copy.bin", big, 0o600)
	v.write(t, "big2.bin", noise(t, smallBundleFileMax+1), 0o644)
	v.write(t, "edge.bin", noise(t, smallBundleFileMax), 0o644) // exactly the bound: bundled
	for i := range manySmall {
		v.write(t, fmt.Sprintf("many/f%03d", i), []byte(fmt.Sprintf("small file %d\n", i)), 0o644)
	}
	v.write(t, "locked/inside", []byte("behind a closed door"), 0o400)
	require.NoError(t, os.Chmod(v.at("locked"), 0o500))
	v.write(t, "odd name\twith tab", []byte("tab"), 0o644)
	v.write(t, "ünïcödé\nnewline", []byte("unicode"), 0o644)
	v.symlink(t, "src/main.go", "link-rel")
	v.symlink(t, "nowhere/at/all", "link-dangling")
	v.symlink(t, "/etc/passwd", "link-abs")
	v.symlink(t, "src", "link-dir")
	v.symlink(t, "../outside/secret", "link-up")
	require.NoError(t, os.Lchown(v.at("link-rel"), 1234, 5678))
	require.NoError(t, os.Chown(v.ws, 1000, 1000))
	require.NoError(t, os.Chmod(v.ws, 0o775))
	setTimesTree(t, v.ws)
}

// TestSnapshotRestoreRoundTrip snapshots a rich tree and restores it into
// an empty volume: the same tree comes back, entry for entry, with its
// owners, modes, ns mtimes and symlink targets, and the root's own.
func TestSnapshotRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	v := fastVolume(t)
	richTree(t, v)
	want := snapshot(t, v.ws, 1)
	wantRoot := rootMetaOf(t, v.ws)
	c := newCASServer(t)

	res, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	require.True(t, res.OK)
	require.Equal(t, len(want)+1, res.Entries, "every entry and the root")
	require.Zero(t, res.Skipped)
	require.Equal(t, want, snapshot(t, v.ws, 1), "a snapshot changes nothing")
	requireSnapshotNeeds(t, got.needs, res)

	var files int64
	for _, e := range decodeManifest(t, c.store.object(manifestKey(res.SHA256B64))) {
		files += e.Size
	}
	require.Equal(t, files, *res.Size)

	w := fastVolume(t)
	back, rgot := restore(t, c, restoreVars(c, w, res.SHA256B64))
	require.Equal(t, ExitOK, rgot.code, rgot.line)
	require.Equal(t, res.Entries, back.Entries)
	require.Equal(t, *res.Size, *back.Size)
	requireSameTree(t, want, snapshot(t, w.ws, 1))
	require.Equal(t, wantRoot, rootMetaOf(t, w.ws))
	requireNoRestoreNames(t, w.ws)

	// Each object is fetched once, though the locates of its members
	// came in several batches and each signed its URL anew.
	for _, n := range needsOf(got.needs, NeedBundle) {
		require.Equal(t, 1, c.store.getsOf("bundle/"+hexOf(n.SHA256B64)), "bundle of %d members", len(n.Members))
	}
	for _, n := range needsOf(got.needs, NeedBlob) {
		require.Equal(t, 1, c.store.getsOf("blob/"+hexOf(n.SHA256B64)))
	}
	for _, n := range needsOf(rgot.needs, NeedLocate) {
		require.LessOrEqual(t, len(n.Digests), LocateBatch)
	}
}

// requireSnapshotNeeds checks the rich tree's Needs: each digest asked
// about once, never the empty one; the large files alone, the rest in
// bundles within their bounds; what was sent is what the result counts.
func requireSnapshotNeeds(t *testing.T, needs []Need, res Result) {
	t.Helper()
	for _, n := range needs {
		require.Less(t, len(mustJSONBytes(n)), maxDialogLine, "a %s Need fits the line the server reads", n.Need)
	}
	seen := map[string]bool{}
	for _, n := range needsOf(needs, NeedHave) {
		require.LessOrEqual(t, len(n.Digests), HaveBatch)
		for _, d := range n.Digests {
			require.False(t, seen[d], "digest %s asked about twice", d)
			require.NotEqual(t, emptyDigest, d)
			seen[d] = true
		}
	}
	blobs, bundles := needsOf(needs, NeedBlob), needsOf(needs, NeedBundle)
	require.Len(t, blobs, 2, "big.bin (and its copy, the same content) and big2.bin")
	require.GreaterOrEqual(t, len(bundles), 2, "more small files than one bundle holds")
	var sent int64
	members := 0
	for _, n := range blobs {
		require.Greater(t, n.Size, int64(smallBundleFileMax))
		sent += n.Size
	}
	for _, n := range bundles {
		require.LessOrEqual(t, len(n.Members), BundleMaxMembers)
		require.LessOrEqual(t, n.Size, int64(BundleMaxBytes))
		var at int64
		for _, m := range n.Members {
			require.Equal(t, at, m.Offset, "members lie back to back")
			require.LessOrEqual(t, m.Size, int64(smallBundleFileMax))
			at += m.Size
		}
		require.Equal(t, at, n.Size)
		sent += n.Size
		members += len(n.Members)
	}
	require.Equal(t, len(seen), len(blobs)+members, "every digest sent once")
	require.Equal(t, sent, res.UploadedBytes)
	manifests := needsOf(needs, NeedManifest)
	require.Len(t, manifests, 1)
	require.Equal(t, res.SHA256B64, manifests[0].SHA256B64)
	require.Equal(t, NeedManifest, needs[len(needs)-1].Need, "the manifest goes up last")
}

// TestSnapshotManifest checks the manifest's lines exactly: the root
// first, each directory before its contents, names sorted, file digests
// in hex, symlinks with their targets.
func TestSnapshotManifest(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "b")
	v.write(t, "b/z", helloData, 0o640)
	v.write(t, "a", nil, 0o600)
	v.symlink(t, "b/z", "c")
	v.mkdir(t, "b/y")
	require.NoError(t, os.Chmod(v.ws, 0o777))
	setTimesTree(t, v.ws)
	c := newCASServer(t)
	res, got := snap(t, c, v, nil)
	require.Equal(t, ExitOK, got.code, got.line)
	entries := decodeManifest(t, c.store.object(manifestKey(res.SHA256B64)))
	stat := func(rel string) *syscall.Stat_t {
		fi, err := os.Lstat(v.ws + "/" + rel)
		require.NoError(t, err)
		return fi.Sys().(*syscall.Stat_t)
	}
	meta := func(rel, typ string) ManifestEntry {
		st := stat(rel)
		return ManifestEntry{Path: rel, Type: typ, Mode: st.Mode & 0o7777, UID: int(st.Uid), GID: int(st.Gid), MTimeNS: st.Mtim.Nano()}
	}
	root, a, b, y, z, link := meta(".", ManifestDir), meta("a", ManifestFile), meta("b", ManifestDir), meta("b/y", ManifestDir),
		meta("b/z", ManifestFile), meta("c", ManifestSymlink)
	a.SHA256 = emptyDigest
	z.Size, z.SHA256 = int64(len(helloData)), hexSum(helloData)
	link.Target = "b/z"
	require.Equal(t, []ManifestEntry{root, a, b, y, z, link}, entries)
	require.Equal(t, 6, res.Entries)
	require.Equal(t, int64(len(helloData)), *res.Size)
	require.Equal(t, int64(len(helloData)), res.UploadedBytes, "one bundle of one member")
}

// TestSnapshotIncremental takes three snapshots: an unchanged tree
// uploads nothing and makes the same manifest; one changed file is all
// the third uploads.
func TestSnapshotIncremental(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "d")
	for i := range 20 {
		v.write(t, fmt.Sprintf("d/f%02d", i), []byte(fmt.Sprintf("file %d", i)), 0o644)
	}
	v.write(t, "large", noise(t, smallBundleFileMax*2), 0o644)
	c := newCASServer(t)
	first, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	require.Positive(t, first.UploadedBytes)

	again, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	require.Zero(t, again.UploadedBytes)
	require.NotContains(t, got.line, "uploaded_bytes")
	require.Empty(t, needsOf(got.needs, NeedBlob))
	require.Empty(t, needsOf(got.needs, NeedBundle))
	require.Equal(t, withoutStat(decodeManifest(t, c.store.object(manifestKey(first.SHA256B64)))),
		withoutStat(decodeManifest(t, c.store.object(manifestKey(again.SHA256B64)))),
		"the same tree makes the same manifest, but for the stat a file records once it settled")

	changed := []byte("file 7, changed")
	v.write(t, "d/f07", changed, 0o644)
	third, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	require.Equal(t, int64(len(changed)), third.UploadedBytes)
	bundles := needsOf(got.needs, NeedBundle)
	require.Len(t, bundles, 1)
	require.Equal(t, []BundleMember{{SHA256: hexSum(changed), Offset: 0, Size: int64(len(changed))}}, bundles[0].Members)
	require.Empty(t, needsOf(got.needs, NeedBlob))

	large := noise(t, smallBundleFileMax*2)
	v.write(t, "large", large, 0o644)
	fourth, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	require.Equal(t, int64(len(large)), fourth.UploadedBytes)
	require.Equal(t, []Need{{Need: NeedBlob, Size: int64(len(large)), SHA256B64: sum(large)}}, needsOf(got.needs, NeedBlob))
	require.Empty(t, needsOf(got.needs, NeedBundle))
}

// TestSnapshotSkipsSpecialFiles leaves FIFOs, sockets and devices out and
// counts them.
func TestSnapshotSkipsSpecialFiles(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "d")
	v.mkfifo(t, "d/pipe")
	v.socket(t, "sock")
	v.write(t, "file", helloData, 0o644)
	skipped := 2
	if err := syscall.Mknod(v.at("d/null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		skipped++
	} else {
		skipUnlessCI(t, "mknod needs CAP_MKNOD: %v", err)
	}
	c := newCASServer(t)
	res, got := snap(t, c, v, nil)
	require.Equal(t, ExitOK, got.code, got.line)
	require.Equal(t, skipped, res.Skipped)
	var paths []string
	for _, e := range decodeManifest(t, c.store.object(manifestKey(res.SHA256B64))) {
		paths = append(paths, e.Path)
	}
	require.Equal(t, []string{".", "d", "file"}, paths)
}

// TestSnapshotLeavesRestoreDirsOut: the directories a restore works in,
// at the root, are not the volume's; the same names elsewhere are.
func TestSnapshotLeavesRestoreDirsOut(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	id := "0123456789abcdef0123456789abcdef"
	v.mkdir(t, restoreOld+id)
	v.mkdir(t, "d")
	v.mkdir(t, "d/"+restoreOld+id)
	v.mkdir(t, restoreOld+"not-an-id")
	c := newCASServer(t)
	res, got := snap(t, c, v, nil)
	require.Equal(t, ExitOK, got.code, got.line)
	var paths []string
	for _, e := range decodeManifest(t, c.store.object(manifestKey(res.SHA256B64))) {
		paths = append(paths, e.Path)
	}
	require.Equal(t, []string{".", restoreOld + "not-an-id", "d", "d/" + restoreOld + id}, paths)
}

// TestSnapshotFileChanged changes a file between its hash and its upload
// (as the server answers the have): the snapshot fails and no manifest
// goes up, whether the file goes up alone or in a bundle.
func TestSnapshotFileChanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int
		grow bool
	}{
		{"Blob", smallBundleFileMax * 2, false},
		{"BlobGrown", smallBundleFileMax * 2, true},
		{"Bundled", 100, false},
		{"BundledGrown", 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			data := noise(t, tc.size)
			v.write(t, "f", data, 0o644)
			c := newCASServer(t)
			c.before = func(n Need) {
				if n.Need != NeedHave {
					return
				}
				changed := append([]byte(nil), data...)
				changed[len(changed)/2] ^= 1
				if tc.grow {
					changed = append(data, 'x')
				}
				require.NoError(t, os.WriteFile(v.at("f"), changed, 0o644))
			}
			_, got := snap(t, c, v, snapVars())
			require.Equal(t, failureLine(ReasonSourceChanged,
				"the file '"+v.at("f")+"' changed between being hashed and being uploaded", 0), got.line)
			require.Empty(t, needsOf(got.needs, NeedManifest))
			require.Empty(t, c.store.putsSoFar(), "no upload completed")
		})
	}
}

// TestSnapshotRefused walks the snapshot's refusals.
func TestSnapshotRefused(t *testing.T) {
	t.Parallel()
	t.Run("TooManyEntries", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "d")
		v.write(t, "d/a", nil, 0o644)
		v.write(t, "d/b", nil, 0o644)
		c := newCASServer(t)
		_, got := snap(t, c, v, map[string]string{EnvMaxEntries: "3"})
		require.Equal(t, failureLine(ReasonTooManyEntries, "the volume holds more than 3 entries, the most one snapshot records", 0), got.line)
		require.Empty(t, got.needs)
	})
	t.Run("NotUTF8", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "bad\xff", nil, 0o644)
		c := newCASServer(t)
		_, got := snap(t, c, v, nil)
		require.Equal(t, failureLine(ReasonArchiveUnsafePath,
			strconv.Quote(v.at("bad\xff"))+" cannot be recorded in a snapshot: its name is not UTF-8", 0), got.line)
	})
	t.Run("StoreRejects", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		c := newCASServer(t)
		c.store.refuse = 403
		_, got := snap(t, c, v, nil)
		require.Equal(t, failureLine(ReasonStoreRejected, "the object store rejected the upload (HTTP 403)", 403), got.line)
	})
	t.Run("GrantRefused", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		c := newCASServer(t)
		c.answer = func(n Need) (*Grant, bool) {
			return &Grant{Error: "the workspace was deleted meanwhile"}, n.Need == NeedBundle
		}
		_, got := snap(t, c, v, nil)
		require.Equal(t, failureLine(ReasonSidecarRejected,
			"the server refused to grant an upload of a bundle of 1 files: the workspace was deleted meanwhile", 0), got.line)
	})
	t.Run("MissingOutOfRange", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		c := newCASServer(t)
		c.answer = func(n Need) (*Grant, bool) { return &Grant{Missing: []int{1}}, n.Need == NeedHave }
		_, got := snap(t, c, v, nil)
		require.Equal(t, failureLine(ReasonEnvInvalid,
			"the answer for which of 1 contents the store lacks names content it was not asked about", 0), got.line)
	})
	t.Run("StdinEnds", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		c := newCASServer(t)
		c.answer = func(n Need) (*Grant, bool) { return nil, true }
		_, got := snap(t, c, v, nil)
		require.Equal(t, failureLine(ReasonEnvInvalid,
			"no answer came for which of 1 contents the store lacks (standard input ended)", 0), got.line)
	})
	t.Run("BundleFileMax", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		line, code := runLine(t, []string{CommandSnapshot}, map[string]string{EnvMountRoot: v.ws, EnvBundleFileMax: "9000000"})
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonEnvInvalid, "CAIRN_BUNDLE_FILE_MAX must be a decimal number of bytes from 0 to 8388608", 0), line)
	})
}

// TestSnapshotNoBundles: with CAIRN_BUNDLE_FILE_MAX 0 every non-empty
// file goes up alone, and empty ones never.
func TestSnapshotNoBundles(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "a", []byte("a"), 0o644)
	v.write(t, "b", nil, 0o644)
	c := newCASServer(t)
	res, got := snap(t, c, v, map[string]string{EnvBundleFileMax: "0"})
	require.Equal(t, ExitOK, got.code, got.line)
	require.Equal(t, []Need{{Need: NeedBlob, Size: 1, SHA256B64: sum([]byte("a"))}}, needsOf(got.needs, NeedBlob))
	require.Empty(t, needsOf(got.needs, NeedBundle))
	require.Equal(t, int64(1), res.UploadedBytes)
}

// TestSnapshotReusesSettledDigests: given the previous manifest, a file
// whose size, mtime, ctime and inode did not move is not read again: its
// digest is the manifest's (here one the test made up, to see it taken);
// a file whose ctime moved is read. Not parallel: it shortens settleTime.
func TestSnapshotReusesSettledDigests(t *testing.T) {
	defer func(d time.Duration) { settleTime = d }(settleTime)
	settleTime = 0
	v := newVolume(t)
	v.write(t, "kept", []byte("kept content"), 0o644)
	v.write(t, "touched", []byte("same size"), 0o644)
	c := newCASServer(t)
	first, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	prior := decodeManifest(t, c.store.object(manifestKey(first.SHA256B64)))
	require.NotZero(t, prior[1].CTimeNS, "a settled file's ctime is recorded")

	// The same stat with another digest: only a snapshot that did not
	// read the file can record it.
	made := digestOf("made up")
	var lines []string
	for _, e := range prior {
		if e.Path == "kept" {
			e.SHA256 = made
		}
		line, err := json.Marshal(e)
		require.NoError(t, err)
		lines = append(lines, string(line))
	}
	raw := encodeLines(t, lines...)
	c.store.keep(manifestKey(sum(raw)), raw)
	c.where[made] = casLocation{key: "made-up", size: int64(len("kept content"))} // the store holds it: nothing to upload
	info, err := os.Stat(filepath.Join(v.ws, "touched"))
	require.NoError(t, err)
	require.NoError(t, os.Chmod(filepath.Join(v.ws, "touched"), 0o600)) // moves its ctime, not its size or mtime
	require.NoError(t, os.Chtimes(filepath.Join(v.ws, "touched"), info.ModTime(), info.ModTime()))

	vars := snapVars()
	vars[EnvURL], vars[EnvArchiveSHA256] = c.url(manifestKey(sum(raw))), sum(raw)
	second, got := snap(t, c, v, vars)
	require.Equal(t, ExitOK, got.code, got.line)
	byPath := map[string]ManifestEntry{}
	for _, e := range decodeManifest(t, c.store.object(manifestKey(second.SHA256B64))) {
		byPath[e.Path] = e
	}
	require.Equal(t, made, byPath["kept"].SHA256, "the unchanged file's digest is the previous manifest's")
	require.Equal(t, hexSum([]byte("same size")), byPath["touched"].SHA256, "the file whose ctime moved was read")
}

func digestOf(s string) string { return hexSum([]byte(s)) }

// withoutStat drops what a manifest records for the next snapshot's reuse.
func withoutStat(entries []ManifestEntry) []ManifestEntry {
	for i := range entries {
		entries[i].CTimeNS, entries[i].Ino = 0, 0
	}
	return entries
}
