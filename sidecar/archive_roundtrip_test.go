package sidecar

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// treeFiles is how many regular files buildTree makes.
const treeFiles = 1000

// buildTree makes a tree of treeFiles files in nested directories, with
// empty directories, symlinks (inward, to a directory, dangling, upward
// within the tree), a setuid file, a hard link, a read-only and a sticky
// directory, varied modes, owners and nanosecond mtimes.
func buildTree(t testing.TB, root string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(root, 0o755))
	modes := []os.FileMode{0o644, 0o600, 0o755, 0o444, 0o640}
	for i := range treeFiles {
		p := filepath.Join(root, fmt.Sprintf("d%02d/e%d/f%04d.txt", i%20, i%3, i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		body := []byte(fmt.Sprintf("file %d of the tree\n", i))
		for range i % 40 {
			body = append(body, body[:20]...)
		}
		require.NoError(t, os.WriteFile(p, body, 0o600))
		require.NoError(t, os.Chmod(p, modes[i%len(modes)]))
		require.NoError(t, os.Lchown(p, 1000+i%3, 2000+i%5))
	}
	for _, d := range []string{"empty", "d00/empty", "locked", "sticky"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "locked/inside"), []byte("inside a read-only directory\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "suid"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(root, "suid"), 0o755|os.ModeSetuid|os.ModeSetgid))
	require.NoError(t, os.Link(filepath.Join(root, "d00/e0/f0000.txt"), filepath.Join(root, "hard")))
	for link, target := range map[string]string{
		"l-file": "d00/e0/f0000.txt", "l-dir": "d01", "l-dangling": "nowhere", "d02/l-up": "../d03/e0",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
		require.NoError(t, os.Lchown(filepath.Join(root, link), 1001, 2001))
	}
	setTreeTimes(t, root)
	require.NoError(t, os.Chmod(filepath.Join(root, "locked"), 0o555))
	require.NoError(t, os.Chmod(filepath.Join(root, "sticky"), 0o777|os.ModeSticky))
}

// setTreeTimes gives every entry below root its own nanosecond mtime,
// directories last and deepest first so no later write moves theirs.
func setTreeTimes(t testing.TB, root string) {
	t.Helper()
	var dirs []string
	n := 0
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		n++
		return setTimes(atFDCWD, p, time.Unix(1600000000+int64(n)*3600, int64(n)*7919))
	}))
	for i := len(dirs) - 1; i >= 0; i-- {
		require.NoError(t, setTimes(atFDCWD, dirs[i], time.Unix(1500000000+int64(i)*60, int64(i)*104729)))
	}
}

// atFDCWD makes setTimes take an absolute path.
const atFDCWD = -100

// treeBytes adds up the sizes of a snapshot's files.
func treeBytes(t testing.TB, root string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return err
	}))
	return n
}

// TestArchiveRoundTrip packs a tree, keeps the archive in the store as
// uploaded, unpacks it elsewhere and finds the same tree: names, types,
// modes (setuid and setgid dropped), owners, mtimes (to the second in a
// zip), contents and link targets.
func TestArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	for format, precision := range map[string]time.Duration{FormatTarGz: time.Nanosecond, FormatZip: time.Second} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			v := fastVolume(t)
			src := v.at("src")
			buildTree(t, src)
			b := startBucket(t)
			p := runPack(t, packVars(v, src, format), b, grantFor(b))
			require.Equal(t, ExitOK, p.code, p.line)
			res := decodeLine(t, p.line)
			want := snapshot(t, src, precision)
			suid := want["suid"]
			suid.mode &^= fs.ModeSetuid | fs.ModeSetgid
			want["suid"] = suid

			require.True(t, res.OK)
			require.Equal(t, src, res.UploadedPath)
			require.Equal(t, len(want), res.Entries)
			require.Equal(t, int64(len(p.archive)), *res.Size)
			require.Equal(t, sum(p.archive), res.SHA256B64)
			m := md5.Sum(p.archive)
			require.Equal(t, hex.EncodeToString(m[:]), res.MD5)
			require.Equal(t, p.archive[:HeadBytes], res.Head)

			v.mkdir(t, "out")
			target := v.at("out/tree")
			url := b.keep("archive", p.archive)
			vars := unpackVars(v, url, target, format)
			vars[EnvArchiveSHA256] = res.SHA256B64
			line, code := runLine(t, []string{CommandUnpack}, vars)
			require.Equal(t, ExitOK, code, line)
			require.Equal(t, `{"ok":true,"size":`+strconv.FormatInt(treeBytes(t, src), 10)+
				`,"entries":`+strconv.Itoa(len(want))+`,"unpacked_path":`+quote(target)+`}`, line)
			requireSameTree(t, want, snapshot(t, target, precision))
			requireTargetMode(t, target, 0o777)
			requireNoStaging(t, v.at("out"))
		})
	}
}

func requireTargetMode(t testing.TB, p string, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	require.True(t, fi.IsDir())
	require.Equal(t, mode, fi.Mode().Perm())
}

// TestArchiveDeterministic packs the same tree twice to the same bytes.
func TestArchiveDeterministic(t *testing.T) {
	t.Parallel()
	v := fastVolume(t)
	src := v.at("src")
	buildTree(t, src)
	for _, format := range []string{FormatTarGz, FormatZip} {
		b := startBucket(t)
		first := runPack(t, packVars(v, src, format), b, grantFor(b))
		second := runPack(t, packVars(v, src, format), b, grantFor(b))
		require.Equal(t, ExitOK, first.code, first.line)
		require.Equal(t, first.line, second.line, format)
		require.Equal(t, sum(first.archive), sum(second.archive), format)
	}
}

// unpackVars is an unpack of the archive at url into target.
func unpackVars(v volume, url, target, format string) map[string]string {
	return map[string]string{
		EnvMountRoot: v.ws, EnvURL: url, EnvTargetPath: target, EnvFormat: format, EnvMaxSize: "1073741824",
	}
}
