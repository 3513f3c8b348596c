package sidecar

import (
	"encoding/json"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func srch(p, glob, content string, limit int) BrowseRequest {
	return BrowseRequest{Op: OpSearch, Path: p, Glob: glob, Content: content, Limit: limit}
}

func tr(p string, depth, limit int) BrowseRequest {
	return BrowseRequest{Op: OpTree, Path: p, Depth: depth, Limit: limit}
}

// searchOK sends a search that must succeed.
func searchOK(t *testing.T, s *browseSession, req BrowseRequest) BrowseReply {
	t.Helper()
	r := s.do(t, req)
	require.True(t, r.OK, deref(r.Error))
	return r
}

func matchPaths(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Path
	}
	return out
}

func treePaths(entries []TreeEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Path
	}
	return out
}

// ats is the volume paths of rels.
func (v volume) ats(rels ...string) []string {
	out := make([]string, len(rels))
	for i, rel := range rels {
		out[i] = v.at(rel)
	}
	return out
}

// searchLayout is a volume with names at several depths, a binary file,
// and symlinks to a directory inside and outside it. Its names, depth
// first in byte order: Z.txt a.txt b b/c.txt b/d b/d/e.txt b/y.txt bin.dat
// inlink outlink.
func searchLayout(t *testing.T) volume {
	t.Helper()
	v := newVolume(t)
	v.write(t, "a.txt", []byte("hello\nworld\nhello again\n"), 0o644)
	v.write(t, "Z.txt", []byte("nothing here"), 0o644)
	v.mkdir(t, "b")
	v.write(t, "b/c.txt", []byte("nothing\nhello there"), 0o644)
	v.write(t, "b/y.txt", nil, 0o644)
	v.mkdir(t, "b/d")
	v.write(t, "b/d/e.txt", []byte("x\r\nhello\r\n"), 0o644)
	v.write(t, "bin.dat", []byte("hello\x00binary\nhello\n"), 0o644)
	v.symlink(t, "b", "inlink")
	v.symlink(t, v.outside, "outlink")
	require.NoError(t, os.WriteFile(v.outside+"/hello.txt", []byte("hello from outside\n"), 0o644))
	return v
}

