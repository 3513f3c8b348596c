package rest_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// fileListing is the wire shape of GET …/files.
type fileListing struct {
	Path      string            `json:"path"`
	Entries   []cairn.FileEntry `json:"entries"`
	NextAfter string            `json:"next_after"`
}

func (h *xferHarness) list(t testing.TB, ws, path string, q ...string) *response {
	t.Helper()
	v := url.Values{"path": {path}}
	for i := 0; i+1 < len(q); i += 2 {
		v.Set(q[i], q[i+1])
	}
	return h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws+"/files?"+v.Encode(), "")
}

func listingOf(t testing.TB, r *response) *fileListing {
	t.Helper()
	ok(t, r)
	var l fileListing
	require.NoError(t, json.Unmarshal(r.body, &l))
	return &l
}

func (h *xferHarness) read(t testing.TB, ws, path string, q ...string) *response {
	t.Helper()
	v := url.Values{"path": {path}}
	for i := 0; i+1 < len(q); i += 2 {
		v.Set(q[i], q[i+1])
	}
	return h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws+"/files/content?"+v.Encode(), "")
}

// hostPath is where the engine keeps a local volume's files on this host:
// the tests run as root beside the engine, and a unix socket can only be
// made by a process that binds it.
func (h *xferHarness) hostPath(t testing.TB, ws *workspace) string {
	t.Helper()
	v, err := h.b.cli.VolumeInspect(t.Context(), ws.VolumeName)
	require.NoError(t, err)
	return v.Mountpoint
}

// filesTree is a volume with one of each kind of file.
const filesTree = "mkdir -p d/sub empty && printf 'hello\\n' > d/a.txt && printf '\\x00\\x01\\x02binary' > bin && " +
	"ln -s d/a.txt link && ln -s /etc/passwd passwd && ln -s loop loop && ln -s /mnt/cairn outdir && mkfifo fifo && " +
	"mknod null c 1 3 && printf 'secret' > locked && chown 1000:1000 locked && chmod 000 locked && " +
	"printf 'Zeta' > Z && printf 'alpha' > alpha"

