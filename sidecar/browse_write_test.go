package sidecar

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// startWriter runs a writable serve over v.
func startWriter(t *testing.T, v volume, extra ...string) *browseSession {
	t.Helper()
	return startServe(t, serveVars(v, append([]string{EnvWritable, "1"}, extra...)...))
}

// put sends a put request followed by its body.
func (s *browseSession) put(t *testing.T, req BrowseRequest, body string) BrowseReply {
	t.Helper()
	req.Op, req.Size = OpPut, int64(len(body))
	line, err := json.Marshal(req)
	require.NoError(t, err)
	_, reply := s.send(t, string(line)+"\n"+body)
	return reply
}

func owner(t *testing.T, p string) (uint32, uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode()
}

// requireNoTemps checks no temporary file of a write is left in dir.
func requireNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), loadPrefix), "leftover %s", e.Name())
	}
}

func TestServePut(t *testing.T) {
	v := newVolume(t)
	v.mkdir(t, "d")
	require.NoError(t, os.Chown(v.at("d"), 1234, 2345))
	v.write(t, "kept", []byte("old"), 0o640)
	require.NoError(t, os.Chown(v.at("kept"), 7, 8))
	v.symlink(t, v.outside, "out")
	v.symlink(t, v.outside+"/secret", "link")
	s := startWriter(t, v)

	t.Run("OKNewFileTakesTheDirectorysOwner", func(t *testing.T) {
		r := s.put(t, BrowseRequest{Path: v.at("d/new.txt")}, "hello\n")
		require.True(t, r.OK, deref(r.Error))
		require.Equal(t, v.at("d/new.txt"), r.Path)
		uid, gid, mode := owner(t, v.at("d/new.txt"))
		require.Equal(t, []uint32{1234, 2345}, []uint32{uid, gid})
		require.Equal(t, os.FileMode(0o666), mode.Perm())
		data, err := os.ReadFile(v.at("d/new.txt"))
		require.NoError(t, err)
		require.Equal(t, "hello\n", string(data))
		listed := s.do(t, ls(v.at("d"), 10, ""))
		require.Equal(t, []string{"new.txt"}, names(listed.Entries))
		require.Equal(t, r.File.ETag, listed.Entries[0].ETag, "the listing's ETag is the write's")
		requireNoTemps(t, v.at("d"))
	})
	t.Run("OKOverwriteKeepsOwnerAndMode", func(t *testing.T) {
		before := s.do(t, rd(v.at("kept"), 0, 0)).File.ETag
		r := s.put(t, BrowseRequest{Path: v.at("kept"), IfMatch: before}, "new bytes")
		require.True(t, r.OK, deref(r.Error))
		require.NotEqual(t, before, r.File.ETag)
		uid, gid, mode := owner(t, v.at("kept"))
		require.Equal(t, []uint32{7, 8}, []uint32{uid, gid})
		require.Equal(t, os.FileMode(0o640), mode.Perm())
	})
	t.Run("OKNamedMode", func(t *testing.T) {
		r := s.put(t, BrowseRequest{Path: v.at("script"), Mode: "0755"}, "#!/bin/sh\n")
		require.True(t, r.OK, deref(r.Error))
		_, _, mode := owner(t, v.at("script"))
		require.Equal(t, os.FileMode(0o755), mode.Perm())
	})
	t.Run("OKEmptyBody", func(t *testing.T) {
		r := s.put(t, BrowseRequest{Path: v.at("empty")}, "")
		require.True(t, r.OK, deref(r.Error))
		require.Zero(t, r.File.Size)
	})
	t.Run("FileChanged", func(t *testing.T) {
		r := s.put(t, BrowseRequest{Path: v.at("kept"), IfMatch: "0123456789abcdef"}, "lost")
		requireRefused(t, r, ReasonFileChanged)
		data, _ := os.ReadFile(v.at("kept"))
		require.Equal(t, "new bytes", string(data))
		r = s.put(t, BrowseRequest{Path: v.at("gone"), IfMatch: "0123456789abcdef"}, "lost")
		requireRefused(t, r, ReasonFileChanged)
		require.NoFileExists(t, v.at("gone"))
	})
	t.Run("TargetExistsCreateOnly", func(t *testing.T) {
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("kept"), CreateOnly: true}, "x"), ReasonTargetExists)
		r := s.put(t, BrowseRequest{Path: v.at("fresh"), CreateOnly: true}, "x")
		require.True(t, r.OK, deref(r.Error))
	})
	t.Run("NeverThroughASymlink", func(t *testing.T) {
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("link")}, "x"), ReasonPathIsSymlink)
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("out/secret")}, "x"), ReasonPathIsSymlink)
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("out/new")}, "x"), ReasonPathIsSymlink)
		data, err := os.ReadFile(v.outside + "/secret")
		require.NoError(t, err)
		require.Equal(t, "top secret", string(data))
		require.NoFileExists(t, v.outside+"/new")
	})
	t.Run("Refused", func(t *testing.T) {
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("d")}, "x"), ReasonPathIsDirectory)
		requireRefused(t, s.put(t, BrowseRequest{Path: v.ws}, "x"), ReasonPathIsDirectory)
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("nodir/f")}, "x"), ReasonPathNotFound)
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("../f")}, "x"), ReasonPathOutsideMount)
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("suid"), Mode: "4755"}, "x"), ReasonEnvInvalid)
		require.NoFileExists(t, v.at("suid"))
		requireNoTemps(t, v.ws)
	})
}

