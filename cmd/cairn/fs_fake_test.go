package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// fakeFiles answers the files routes of one workspace from a volume in
// memory, with the JSON and headers the REST API documents (API of
// client/files.go): listings in byte order of names from after, a path
// that is no directory as its one entry, reads of at most 1 MiB, unpack
// and artifact-from-volume.
type fakeFiles struct {
	url string
	ws  string

	mu       sync.Mutex
	dirs     map[string][]cairn.FileEntry // by directory path, sorted by name
	content  map[string][]byte
	pageMax  int // the most entries a page holds, whatever the limit; 0: the limit
	lists    []cairn.FileListParams
	stats    []string
	reads    []cairn.FileReadParams
	bodies   []map[string]any // artifact-from-volume and unpack requests
	unpacked map[string]bool  // target directories that exist
	writeMax int64            // GET /v1/info's file_write_max_bytes
	writes   []cairn.FileWriteParams
}

const fakeWorkspaceID = "0f0e0d0c-0b0a-4000-8000-000000000001"

func newFakeFiles(t *testing.T) *fakeFiles {
	t.Helper()
	f := &fakeFiles{ws: fakeWorkspaceID, dirs: map[string][]cairn.FileEntry{cairn.MountPath: nil},
		content: map[string][]byte{}, unpacked: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

var fakeTime = time.Date(2026, 8, 14, 15, 27, 0, 0, time.UTC)

// add puts an entry at p (its parent must have been added), a directory
// listable in turn, a file with content.
func (f *fakeFiles) add(p, typ, mode string, content []byte) *cairn.FileEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := cairn.FileEntry{Name: path.Base(p), Type: typ, Mode: mode, MTime: fakeTime, Size: int64(len(content))}
	if typ == cairn.FileTypeDir {
		e.Size = 4096
		f.dirs[p] = nil
	}
	if typ == cairn.FileTypeFile {
		f.content[p] = content
	}
	parent := path.Dir(p)
	i, _ := slices.BinarySearchFunc(f.dirs[parent], e.Name, func(e cairn.FileEntry, n string) int { return strings.Compare(e.Name, n) })
	f.dirs[parent] = slices.Insert(f.dirs[parent], i, e)
	return &f.dirs[parent][i]
}

func (f *fakeFiles) link(p, target string) {
	e := f.add(p, cairn.FileTypeSymlink, "0777", []byte(target))
	e.LinkTarget = &target
}

func (f *fakeFiles) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := "/v1/workspaces/" + f.ws
	switch {
	case r.URL.Path == "/v1/info":
		answer(w, http.StatusOK, map[string]any{"info": cairn.Info{Bounds: cairn.InfoBounds{FileWriteMaxBytes: f.writeMax}}})
	case r.URL.Path == ws+"/files/content" && r.Method == http.MethodPut:
		f.write(w, r)
	case r.URL.Path == ws+"/files":
		f.list(w, r)
	case r.URL.Path == ws+"/files/stat":
		f.stat(w, r)
	case r.URL.Path == ws+"/files/content":
		f.read(w, r)
	case r.URL.Path == ws+"/artifact-from-volume":
		body := f.body(r)
		answer(w, http.StatusOK, map[string]any{"artifact": cairn.Artifact{ID: "01J0000000000000000000SAVE",
			WorkspaceID: f.ws, Name: body["name"].(string), State: cairn.ArtifactRecorded, MIMEType: cairn.MIMEGzip}})
	case strings.HasSuffix(r.URL.Path, "/unpack-in-volume"):
		target, _ := f.body(r)["target_dir"].(string)
		if f.unpacked[target] {
			refuse(w, http.StatusConflict, cairn.ReasonTargetExists, "'"+target+"' exists")
			return
		}
		f.unpacked[target] = true
		answer(w, http.StatusOK, cairn.UnpackResult{TargetDir: target, Entries: 1204, Bytes: 3 << 20})
	case r.URL.Path == "/v1/workspaces":
		answer(w, http.StatusOK, map[string]any{"workspaces": []cairn.Workspace{{ID: f.ws, Name: r.URL.Query().Get("name")}}})
	default:
		refuse(w, http.StatusNotFound, "route_not_found", r.URL.Path)
	}
}

