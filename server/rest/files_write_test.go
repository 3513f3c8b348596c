package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// put writes body to path with PUT …/files/content.
func (h *xferHarness) put(t testing.TB, ws, path string, body []byte, hdr ...string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut,
		h.url+"/v1/workspaces/"+ws+"/files/content?"+url.Values{"path": {path}}.Encode(), bytes.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return send(t, req)
}

func changeOf(t testing.TB, r *response) *cairn.FileChange {
	t.Helper()
	ok(t, r)
	var c cairn.FileChange
	require.NoError(t, json.Unmarshal(r.body, &c))
	return &c
}

func (h *xferHarness) fileOp(t testing.TB, ws, op, body string) *response {
	t.Helper()
	return h.do(t, h.url, http.MethodPost, "/v1/workspaces/"+ws+"/files/"+op, body)
}

func (h *xferHarness) remove(t testing.TB, ws, path string, recursive bool) *response {
	t.Helper()
	q := url.Values{"path": {path}, "recursive": {strconv.FormatBool(recursive)}}
	return h.do(t, h.url, http.MethodDelete, "/v1/workspaces/"+ws+"/files?"+q.Encode(), "")
}

func TestFilesWrite(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir d other && chown 1000:1001 d && printf old > kept && chmod 640 kept && "+
		"ln -s /etc etclink && ln -s other otherlink")

	t.Run("OKNewFile", func(t *testing.T) {
		c := changeOf(t, h.put(t, ws.ID, volRoot+"/d/new.txt", []byte("hello\n")))
		require.Equal(t, volRoot+"/d/new.txt", c.Path)
		require.NotEmpty(t, c.Entry.ETag)
		require.Equal(t, "1000:1001:666:hello", h.sh(t, ws, "stat -c %u:%g:%a: d/new.txt | tr -d '\\n'; cat d/new.txt"),
			"a new file takes its directory's owner and mode 0666")
		r := h.read(t, ws.ID, volRoot+"/d/new.txt")
		require.Equal(t, strconv.Quote(c.Entry.ETag), r.header.Get("ETag"), "a read gives the write's ETag")
		l := listingOf(t, h.list(t, ws.ID, volRoot+"/d"))
		require.Equal(t, c.Entry.ETag, l.Entries[0].ETag)
	})
	t.Run("OKIfMatch", func(t *testing.T) {
		tag := strings.Trim(h.read(t, ws.ID, volRoot+"/kept").header.Get("ETag"), `"`)
		c := changeOf(t, h.put(t, ws.ID, volRoot+"/kept", []byte("new"), "If-Match", strconv.Quote(tag)))
		require.NotEqual(t, tag, c.Entry.ETag)
		require.Equal(t, "0640", c.Entry.Mode, "a rewritten file keeps its mode")
		e := fails(t, h.put(t, ws.ID, volRoot+"/kept", []byte("lost"), "If-Match", strconv.Quote(tag)),
			http.StatusPreconditionFailed, "file_changed")
		require.Equal(t, "Failed to write a file of workspace "+ws.ID+" volume", e.Message)
		require.Equal(t, "new", h.sh(t, ws, "cat kept"))
	})
	t.Run("OKMode", func(t *testing.T) {
		q := url.Values{"path": {volRoot + "/run.sh"}, "mode": {"0755"}}
		r := h.do(t, h.url, http.MethodPut, "/v1/workspaces/"+ws.ID+"/files/content?"+q.Encode(), "#!/bin/sh\n")
		require.Equal(t, "0755", changeOf(t, r).Entry.Mode)
	})
	t.Run("ErrCreateOnly", func(t *testing.T) {
		fails(t, h.put(t, ws.ID, volRoot+"/kept", []byte("x"), "If-None-Match", "*"), http.StatusConflict, "target_exists")
		changeOf(t, h.put(t, ws.ID, volRoot+"/fresh", []byte("x"), "If-None-Match", "*"))
	})
	t.Run("ErrBodyTooLarge", func(t *testing.T) {
		fails(t, h.put(t, ws.ID, volRoot+"/big", make([]byte, 17<<20)), http.StatusRequestEntityTooLarge, "body_too_large")
		require.Equal(t, "absent", h.sh(t, ws, "test -e big && echo present || echo absent | tr -d '\\n'"))
	})
	for _, tc := range []struct {
		outcome, path string
		status        int
		reason        string
		hdr           []string
	}{
		{"ErrDirectory", volRoot + "/d", 400, "path_is_directory", nil},
		{"ErrMountRoot", volRoot, 400, "path_is_mount_root", nil},
		{"ErrThroughLink", volRoot + "/etclink/passwd", 400, "path_is_symlink", nil},
		{"ErrThroughLinkInside", volRoot + "/otherlink/f", 400, "path_is_symlink", nil},
		{"ErrOntoLink", volRoot + "/otherlink", 400, "path_is_symlink", nil},
		{"ErrDotDot", volRoot + "/../x", 400, "path_outside_mount", nil},
		{"ErrRelative", "x", 400, "path_outside_mount", nil},
		{"ErrControl", volRoot + "/a\x1b[2J", 400, "invalid_path", nil},
		{"ErrMissingParent", volRoot + "/nodir/f", 404, "path_not_found", nil},
		{"ErrWeakTag", volRoot + "/kept", 400, "invalid_parameters", []string{"If-Match", `W/"x"`}},
		{"ErrBothConditions", volRoot + "/kept", 400, "invalid_parameters", []string{"If-Match", `"x"`, "If-None-Match", "*"}},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			fails(t, h.put(t, ws.ID, tc.path, []byte("x"), tc.hdr...), tc.status, tc.reason)
		})
	}
	t.Run("ErrSetUID", func(t *testing.T) {
		q := url.Values{"path": {volRoot + "/suid"}, "mode": {"4755"}}
		fails(t, h.do(t, h.url, http.MethodPut, "/v1/workspaces/"+ws.ID+"/files/content?"+q.Encode(), "x"), 400, "invalid_parameters")
	})
	t.Run("NothingOutsideWhatWasAsked", func(t *testing.T) {
		require.Equal(t, "", h.sh(t, ws, "ls -A other | tr -d '\\n'"), "nothing was written through a symlink")
		require.Equal(t, "", h.sh(t, ws, "find . -name '.cairn-*' | tr -d '\\n'"), "no temporary file left")
	})
	t.Run("Audited", func(t *testing.T) {
		r := h.do(t, h.url, http.MethodGet, "/v1/audit?type=WORKSPACE_FILE_CHANGED&workspace_id="+ws.ID, "")
		ok(t, r)
		require.Contains(t, string(r.body), volRoot+"/d/new.txt")
	})
}

