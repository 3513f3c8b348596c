package sidecar

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// uploadVars is the environment of an upload of source, signed for data.
func uploadVars(v volume, source, url string, data []byte) map[string]string {
	return map[string]string{
		EnvMountRoot:  v.ws,
		EnvSourcePath: source,
		EnvURL:        url,
		EnvObjectSize: strconv.Itoa(len(data)),
		EnvSHA256B64:  sum(data),
	}
}

func uploadedLine(path string, size int) string {
	return `{"ok":true,"uploaded_path":` + quote(path) + `,"size":` + strconv.Itoa(size) + `}`
}

func changedSizeMessage(p string) string {
	return "the source file '" + p + "' changed size while the upload was in flight"
}

// requireSigned checks that the store got exactly the signed request of
// API.md §8.5: a PUT of data with a fixed Content-Length, never chunked.
func requireSigned(t *testing.T, got received, data []byte) {
	t.Helper()
	require.Equal(t, http.MethodPut, got.method)
	require.Equal(t, int64(len(data)), got.contentLength)
	require.Equal(t, strconv.Itoa(len(data)), got.header.Get("Content-Length"))
	require.Empty(t, got.transferEncoding, "not chunked")
	require.Equal(t, sum(data), got.header.Get("x-amz-checksum-sha256"))
	require.NoError(t, got.bodyErr)
	require.True(t, bytes.Equal(data, got.body), "the body is the file: got %d bytes, want %d", len(got.body), len(data))
}

