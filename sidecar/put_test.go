package sidecar

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func changedSizeMessage(p string) string {
	return "the source file '" + p + "' changed size while the upload was in flight"
}

// putVars is the environment of a put of source, capped at limit bytes.
func putVars(v volume, source, url string, limit int64) map[string]string {
	return map[string]string{
		EnvMountRoot:  v.ws,
		EnvSourcePath: source,
		EnvURL:        url,
		EnvMaxSize:    strconv.FormatInt(limit, 10),
	}
}

// putLine is the exact line of a successful put of data from resolved.
func putLine(resolved string, data []byte) string {
	m := md5.Sum(data)
	head := ""
	if len(data) > 0 {
		head = `,"head":` + quote(base64.StdEncoding.EncodeToString(data[:min(len(data), HeadBytes)]))
	}
	return `{"ok":true,"uploaded_path":` + quote(resolved) + `,"size":` + strconv.Itoa(len(data)) +
		`,"sha256_b64":` + quote(sum(data)) + `,"md5":` + quote(hex.EncodeToString(m[:])) + head + `}`
}

// requireUnbound checks that the store got a PUT of exactly data with a
// fixed Content-Length and no checksum or type bound: what a put sends.
func requireUnbound(t *testing.T, got received, data []byte) {
	t.Helper()
	require.Equal(t, http.MethodPut, got.method)
	require.Equal(t, int64(len(data)), got.contentLength)
	require.Equal(t, strconv.Itoa(len(data)), got.header.Get("Content-Length"))
	require.Empty(t, got.transferEncoding, "not chunked")
	require.NoError(t, got.bodyErr)
	require.Equal(t, string(data), string(got.body), "the body is the file")
	for _, h := range []string{"X-Amz-Checksum-Sha256", "Content-Type", "Content-Md5"} {
		require.NotContains(t, got.header, h)
	}
}

// TestPutSource walks the source table: a valid source is sent once and
// described by its digests and head, every refusal is stat's, and a
// refused source never reaches the store.
func TestPutSource(t *testing.T) {
	t.Parallel()
	v := sourceVolume(t)
	for _, tc := range sourceCases(v) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := startStore(t, &store{status: http.StatusOK})
			line, code := runLine(t, []string{CommandPut}, putVars(v, tc.source, st.url(), 1<<20))
			requireNoURL(t, line, st.url())
			if tc.reason != "" {
				require.Equal(t, failureLine(tc.reason, tc.message, 0), line)
				require.Equal(t, ExitFailure, code)
				require.Empty(t, st.requests())
				return
			}
			require.Equal(t, putLine(tc.resolved, tc.data), line)
			require.Equal(t, ExitOK, code)
			got := st.requests()
			require.Len(t, got, 1)
			requireUnbound(t, got[0], tc.data)
		})
	}
}