func TestFilesChange(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir -p full/sub && printf x > full/sub/f && ln -s /etc full/etc && printf a > a && printf b > b")

	t.Run("Mkdir", func(t *testing.T) {
		c := changeOf(t, h.fileOp(t, ws.ID, "mkdir", `{"path":"`+volRoot+`/p/q/r","parents":true,"mode":"0750"}`))
		require.Equal(t, "dir", c.Entry.Type)
		require.Equal(t, "0750", c.Entry.Mode)
		fails(t, h.fileOp(t, ws.ID, "mkdir", `{"path":"`+volRoot+`/p"}`), http.StatusConflict, "target_exists")
		changeOf(t, h.fileOp(t, ws.ID, "mkdir", `{"path":"`+volRoot+`/p","parents":true}`))
		fails(t, h.fileOp(t, ws.ID, "mkdir", `{"path":"`+volRoot+`/full/etc/x","parents":true}`), 400, "path_is_symlink")
		fails(t, h.fileOp(t, ws.ID, "mkdir", `{"path":"`+volRoot+`/x","mode":"7777"}`), 400, "invalid_parameters")
	})
	t.Run("Move", func(t *testing.T) {
		fails(t, h.fileOp(t, ws.ID, "move", `{"from":"`+volRoot+`/a","to":"`+volRoot+`/b"}`), http.StatusConflict, "target_exists")
		c := changeOf(t, h.fileOp(t, ws.ID, "move", `{"from":"`+volRoot+`/a","to":"`+volRoot+`/b","overwrite":true}`))
		require.Equal(t, volRoot+"/b", c.Path)
		require.Equal(t, "a", h.sh(t, ws, "cat b; test -e a && echo ' a left'; true"))
		fails(t, h.fileOp(t, ws.ID, "move", `{"from":"`+volRoot+`","to":"`+volRoot+`/x"}`), 400, "path_is_mount_root")
		fails(t, h.fileOp(t, ws.ID, "move", `{"from":"`+volRoot+`/p","to":"`+volRoot+`/p/q/in"}`), 400, "invalid_parameters")
		fails(t, h.fileOp(t, ws.ID, "move", `{"from":"`+volRoot+`/b","to":"`+volRoot+`/full/etc/b"}`), 400, "path_is_symlink")
	})
	t.Run("Remove", func(t *testing.T) {
		fails(t, h.remove(t, ws.ID, volRoot+"/full", false), http.StatusConflict, "directory_not_empty")
		for _, root := range []string{volRoot, volRoot + "/", volRoot + "/."} {
			fails(t, h.remove(t, ws.ID, root, true), 400, "path_is_mount_root")
		}
		changeOf(t, h.remove(t, ws.ID, volRoot+"/full", true))
		fails(t, h.remove(t, ws.ID, volRoot+"/full", true), http.StatusNotFound, "path_not_found")
		require.Equal(t, "b p", h.sh(t, ws, "ls | tr '\\n' ' ' | sed 's/ $//'"), "only what was asked is gone")
	})
	t.Run("WriterPosture", func(t *testing.T) {
		list, err := h.b.cli.ContainerList(t.Context(), container.ListOptions{Filters: filters.NewArgs(
			filters.Arg("label", "cairn.workspace="+ws.ID), filters.Arg("label", "cairn.command=serve"))})
		require.NoError(t, err)
		var writers int
		for _, c := range list {
			info, err := h.b.cli.ContainerInspect(t.Context(), c.ID)
			require.NoError(t, err)
			require.Len(t, info.Mounts, 1)
			var caps []string
			for _, c := range info.HostConfig.CapAdd {
				caps = append(caps, strings.TrimPrefix(c, "CAP_")) // the engine may name them either way
			}
			slices.Sort(caps)
			if !info.Mounts[0].RW {
				require.Equal(t, []string{"DAC_READ_SEARCH"}, caps, "the reader")
				continue
			}
			writers++
			require.Equal(t, []string{"CHOWN", "DAC_OVERRIDE", "FOWNER"}, caps)
			require.Equal(t, []string{"ALL"}, []string(info.HostConfig.CapDrop))
			require.True(t, info.HostConfig.ReadonlyRootfs)
			require.Equal(t, "none", string(info.HostConfig.NetworkMode))
		}
		require.Equal(t, 1, writers, "one writer per workspace, beside its reader")
	})
}