func (f *fakeFiles) body(r *http.Request) map[string]any {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		panic(err) // the client sent no JSON: the test's failure shows
	}
	f.bodies = append(f.bodies, body)
	return body
}

func (f *fakeFiles) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	p := cairn.FileListParams{Path: q.Get("path"), Limit: limit, After: q.Get("after")}
	f.lists = append(f.lists, p)
	entries, ok := f.dirs[p.Path]
	if !ok {
		e, found := f.entry(p.Path)
		if !found {
			refuse(w, http.StatusNotFound, cairn.ReasonPathNotFound, "no '"+p.Path+"'")
			return
		}
		answer(w, http.StatusOK, cairn.FileListing{Path: p.Path, Entries: []cairn.FileEntry{e}})
		return
	}
	limit = cmp.Or(limit, cairn.DefaultFileListLimit)
	if f.pageMax > 0 {
		limit = min(limit, f.pageMax)
	}
	i, _ := slices.BinarySearchFunc(entries, p.After, func(e cairn.FileEntry, n string) int { return strings.Compare(e.Name, n) })
	for i < len(entries) && entries[i].Name <= p.After {
		i++
	}
	page := cairn.FileListing{Path: p.Path, Entries: entries[i:min(len(entries), i+limit)]}
	if i+limit < len(entries) {
		page.NextAfter = page.Entries[len(page.Entries)-1].Name
	}
	if page.Entries == nil {
		page.Entries = []cairn.FileEntry{}
	}
	answer(w, http.StatusOK, page)
}

// stat answers p's own entry; the mount root is a directory.
func (f *fakeFiles) stat(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("path")
	f.stats = append(f.stats, p)
	e, found := f.entry(p)
	if p == cairn.MountPath {
		e, found = cairn.FileEntry{Name: "ws", Type: cairn.FileTypeDir, Mode: "0777", MTime: fakeTime, Size: 4096}, true
	}
	if !found {
		refuse(w, http.StatusNotFound, cairn.ReasonPathNotFound, "the workspace volume has no '"+p+"'")
		return
	}
	answer(w, http.StatusOK, cairn.FileTreeEntry{Path: p, FileEntry: e})
}

// entry is the entry of p in its parent directory.
func (f *fakeFiles) entry(p string) (cairn.FileEntry, bool) {
	for _, e := range f.dirs[path.Dir(p)] {
		if e.Name == path.Base(p) {
			return e, true
		}
	}
	return cairn.FileEntry{}, false
}

func (f *fakeFiles) read(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	off, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	n, _ := strconv.ParseInt(q.Get("length"), 10, 64)
	p := cairn.FileReadParams{Path: q.Get("path"), Offset: off, Length: n}
	f.reads = append(f.reads, p)
	data, ok := f.content[p.Path]
	_, isDir := f.dirs[p.Path]
	switch {
	case isDir:
		refuse(w, http.StatusBadRequest, cairn.ReasonPathIsDirectory, "'"+p.Path+"' is a directory")
		return
	case !ok:
		refuse(w, http.StatusNotFound, cairn.ReasonPathNotFound, "no '"+p.Path+"'")
		return
	case n > cairn.MaxFileReadBytes:
		refuse(w, http.StatusBadRequest, cairn.ReasonRangeTooLarge, "too long")
		return
	}
	n = cmp.Or(n, int64(cairn.MaxFileReadBytes))
	start := min(off, int64(len(data)))
	w.Header().Set(cairn.HeaderFileSize, strconv.Itoa(len(data)))
	w.Header().Set(cairn.HeaderFileMTime, fakeTime.Format(time.RFC3339Nano))
	w.Header().Set(cairn.HeaderFileOffset, strconv.FormatInt(off, 10))
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data[start:min(int64(len(data)), start+n)])
}