func TestFilesList(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, filesTree)
	sock, err := net.Listen("unix", filepath.Join(h.hostPath(t, ws), "sock"))
	require.NoError(t, err)
	t.Cleanup(func() { sock.Close() })

	t.Run("OKRoot", func(t *testing.T) {
		l := listingOf(t, h.list(t, ws.ID, volRoot))
		require.Equal(t, volRoot, l.Path)
		var names, types []string
		for _, e := range l.Entries {
			names, types = append(names, e.Name), append(types, e.Type)
		}
		require.Equal(t, []string{"Z", "alpha", "bin", "d", "empty", "fifo", "link", "locked", "loop", "null", "outdir", "passwd", "sock"}, names,
			"byte order: upper case first")
		require.Equal(t, []string{"file", "file", "file", "dir", "dir", "other", "symlink", "file", "symlink", "other", "symlink", "symlink", "other"}, types)
		byName := map[string]cairn.FileEntry{}
		for _, e := range l.Entries {
			byName[e.Name] = e
		}
		require.Equal(t, "d/a.txt", *byName["link"].LinkTarget, "a symlink is reported, not followed")
		require.Equal(t, "/etc/passwd", *byName["passwd"].LinkTarget)
		require.Equal(t, "0000", byName["locked"].Mode)
		require.Equal(t, int64(6), byName["locked"].Size)
		require.Nil(t, byName["alpha"].LinkTarget)
		require.Empty(t, l.NextAfter)
		require.WithinDuration(t, time.Now(), byName["alpha"].MTime, 5*time.Minute)
	})

	t.Run("OKPaged", func(t *testing.T) {
		first := listingOf(t, h.list(t, ws.ID, volRoot, "limit", "5"))
		require.Len(t, first.Entries, 5)
		require.Equal(t, "empty", first.NextAfter)
		second := listingOf(t, h.list(t, ws.ID, volRoot, "limit", "5", "after", first.NextAfter))
		require.Equal(t, "fifo", second.Entries[0].Name)
		last := listingOf(t, h.list(t, ws.ID, volRoot, "after", "passwd"))
		require.Len(t, last.Entries, 1)
		require.Empty(t, last.NextAfter)
	})

	t.Run("OKNotADirectory", func(t *testing.T) {
		for path, typ := range map[string]string{volRoot + "/d/a.txt": "file", volRoot + "/link": "symlink",
			volRoot + "/fifo": "other", volRoot + "/outdir": "symlink"} {
			l := listingOf(t, h.list(t, ws.ID, path))
			require.Len(t, l.Entries, 1, path)
			require.Equal(t, filepath.Base(path), l.Entries[0].Name)
			require.Equal(t, typ, l.Entries[0].Type)
		}
	})

	for _, tc := range []struct {
		outcome, path string
		status        int
		reason        string
	}{
		{"ErrMissing", volRoot + "/nope", 404, "path_not_found"},
		{"ErrUnderAFile", volRoot + "/alpha/x", 404, "path_not_found"},
		{"ErrThroughLink", volRoot + "/outdir/ws", 400, "path_is_symlink"},
		{"ErrThroughLinkInside", volRoot + "/link/x", 400, "path_is_symlink"},
		{"ErrThroughLoop", volRoot + "/loop/x", 400, "path_is_symlink"},
		{"ErrRelative", "d", 400, "path_outside_mount"},
		{"ErrDotDot", volRoot + "/../wsX", 400, "path_outside_mount"},
		{"ErrDotDotDeep", volRoot + "/d/../../../etc", 400, "path_outside_mount"},
		{"ErrSibling", volRoot + "X", 400, "path_outside_mount"},
		{"ErrParent", "/mnt/cairn", 400, "path_outside_mount"},
		{"ErrRoot", "/", 400, "path_outside_mount"},
		{"ErrProc", "/proc/self/root/etc", 400, "path_outside_mount"},
		{"ErrNUL", volRoot + "/a\x00b", 400, "invalid_path"},
		{"ErrNewline", volRoot + "/a\nb", 400, "invalid_path"},
		{"ErrEscape", volRoot + "/\x1b[2J", 400, "invalid_path"},
		{"ErrDEL", volRoot + "/a\x7f", 400, "invalid_path"},
		{"ErrNotUTF8", volRoot + "/\xff\xfe", 400, "invalid_path"},
		{"ErrTooLong", volRoot + "/" + strings.Repeat("a", 4096), 400, "invalid_path"},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			e := fails(t, h.list(t, ws.ID, tc.path), tc.status, tc.reason)
			require.Equal(t, "Failed to list files of workspace "+ws.ID+" volume", e.Message)
			if tc.reason == "invalid_path" {
				require.NotContains(t, e.Detail, tc.path, "an invalid path is never echoed")
			}
		})
	}

	t.Run("ErrLimit", func(t *testing.T) {
		for _, l := range []string{"0", "1001", "x", "-1"} {
			fails(t, h.list(t, ws.ID, volRoot, "limit", l), 400, "invalid_query")
		}
	})

	t.Run("ErrVolumeNotReady", func(t *testing.T) {
		bare := create(t, h.url, h.b, sprintf(`{"name":"novol-%d"}`, time.Now().UnixNano()))
		fails(t, h.list(t, bare.ID, volRoot), http.StatusConflict, "volume_not_ready")
		fails(t, h.read(t, bare.ID, volRoot+"/x"), http.StatusConflict, "volume_not_ready")
	})

	t.Run("ErrUnknownWorkspace", func(t *testing.T) {
		fails(t, h.list(t, "00000000-0000-4000-8000-000000000000", volRoot), 404, "workspace_not_found")
	})
}