// TestServeSearch finds names and lines depth-first in byte order, reads
// only text files, and never follows a symlink.
func TestServeSearch(t *testing.T) {
	t.Parallel()
	v := searchLayout(t)
	s := startServe(t, serveVars(v))
	hellos := []Match{
		{Path: v.at("a.txt"), Line: 1, Text: "hello"},
		{Path: v.at("a.txt"), Line: 3, Text: "hello again"},
		{Path: v.at("b/c.txt"), Line: 2, Text: "hello there"},
		{Path: v.at("b/d/e.txt"), Line: 2, Text: "hello"},
	}

	t.Run("OKGlobInByteOrder", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.ws, "*.txt", "", 0))
		require.Equal(t, v.ws, r.Path)
		require.Equal(t, v.ats("Z.txt", "a.txt", "b/c.txt", "b/d/e.txt", "b/y.txt"), matchPaths(r.Matches))
		require.Empty(t, r.Stopped)
		require.Equal(t, int64(10), r.Scanned, "every name of the volume, none behind a symlink")
		for _, m := range r.Matches {
			require.Zero(t, m.Line)
			require.Empty(t, m.Text)
		}
	})
	t.Run("OKGlobAnyType", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.ws, "d", "", 0))
		require.Equal(t, []Match{{Path: v.at("b/d")}}, r.Matches, "a directory")
		r = searchOK(t, s, srch(v.ws, "*link", "", 0))
		require.Equal(t, v.ats("inlink", "outlink"), matchPaths(r.Matches), "symlinks, reported")
		r = searchOK(t, s, srch(v.at("b"), "[cd]*", "", 0))
		require.Equal(t, v.ats("b/c.txt", "b/d"), matchPaths(r.Matches), "below the path only")
	})
	t.Run("OKContent", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.ws, "", "hel+o", 0))
		require.Equal(t, hellos, r.Matches, "line numbers from 1, no binary file, nothing behind a symlink")
		require.Empty(t, r.Stopped)
		r = searchOK(t, s, srch(v.ws, "c.*", "^hello", 0))
		require.Equal(t, hellos[2:3], r.Matches, "only files whose name matches")
		r = searchOK(t, s, srch(v.ws, "", "^x$", 0))
		require.Equal(t, []Match{{Path: v.at("b/d/e.txt"), Line: 1, Text: "x"}}, r.Matches, "a CRLF line ends before its CR")
	})
	t.Run("OKSymlinksNeverFollowed", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.ws, "", "outside|secret", 0))
		require.Empty(t, r.Matches)
		r = searchOK(t, s, srch(v.ws, "*", "", 0))
		require.NotContains(t, matchPaths(r.Matches), v.at("outlink/hello.txt"))
		require.NotContains(t, matchPaths(r.Matches), v.at("inlink/c.txt"))
		r = searchOK(t, s, srch(v.at("outlink"), "*", "hello", 0))
		require.Empty(t, r.Matches, "a symlink as the path is one entry, not a file to read")
		r = searchOK(t, s, srch(v.at("outlink"), "*", "", 0))
		require.Equal(t, []Match{{Path: v.at("outlink")}}, r.Matches)
	})
	t.Run("OKPathIsFile", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.at("a.txt"), "", "hello", 0))
		require.Equal(t, hellos[:2], r.Matches)
		require.Equal(t, int64(1), r.Scanned)
		r = searchOK(t, s, srch(v.at("a.txt"), "*.dat", "", 0))
		require.Empty(t, r.Matches)
	})
	t.Run("OKLimit", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.ws, "", "hello", 3))
		require.Equal(t, hellos[:3], r.Matches)
		require.Equal(t, stoppedResults, r.Stopped)
		r = searchOK(t, s, srch(v.ws, "", "hello", len(hellos)))
		require.Equal(t, hellos, r.Matches)
		require.Empty(t, r.Stopped, "results stops a search only when there are more")
		r = searchOK(t, s, srch(v.ws, "*", "", 1))
		require.Equal(t, v.ats("Z.txt"), matchPaths(r.Matches))
		require.Equal(t, stoppedResults, r.Stopped)
	})
	t.Run("ErrPath", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{v.at("outlink/hello.txt"), v.at("inlink/c.txt")} {
			requireRefused(t, s.do(t, srch(p, "*", "", 0)), ReasonPathIsSymlink)
		}
		requireRefused(t, s.do(t, srch(v.at("absent"), "*", "", 0)), ReasonPathNotFound)
		requireRefused(t, s.do(t, srch(v.outside, "*", "", 0)), ReasonPathOutsideMount)
	})
	t.Run("ErrRequest", func(t *testing.T) {
		t.Parallel()
		tooLong := strings.Repeat("a", MaxPatternBytes+1)
		for _, req := range []BrowseRequest{
			srch(v.ws, "", "", 0),
			srch(v.ws, "[", "", 0),
			srch(v.ws, "a\\", "", 0),
			srch(v.ws, "", "(", 0),
			srch(v.ws, "", "a{1000}{1000}", 0),
			srch(v.ws, tooLong, "", 0),
			srch(v.ws, "", tooLong, 0),
			srch(v.ws, "*", "", -1),
			srch(v.ws, "*", "", MaxSearchResults+1),
		} {
			requireRefused(t, s.do(t, req), ReasonEnvInvalid)
		}
		longest := strings.Repeat("a", MaxPatternBytes)
		searchOK(t, s, srch(v.ws, longest, longest, MaxSearchResults))
	})
}