// write records a write and answers it made, without keeping the content.
func (f *fakeFiles) write(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		panic(err) // the client sent no whole body: the test's failure shows
	}
	p := cairn.FileWriteParams{Path: r.URL.Query().Get("path"), Data: data, Mode: r.URL.Query().Get("mode"),
		IfMatch: r.Header.Get("If-Match"), CreateOnly: r.Header.Get("If-None-Match") == "*"}
	f.writes = append(f.writes, p)
	answer(w, http.StatusOK, cairn.FileChange{Path: p.Path, Entry: &cairn.FileEntry{Name: path.Base(p.Path),
		Type: cairn.FileTypeFile, Size: int64(len(data)), Mode: "0666", MTime: fakeTime, ETag: "etag-1"}})
}

func (f *fakeFiles) written() []cairn.FileWriteParams {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.writes)
}

func (f *fakeFiles) statted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.stats)
}

func (f *fakeFiles) listed() []cairn.FileListParams {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lists)
}

func (f *fakeFiles) readsSeen() []cairn.FileReadParams {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reads)
}

func (f *fakeFiles) lastBody() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		return nil
	}
	return f.bodies[len(f.bodies)-1]
}

func answer(w http.ResponseWriter, status int, payload any) {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil {
		panic(err)
	}
	env["success"], env["request_id"] = true, "req-fake"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(env)
}

func refuse(w http.ResponseWriter, status int, reason cairn.Reason, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"success": false, "request_id": "req-fake",
		"error": map[string]string{"message": http.StatusText(status), "detail": detail, "reason": string(reason)}})
}

// fsRun is one in-process run of the CLI against the fake: what it wrote,
// what main would print on stderr, and the exit code main would exit with.
type fsRun struct {
	stdout, stderr string
	code           int
}

func (f *fakeFiles) cli(t *testing.T, args ...string) fsRun {
	t.Helper()
	var out bytes.Buffer
	r := f.cliTo(t, &out, args...)
	r.stdout = out.String()
	return r
}

// cliTo runs the CLI with its stdout on out.
func (f *fakeFiles) cliTo(t *testing.T, out io.Writer, args ...string) fsRun {
	t.Helper()
	return runCLIWith(t, nil, out, append(args, "--server", f.url)...)
}

// cliIn runs the CLI with stdin reading in.
func (f *fakeFiles) cliIn(t *testing.T, in io.Reader, args ...string) fsRun {
	t.Helper()
	var out bytes.Buffer
	r := runCLIWith(t, in, &out, append(args, "--server", f.url)...)
	r.stdout = out.String()
	return r
}

// runCLIWith runs the CLI in process, stdin from in (when not nil) and
// stdout on out, and reports its error as main does.
func runCLIWith(t *testing.T, in io.Reader, out io.Writer, args ...string) fsRun {
	t.Helper()
	var stderr bytes.Buffer
	cmd := newRootCommand()
	if in != nil {
		cmd.SetIn(in)
	}
	cmd.SetOut(out)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	r := fsRun{}
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		r.code = report(&stderr, err)
	}
	r.stderr = stderr.String()
	return r
}

// ok runs the CLI and requires exit 0.
func (f *fakeFiles) ok(t *testing.T, args ...string) fsRun {
	t.Helper()
	r := f.cli(t, args...)
	require.Equal(t, 0, r.code, "cairn %v: %s", args, r.stderr)
	return r
}

// fails runs the CLI and requires the exit code and its message on stderr.
func (f *fakeFiles) fails(t *testing.T, code int, args ...string) fsRun {
	t.Helper()
	r := f.cli(t, args...)
	require.Equal(t, code, r.code, "cairn %v: stdout %q stderr %q", args, r.stdout, r.stderr)
	require.Contains(t, r.stderr, "cairn: ")
	return r
}
