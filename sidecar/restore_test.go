package sidecar

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// oldTree fills a volume with contents a restore must replace: names the
// new tree also uses, as other types, a directory closed to its owner, a
// symlink out of the volume. (No FIFO: the trees' comparison would open
// it.)
func oldTree(t *testing.T, w volume) {
	t.Helper()
	w.write(t, "old-file", []byte("old"), 0o644)
	w.write(t, "src", []byte("a file where the new tree has a directory"), 0o644)
	w.mkdir(t, "big.bin")
	w.write(t, "big.bin/inside", []byte("a directory where the new tree has a file"), 0o644)
	w.mkdir(t, "closed")
	w.write(t, "closed/f", []byte("x"), 0o600)
	require.NoError(t, os.Chmod(w.at("closed"), 0))
	w.symlink(t, "../outside", "escape")
	setTimesTree(t, w.ws)
}

// smallTree is a tree with a file that goes up alone, one in a bundle and
// the usual metadata, quick to snapshot.
func smallTree(t *testing.T, v volume) {
	t.Helper()
	v.mkdir(t, "src")
	v.mkdir(t, "src/sub")
	v.write(t, "src/sub/a", []byte("a"), 0o640)
	v.write(t, "src/b", []byte("bee"), 0o755)
	v.write(t, "big.bin", noise(t, smallBundleFileMax+5), 0o644)
	v.write(t, "small", []byte("only member of the bundle"), 0o644)
	v.write(t, "empty", nil, 0o644)
	v.symlink(t, "src/b", "link")
	v.mkdir(t, "sticky")
	require.NoError(t, os.Chmod(v.at("sticky"), 0o777|os.ModeSticky))
	require.NoError(t, os.Chown(v.at("src/sub"), 321, 654))
	require.NoError(t, os.Chmod(v.ws, 0o777))
	setTimesTree(t, v.ws)
}

// snapOf snapshots a fresh small tree into a fresh fake server.
func snapOf(t *testing.T, build func(*testing.T, volume)) (*casServer, volume, Result) {
	t.Helper()
	v := newVolume(t)
	build(t, v)
	c := newCASServer(t)
	res, got := snap(t, c, v, snapVars())
	require.Equal(t, ExitOK, got.code, got.line)
	return c, v, res
}

// TestRestoreReplaces restores into a volume with contents of its own:
// they are gone, the snapshot's tree is there, nothing else.
func TestRestoreReplaces(t *testing.T) {
	t.Parallel()
	c, v, res := snapOf(t, richTree)
	w := newVolume(t)
	oldTree(t, w)
	w.mkfifo(t, "pipe")
	w.socket(t, "sock")
	back, got := restore(t, c, restoreVars(c, w, res.SHA256B64))
	require.Equal(t, ExitOK, got.code, got.line)
	require.Equal(t, res.Entries, back.Entries)
	requireSameTree(t, snapshot(t, v.ws, 1), snapshot(t, w.ws, 1))
	require.Equal(t, rootMetaOf(t, v.ws), rootMetaOf(t, w.ws))
	requireNoRestoreNames(t, w.ws)
	require.Equal(t, "top secret", string(readFile(t, w.outside+"/secret")), "the old symlink out was removed, not followed")
}

// TestRestoreEmptySnapshot restores a snapshot of an empty volume: no
// locate, and the volume is emptied.
func TestRestoreEmptySnapshot(t *testing.T) {
	t.Parallel()
	c, v, res := snapOf(t, func(t *testing.T, v volume) { setTimesTree(t, v.ws) })
	require.Equal(t, 1, res.Entries)
	w := newVolume(t)
	oldTree(t, w)
	_, got := restore(t, c, restoreVars(c, w, res.SHA256B64))
	require.Equal(t, ExitOK, got.code, got.line)
	require.Empty(t, got.needs)
	require.Empty(t, snapshot(t, w.ws, 1))
	require.Equal(t, rootMetaOf(t, v.ws), rootMetaOf(t, w.ws))
}