func TestFilesRead(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, filesTree+" && dd if=/dev/zero bs=1024 count=1100 2>/dev/null | tr '\\0' 'x' > big")

	t.Run("OKText", func(t *testing.T) {
		r := h.read(t, ws.ID, volRoot+"/d/a.txt")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "hello\n", string(r.body))
		require.Equal(t, "text/plain; charset=utf-8", r.header.Get("Content-Type"))
		require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
		require.Equal(t, `attachment; filename=a.txt`, r.header.Get("Content-Disposition"))
		require.Equal(t, "6", r.header.Get(cairn.HeaderFileSize))
		mtime, err := time.Parse(time.RFC3339Nano, r.header.Get(cairn.HeaderFileMTime))
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), mtime, 5*time.Minute)
		require.NotEmpty(t, r.header.Get("X-Request-ID"))
	})

	t.Run("OKRange", func(t *testing.T) {
		r := h.read(t, ws.ID, volRoot+"/d/a.txt", "offset", "1", "length", "3")
		require.Equal(t, "ell", string(r.body))
		require.Equal(t, "1", r.header.Get(cairn.HeaderFileOffset))
		past := h.read(t, ws.ID, volRoot+"/d/a.txt", "offset", "100")
		require.Equal(t, http.StatusOK, past.status)
		require.Empty(t, past.body)
	})

	t.Run("OKBinaryAndLocked", func(t *testing.T) {
		r := h.read(t, ws.ID, volRoot+"/bin")
		require.Equal(t, "\x00\x01\x02binary", string(r.body))
		require.Equal(t, "application/octet-stream", r.header.Get("Content-Type"))
		locked := h.read(t, ws.ID, volRoot+"/locked")
		require.Equal(t, http.StatusOK, locked.status, "a mode-000 file of UID 1000 is read: %s", locked.body)
		require.Equal(t, "secret", string(locked.body))
	})

	t.Run("OKCapped", func(t *testing.T) {
		r := h.read(t, ws.ID, volRoot+"/big")
		require.Equal(t, http.StatusOK, r.status)
		require.Len(t, r.body, cairn.MaxFileReadBytes, "one read returns at most 1 MiB")
		require.Equal(t, strconv.Itoa(1100*1024), r.header.Get(cairn.HeaderFileSize))
		rest := h.read(t, ws.ID, volRoot+"/big", "offset", strconv.Itoa(cairn.MaxFileReadBytes))
		require.Len(t, rest.body, 1100*1024-cairn.MaxFileReadBytes)
	})

	t.Run("OKGrowing", func(t *testing.T) {
		h.sh(t, ws, "printf 'one\\n' > grow")
		first := h.read(t, ws.ID, volRoot+"/grow")
		require.Equal(t, "one\n", string(first.body))
		h.sh(t, ws, "printf 'two\\n' >> grow")
		again := h.read(t, ws.ID, volRoot+"/grow")
		require.Equal(t, "one\ntwo\n", string(again.body), "the warm reader sees the volume as it is now")
		require.Equal(t, "8", again.header.Get(cairn.HeaderFileSize))
	})

	for _, tc := range []struct {
		outcome, path string
		q             []string
		status        int
		reason        string
	}{
		{"ErrDirectory", volRoot + "/d", nil, 400, "path_is_directory"},
		{"ErrSymlink", volRoot + "/link", nil, 400, "path_is_symlink"},
		{"ErrSymlinkOut", volRoot + "/passwd", nil, 400, "path_is_symlink"},
		{"ErrFIFO", volRoot + "/fifo", nil, 400, "path_not_regular"},
		{"ErrDevice", volRoot + "/null", nil, 400, "path_not_regular"},
		{"ErrMissing", volRoot + "/nope", nil, 404, "path_not_found"},
		{"ErrThroughLink", volRoot + "/outdir/ws/d/a.txt", nil, 400, "path_is_symlink"},
		{"ErrMountRoot", volRoot, nil, 400, "path_is_mount_root"},
		{"ErrOutside", "/etc/passwd", nil, 400, "path_outside_mount"},
		{"ErrTooLarge", volRoot + "/big", []string{"length", strconv.Itoa(cairn.MaxFileReadBytes + 1)}, 400, "range_too_large"},
		{"ErrNegative", volRoot + "/big", []string{"offset", "-1"}, 400, "invalid_parameters"},
		{"ErrNotANumber", volRoot + "/big", []string{"length", "lots"}, 400, "invalid_query"},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			e := fails(t, h.read(t, ws.ID, tc.path, tc.q...), tc.status, tc.reason)
			want := "Failed to read a file of workspace " + ws.ID + " volume"
			if tc.reason == "invalid_query" {
				want = "Query parameter 'length' must be an integer" // a malformed query says so itself
			}
			require.Equal(t, want, e.Message)
		})
	}

	t.Run("ErrNoPath", func(t *testing.T) {
		fails(t, h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws.ID+"/files/content", ""), 400, "invalid_query")
	})
}