// TestFilesWriteSymlinkRace: a tool container swaps a directory of the
// written path for a symlink to another directory of the volume, and
// back, as fast as it can, while writes run. No write may land through
// the symlink.
func TestFilesWriteSymlinkRace(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir other")
	_, stop := stacktest.StartInVolume(t, h.b.app, ws.VolumeName, "cd "+volRoot+
		" && while :; do mkdir d; rm -rf d; ln -s other d; rm -f d; done")
	defer stop()
	written, refused := 0, 0
	for i := 0; written < 5 || refused < 5; i++ {
		require.Less(t, i, 2000, "the race never gave both outcomes (%d written, %d refused)", written, refused)
		r := h.put(t, ws.ID, volRoot+"/d/f", []byte("payload"))
		switch r.status {
		case http.StatusOK:
			written++
		case http.StatusBadRequest, http.StatusNotFound:
			refused++
		default:
			t.Fatalf("a write during the race answered %d: %s", r.status, r.body)
		}
	}
	stop()
	require.Equal(t, "", h.sh(t, ws, "ls -A other | tr -d '\\n'"), "nothing landed through the symlink")
}

func TestFilesSearch(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	ws := h.volumeWorkspace(t, "mkdir -p src/deep other && printf 'one\\nneedle here\\nthree\\n' > src/a.txt && "+
		"printf 'needle\\n' > src/deep/b.txt && printf 'needle\\0' > src/bin.txt && printf 'x' > src/c.go && "+
		"printf 'needle\\n' > other/secret.txt && ln -s ../other src/link")
	search := func(q ...string) *response {
		v := url.Values{}
		for i := 0; i+1 < len(q); i += 2 {
			v.Set(q[i], q[i+1])
		}
		return h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws.ID+"/files/search?"+v.Encode(), "")
	}
	decode := func(r *response, v any) { decodeOK(t, r, v) }

	t.Run("OKContent", func(t *testing.T) {
		var s cairn.FileSearch
		decode(search("path", volRoot+"/src", "content", "need+le"), &s)
		require.Equal(t, []cairn.FileMatch{
			{Path: volRoot + "/src/a.txt", Line: 2, Text: "needle here"},
			{Path: volRoot + "/src/deep/b.txt", Line: 1, Text: "needle"},
		}, s.Matches, "binary files skipped, the symlink never followed")
		require.Empty(t, s.Stopped)
	})
	t.Run("OKGlobAndLimit", func(t *testing.T) {
		var s cairn.FileSearch
		decode(search("glob", "*.txt", "limit", "2"), &s)
		require.Len(t, s.Matches, 2)
		require.Equal(t, "results", s.Stopped)
	})
	t.Run("OKRegexpBomb", func(t *testing.T) {
		h.sh(t, ws, "head -c 1000000 /dev/zero | tr '\\0' a > src/as.txt")
		var s cairn.FileSearch
		decode(search("path", volRoot+"/src", "content", "(a*)*(a+a+)+b"), &s)
		require.Empty(t, s.Matches, "RE2: linear time, no match")
	})
	t.Run("OKTree", func(t *testing.T) {
		var tr cairn.FileTree
		decode(h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws.ID+"/files/tree?depth=1&path="+url.QueryEscape(volRoot+"/src"), ""), &tr)
		var paths []string
		for _, e := range tr.Entries {
			paths = append(paths, strings.TrimPrefix(e.Path, volRoot+"/src/"))
		}
		require.Equal(t, []string{"a.txt", "as.txt", "bin.txt", "c.go", "deep", "link"}, paths)
		require.Equal(t, "symlink", tr.Entries[5].Type)
	})
	t.Run("OKStat", func(t *testing.T) {
		stat := func(p string) *response {
			return h.do(t, h.url, http.MethodGet, "/v1/workspaces/"+ws.ID+"/files/stat?path="+url.QueryEscape(p), "")
		}
		var e cairn.FileTreeEntry
		decode(stat(volRoot+"/src/deep"), &e)
		require.Equal(t, volRoot+"/src/deep", e.Path)
		require.Equal(t, "deep", e.Name)
		require.Equal(t, "dir", e.Type, "the directory's own entry, not its children")
		decode(stat(volRoot+"/src/link"), &e)
		require.Equal(t, "symlink", e.Type)
		decode(stat(volRoot), &e)
		require.Equal(t, "ws", e.Name)
		decode(stat(volRoot+"/src/a.txt"), &e)
		require.NotEmpty(t, e.ETag)
		fails(t, stat(volRoot+"/src/link/secret.txt"), 400, "path_is_symlink")
		fails(t, stat(volRoot+"/nope"), 404, "path_not_found")
	})
	for _, tc := range []struct {
		outcome string
		q       []string
		status  int
		reason  string
	}{
		{"ErrNoPattern", nil, 400, "invalid_parameters"},
		{"ErrBadRegexp", []string{"content", "a(b"}, 400, "invalid_parameters"},
		{"ErrBadGlob", []string{"glob", "[a"}, 400, "invalid_parameters"},
		{"ErrLongPattern", []string{"content", strings.Repeat("a", 1025)}, 400, "invalid_parameters"},
		{"ErrLimit", []string{"glob", "*", "limit", "1001"}, 400, "invalid_parameters"},
		{"ErrThroughLink", []string{"glob", "*", "path", volRoot + "/src/link/x"}, 400, "path_is_symlink"},
		{"ErrOutside", []string{"glob", "*", "path", "/etc"}, 400, "path_outside_mount"},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			fails(t, search(tc.q...), tc.status, tc.reason)
		})
	}
}