// TestRestoreObjectsNamedByQuery restores from a store that names its
// objects in the query, where every URL has the same path: the bundle
// cache takes the second bundle for the first, finds the digests wrong,
// fetches the right one, and the tree comes back whole, each bundle
// fetched once.
func TestRestoreObjectsNamedByQuery(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "many")
	for i := range manySmall {
		v.write(t, fmt.Sprintf("many/f%03d", i), []byte(fmt.Sprintf("small file %d\n", i)), 0o644)
	}
	setTimesTree(t, v.ws)
	c := newCASServer(t)
	c.byQuery = true
	res, got := snap(t, c, v, nil)
	require.Equal(t, ExitOK, got.code, got.line)
	bundles := needsOf(got.needs, NeedBundle)
	require.Len(t, bundles, 2)
	w := newVolume(t)
	_, rgot := restore(t, c, restoreVars(c, w, res.SHA256B64))
	require.Equal(t, ExitOK, rgot.code, rgot.line)
	requireSameTree(t, snapshot(t, v.ws, 1), snapshot(t, w.ws, 1))
	for _, n := range bundles {
		require.Equal(t, 1, c.store.getsOf("bundle/"+hexOf(n.SHA256B64)))
	}
}

// TestRestoreTampered restores from a store whose objects rotted: the
// restore fails with digest_mismatch, and the volume is exactly as it
// was, its root's mtime included, with no staging directory left.
func TestRestoreTampered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tamper  func(t *testing.T, c *casServer, needs []Need)
		message func(t *testing.T, w volume, res Result) string
	}{
		{"Blob", func(t *testing.T, c *casServer, needs []Need) {
			c.store.flip(t, "blob/"+hexOf(needsOf(needs, NeedBlob)[0].SHA256B64), smallBundleFileMax)
		}, func(_ *testing.T, w volume, _ Result) string {
			return "the content of '" + w.at("big.bin") + "' is not the snapshot's: the store's bytes do not hash to its digest"
		}},
		{"BlobLonger", func(t *testing.T, c *casServer, needs []Need) {
			key := "blob/" + hexOf(needsOf(needs, NeedBlob)[0].SHA256B64)
			c.store.keep(key, append(c.store.object(key), 0))
		}, func(_ *testing.T, w volume, _ Result) string {
			return fmt.Sprintf("the content of '%s' is not the snapshot's: the store holds %d bytes for its %d",
				w.at("big.bin"), smallBundleFileMax+6, smallBundleFileMax+5)
		}},
		{"BlobLongerChunked", func(t *testing.T, c *casServer, needs []Need) {
			key := "blob/" + hexOf(needsOf(needs, NeedBlob)[0].SHA256B64)
			c.store.keep(key, append(c.store.object(key), 0))
			c.store.noLength = true
		}, func(_ *testing.T, w volume, _ Result) string {
			return fmt.Sprintf("the content of '%s' is not the snapshot's: the store holds more or fewer bytes than its %d",
				w.at("big.bin"), smallBundleFileMax+5)
		}},
		{"BlobShorterChunked", func(t *testing.T, c *casServer, needs []Need) {
			key := "blob/" + hexOf(needsOf(needs, NeedBlob)[0].SHA256B64)
			c.store.keep(key, c.store.object(key)[:smallBundleFileMax+4])
			c.store.noLength = true
		}, func(_ *testing.T, w volume, _ Result) string {
			return fmt.Sprintf("the content of '%s' is not the snapshot's: the store holds more or fewer bytes than its %d",
				w.at("big.bin"), smallBundleFileMax+5)
		}},
		{"Bundle", func(t *testing.T, c *casServer, needs []Need) {
			c.store.flip(t, "bundle/"+hexOf(needsOf(needs, NeedBundle)[0].SHA256B64), 0)
		}, func(_ *testing.T, w volume, _ Result) string {
			return "the content of '" + w.at("member") + "' is not the snapshot's: the store's bytes do not hash to its digest"
		}},
		{"BundleShort", func(t *testing.T, c *casServer, needs []Need) {
			key := "bundle/" + hexOf(needsOf(needs, NeedBundle)[0].SHA256B64)
			c.store.keep(key, c.store.object(key)[:10])
		}, func(_ *testing.T, w volume, _ Result) string {
			return "the content of '" + w.at("member") + "' is not the snapshot's: the store's bundle of 10 bytes does not hold it"
		}},
		{"Manifest", func(t *testing.T, c *casServer, needs []Need) {
			key := manifestKey(needsOf(needs, NeedManifest)[0].SHA256B64)
			c.store.keep(key, encodeLines(t, `{"path":".","type":"dir","mode":511,"uid":0,"gid":0,"mtime_ns":0}`))
		}, func(t *testing.T, w volume, res Result) string {
			forged := sum(encodeLines(t, `{"path":".","type":"dir","mode":511,"uid":0,"gid":0,"mtime_ns":0}`))
			return "the manifest's SHA-256 is " + forged + ", not the " + res.SHA256B64 + " recorded for the snapshot"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.write(t, "big.bin", noise(t, smallBundleFileMax+5), 0o644)
			v.write(t, "member", []byte("the bundle's first member"), 0o644)
			c := newCASServer(t)
			res, got := snap(t, c, v, snapVars())
			require.Equal(t, ExitOK, got.code, got.line)
			tc.tamper(t, c, got.needs)

			w := newVolume(t)
			oldTree(t, w)
			before, beforeRoot := snapshot(t, w.ws, 1), rootMetaOf(t, w.ws)
			_, rgot := restore(t, c, restoreVars(c, w, res.SHA256B64))
			require.Equal(t, failureLine(ReasonDigestMismatch, tc.message(t, w, res), 0), rgot.line)
			require.Equal(t, ExitFailure, rgot.code)
			requireSameTree(t, before, snapshot(t, w.ws, 1))
			require.Equal(t, beforeRoot, rootMetaOf(t, w.ws))
			requireNoRestoreNames(t, w.ws)
		})
	}
}