// TestFilesHangUp cuts requests off at once and part way: whatever was
// running for them stops, the next request is answered, and no container
// is left when the front door closes (the harness checks).
func TestFilesHangUp(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir many && cd many && seq 1 3000 | xargs touch && cd .. && "+
		"dd if=/dev/urandom of=blob bs=1024 count=1024 2>/dev/null")
	for _, cut := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		for _, path := range []string{"/v1/workspaces/" + ws.ID + "/files?limit=1000&path=" + volRoot + "/many",
			"/v1/workspaces/" + ws.ID + "/files/content?path=" + volRoot + "/blob"} {
			ctx, cancel := context.WithTimeout(t.Context(), cut)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url+path, nil)
			require.NoError(t, err)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			cancel()
		}
	}
	l := listingOf(t, h.list(t, ws.ID, volRoot+"/many", "limit", "1000"))
	require.Len(t, l.Entries, 1000)
	r := h.read(t, ws.ID, volRoot+"/blob")
	require.Len(t, r.body, 1<<20)
}

// TestFilesTeardown: the browse container never keeps a volume in use.
func TestFilesTeardown(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "printf x > f")
	listingOf(t, h.list(t, ws.ID, volRoot))
	env := ok(t, h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws.ID, ""))
	require.NotNil(t, env.MountCount)
	require.Equal(t, 0, *env.MountCount, "cairn's own reader is not counted as a mount")
	bare(t, h.do(t, h.url, http.MethodDelete, "/v1/workspaces/"+ws.ID+"/volume", ""))
	fails(t, h.list(t, ws.ID, volRoot), http.StatusConflict, "volume_not_ready")
}

// archiveEntry is one entry of a hand-made archive.
type archiveEntry struct {
	name, link string
	typ        byte // tar type flag
	body       string
	mode       int64
}

func tarGz(t testing.TB, entries ...archiveEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: mode, Size: int64(len(e.body)),
			ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if e.typ == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func zipOf(t testing.TB, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range entries {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// uploadBytes records body as an artifact of ws through mint, PUT and
// register, and returns its ID.
func (h *xferHarness) uploadBytes(t testing.TB, ws, name string, body []byte) string {
	t.Helper()
	d := sha256.Sum256(body)
	sum := base64.StdEncoding.EncodeToString(d[:])
	r := do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", sprintf(`{"size":%d,"sha256_b64":%q}`, len(body), sum))
	ok(t, r)
	var env struct {
		Staging cairn.Staging `json:"staging"`
	}
	require.NoError(t, json.Unmarshal(r.body, &env))
	status, resp := put(t, env.Staging.PutURL, body, sum)
	require.Equal(t, http.StatusOK, status, resp)
	reg := h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws+"/artifacts",
		sprintf(`{"staging_object_key":%q,"name":%q}`, env.Staging.Key, name))
	return xferArtifactOf(t, reg).ID
}

func (h *xferHarness) unpack(t testing.TB, id, target string) *response {
	t.Helper()
	return h.do(t, h.url, http.MethodPost, "/v1/artifacts/"+id+"/unpack-in-volume", sprintf(`{"target_dir":%q}`, target))
}

func (h *xferHarness) pack(t testing.TB, ws, src, name, format string) *response {
	t.Helper()
	return h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws+"/artifact-from-volume",
		sprintf(`{"source_path":%q,"name":%q,"format":%q}`, src, name, format))
}

// requireSameTree fails with the first lines that differ, not the trees.
func requireSameTree(t testing.TB, want, got string) {
	t.Helper()
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var diff []string
	for i := 0; i < max(len(w), len(g)) && len(diff) < 10; i++ {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			diff = append(diff, sprintf("line %d: want %q, got %q", i, at(w, i), at(g, i)))
		}
	}
	require.Empty(t, diff, "the trees differ (%d and %d lines)", len(w), len(g))
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<none>"
}

