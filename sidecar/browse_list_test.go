package sidecar

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mtime is the modification time every listed file of these tests has.
var mtime = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func (v volume) touch(t *testing.T, rel string) {
	t.Helper()
	require.NoError(t, os.Chtimes(v.at(rel), mtime, mtime))
}

func (v volume) chmod(t *testing.T, rel string, mode uint32) {
	t.Helper()
	require.NoError(t, syscall.Chmod(v.at(rel), mode))
}

// listAll pages through p with limit, checking that each page's
// next_after is its last name, and returns every name in order.
func listAll(t *testing.T, s *browseSession, p string, limit int) (all []string, pages int) {
	t.Helper()
	after := ""
	for pages = 1; pages <= 1000; pages++ {
		r := s.do(t, ls(p, limit, after))
		require.True(t, r.OK, deref(r.Error))
		require.LessOrEqual(t, len(r.Entries), limit)
		all = append(all, names(r.Entries)...)
		if r.NextAfter == "" {
			return all, pages
		}
		require.Len(t, r.Entries, limit, "a page with more after it is full")
		require.Equal(t, r.Entries[len(r.Entries)-1].Name, r.NextAfter)
		after = r.NextAfter
	}
	t.Fatalf("listing %s did not end", p)
	return nil, 0
}

// TestServeList lists directories one page at a time in byte order of
// names, and any other path as its one entry; symlinks are reported and
// never followed.
func TestServeList(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "d")
	v.write(t, "d/f", []byte("abc"), 0o644)
	v.mkdir(t, "d/sub")
	v.symlink(t, "f", "d/link")
	v.symlink(t, v.outside+"/secret", "d/out")
	v.symlink(t, "d", "dirlink")
	v.symlink(t, "nowhere", "dangling")
	v.symlink(t, "loop", "loop")
	v.symlink(t, "loop2", "loop1")
	v.symlink(t, "loop1", "loop2")
	v.symlink(t, v.outside, "outlink")
	v.write(t, "file", []byte("0123456789"), 0o640)
	v.mkfifo(t, "fifo")
	v.socket(t, "sock")
	for _, rel := range []string{"d/f", "d/sub", "file"} {
		v.touch(t, rel)
	}
	s := startServe(t, serveVars(v))

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		subMode, subSize := lstatOf(t, v.at("d/sub"))
		linkTime, outTime := mtimeOf(t, v.at("d/link")), mtimeOf(t, v.at("d/out"))
		line, _ := s.send(t, `{"op":"ls","path":`+quote(v.at("d"))+"}\n")
		require.Equal(t, `{"ok":true,"path":`+quote(v.at("d"))+`,"entries":[`+
			`{"name":"f","type":"file","size":3,"mode":"0644","mtime":"2026-01-02T03:04:05.000000006Z","etag":"`+etagAt(t, v.at("d/f"))+`"},`+
			`{"name":"link","type":"symlink","size":1,"mode":"0777","mtime":"`+linkTime+`","link_target":"f"},`+
			`{"name":"out","type":"symlink","size":`+strconv.Itoa(len(v.outside+"/secret"))+`,"mode":"0777","mtime":"`+outTime+`","link_target":`+quote(v.outside+"/secret")+`},`+
			`{"name":"sub","type":"dir","size":`+strconv.FormatInt(subSize, 10)+`,"mode":"`+subMode+`","mtime":"2026-01-02T03:04:05.000000006Z"}]}`, line)
	})
	t.Run("OKModes", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		for name, mode := range map[string]uint32{"setuid": 0o4755, "setgid": 0o2750, "none": 0} {
			v.write(t, name, nil, 0o644)
			v.chmod(t, name, mode)
		}
		v.mkdir(t, "sticky")
		v.chmod(t, "sticky", 0o1777)
		v.mkfifo(t, "fifo")
		v.socket(t, "sock")
		r := startServe(t, serveVars(v)).do(t, ls(v.ws, 0, ""))
		require.True(t, r.OK)
		got := map[string][2]string{}
		for _, e := range r.Entries {
			got[e.Name] = [2]string{e.Type, e.Mode}
		}
		fifoMode, _ := lstatOf(t, v.at("fifo"))
		sockMode, _ := lstatOf(t, v.at("sock"))
		require.Equal(t, map[string][2]string{
			"fifo": {TypeOther, fifoMode}, "none": {TypeFile, "0000"}, "setgid": {TypeFile, "2750"},
			"setuid": {TypeFile, "4755"}, "sock": {TypeOther, sockMode}, "sticky": {TypeDir, "1777"},
		}, got)
	})
	t.Run("OKPagingInByteOrder", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		want := []string{"B", "a", "b", "Z", "A", "aa", "a.txt", "_", "0", "~", "é", "ü", "Ω", "日本", "zz", "a b"}
		for i, name := range want {
			if i%3 == 0 {
				v.mkdir(t, name)
			} else {
				v.write(t, name, nil, 0o644)
			}
		}
		slices.Sort(want) // Go orders strings by their bytes
		s := startServe(t, serveVars(v))
		for _, limit := range []int{1, 3, 5, len(want) - 1} {
			got, pages := listAll(t, s, v.ws, limit)
			require.Equal(t, want, got, "limit %d", limit)
			require.Equal(t, (len(want)+limit-1)/limit, pages)
		}
		r := s.do(t, ls(v.ws, len(want), ""))
		require.Equal(t, want, names(r.Entries))
		require.Empty(t, r.NextAfter, "no next_after when all fit")
		r = s.do(t, ls(v.ws, 2, "a"))
		require.Equal(t, []string{"a b", "a.txt"}, names(r.Entries), "names above after")
		require.Equal(t, "a.txt", r.NextAfter)
	})
	t.Run("OKAfterPastEnd", func(t *testing.T) {
		t.Parallel()
		line, _ := s.send(t, `{"op":"ls","path":`+quote(v.at("d"))+`,"after":"zzz"}`+"\n")
		require.Equal(t, `{"ok":true,"path":`+quote(v.at("d"))+`}`, line, "no entries, no next_after")
	})
	t.Run("OKEmptyDirectory", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, ls(v.at("d/sub"), 0, ""))
		require.True(t, r.OK)
		require.Empty(t, r.Entries)
	})
	t.Run("OKDefaultAndBoundLimits", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		for i := range MaxListLimit + 1 {
			v.write(t, strconv.Itoa(10000+i), nil, 0o644)
		}
		s := startServe(t, serveVars(v))
		r := s.do(t, ls(v.ws, 0, ""))
		require.Len(t, r.Entries, defaultListLimit, "limit 0 is the default")
		require.Equal(t, strconv.Itoa(10000+defaultListLimit-1), r.NextAfter)
		r = s.do(t, ls(v.ws, MaxListLimit, ""))
		require.Len(t, r.Entries, MaxListLimit)
		require.Equal(t, strconv.Itoa(10000+MaxListLimit-1), r.NextAfter)
		r = s.do(t, ls(v.ws, MaxListLimit, r.NextAfter))
		require.Equal(t, []string{strconv.Itoa(10000 + MaxListLimit)}, names(r.Entries))
		require.Empty(t, r.NextAfter)
	})
	t.Run("ErrLimit", func(t *testing.T) {
		t.Parallel()
		for _, limit := range []int{-1, MaxListLimit + 1} {
			line, _ := s.send(t, `{"op":"ls","path":`+quote(v.ws)+`,"limit":`+strconv.Itoa(limit)+"}\n")
			require.Equal(t, refusalLine(ReasonEnvInvalid, "limit "+strconv.Itoa(limit)+" is out of bounds: 1 to 1000, or 0 for 200"), line)
		}
	})
	t.Run("OKMountRoot", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{v.ws, v.ws + "/", v.ws + "/."} {
			r := s.do(t, ls(p, 0, ""))
			require.True(t, r.OK, deref(r.Error))
			require.Equal(t, v.ws, r.Path)
			require.Equal(t, []string{"d", "dangling", "dirlink", "fifo", "file", "loop", "loop1", "loop2", "outlink", "sock"}, names(r.Entries))
		}
	})
	t.Run("OKUncleanPath", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, ls(v.ws+"//d/./", 0, ""))
		require.True(t, r.OK)
		require.Equal(t, v.at("d"), r.Path, "the path is cleaned")
	})
	t.Run("OKOneEntry", func(t *testing.T) {
		t.Parallel()
		line, _ := s.send(t, `{"op":"ls","path":`+quote(v.at("file"))+"}\n")
		require.Equal(t, `{"ok":true,"path":`+quote(v.at("file"))+`,"entries":[`+
			`{"name":"file","type":"file","size":10,"mode":"0640","mtime":"2026-01-02T03:04:05.000000006Z","etag":"`+etagAt(t, v.at("file"))+`"}]}`, line)
		for _, tc := range []struct{ rel, typ, target string }{
			{"dirlink", TypeSymlink, "d"}, // a symlink to a directory is not listed through
			{"dangling", TypeSymlink, "nowhere"},
			{"loop", TypeSymlink, "loop"},
			{"loop1", TypeSymlink, "loop2"},
			{"outlink", TypeSymlink, v.outside},
			{"d/out", TypeSymlink, v.outside + "/secret"},
			{"fifo", TypeOther, ""},
			{"sock", TypeOther, ""},
		} {
			r := s.do(t, ls(v.at(tc.rel), 0, ""))
			require.True(t, r.OK, "%s: %s", tc.rel, deref(r.Error))
			require.Equal(t, v.at(tc.rel), r.Path)
			require.Len(t, r.Entries, 1, tc.rel)
			e := r.Entries[0]
			require.Equal(t, tc.typ, e.Type, tc.rel)
			if tc.target == "" {
				require.Nil(t, e.LinkTarget)
				continue
			}
			require.Equal(t, tc.target, *e.LinkTarget)
			require.Equal(t, int64(len(tc.target)), e.Size, "lstat size")
		}
	})
	t.Run("ErrParentSymlink", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ rel, link string }{
			{"dirlink/f", "dirlink"},      // to a directory inside
			{"outlink/secret", "outlink"}, // to a directory outside
			{"d/link/x", "d/link"},        // to a file
			{"dangling/x", "dangling"},
			{"loop/x", "loop"},
			{"loop1/x/y", "loop1"},
		} {
			for _, req := range []BrowseRequest{ls(v.at(tc.rel), 0, ""), rd(v.at(tc.rel), 0, 0)} {
				line, _ := s.send(t, mustJSON(t, req)+"\n")
				require.Equal(t, refusalLine(ReasonPathIsSymlink, "path '"+v.at(tc.rel)+"' passes through the symlink '"+
					v.at(tc.link)+"', which is reported, never followed"), line)
				require.NotContains(t, line, "top secret")
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		for _, rel := range []string{"absent", "absent/x", "d/absent"} {
			line, _ := s.send(t, mustJSON(t, ls(v.at(rel), 0, ""))+"\n")
			require.Equal(t, refusalLine(ReasonPathNotFound, "path '"+v.at(rel)+"' does not exist"), line)
		}
		for _, tc := range []struct{ rel, parent string }{{"file/x", "file"}, {"fifo/x", "fifo"}, {"sock/x/y", "sock"}, {"d/f/x", "d/f"}} {
			line, _ := s.send(t, mustJSON(t, ls(v.at(tc.rel), 0, ""))+"\n")
			require.Equal(t, refusalLine(ReasonPathNotFound, "path '"+v.at(tc.rel)+"' does not exist: '"+v.at(tc.parent)+"' is not a directory"), line)
		}
	})
	t.Run("ErrOutsideMount", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{v.sibling, v.sibling + "/file", v.base, "/", "/etc/passwd"} {
			for _, req := range []BrowseRequest{ls(p, 0, ""), rd(p, 0, 0)} {
				line, _ := s.send(t, mustJSON(t, req)+"\n")
				require.Equal(t, refusalLine(ReasonPathOutsideMount, "path '"+p+"' is outside the workspace volume mounted at '"+v.ws+"'"), line)
			}
		}
		for _, p := range []string{"/mnt/../etc", v.ws + "/../outside/secret", v.ws + "/d/../file", v.ws + "/..", v.ws + "/d/.."} {
			for _, req := range []BrowseRequest{ls(p, 0, ""), rd(p, 0, 0)} {
				line, _ := s.send(t, mustJSON(t, req)+"\n")
				require.Equal(t, refusalLine(ReasonPathOutsideMount, "path '"+p+"' has a '..' component; name a file within the workspace volume mounted at '"+v.ws+"' directly"), line)
			}
		}
		for _, p := range []string{"", "relative/x", "d", "./d"} {
			for _, req := range []BrowseRequest{ls(p, 0, ""), rd(p, 0, 0)} {
				line, _ := s.send(t, mustJSON(t, req)+"\n")
				require.Equal(t, refusalLine(ReasonPathOutsideMount, "path '"+p+"' must be absolute, and within the workspace volume mounted at '"+v.ws+"'"), line)
			}
		}
		_, r := s.send(t, mustJSON(t, ls(v.ws+"/d\x00", 0, ""))+"\n")
		requireRefused(t, r, ReasonEnvInvalid)
	})
	t.Run("OKNamesNotUTF8", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		// Latin-1 "öl" and "aé", a lone byte 0xff, and a valid name.
		for _, name := range []string{"\xf6l", "a\xe9", "\xff", "b"} {
			v.write(t, name, nil, 0o644)
		}
		s := startServe(t, serveVars(v))
		// Each reported as encoding/json writes it, ordered so: paging ends
		// and shows each once, though "\ufffdl" sorts below "\xf6l".
		got, pages := listAll(t, s, v.ws, 1)
		require.Equal(t, []string{"a\ufffd", "b", "\ufffd", "\ufffdl"}, got)
		require.Equal(t, 4, pages)
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// lstatOf is what a listing reports of path's mode and size, as the test
// sees them (directory sizes and the umask vary).
func lstatOf(t *testing.T, path string) (string, int64) {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return fmt.Sprintf("%04o", st.Mode&0o7777), st.Size
}

// etagAt is the ETag of the file at path.
func etagAt(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return etagOf(fi.Sys().(*syscall.Stat_t))
}

// mtimeOf is path's modification time as a listing writes it.
func mtimeOf(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC().Format(time.RFC3339Nano)
}