func TestPut(t *testing.T) {
	t.Parallel()

	t.Run("OKLargeFile", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		data := make([]byte, 3*chunk+17)
		for i := range data {
			data[i] = byte(i * 7)
		}
		v.write(t, "big", data, 0o600)
		st := startStore(t, &store{status: http.StatusOK})
		line, code := runLine(t, []string{CommandPut}, putVars(v, v.at("big"), st.url(), int64(len(data))))
		require.Equal(t, ExitOK, code, "a file of exactly the cap is taken")
		require.Equal(t, putLine(v.at("big"), data), line)
		got := st.requests()
		require.Len(t, got, 1)
		requireUnbound(t, got[0], data)
	})
	t.Run("OKDecodes", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		line, _ := runLine(t, []string{CommandPut}, putVars(v, v.at("f"), st.url(), 100))
		r, ok := ParseResult([]byte("noise\r\n" + line + "\r\n"))
		require.True(t, ok)
		require.True(t, r.OK)
		require.Equal(t, int64(len(helloData)), *r.Size)
		require.Equal(t, helloData, r.Head)
		require.Equal(t, sum(helloData), r.SHA256B64)
		require.Len(t, r.MD5, 32)
	})

	t.Run("OKMountRootThroughSymlink", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "file.txt", helloData, 0o644)
		link := filepath.Join(v.base, "mnt")
		require.NoError(t, os.Symlink(v.ws, link))
		st := startStore(t, &store{status: http.StatusOK})
		vars := putVars(v, link+"/file.txt", st.url(), 100)
		vars[EnvMountRoot] = link + "/"
		line, code := runLine(t, []string{CommandPut}, vars)
		require.Equal(t, ExitOK, code)
		require.Equal(t, putLine(link+"/file.txt", helloData), line,
			"uploaded_path is reported under the mount path the caller knows")
	})

	t.Run("ErrDevice", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		// /dev/null's numbers; the test filesystem may be mounted nodev, in
		// which case opening it fails and it must still be judged by its
		// type.
		if err := syscall.Mknod(v.at("null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			skipUnlessCI(t, "mknod needs CAP_MKNOD: %v", err)
		}
		st := startStore(t, &store{status: http.StatusOK})
		line, code := runLine(t, []string{CommandPut}, putVars(v, v.at("null"), st.url(), 100))
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonSourceNotRegular, "source path '"+v.at("null")+"' is not a regular file", 0), line)
		require.Empty(t, st.requests())
	})
	t.Run("ErrObjectTooLarge", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		line, code := runLine(t, []string{CommandPut}, putVars(v, v.at("f"), st.url(), int64(len(helloData)-1)))
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonObjectTooLarge, "source file '"+v.at("f")+"' is 13 bytes, over the 12 byte cap "+
			"of one upload from a volume", 0), line)
		require.Empty(t, st.requests(), "nothing is sent")
	})

	t.Run("ErrEnv", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		capMessage := "CAIRN_MAX_SIZE must be a non-negative decimal integer"
		for _, tt := range []struct {
			name, value, message string
		}{
			{EnvMaxSize, "-1", capMessage},
			{EnvMaxSize, "1e9", capMessage},
			{EnvMaxSize, "", "CAIRN_MAX_SIZE is not set"},
			{EnvURL, "", "CAIRN_URL is not set"},
			{EnvSourcePath, "", "CAIRN_SOURCE_PATH is not set"},
			{EnvMountRoot, "", "CAIRN_MOUNT_ROOT is not set"},
			{EnvMountRoot, "ws", `CAIRN_MOUNT_ROOT "ws" is not an absolute path`},
		} {
			vars := putVars(v, v.at("f"), st.url(), 100)
			vars[tt.name] = tt.value
			line, code := runLine(t, []string{CommandPut}, vars)
			require.Equal(t, ExitFailure, code, "%s=%q", tt.name, tt.value)
			require.Equal(t, failureLine(ReasonEnvInvalid, tt.message, 0), line, "%s=%q", tt.name, tt.value)
		}
		require.Empty(t, st.requests())
	})

	fixed := func(message string) func(string) string { return func(string) string { return message } }
	for _, tt := range []struct {
		name    string
		status  int
		reason  string
		message func(string) string
	}{
		// No checksum is bound, so a 400 is the store's, not the file's.
		{"ErrStoreBadRequest", http.StatusBadRequest, ReasonStoreRejected, fixed("the object store rejected the upload (HTTP 400)")},
		{"ErrStoreForbidden", http.StatusForbidden, ReasonStoreRejected, fixed("the object store rejected the upload (HTTP 403)")},
		{"ErrStoreInternal", http.StatusInternalServerError, ReasonStoreError, fixed("the object store returned HTTP 500 for the upload")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.write(t, "f", helloData, 0o644)
			st := startStore(t, &store{status: tt.status, body: []byte("<Error><Code>Nope</Code></Error>")})
			line, code := runLine(t, []string{CommandPut}, putVars(v, v.at("f"), st.url(), 100))
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(tt.reason, tt.message(v.at("f")), tt.status), line)
			requireNoURL(t, line, st.url())
		})
	}
	t.Run("ErrStoreUnreachable", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		url := closedURL(t)
		line, code := runLine(t, []string{CommandPut}, putVars(v, v.at("f"), url, 100))
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonStoreUnreachable,
			"the object store could not be reached for the upload: connection refused", 0), line)
		requireNoURL(t, line, url)
	})
}