// treeOf describes every entry under dir as a tool container sees it: path,
// type, mode, size, mtime, link target, content digest.
func (h *xferHarness) treeOf(t testing.TB, ws *workspace, dir string) string {
	t.Helper()
	return h.sh(t, ws, "cd "+dir+" && find . -mindepth 1 | sort | while read -r p; do "+
		"if [ -L \"$p\" ]; then echo \"$p L $(readlink \"$p\")\"; "+
		"elif [ -f \"$p\" ]; then echo \"$p F $(stat -c '%a %s %Y %u:%g' \"$p\") $(md5sum < \"$p\")\"; "+
		"else echo \"$p D $(stat -c '%a %Y' \"$p\")\"; fi; done")
}

func TestArchivesRoundTrip(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 120 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir -p src/a/b src/empty src/e2/deeper && cd src && "+
		"for i in $(seq 1 1000); do printf \"file $i\\n\" > a/f$i; done && "+
		"dd if=/dev/urandom of=a/b/random bs=1024 count=300 2>/dev/null && "+
		"ln -s a/f1 link && ln -s a/b dirlink && ln -s ../a/f1 e2/up && chmod 0600 a/f2 && chmod 0755 a/f3 && chmod 1777 e2 && "+
		"chown 1000:1000 a/f4 && touch -d '2020-01-02 03:04:05' a/f5 a/b")
	// Below the root: the target directory itself is a new one, mode
	// 0777 like the volume root.
	want := h.treeOf(t, ws, volRoot+"/src")
	require.Equal(t, 1009, strings.Count(want, "\n")+1, "the tree as made")
	for _, format := range []string{"tar.gz", "zip"} {
		t.Run(format, func(t *testing.T) {
			a := xferArtifactOf(t, h.pack(t, ws.ID, volRoot+"/src", "src-"+strings.ReplaceAll(format, ".", "-"), format))
			wantMIME := map[string]string{"tar.gz": cairn.MIMEGzip, "zip": cairn.MIMEZip}[format]
			require.Equal(t, wantMIME, a.MIMEType)
			got := h.presignURL(t, a.ID)
			status, _, body := fetch(t, got)
			require.Equal(t, http.StatusOK, status)
			d := sha256.Sum256(body)
			require.Equal(t, base64.StdEncoding.EncodeToString(d[:]), a.SHA256B64, "the recorded digest is the stored bytes'")
			require.Equal(t, int64(len(body)), a.Size)

			target := volRoot + "/out-" + format
			r := h.unpack(t, a.ID, target)
			ok(t, r)
			var res cairn.UnpackResult
			require.NoError(t, json.Unmarshal(r.body, &res))
			require.Equal(t, target, res.TargetDir)
			require.Equal(t, 1009, res.Entries)
			requireSameTree(t, want, h.treeOf(t, ws, target))

			e := fails(t, h.unpack(t, a.ID, target), http.StatusConflict, "target_exists")
			require.Contains(t, e.Detail, target)
		})
	}

	t.Run("ErrSpecialFiles", func(t *testing.T) {
		h.sh(t, ws, "mkdir -p odd/x && mkfifo odd/x/pipe")
		e := fails(t, h.pack(t, ws.ID, volRoot+"/odd", "odd", "tar.gz"), 400, "source_not_regular")
		require.Contains(t, e.Detail, volRoot+"/odd/x/pipe")
		require.Zero(t, h.rows(t, ws.ID)-2, "no artifact beyond the two packs")
	})

	t.Run("ErrNotADirectory", func(t *testing.T) {
		fails(t, h.pack(t, ws.ID, volRoot+"/src/a/f1", "file", "zip"), 400, "source_not_directory")
	})

	t.Run("ErrFormat", func(t *testing.T) {
		fails(t, h.pack(t, ws.ID, volRoot+"/src", "rar", "rar"), 400, "invalid_parameters")
	})
}