// TestRestoreRecovery kills a restore after each step of its swap, then
// runs another restore, whose manifest cannot even be fetched: finishing
// the first one is the first thing it does. The volume then holds the
// first restore's tree, with its root's owner and mode; or, when it was
// killed before it committed, the old one.
func TestRestoreRecovery(t *testing.T) {
	t.Parallel()
	c, v, res := snapOf(t, smallTree)
	want := snapshot(t, v.ws, 1)
	wantRoot := rootMetaOf(t, v.ws)
	for _, tc := range []struct {
		step      string
		nth       int      // stop at the nth time the step ends
		left      []string // the restore's directories the kill leaves
		committed bool
	}{
		{"staged", 1, []string{restoreStaging}, false},
		{"commit", 1, []string{restoreSwap}, true},
		{"old-partial", 1, []string{restoreOldPartial, restoreSwap}, true},
		{"aside", 1, []string{restoreOldPartial, restoreSwap}, true},
		{"aside", 4, []string{restoreOldPartial, restoreSwap}, true},
		{"old", 1, []string{restoreOld, restoreSwap}, true},
		{"in", 1, []string{restoreOld, restoreSwap}, true},
		{"in", 5, []string{restoreOld, restoreSwap}, true},
		{"done", 1, []string{restoreDone, restoreOld}, true},
		{"old-removed", 1, []string{restoreDone}, true},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.step, tc.nth), func(t *testing.T) {
			t.Parallel()
			w := newVolume(t)
			oldTree(t, w)
			old, oldRoot := snapshot(t, w.ws, 1), rootMetaOf(t, w.ws)
			seen := 0
			stop := func(step string) bool {
				if step == tc.step {
					seen++
				}
				return step == tc.step && seen == tc.nth
			}
			vars := restoreVars(c, w, res.SHA256B64)
			got := converse(t, c, func(in io.Reader, out io.Writer) int {
				return finish(out, restoreWith(env(vars), in, out, stop))
			})
			require.Equal(t, failureLine(ReasonWriteFailed, "the restore stopped where a test asked it to", 0), got.line)
			left := append([]string(nil), tc.left...)
			sort.Strings(left)
			require.Equal(t, left, restoreNames(t, w.ws), "what the kill left")

			line, code := runLine(t, []string{CommandRestore}, map[string]string{
				EnvMountRoot: w.ws, EnvURL: closedURL(t), EnvArchiveSHA256: sum(nil)})
			require.Equal(t, ExitFailure, code)
			require.Contains(t, line, `"reason":"store_unreachable"`, "the recovery went through; then the fetch failed")
			requireNoRestoreNames(t, w.ws)
			root := rootMetaOf(t, w.ws)
			if !tc.committed {
				requireSameTree(t, old, snapshot(t, w.ws, 1))
				require.Equal(t, []any{oldRoot.mode, oldRoot.uid, oldRoot.gid}, []any{root.mode, root.uid, root.gid})
				return
			}
			requireSameTree(t, want, snapshot(t, w.ws, 1))
			require.Equal(t, []any{wantRoot.mode, wantRoot.uid, wantRoot.gid}, []any{root.mode, root.uid, root.gid})
		})
	}
}