// TestPutSourceChanged changes the file while its PUT is in flight, at a
// fixed point: the fake store reads half the body, changes the file, then
// reads the rest and accepts the upload. A change of length breaks the PUT
// off; any other change is caught by the check after it. Either way the
// put fails with source_changed.
func TestPutSourceChanged(t *testing.T) {
	t.Parallel()
	// Larger than the socket buffers (about 4 MiB until the store reads), so
	// that the PUT is still streaming when the store changes the file.
	const size = 16 << 20
	modified := func(p string) string {
		return "the source file '" + p + "' was modified while the upload was in flight"
	}
	replaced := func(p string) string {
		return "the source file '" + p + "' was replaced or removed while the upload was in flight"
	}
	for _, tt := range []struct {
		name    string
		change  func(t *testing.T, v volume)
		message func(string) string
		broken  bool // the PUT is broken off rather than completed
	}{
		{"ErrRewrittenInPlace", func(t *testing.T, v volume) {
			f, err := os.OpenFile(v.at("f"), os.O_WRONLY, 0)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.WriteAt([]byte("changed"), size-100)
			require.NoError(t, err)
		}, modified, false},
		{"ErrMetadataChanged", func(t *testing.T, v volume) {
			require.NoError(t, os.Chmod(v.at("f"), 0o600))
		}, modified, false},
		{"ErrReplaced", func(t *testing.T, v volume) {
			v.write(t, "g", []byte("the new version"), 0o644)
			require.NoError(t, os.Rename(v.at("g"), v.at("f")))
		}, replaced, false},
		{"ErrRemoved", func(t *testing.T, v volume) {
			require.NoError(t, os.Remove(v.at("f")))
		}, replaced, false},
		{"ErrGrows", func(t *testing.T, v volume) {
			f, err := os.OpenFile(v.at("f"), os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.Write([]byte("more"))
			require.NoError(t, err)
		}, changedSizeMessage, true},
		{"ErrShrinks", func(t *testing.T, v volume) {
			require.NoError(t, os.Truncate(v.at("f"), size/4))
		}, changedSizeMessage, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.write(t, "f", nil, 0o644)
			require.NoError(t, os.Truncate(v.at("f"), size)) // sparse: quick to make
			// An hour ago, so that a change now moves the mtime whatever
			// the filesystem's timestamp granularity.
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(v.at("f"), old, old))
			type rest struct {
				n   int64
				err error
			}
			got := make(chan rest, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.CopyN(io.Discard, r.Body, size/2); err != nil {
					got <- rest{err: err}
					return
				}
				tt.change(t, v)
				n, err := io.Copy(io.Discard, r.Body)
				got <- rest{n: n, err: err}
				w.WriteHeader(http.StatusOK)
			}))
			t.Cleanup(srv.Close)
			url := srv.URL + "/bucket/ws/key?" + signedQuery

			line, code := runLine(t, []string{CommandPut}, putVars(v, v.at("f"), url, size))
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonSourceChanged, tt.message(v.at("f")), 0), line)
			requireNoURL(t, line, url)
			second := <-got
			if tt.broken {
				require.Error(t, second.err, "the store never receives a complete body")
				require.Less(t, second.n, int64(size/2))
			} else {
				require.NoError(t, second.err)
				require.Equal(t, int64(size/2), second.n, "the store received the whole PUT")
			}
		})
	}
}