func TestServePutBounds(t *testing.T) {
	v := newVolume(t)
	t.Run("BodyTooLargeIsReadPast", func(t *testing.T) {
		s := startWriter(t, v, EnvMaxWriteBytes, "4")
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("big")}, "12345"), ReasonWriteTooLarge)
		require.NoFileExists(t, v.at("big"))
		r := s.put(t, BrowseRequest{Path: v.at("small")}, "1234")
		require.True(t, r.OK, deref(r.Error), "the loop is still in step")
	})
	t.Run("ReaderRefusesEveryWriteAndStaysInStep", func(t *testing.T) {
		s := startServe(t, serveVars(v))
		requireRefused(t, s.put(t, BrowseRequest{Path: v.at("r")}, "abc"), ReasonReadOnly)
		for _, op := range []string{OpRemove, OpMkdir, OpMove} {
			requireRefused(t, s.do(t, BrowseRequest{Op: op, Path: v.at("small"), To: v.at("x")}), ReasonReadOnly)
		}
		require.NoFileExists(t, v.at("r"))
		require.FileExists(t, v.at("small"))
		require.True(t, s.do(t, ls(v.ws, 10, "")).OK)
	})
	t.Run("EnvInvalid", func(t *testing.T) {
		for _, vars := range [][]string{{EnvWritable, "yes"}, {EnvWritable, "1", EnvMaxWriteBytes, "0"},
			{EnvWritable, "1", EnvMaxWriteBytes, "999999999999"}} {
			s := startServe(t, serveVars(v, vars...))
			_, r, err := readReply(s.out)
			require.NoError(t, err)
			requireRefused(t, r, ReasonEnvInvalid)
			require.Equal(t, ExitUsage, s.exit())
		}
	})
}

func TestServeRemove(t *testing.T) {
	v := newVolume(t)
	v.write(t, "f", []byte("x"), 0o644)
	v.mkdir(t, "empty")
	v.mkdir(t, "full")
	v.write(t, "full/f", []byte("x"), 0o644)
	v.mkdir(t, "tree")
	v.mkdir(t, "tree/sub")
	v.write(t, "tree/sub/f", []byte("x"), 0o000)
	v.symlink(t, v.outside, "tree/out")
	require.NoError(t, os.WriteFile(v.outside+"/keep", []byte("x"), 0o644))
	s := startWriter(t, v)
	rm := func(p string, recursive bool) BrowseReply {
		return s.do(t, BrowseRequest{Op: OpRemove, Path: v.at(p), Recursive: recursive})
	}
	require.True(t, rm("f", false).OK)
	require.NoFileExists(t, v.at("f"))
	require.True(t, rm("empty", false).OK)
	require.NoDirExists(t, v.at("empty"))
	requireRefused(t, rm("full", false), ReasonDirNotEmpty)
	require.FileExists(t, v.at("full/f"))
	require.True(t, rm("tree", true).OK)
	require.NoDirExists(t, v.at("tree"))
	require.FileExists(t, v.outside+"/keep", "a symlink in the tree is removed, never followed")
	requireRefused(t, rm("missing", false), ReasonPathNotFound)
	requireRefused(t, s.do(t, BrowseRequest{Op: OpRemove, Path: v.ws, Recursive: true}), ReasonPathIsMountRoot)
	require.DirExists(t, v.at("full"))
}

func TestServeMkdir(t *testing.T) {
	v := newVolume(t)
	require.NoError(t, os.Chown(v.ws, 1000, 1000))
	v.symlink(t, v.outside, "out")
	s := startWriter(t, v)
	mk := func(p string, parents bool, mode string) BrowseReply {
		return s.do(t, BrowseRequest{Op: OpMkdir, Path: v.at(p), Parents: parents, Mode: mode})
	}
	r := mk("a", false, "")
	require.True(t, r.OK, deref(r.Error))
	require.Equal(t, TypeDir, r.File.Type)
	uid, gid, mode := owner(t, v.at("a"))
	require.Equal(t, []uint32{1000, 1000}, []uint32{uid, gid})
	require.Equal(t, os.FileMode(0o777), mode.Perm())
	requireRefused(t, mk("a", false, ""), ReasonTargetExists)
	requireRefused(t, mk("x/y", false, ""), ReasonPathNotFound)
	r = mk("a/b/c", true, "0750")
	require.True(t, r.OK, deref(r.Error))
	_, _, mode = owner(t, v.at("a/b/c"))
	require.Equal(t, os.FileMode(0o750), mode.Perm())
	require.True(t, mk("a/b/c", true, "").OK, "parents: an existing directory is no error")
	requireRefused(t, mk("out/new", true, ""), ReasonPathIsSymlink)
	require.NoDirExists(t, v.outside+"/new")
}