// TestServeSearchLines reads lines of any length in bounded memory, and
// reports each match's text cut and valid.
func TestServeSearchLines(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	long := strings.Repeat("x", maxSearchLine+100)
	v.write(t, "long", []byte(long+"needle\nneedle"+long+"\nneedle\n"), 0o644)
	v.write(t, "utf8", []byte("needle!"+strings.Repeat("é", 300)+"\nneedle \xff\xfe end\nneedle"+strings.Repeat("a\xff", 300)+"\n"), 0o644)
	v.write(t, "late-nul", []byte(strings.Repeat("needle\n", binarySniff)+"\x00"), 0o644)
	v.write(t, "as", []byte(strings.Repeat("a", maxSearchLine-1)+"\n"), 0o644)
	s := startServe(t, serveVars(v))

	t.Run("OKLongLines", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.at("long"), "", "needle", 0))
		require.Len(t, r.Matches, 2, "a long line is matched on its first %d bytes", maxSearchLine)
		require.Equal(t, 2, r.Matches[0].Line)
		require.Equal(t, "needle"+long[:MaxMatchText-len("needle")], r.Matches[0].Text)
		require.Equal(t, Match{Path: v.at("long"), Line: 3, Text: "needle"}, r.Matches[1])
	})
	t.Run("OKTextValidUTF8", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.at("utf8"), "", "needle", 0))
		require.Len(t, r.Matches, 3)
		// 7 bytes, then 252 two-byte characters: the 253rd would end past
		// MaxMatchText, and is left out whole.
		require.Equal(t, "needle!"+strings.Repeat("é", 252), r.Matches[0].Text)
		require.Equal(t, "needle \uFFFD end", r.Matches[1].Text)
		// Each invalid byte takes 3 bytes as U+FFFD: the text is cut again.
		require.Equal(t, "needle"+strings.Repeat("a\uFFFD", 126)+"a", r.Matches[2].Text)
		for _, m := range r.Matches {
			require.True(t, utf8.ValidString(m.Text))
			require.LessOrEqual(t, len(m.Text), MaxMatchText)
		}
	})
	t.Run("OKBinaryOnlyByItsStart", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, srch(v.at("late-nul"), "", "needle", MaxSearchResults))
		require.Len(t, r.Matches, MaxSearchResults, "a NUL past the first %d bytes does not make a file binary", binarySniff)
	})
	t.Run("OKLinearTimeExpressions", func(t *testing.T) {
		t.Parallel()
		// Each takes exponential time in a backtracking engine on a line
		// of 64 Ki a's; RE2 takes linear time, well inside the guard.
		for _, expr := range []string{`(a*)*b`, `(x+x+)+y`, `(a|aa)+$b`, `^(a+)+$x`} {
			start := time.Now()
			r := searchOK(t, s, srch(v.at("as"), "", expr, 0))
			require.Empty(t, r.Matches, expr)
			require.Empty(t, r.Stopped, expr)
			require.Less(t, time.Since(start), serveGuard/2, expr)
		}
	})
}

// TestServeSearchDepthBound descends maxSearchDepth levels and no more.
func TestServeSearchDepthBound(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	dir := "d"
	for level := 1; level <= maxSearchDepth; level++ {
		v.mkdir(t, dir)
		v.write(t, dir+"/hit"+strconv.Itoa(level+1), nil, 0o644)
		dir += "/d"
	}
	r := searchOK(t, startServe(t, serveVars(v)), srch(v.ws, "hit*", "", MaxSearchResults))
	require.Len(t, r.Matches, maxSearchDepth-1, "hit2 … hit%d", maxSearchDepth)
	// "d" sorts before "hit…": the deepest comes first.
	require.Equal(t, "hit"+strconv.Itoa(maxSearchDepth), path.Base(r.Matches[0].Path))
}

// lowerWalkBounds sets walkBounds for the rest of a test that must not
// run in parallel with others.
func lowerWalkBounds(t *testing.T, entries, bytes int64, d time.Duration, treeReply int) {
	t.Helper()
	saved := walkBounds
	walkBounds.entries, walkBounds.bytes, walkBounds.time, walkBounds.treeReplyBytes = entries, bytes, d, treeReply
	t.Cleanup(func() { walkBounds = saved })
}

