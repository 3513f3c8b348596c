package sidecar

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireTool finds a command the compatibility tests run; CI has them.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		skipUnlessCI(t, "%s is not installed", name)
	}
}

func runIn(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
}

// withoutSetID is a snapshot as an archive that drops setuid and setgid
// gives it back.
func withoutSetID(n map[string]node) map[string]node {
	for k, v := range n {
		v.mode &^= fs.ModeSetuid | fs.ModeSetgid
		n[k] = v
	}
	return n
}

// forUnzip forgets what Info-ZIP unzip does not restore, even from its
// own archives: symlinks' mtimes and the sticky bit.
func forUnzip(snaps ...map[string]node) {
	for _, n := range snaps {
		for k, v := range n {
			if v.kind == "symlink" {
				v.mtime = 0
			}
			v.mode &^= fs.ModeSticky
			n[k] = v
		}
	}
}

// TestArchiveReadByOthers extracts what pack makes with GNU tar and
// Info-ZIP unzip and finds the source tree.
func TestArchiveReadByOthers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, tool string
		precision    time.Duration
		extract      func(t *testing.T, dir, archive string)
	}{
		{FormatTarGz, "tar", time.Nanosecond, func(t *testing.T, dir, archive string) {
			runIn(t, dir, "tar", "xzf", archive)
		}},
		{FormatZip, "unzip", time.Second, func(t *testing.T, dir, archive string) {
			runIn(t, dir, "unzip", "-X", "-q", archive)
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			requireTool(t, tc.tool)
			v := fastVolume(t)
			src := v.at("src")
			buildTree(t, src)
			b := startBucket(t)
			p := runPack(t, packVars(v, src, tc.format), b, grantFor(b))
			require.Equal(t, ExitOK, p.code, p.line)
			archive := filepath.Join(v.base, "archive."+tc.format)
			require.NoError(t, os.WriteFile(archive, p.archive, 0o644))
			out := filepath.Join(v.base, "out")
			require.NoError(t, os.Mkdir(out, 0o755))
			tc.extract(t, out, archive)
			want, got := withoutSetID(snapshot(t, src, tc.precision)), snapshot(t, out, tc.precision)
			if tc.format == FormatZip {
				forUnzip(want, got)
			}
			requireSameTree(t, want, got)
		})
	}
}

// TestArchiveWrittenByOthers unpacks what GNU tar (`tar czf - -C DIR .`,
// with its "./" root and hard links) and Info-ZIP zip (`zip -ry`, with
// its owner fields) make, and finds the source tree.
func TestArchiveWrittenByOthers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, tool string
		precision    time.Duration
		create       func(t *testing.T, src, archive string)
	}{
		{FormatTarGz, "tar", time.Second, func(t *testing.T, src, archive string) {
			runIn(t, src, "tar", "czf", archive, ".")
		}},
		{FormatZip, "zip", time.Second, func(t *testing.T, src, archive string) {
			runIn(t, src, "zip", "-qry", archive, ".")
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			requireTool(t, tc.tool)
			v := fastVolume(t)
			src := v.at("src")
			buildTree(t, src)
			archive := filepath.Join(v.base, "archive."+tc.format)
			tc.create(t, src, archive)
			data, err := os.ReadFile(archive)
			require.NoError(t, err)
			b := startBucket(t)
			v.mkdir(t, "out")
			vars := unpackVars(v, b.keep("archive", data), v.at("out/tree"), tc.format)
			vars[EnvArchiveSHA256] = sum(data)
			line, code := runLine(t, []string{CommandUnpack}, vars)
			require.Equal(t, ExitOK, code, line)
			requireSameTree(t, withoutSetID(snapshot(t, src, tc.precision)), snapshot(t, v.at("out/tree"), tc.precision))
			if tc.format == FormatTarGz {
				requireTargetMode(t, v.at("out/tree"), 0o755) // the "./" entry's
			}
		})
	}
}