func TestArchivesUnpackRefusals(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 60 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir keep && printf 'mine' > keep/f")
	reg, dir, sym, hard := byte(tar.TypeReg), byte(tar.TypeDir), byte(tar.TypeSymlink), byte(tar.TypeLink)
	many := make([]archiveEntry, 10001)
	for i := range many {
		many[i] = archiveEntry{name: "f" + strconv.Itoa(i), typ: reg}
	}
	bomb := map[string]string{"bomb": strings.Repeat("0", 64<<20)}
	cases := []struct {
		outcome string
		archive []byte
		reason  string
	}{
		{"ErrDotDot", tarGz(t, archiveEntry{name: "../evil", typ: reg, body: "x"}), "archive_unsafe_path"},
		{"ErrAbsolute", tarGz(t, archiveEntry{name: "/etc/evil", typ: reg, body: "x"}), "archive_unsafe_path"},
		{"ErrDrive", tarGz(t, archiveEntry{name: "C:/evil", typ: reg, body: "x"}), "archive_unsafe_path"},
		{"ErrBackslash", tarGz(t, archiveEntry{name: "a\\..\\..\\evil", typ: reg, body: "x"}), "archive_unsafe_path"},
		{"ErrEmptySegment", tarGz(t, archiveEntry{name: "a//b", typ: reg, body: "x"}), "archive_unsafe_path"},
		{"ErrDuplicate", tarGz(t, archiveEntry{name: "a", typ: reg, body: "1"}, archiveEntry{name: "a", typ: reg, body: "2"}), "archive_unsafe_path"},
		{"ErrLinkThenThrough", tarGz(t, archiveEntry{name: "a", typ: sym, link: "/"},
			archiveEntry{name: "a/etc/passwd", typ: reg, body: "root::0:0::/:/bin/sh"}), "archive_unsafe_path"},
		{"ErrLinkOut", tarGz(t, archiveEntry{name: "out", typ: sym, link: "../../.."}), "archive_unsafe_path"},
		{"ErrLinkAbsolute", tarGz(t, archiveEntry{name: "out", typ: sym, link: "/etc"}), "archive_unsafe_path"},
		{"ErrLinkChain", tarGz(t, archiveEntry{name: "x", typ: sym, link: "."}, archiveEntry{name: "y", typ: sym, link: "x/.."}), "archive_unsafe_path"},
		{"ErrHardLinkOut", tarGz(t, archiveEntry{name: "h", typ: hard, link: "../../etc/shadow"}), "archive_unsafe_path"},
		{"ErrParentIsFile", tarGz(t, archiveEntry{name: "f", typ: reg, body: "x"}, archiveEntry{name: "f/g", typ: reg, body: "y"}), "archive_unsafe_path"},
		{"ErrLongName", tarGz(t, archiveEntry{name: strings.Repeat("n", 300), typ: reg, body: "x"}), "archive_unsafe_path"},
		{"ErrDevice", tarGz(t, archiveEntry{name: "dir", typ: dir, mode: 0o755}, archiveEntry{name: "dir/null", typ: tar.TypeChar}), "archive_unsafe_path"},
		{"ErrFIFO", tarGz(t, archiveEntry{name: "p", typ: tar.TypeFifo}), "archive_unsafe_path"},
		{"ErrTooManyEntries", tarGz(t, many...), "archive_too_large"},
		{"ErrZipBomb", zipOf(t, bomb), "archive_ratio"},
		{"ErrZipDotDot", zipOf(t, map[string]string{"ok": "1", "../../evil": "x"}), "archive_unsafe_path"},
		{"ErrGarbage", append([]byte{0x1f, 0x8b, 8, 0}, bytes.Repeat([]byte{0xff}, 512)...), "archive_invalid"},
	}
	for i, tc := range cases {
		t.Run(tc.outcome, func(t *testing.T) {
			t.Parallel()
			id := h.uploadBytes(t, ws.ID, "hostile-"+strconv.Itoa(i), tc.archive)
			parent := "case" + strconv.Itoa(i)
			h.sh(t, ws, "mkdir "+parent)
			fails(t, h.unpack(t, id, volRoot+"/"+parent+"/t"), 400, tc.reason)
			// Neither the target, nor a staging directory beside it, nor
			// anything outside the tree.
			left := h.sh(t, ws, "ls -A "+parent+"; ls -A "+volRoot+" | grep -v '^keep$' | grep -v '^case[0-9]*$'; "+
				"[ -e /evil ] && echo EVIL; cat keep/f")
			require.Equal(t, "mine", strings.TrimSpace(left), "nothing written, nothing touched")
		})
	}

	t.Run("ErrNotAnArchive", func(t *testing.T) {
		t.Parallel()
		id := h.uploadBytes(t, ws.ID, "plain", []byte("just text\n"))
		fails(t, h.unpack(t, id, volRoot+"/plain"), 400, "archive_invalid")
	})

	t.Run("ErrTargetParentMissing", func(t *testing.T) {
		t.Parallel()
		id := h.uploadBytes(t, ws.ID, "fine", tarGz(t, archiveEntry{name: "f", typ: reg, body: "x"}))
		fails(t, h.unpack(t, id, volRoot+"/no/such/dir"), 400, "target_dir_missing")
		fails(t, h.unpack(t, id, volRoot+"/keep"), http.StatusConflict, "target_exists")
		fails(t, h.unpack(t, id, "/etc/x"), 400, "path_outside_mount")
	})
}