// TestServeSearchBounds stops a search or tree at each bound and says
// which. It lowers walkBounds, so it runs alone.
func TestServeSearchBounds(t *testing.T) {
	v := searchLayout(t)
	v.write(t, "b/lines", []byte(strings.Repeat("hay\n", 3*linesPerClock)), 0o644)
	s := startServe(t, serveVars(v))
	all := walkBounds

	t.Run("Entries", func(t *testing.T) {
		lowerWalkBounds(t, 7, all.bytes, all.time, all.treeReplyBytes)
		r := searchOK(t, s, srch(v.ws, "*", "", 0))
		require.Equal(t, stoppedEntries, r.Stopped)
		require.Equal(t, int64(7), r.Scanned)
		// The root's 6 names, then 1 of b's 4: the walk ends in b.
		require.Len(t, r.Matches, 4)
		require.Equal(t, v.ats("Z.txt", "a.txt", "b"), matchPaths(r.Matches[:3]))
		require.Equal(t, v.at("b"), path.Dir(r.Matches[3].Path))
		tree := searchOK(t, s, tr(v.ws, 1, 0))
		require.Empty(t, tree.Stopped, "the root's 6 names are within 7")
		tree = searchOK(t, s, tr(v.ws, 2, 0))
		require.Equal(t, stoppedEntries, tree.Stopped)
	})
	t.Run("EntriesExactlyEnough", func(t *testing.T) {
		lowerWalkBounds(t, 11, all.bytes, all.time, all.treeReplyBytes)
		r := searchOK(t, s, srch(v.ws, "*", "", 0))
		require.Empty(t, r.Stopped)
		require.Len(t, r.Matches, 11)
	})
	t.Run("Bytes", func(t *testing.T) {
		lowerWalkBounds(t, all.entries, 10, all.time, all.treeReplyBytes)
		r := searchOK(t, s, srch(v.at("a.txt"), "", "hello", 0))
		require.Equal(t, []Match{{Path: v.at("a.txt"), Line: 1, Text: "hello"}}, r.Matches)
		require.Equal(t, stoppedBytes, r.Stopped)
	})
	t.Run("BytesExactlyEnough", func(t *testing.T) {
		lowerWalkBounds(t, all.entries, int64(len("hello\nworld\nhello again\n")), all.time, all.treeReplyBytes)
		r := searchOK(t, s, srch(v.at("a.txt"), "", "hello", 0))
		require.Len(t, r.Matches, 2)
		require.Empty(t, r.Stopped)
		r = searchOK(t, s, srch(v.ws, "[a-z]*", "hello", 0))
		require.Len(t, r.Matches, 2, "a.txt whole, nothing left for b/c.txt")
		require.Equal(t, stoppedBytes, r.Stopped)
	})
	t.Run("Time", func(t *testing.T) {
		lowerWalkBounds(t, all.entries, all.bytes, 0, all.treeReplyBytes)
		r := searchOK(t, s, srch(v.ws, "*", "", 0))
		require.Empty(t, r.Matches)
		require.Equal(t, stoppedTime, r.Stopped)
		r = searchOK(t, s, tr(v.ws, 0, 0))
		require.Empty(t, r.Tree)
		require.Equal(t, stoppedTime, r.Stopped)
		r = searchOK(t, s, srch(v.at("b/lines"), "", "needle", 0))
		require.Equal(t, stoppedTime, r.Stopped, "the clock is read within a file too")
	})
	t.Run("TreeReplyBytes", func(t *testing.T) {
		full := searchOK(t, s, tr(v.ws, 1, 0))
		first, err := json.Marshal(full.Tree[0])
		require.NoError(t, err)
		lowerWalkBounds(t, all.entries, all.bytes, all.time, len(first)+1)
		r := searchOK(t, s, tr(v.ws, 1, 0))
		require.Equal(t, full.Tree[:1], r.Tree)
		require.Equal(t, stoppedResults, r.Stopped)
	})
	t.Run("NoDescriptorKept", func(t *testing.T) {
		searchOK(t, s, srch(v.ws, "*", "hello", 0))
		before := openDescriptors(t)
		for range 5 {
			searchOK(t, s, srch(v.ws, "*", "hello", 0))
			searchOK(t, s, tr(v.ws, MaxTreeDepth, 0))
		}
		require.Equal(t, before, openDescriptors(t))
	})
	r := searchOK(t, s, srch(v.ws, "*", "", 0))
	require.Empty(t, r.Stopped, "the bounds are restored")
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}