func TestServeMove(t *testing.T) {
	v := newVolume(t)
	v.write(t, "a", []byte("a"), 0o644)
	v.write(t, "b", []byte("b"), 0o644)
	v.mkdir(t, "d")
	v.symlink(t, v.outside, "out")
	s := startWriter(t, v)
	mv := func(from, to string, overwrite bool) BrowseReply {
		return s.do(t, BrowseRequest{Op: OpMove, Path: v.at(from), To: v.at(to), Overwrite: overwrite})
	}
	requireRefused(t, mv("a", "b", false), ReasonTargetExists)
	r := mv("a", "d/a", false)
	require.True(t, r.OK, deref(r.Error))
	require.Equal(t, v.at("d/a"), r.Path)
	require.NoFileExists(t, v.at("a"))
	r = mv("d/a", "b", true)
	require.True(t, r.OK, deref(r.Error))
	data, _ := os.ReadFile(v.at("b"))
	require.Equal(t, "a", string(data))
	requireRefused(t, mv("d", "d/inner", false), ReasonEnvInvalid)
	requireRefused(t, mv("b", "out/b", false), ReasonPathIsSymlink)
	requireRefused(t, mv("missing", "c", false), ReasonPathNotFound)
	requireRefused(t, s.do(t, BrowseRequest{Op: OpMove, Path: v.ws, To: v.at("w")}), ReasonPathIsMountRoot)
	requireRefused(t, s.do(t, BrowseRequest{Op: OpMove, Path: v.at("b"), To: v.ws, Overwrite: true}), ReasonPathIsMountRoot)
	require.NoFileExists(t, v.outside+"/b")
}

// TestServePutSymlinkRace exchanges a directory of the path with a symlink
// to outside the volume, atomically and as fast as it can, while puts run:
// no byte may ever land outside.
func TestServePutSymlinkRace(t *testing.T) {
	v := newVolume(t)
	v.mkdir(t, "d")
	v.symlink(t, v.outside, "swap")
	s := startWriter(t, v)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// d and swap trade places: d is the directory or the symlink.
			_ = renameat2(atFDCWD, v.at("d"), atFDCWD, v.at("swap"), renameExchange)
		}
	})
	// Until both outcomes were seen often: a put that found d a directory,
	// and one that found a symlink there.
	ok, refused := 0, 0
	for i := 0; ok < 20 || refused < 20; i++ {
		require.Less(t, i, 200_000, "the race never gave both outcomes (%d written, %d refused)", ok, refused)
		if s.put(t, BrowseRequest{Path: v.at("d/f")}, "payload").OK {
			ok++
		} else {
			refused++
		}
	}
	close(stop)
	wg.Wait()
	entries, err := os.ReadDir(v.outside)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing was written outside the volume")
	data, err := os.ReadFile(v.outside + "/secret")
	require.NoError(t, err)
	require.Equal(t, "top secret", string(data))
}

func TestServeStat(t *testing.T) {
	v := newVolume(t)
	v.mkdir(t, "d")
	v.write(t, "d/f", []byte("abc"), 0o640)
	v.symlink(t, v.outside, "out")
	s := startServe(t, serveVars(v))
	stat := func(p string) BrowseReply { return s.do(t, BrowseRequest{Op: OpStat, Path: p}) }

	r := stat(v.at("d"))
	require.True(t, r.OK, deref(r.Error))
	require.Equal(t, TypeDir, r.File.Type, "a directory describes itself, not its entries")
	require.Empty(t, r.Entries)
	r = stat(v.at("d/f"))
	require.Equal(t, TypeFile, r.File.Type)
	require.Equal(t, int64(3), r.File.Size)
	require.NotEmpty(t, r.File.ETag)
	r = stat(v.at("out"))
	require.Equal(t, TypeSymlink, r.File.Type, "a symlink is described, never followed")
	require.Equal(t, TypeDir, stat(v.ws).File.Type)
	requireRefused(t, stat(v.at("out/secret")), ReasonPathIsSymlink)
	requireRefused(t, stat(v.at("nope")), ReasonPathNotFound)
	requireRefused(t, stat(v.at("../x")), ReasonPathOutsideMount)
}