// TestRestoreLeftovers builds by hand what no killed restore leaves but
// a volume may hold, and checks how the next restore clears it.
func TestRestoreLeftovers(t *testing.T) {
	t.Parallel()
	const id, id2 = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	recoverVars := func(w volume) map[string]string {
		return map[string]string{EnvMountRoot: w.ws, EnvURL: closedURL(t), EnvArchiveSHA256: sum(nil)}
	}
	for _, tc := range []struct {
		name    string
		build   func(t *testing.T, w volume)
		check   func(t *testing.T, w volume)
		failure string
	}{
		{"Staging", func(t *testing.T, w volume) {
			w.mkdir(t, restoreStaging+id)
			w.mkdir(t, restoreStaging+id+"/closed")
			w.write(t, restoreStaging+id+"/closed/f", helloData, 0o600)
			w.symlink(t, "../../outside", restoreStaging+id+"/closed/out")
			require.NoError(t, os.Chmod(w.at(restoreStaging+id+"/closed"), 0))
		}, nil, ""},
		{"OldAlone", func(t *testing.T, w volume) {
			w.mkdir(t, restoreOld+id)
			w.write(t, restoreOld+id+"/f", helloData, 0o600)
			w.symlink(t, "../../outside", restoreOld+id+"/out")
		}, nil, ""},
		{"OldPartialAlone", func(t *testing.T, w volume) {
			w.mkdir(t, restoreOldPartial+id)
			w.write(t, restoreOldPartial+id+"/moved-back", helloData, 0o600)
		}, func(t *testing.T, w volume) {
			require.Equal(t, helloData, readFile(t, w.at("moved-back")))
		}, ""},
		{"NotDirectories", func(t *testing.T, w volume) {
			w.symlink(t, "../outside", restoreOldPartial+id)
			w.symlink(t, "../outside", restoreSwap+id2)
			w.write(t, restoreDone+id, helloData, 0o644)
		}, nil, ""},
		{"LookAlikes", func(t *testing.T, w volume) {
			w.mkdir(t, restoreOld+"0123")
			w.mkdir(t, restoreOld+strings.ToUpper(id))
		}, func(t *testing.T, w volume) {
			require.DirExists(t, w.at(restoreOld+"0123"))
			require.DirExists(t, w.at(restoreOld+strings.ToUpper(id)))
		}, ""},
		{"TwoCommitted", func(t *testing.T, w volume) {
			w.mkdir(t, restoreSwap+id)
			w.mkdir(t, restoreDone+id2)
		}, nil, "the volume holds 2 interrupted restores; cairn cannot tell which came last"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newVolume(t)
			w.write(t, "kept", helloData, 0o644)
			tc.build(t, w)
			line, code := runLine(t, []string{CommandRestore}, recoverVars(w))
			require.Equal(t, ExitFailure, code)
			require.Equal(t, "top secret", string(readFile(t, w.outside+"/secret")))
			if tc.failure != "" {
				require.Equal(t, failureLine(ReasonWriteFailed, tc.failure, 0), line)
				return
			}
			require.Contains(t, line, `"reason":"store_unreachable"`)
			require.Equal(t, helloData, readFile(t, w.at("kept")))
			if tc.check != nil {
				tc.check(t, w)
			} else {
				requireNoRestoreNames(t, w.ws)
			}
		})
	}
}

// hostileLine is one entry line of a hand-made manifest.
func hostileLine(path, typ string, extra string) string {
	return fmt.Sprintf(`{"path":%q,"type":%q,"mode":420,"uid":0,"gid":0,"mtime_ns":1%s}`, path, typ, extra)
}

const rootLine = `{"path":".","type":"dir","mode":493,"uid":0,"gid":0,"mtime_ns":1}`