func TestUpload(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "obj.bin", objectData, 0o600)
		st := startStore(t, &store{status: http.StatusOK})
		line, code := runLine(t, []string{CommandUpload}, uploadVars(v, v.at("obj.bin"), st.url(), objectData))
		require.Equal(t, ExitOK, code)
		require.Equal(t, uploadedLine(v.at("obj.bin"), len(objectData)), line)
		got := st.requests()
		require.Len(t, got, 1)
		requireSigned(t, got[0], objectData)
		_, hasType := got[0].header["Content-Type"]
		require.False(t, hasType, "no Content-Type unless CAIRN_CONTENT_TYPE is set")
	})
	t.Run("OKContentType", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "page.html", helloData, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		vars := uploadVars(v, v.at("page.html"), st.url(), helloData)
		vars[EnvContentType] = "text/html; charset=utf-8"
		line, code := runLine(t, []string{CommandUpload}, vars)
		require.Equal(t, ExitOK, code)
		require.Equal(t, uploadedLine(v.at("page.html"), len(helloData)), line)
		got := st.requests()
		require.Len(t, got, 1)
		requireSigned(t, got[0], helloData)
		require.Equal(t, []string{"text/html; charset=utf-8"}, got[0].header["Content-Type"])
	})
	t.Run("OKEmptyFile", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "empty", nil, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		line, code := runLine(t, []string{CommandUpload}, uploadVars(v, v.at("empty"), st.url(), nil))
		require.Equal(t, ExitOK, code)
		require.Equal(t, uploadedLine(v.at("empty"), 0), line)
		got := st.requests()
		require.Len(t, got, 1)
		requireSigned(t, got[0], nil)
		require.Equal(t, "0", got[0].header.Get("Content-Length"), "a literal Content-Length: 0")
	})
	t.Run("OKThroughSymlinkReportsResolved", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		v.write(t, "dir/f", helloData, 0o644)
		v.symlink(t, "dir/f", "link")
		st := startStore(t, &store{status: http.StatusOK})
		line, code := runLine(t, []string{CommandUpload}, uploadVars(v, v.at("link"), st.url(), helloData))
		require.Equal(t, ExitOK, code)
		require.Equal(t, uploadedLine(v.at("dir/f"), len(helloData)), line)
	})

	t.Run("ErrSizeDiffersFromSigned", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		for _, signed := range [][]byte{helloData[:3], append(helloData, 'x'), nil} {
			line, code := runLine(t, []string{CommandUpload}, uploadVars(v, v.at("f"), st.url(), signed))
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonSourceChanged, changedSizeMessage(v.at("f")), 0), line)
		}
		require.Empty(t, st.requests(), "the store never sees the upload")
	})
	for _, tt := range []struct {
		name   string
		change func(path string) error
	}{
		{"ErrGrowsInFlight", func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("more"))
			return err
		}},
		{"ErrShrinksInFlight", func(path string) error { return os.Truncate(path, 1000) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			// Big enough that the PUT is still streaming when the store
			// changes the file on the request's arrival (until the store
			// reads, the socket buffers take about 4 MiB); sparse, so quick
			// to make.
			const size = 16 << 20
			v.write(t, "f", nil, 0o644)
			require.NoError(t, os.Truncate(v.at("f"), size))
			st := startStore(t, &store{status: http.StatusOK})
			st.before = func() { require.NoError(t, tt.change(v.at("f"))) }
			vars := uploadVars(v, v.at("f"), st.url(), nil) // the fake store checks no digest
			vars[EnvObjectSize] = strconv.Itoa(size)
			line, code := runLine(t, []string{CommandUpload}, vars)
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(ReasonSourceChanged, changedSizeMessage(v.at("f")), 0), line)
			require.Eventually(t, func() bool { return len(st.requests()) == 1 }, 30*time.Second, 10*time.Millisecond)
			got := st.requests()[0]
			require.Error(t, got.bodyErr, "the store never receives a complete body")
			require.Less(t, len(got.body), size)
		})
	}

	fixed := func(message string) func(string) string { return func(string) string { return message } }
	for _, tt := range []struct {
		name    string
		status  int
		reason  string
		message func(source string) string
	}{
		{"ErrStoreBadRequest", http.StatusBadRequest, ReasonSourceChanged, func(p string) string {
			return "the object store rejected the upload (HTTP 400); the source file '" + p + "' most likely changed " +
				"while the upload was in flight, so its content no longer matches the checksum the upload was signed for"
		}},
		{"ErrStoreForbidden", http.StatusForbidden, ReasonStoreRejected, fixed("the object store rejected the upload (HTTP 403)")},
		{"ErrStoreNotFound", http.StatusNotFound, ReasonStoreRejected, fixed("the object store rejected the upload (HTTP 404)")},
		{"ErrStoreInternal", http.StatusInternalServerError, ReasonStoreError, fixed("the object store returned HTTP 500 for the upload")},
		{"ErrStoreUnavailable", http.StatusServiceUnavailable, ReasonStoreError, fixed("the object store returned HTTP 503 for the upload")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.write(t, "f", helloData, 0o644)
			st := startStore(t, &store{status: tt.status, body: []byte("<Error><Code>BadDigest</Code></Error>")})
			line, code := runLine(t, []string{CommandUpload}, uploadVars(v, v.at("f"), st.url(), helloData))
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
		line, code := runLine(t, []string{CommandUpload}, uploadVars(v, v.at("f"), url, helloData))
		require.Equal(t, ExitFailure, code)
		require.Equal(t, failureLine(ReasonStoreUnreachable,
			"the object store could not be reached for the upload: connection refused", 0), line)
		requireNoURL(t, line, url)
	})

	t.Run("ErrSource", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.mkdir(t, "dir")
		v.mkfifo(t, "fifo")
		v.symlink(t, filepath.Join(v.outside, "secret"), "out")
		st := startStore(t, &store{status: http.StatusOK})
		for _, tt := range []struct {
			source, reason, message string
		}{
			{v.at("missing"), ReasonSourceNotFound, "source file '" + v.at("missing") + "' does not exist"},
			{v.at("dir"), ReasonSourceIsDirectory, "source path '" + v.at("dir") + "' is a directory, not a single uploadable file"},
			{v.at("fifo"), ReasonSourceNotRegular, "source path '" + v.at("fifo") + "' is not a regular file"},
			{v.at("out"), ReasonPathOutsideMount, "source path resolves to '" + filepath.Join(v.outside, "secret") +
				"', which is outside the workspace volume mounted at '" + v.ws + "'"},
		} {
			line, code := runLine(t, []string{CommandUpload}, uploadVars(v, tt.source, st.url(), helloData))
			require.Equal(t, ExitFailure, code)
			require.Equal(t, failureLine(tt.reason, tt.message, 0), line)
		}
		require.Empty(t, st.requests())
	})

	t.Run("ErrEnv", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		v.write(t, "f", helloData, 0o644)
		st := startStore(t, &store{status: http.StatusOK})
		sizeMessage := "CAIRN_OBJECT_SIZE must be a non-negative decimal integer"
		for _, tt := range []struct {
			name, value, message string
		}{
			{EnvObjectSize, "-1", sizeMessage},
			{EnvObjectSize, "x", sizeMessage},
			{EnvObjectSize, "1.5", sizeMessage},
			{EnvObjectSize, "0x10", sizeMessage},
			{EnvObjectSize, "99999999999999999999", sizeMessage},
			{EnvObjectSize, "", "CAIRN_OBJECT_SIZE is not set"},
			{EnvURL, "", "CAIRN_URL is not set"},
			{EnvSHA256B64, "", "CAIRN_SHA256_B64 is not set"},
			{EnvSourcePath, "", "CAIRN_SOURCE_PATH is not set"},
			{EnvMountRoot, "", "CAIRN_MOUNT_ROOT is not set"},
			{EnvMountRoot, "ws", `CAIRN_MOUNT_ROOT "ws" is not an absolute path`},
		} {
			vars := uploadVars(v, v.at("f"), st.url(), helloData)
			vars[tt.name] = tt.value
			line, code := runLine(t, []string{CommandUpload}, vars)
			require.Equal(t, ExitFailure, code, "%s=%q", tt.name, tt.value)
			require.Equal(t, failureLine(ReasonEnvInvalid, tt.message, 0), line, "%s=%q", tt.name, tt.value)
		}
		require.Empty(t, st.requests())
	})
}