// TestFilesHugeDirectory pages through 100 000 entries: every name once, in
// byte order, while the browse container's memory stays flat.
func TestFilesHugeDirectory(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 60 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir huge && cd huge && seq -w 1 100000 | xargs touch")
	var names []string
	after, pages := "", 0
	peak := uint64(0)
	for {
		l := listingOf(t, h.list(t, ws.ID, volRoot+"/huge", "limit", "1000", "after", after))
		pages++
		for _, e := range l.Entries {
			names = append(names, e.Name)
		}
		if pages%25 == 1 {
			peak = max(peak, h.browseMemory(t, ws.ID))
		}
		if l.NextAfter == "" {
			break
		}
		after = l.NextAfter
	}
	require.Equal(t, 100, pages)
	require.Len(t, names, 100000)
	for i, n := range names {
		require.Equal(t, sprintf("%06d", i+1), n, "every name once, in byte order")
	}
	t.Logf("browse container memory peak over 100 pages: %.1f MiB", float64(peak)/(1<<20))
	require.Less(t, peak, uint64(32<<20), "the browse container's memory stays flat (peak %d bytes)", peak)
}

// browseMemory is the memory the workspace's browse container uses now.
func (h *xferHarness) browseMemory(t testing.TB, workspaceID string) uint64 {
	t.Helper()
	f := h.sidecarLabels()
	f.Add("label", "cairn.command=serve")
	f.Add("label", "cairn.workspace="+workspaceID)
	list, err := h.b.cli.ContainerList(t.Context(), container.ListOptions{Filters: f})
	require.NoError(t, err)
	require.Len(t, list, 1, "one browse container serves the workspace")
	st, err := h.b.cli.ContainerStatsOneShot(t.Context(), list[0].ID)
	require.NoError(t, err)
	defer st.Body.Close()
	var stats struct {
		MemoryStats struct {
			Usage uint64            `json:"usage"`
			Stats map[string]uint64 `json:"stats"`
		} `json:"memory_stats"`
	}
	require.NoError(t, json.NewDecoder(st.Body).Decode(&stats))
	// Page cache of the directory read is the kernel's, not the reader's.
	return stats.MemoryStats.Usage - stats.MemoryStats.Stats["inactive_file"]
}