// TestRestoreHostileManifest restores hand-made manifests whose digest
// matches but whose entries are refused: nothing is written.
func TestRestoreHostileManifest(t *testing.T) {
	t.Parallel()
	hello := `,"size":13,"sha256":"` + hexSum(helloData) + `"`
	for _, tc := range []struct {
		name    string
		lines   []string
		reason  string
		message string
		vars    map[string]string
	}{
		{"DotDot", []string{rootLine, hostileLine("../x", "file", hello)}, ReasonManifestInvalid,
			`entry "../x" has a '..' component`, nil},
		{"DotDotInside", []string{rootLine, hostileLine("a", "dir", ""), hostileLine("a/../../x", "file", hello)}, ReasonManifestInvalid,
			`entry "a/../../x" has a path that is not clean`, nil},
		{"Absolute", []string{rootLine, hostileLine("/etc/x", "file", hello)}, ReasonManifestInvalid,
			`entry "/etc/x" has an absolute path`, nil},
		{"Duplicate", []string{rootLine, hostileLine("a", "file", hello), hostileLine("a", "file", hello)}, ReasonManifestInvalid,
			`entry "a" comes twice`, nil},
		{"ChildBeforeParent", []string{rootLine, hostileLine("a/b", "file", hello), hostileLine("a", "dir", "")}, ReasonManifestInvalid,
			`entry "a/b" does not come after its directory`, nil},
		{"ThroughSymlink", []string{rootLine, hostileLine("a", "symlink", `,"target":"/etc"`), hostileLine("a/passwd", "file", hello)},
			ReasonManifestInvalid, `entry "a/passwd" does not come after its directory`, nil},
		{"ThroughFile", []string{rootLine, hostileLine("a", "file", hello), hostileLine("a/b", "file", hello)},
			ReasonManifestInvalid, `entry "a/b" does not come after its directory`, nil},
		{"RootTwice", []string{rootLine, rootLine}, ReasonManifestInvalid, `entry "." names the root again, or nothing`, nil},
		{"RootNotFirst", []string{hostileLine("a", "file", hello), rootLine}, ReasonManifestInvalid,
			`entry "a" comes first, where the root directory '.' must`, nil},
		{"RootNotDir", []string{hostileLine(".", "symlink", `,"target":"x"`)}, ReasonManifestInvalid,
			`entry "." comes first, where the root directory '.' must`, nil},
		{"EmptySegment", []string{rootLine, hostileLine("a//b", "file", hello)}, ReasonManifestInvalid,
			`entry "a//b" has a path that is not clean`, nil},
		{"TrailingSlash", []string{rootLine, hostileLine("a/", "dir", "")}, ReasonManifestInvalid,
			`entry "a/" has a path that is not clean`, nil},
		{"NUL", []string{rootLine, `{"path":"a\u0000b","type":"file","mode":420,"uid":0,"gid":0,"mtime_ns":1` + hello + `}`},
			ReasonManifestInvalid, `entry "a\x00b" has a path that is not a file name`, nil},
		{"UpperCaseDigest", []string{rootLine, hostileLine("a", "file", `,"size":13,"sha256":"`+strings.ToUpper(hexSum(helloData))+`"`)},
			ReasonManifestInvalid, `entry "a" has a digest that is not 64 lower-case hex digits`, nil},
		{"ShortDigest", []string{rootLine, hostileLine("a", "file", `,"size":13,"sha256":"abc"`)},
			ReasonManifestInvalid, `entry "a" has a digest that is not 64 lower-case hex digits`, nil},
		{"NoDigest", []string{rootLine, hostileLine("a", "file", `,"size":13`)},
			ReasonManifestInvalid, `entry "a" has a digest that is not 64 lower-case hex digits`, nil},
		{"EmptyDigestNotEmpty", []string{rootLine, hostileLine("a", "file", `,"size":13,"sha256":"`+emptyDigest+`"`)},
			ReasonManifestInvalid, `entry "a" has a digest that cannot be its size's`, nil},
		{"DigestTwoSizes", []string{rootLine, hostileLine("a", "file", hello), hostileLine("b", "file", `,"size":14,"sha256":"`+hexSum(helloData)+`"`)},
			ReasonManifestInvalid, `entry "b" has a digest another entry gives another size`, nil},
		{"NegativeSize", []string{rootLine, hostileLine("a", "file", `,"size":-1,"sha256":"`+hexSum(helloData)+`"`)},
			ReasonManifestInvalid, `entry "a" has a negative size`, nil},
		{"UnknownType", []string{rootLine, hostileLine("p", "fifo", "")}, ReasonManifestInvalid, `entry "p" has an unknown type`, nil},
		{"ModeTooLarge", []string{rootLine, `{"path":"a","type":"dir","mode":4096,"uid":0,"gid":0,"mtime_ns":1}`},
			ReasonManifestInvalid, `entry "a" has a mode beyond 07777`, nil},
		{"UIDMinusOne", []string{rootLine, `{"path":"a","type":"dir","mode":493,"uid":-1,"gid":0,"mtime_ns":1}`},
			ReasonManifestInvalid, `entry "a" has an owner that is not a numeric user and group`, nil},
		{"EmptyTarget", []string{rootLine, hostileLine("l", "symlink", "")}, ReasonManifestInvalid,
			`entry "l" has a symlink target that is not a path`, nil},
		{"DirWithDigest", []string{rootLine, hostileLine("d", "dir", hello)}, ReasonManifestInvalid,
			`entry "d" holds what only a file or a symlink holds`, nil},
		{"ReservedName", []string{rootLine, hostileLine(restoreSwap+"0123456789abcdef0123456789abcdef", "dir", "")}, ReasonManifestInvalid,
			`entry ".cairn-swap.0123456789abcdef0123456789abcdef" has a name a restore keeps for itself`, nil},
		{"UnknownField", []string{`{"path":".","type":"dir","mode":493,"uid":0,"gid":0,"mtime_ns":1,"setuid_everything":true}`},
			ReasonManifestInvalid, `line 1 is not an entry: json: unknown field "setuid_everything"`, nil},
		{"TwoObjects", []string{rootLine + rootLine}, ReasonManifestInvalid, "line 1 holds more than one entry", nil},
		{"TooManyEntries", []string{rootLine, hostileLine("a", "dir", ""), hostileLine("b", "dir", "")}, ReasonTooManyEntries,
			"", map[string]string{EnvMaxEntries: "2"}},
		{"TooManyBytes", []string{rootLine, hostileLine("a", "file", hello)}, ReasonSnapshotTooLarge,
			"", map[string]string{EnvMaxBytes: "12"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCASServer(t)
			data := encodeLines(t, tc.lines...)
			c.store.keep(manifestKey(sum(data)), data)
			w := newVolume(t)
			oldTree(t, w)
			before, beforeRoot := snapshot(t, w.ws, 1), rootMetaOf(t, w.ws)
			vars := restoreVars(c, w, sum(data))
			for k, val := range tc.vars {
				vars[k] = val
			}
			_, got := restore(t, c, vars)
			require.Equal(t, ExitFailure, got.code)
			res := decodeLine(t, got.line)
			require.Equal(t, tc.reason, res.ReasonText(), got.line)
			if tc.message != "" {
				require.Equal(t, "the snapshot's manifest is refused: "+tc.message, res.ErrorText())
			}
			require.Empty(t, got.needs, "nothing was located")
			requireSameTree(t, before, snapshot(t, w.ws, 1))
			require.Equal(t, beforeRoot, rootMetaOf(t, w.ws))
			requireNoRestoreNames(t, w.ws)
		})
	}
}