// treeLayout's names, depth first: a a/b a/b/c a/b/c/d.txt a/f g.txt link
// out.
func treeLayout(t *testing.T) volume {
	t.Helper()
	v := newVolume(t)
	v.mkdir(t, "a")
	v.mkdir(t, "a/b")
	v.mkdir(t, "a/b/c")
	v.write(t, "a/b/c/d.txt", []byte("deep"), 0o644)
	v.write(t, "a/f", []byte("file"), 0o600)
	v.write(t, "g.txt", []byte("0123456789"), 0o644)
	v.symlink(t, "a", "link")
	v.symlink(t, v.outside, "out")
	return v
}

// TestServeTree lists what lies below a path to a depth, each entry as a
// listing reports it, and never descends a symlink.
func TestServeTree(t *testing.T) {
	t.Parallel()
	v := treeLayout(t)
	s := startServe(t, serveVars(v))

	t.Run("OKDepths", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			depth int
			want  []string
		}{
			{1, []string{"a", "g.txt", "link", "out"}},
			{2, []string{"a", "a/b", "a/f", "g.txt", "link", "out"}},
			{0, []string{"a", "a/b", "a/b/c", "a/f", "g.txt", "link", "out"}},
			{MaxTreeDepth, []string{"a", "a/b", "a/b/c", "a/b/c/d.txt", "a/f", "g.txt", "link", "out"}},
		} {
			r := searchOK(t, s, tr(v.ws, tc.depth, 0))
			require.Equal(t, v.ws, r.Path)
			require.Equal(t, v.ats(tc.want...), treePaths(r.Tree), "depth %d", tc.depth)
			require.Empty(t, r.Stopped)
		}
		r := searchOK(t, s, tr(v.at("a"), 1, 0))
		require.Equal(t, v.ats("a/b", "a/f"), treePaths(r.Tree))
		require.Equal(t, int64(2), r.Scanned)
	})
	t.Run("OKEntriesAsListed", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, tr(v.ws, 2, 0))
		listed := map[string]Entry{}
		for _, dir := range v.ats("", "a") {
			for _, e := range searchOK(t, s, ls(dir, 0, "")).Entries {
				listed[path.Join(dir, e.Name)] = e
			}
		}
		for _, e := range r.Tree {
			require.Equal(t, listed[e.Path], e.Entry, e.Path)
		}
		require.Equal(t, "a", *r.Tree[4].LinkTarget)
		require.Equal(t, v.outside, *r.Tree[5].LinkTarget)
	})
	t.Run("OKLimit", func(t *testing.T) {
		t.Parallel()
		r := searchOK(t, s, tr(v.ws, 2, 2))
		require.Equal(t, v.ats("a", "a/b"), treePaths(r.Tree))
		require.Equal(t, stoppedResults, r.Stopped)
		r = searchOK(t, s, tr(v.ws, 2, 6))
		require.Len(t, r.Tree, 6)
		require.Empty(t, r.Stopped, "results stops a tree only when there are more")
	})
	t.Run("OKPathIsNotDirectory", func(t *testing.T) {
		t.Parallel()
		for _, rel := range []string{"g.txt", "link", "out"} {
			r := searchOK(t, s, tr(v.at(rel), 3, 0))
			require.Equal(t, v.ats(rel), treePaths(r.Tree))
			require.Equal(t, rel, r.Tree[0].Name)
		}
	})
	t.Run("ErrPath", func(t *testing.T) {
		t.Parallel()
		for _, rel := range []string{"link/b", "out/secret"} {
			requireRefused(t, s.do(t, tr(v.at(rel), 0, 0)), ReasonPathIsSymlink)
		}
		requireRefused(t, s.do(t, tr(v.at("absent"), 0, 0)), ReasonPathNotFound)
		requireRefused(t, s.do(t, tr(v.sibling, 0, 0)), ReasonPathOutsideMount)
	})
	t.Run("ErrRequest", func(t *testing.T) {
		t.Parallel()
		for _, req := range []BrowseRequest{
			tr(v.ws, -1, 0), tr(v.ws, MaxTreeDepth+1, 0), tr(v.ws, 1, -1), tr(v.ws, 1, MaxTreeEntries+1),
		} {
			requireRefused(t, s.do(t, req), ReasonEnvInvalid)
		}
	})
}
