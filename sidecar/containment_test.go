package sidecar

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// trapVolume is a volume full of ways out: symlinks, absolute and relative,
// to the outside, to the sibling <mount>X, and to directories.
func trapVolume(t *testing.T) volume {
	t.Helper()
	v := newVolume(t)
	v.mkdir(t, "dir")
	v.write(t, "dir/f", helloData, 0o644)
	v.symlink(t, v.outside, "out-dir")
	v.symlink(t, "../outside", "rel-out-dir")
	v.symlink(t, "../wsX", "sib-dir")
	v.symlink(t, filepath.Join(v.outside, "secret"), "abs-out")
	v.symlink(t, "../outside/secret", "rel-out")
	v.symlink(t, "dir", "dir-link")
	v.symlink(t, "..", "up")
	return v
}

// requireNeighboursUntouched checks that nothing beside the mount changed.
func requireNeighboursUntouched(t *testing.T, v volume) {
	t.Helper()
	for dir, want := range map[string]map[string]string{
		v.base:    {"ws": "", "outside": "", "wsX": ""},
		v.outside: {"secret": "top secret"},
		v.sibling: {"file": "sibling"},
	} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, len(want), "entries of %s", dir)
		for _, e := range entries {
			content, ok := want[e.Name()]
			require.True(t, ok, "unexpected %s in %s", e.Name(), dir)
			if content != "" {
				require.Equal(t, content, string(readFile(t, filepath.Join(dir, e.Name()))))
			}
		}
	}
}

var trapSeeds = []string{
	"f", "dir/f", "dir-link/f", "out-dir/f", "rel-out-dir/secret", "sib-dir/file", "abs-out", "rel-out",
	"up/outside/secret", "../outside/secret", "dir/../../wsX/f", "up/ws/dir/f", "dir/", ".", "./", "dir/..",
	"dir-link/../f", "out-dir/../ws/f", "..", "../wsX/f", "dir//f", "up/up/x",
}

// FuzzDownloadTarget downloads to arbitrary paths under the mount: whatever
// the path, nothing beside the mount changes, and a success wrote a regular
// file inside it.
func FuzzDownloadTarget(f *testing.F) {
	for _, seed := range trapSeeds {
		f.Add(seed)
	}
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(helloData) })) //nolint:errcheck // test store
	f.Cleanup(st.Close)
	f.Fuzz(func(t *testing.T, rel string) {
		v := trapVolume(t)
		target := v.ws + "/" + rel
		line, code := runLine(t, []string{CommandDownload}, map[string]string{EnvMountRoot: v.ws, EnvTargetPath: target, EnvURL: st.URL})
		requireNeighboursUntouched(t, v)
		r := decodeResult(t, line)
		if !r.OK {
			require.Equal(t, ExitFailure, code)
			return
		}
		require.Equal(t, ExitOK, code)
		require.True(t, strings.HasPrefix(r.DownloadedPath, v.ws+"/"), "%s is inside the mount", r.DownloadedPath)
		if !utf8.ValidString(rel) {
			return // JSON carries the path with U+FFFD in place of the invalid bytes
		}
		fi, err := os.Lstat(r.DownloadedPath)
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular())
		require.Equal(t, helloData, readFile(t, r.DownloadedPath))
	})
}

// FuzzPutSource puts arbitrary paths under the mount: a success sent a
// file inside it, never one of the neighbours' files.
func FuzzPutSource(f *testing.F) {
	for _, seed := range trapSeeds {
		f.Add(seed)
	}
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck // test store
	}))
	f.Cleanup(st.Close)
	f.Fuzz(func(t *testing.T, rel string) {
		v := trapVolume(t)
		line, code := runLine(t, []string{CommandPut}, map[string]string{EnvMountRoot: v.ws, EnvSourcePath: v.ws + "/" + rel,
			EnvURL: st.URL, EnvMaxSize: "100"})
		requireNeighboursUntouched(t, v)
		r := decodeResult(t, line)
		if !r.OK {
			require.Equal(t, ExitFailure, code)
			return
		}
		require.Equal(t, ExitOK, code)
		require.True(t, strings.HasPrefix(r.UploadedPath, v.ws+"/"), "%s is inside the mount", r.UploadedPath)
		require.Equal(t, sum(helloData), r.SHA256B64, "the only file inside is dir/f")
	})
}