// TestRestoreNotAManifest refuses an object that is no manifest at all.
func TestRestoreNotAManifest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, message string
		data          []byte
	}{
		{"NotGzip", "it is not gzip-compressed", []byte("plain text\n")},
		{"Empty", "it holds no entry", gzipped(t, nil)},
		{"Unterminated", "its last line does not end", gzipped(t, []byte(rootLine))},
		{"LongLine", "line 1 is longer than 65536 bytes", gzipped(t, []byte(strings.Repeat(" ", MaxManifestLine+1)+"\n"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCASServer(t)
			c.store.keep(manifestKey(sum(tc.data)), tc.data)
			w := newVolume(t)
			_, got := restore(t, c, restoreVars(c, w, sum(tc.data)))
			require.Equal(t, failureLine(ReasonManifestInvalid, "the snapshot's manifest is refused: "+tc.message, 0), got.line)
		})
	}
}

// TestRestoreDialog walks the failures of the locate dialog: each leaves
// the volume as it was and no staging directory.
func TestRestoreDialog(t *testing.T) {
	t.Parallel()
	c, _, res := snapOf(t, smallTree)
	for _, tc := range []struct {
		name   string
		answer func(Need) (*Grant, bool)
		line   string
	}{
		{"StdinEnds", func(Need) (*Grant, bool) { return nil, true },
			failureLine(ReasonEnvInvalid, "no answer came for where 4 contents are stored (standard input ended)", 0)},
		{"Refused", func(Need) (*Grant, bool) { return &Grant{Error: "content is gone"}, true },
			failureLine(ReasonSidecarRejected, "the server refused to answer where 4 contents are stored: content is gone", 0)},
		{"TooFewLocations", func(Need) (*Grant, bool) { return &Grant{URLs: []string{"http://x"}, Locations: []Location{{}}}, true },
			failureLine(ReasonEnvInvalid, "the answer for where 4 contents are stored is out of protocol: 1 locations for 4 digests", 0)},
		{"ObjectOutOfRange", func(n Need) (*Grant, bool) {
			g := &Grant{URLs: []string{"http://x"}}
			for range n.Digests {
				g.Locations = append(g.Locations, Location{Object: 1})
			}
			return g, true
		}, failureLine(ReasonEnvInvalid, "the answer for where 4 contents are stored is out of protocol: a location in an object it does not name", 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newVolume(t)
			oldTree(t, w)
			before, beforeRoot := snapshot(t, w.ws, 1), rootMetaOf(t, w.ws)
			cc := &casServer{store: c.store, where: c.where, answer: tc.answer}
			_, got := restore(t, cc, restoreVars(cc, w, res.SHA256B64))
			require.Equal(t, tc.line, got.line)
			requireSameTree(t, before, snapshot(t, w.ws, 1))
			require.Equal(t, beforeRoot, rootMetaOf(t, w.ws))
			requireNoRestoreNames(t, w.ws)
		})
	}
}

// TestRestoreStore walks the store's failures and the environment's.
func TestRestoreStore(t *testing.T) {
	t.Parallel()
	t.Run("ManifestMissing", func(t *testing.T) {
		t.Parallel()
		c := newCASServer(t)
		w := newVolume(t)
		_, got := restore(t, c, restoreVars(c, w, sum([]byte("nothing"))))
		require.Equal(t, failureLine(ReasonObjectNotFound, "the object store returned HTTP 404 for the download", 404), got.line)
	})
	t.Run("ContentMissing", func(t *testing.T) {
		t.Parallel()
		c, _, res := snapOf(t, smallTree)
		c.store.mu.Lock()
		for path := range c.store.objects {
			if strings.HasPrefix(path, "/blob/") {
				delete(c.store.objects, path)
			}
		}
		c.store.mu.Unlock()
		w := newVolume(t)
		oldTree(t, w)
		before := snapshot(t, w.ws, 1)
		_, got := restore(t, c, restoreVars(c, w, res.SHA256B64))
		require.Equal(t, failureLine(ReasonObjectNotFound, "the object store returned HTTP 404 for the download", 404), got.line)
		requireSameTree(t, before, snapshot(t, w.ws, 1))
		requireNoRestoreNames(t, w.ws)
	})
	t.Run("BadDigestEnv", func(t *testing.T) {
		t.Parallel()
		w := newVolume(t)
		line, code := runLine(t, []string{CommandRestore}, map[string]string{EnvMountRoot: w.ws, EnvURL: closedURL(t), EnvArchiveSHA256: "abc"})
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonEnvInvalid, "CAIRN_ARCHIVE_SHA256 must be a SHA-256 in standard base64", 0), line)
	})
	t.Run("NoURL", func(t *testing.T) {
		t.Parallel()
		w := newVolume(t)
		line, _ := runLine(t, []string{CommandRestore}, map[string]string{EnvMountRoot: w.ws, EnvArchiveSHA256: sum(nil)})
		require.Equal(t, failureLine(ReasonEnvInvalid, "CAIRN_URL is not set", 0), line)
	})
}
