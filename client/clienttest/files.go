package clienttest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gabriel-vasile/mimetype"

	"github.com/cairn-dev/cairn"
)

// volumeRouteStatus is the status volume_not_ready has on the files routes.
func volumeRouteStatus() int {
	status, _ := cairn.ReasonVolumeNotReady.VolumeRouteStatus()
	return status
}

// browsed is the READY volume and the entry a files route asks about; on
// failure it has answered.
func (s *Server) browsed(w http.ResponseWriter, r *http.Request, p string) (*volume, *node, bool) {
	x, ok := s.workspace(w, r)
	if !ok {
		return nil, nil, false
	}
	v, ok := s.readyVolume(w, x, volumeRouteStatus())
	if !ok {
		return nil, nil, false
	}
	n, ok := v.nodes[path.Clean(p)]
	if !ok {
		fail(w, cairn.Errorf(cairn.ReasonPathNotFound, "'%s' does not exist", p))
		return nil, nil, false
	}
	return v, n, true
}

// listFiles answers one page of a directory, in byte order of names; a
// path that is not a directory lists as its one entry.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := cairn.FileListParams{Path: cmpOr(q.Get("path"), cairn.MountPath), After: q.Get("after")}
	if refused(w, cairn.ValidateListPath(p.Path)) {
		return
	}
	p.Limit, _ = strconv.Atoi(q.Get("limit"))
	s.mu.Lock()
	defer s.mu.Unlock()
	v, n, ok := s.browsed(w, r, p.Path)
	if !ok {
		return
	}
	dir := path.Clean(p.Path)
	if n.typ != cairn.FileTypeDir {
		reply(w, cairn.FileListing{Path: dir, Entries: []cairn.FileEntry{entryOf(path.Base(dir), n)}})
		return
	}
	all := children(v, dir)
	start, _ := slices.BinarySearchFunc(all, p.After, func(e cairn.FileEntry, after string) int {
		if e.Name <= after {
			return -1
		}
		return 1 // the first name past after
	})
	end := min(len(all), start+cmpOr(p.Limit, cairn.DefaultFileListLimit))
	out := cairn.FileListing{Path: dir, Entries: slices.Clone(all[start:end])}
	if end < len(all) {
		out.NextAfter = all[end-1].Name
	}
	reply(w, out)
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// children are the entries directly in dir, in byte order of names.
func children(v *volume, dir string) []cairn.FileEntry {
	var out []cairn.FileEntry
	for p, n := range v.nodes {
		if path.Dir(p) == dir && p != dir {
			out = append(out, entryOf(path.Base(p), n))
		}
	}
	slices.SortFunc(out, func(a, b cairn.FileEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func entryOf(name string, n *node) cairn.FileEntry {
	e := cairn.FileEntry{Name: name, Type: n.typ, Size: int64(len(n.data)), Mode: n.mode, MTime: n.mtime.UTC()}
	switch n.typ {
	case cairn.FileTypeSymlink:
		t := n.target
		e.LinkTarget, e.Size = &t, int64(len(t))
	case cairn.FileTypeDir:
		e.Size = 4096
	}
	return e
}

// readFile answers a byte range of a regular file, raw, its type sniffed
// from the bytes read.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := q.Get("path")
	if refused(w, cairn.ValidateVolumePath(p)) {
		return
	}
	offset, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	length, _ := strconv.ParseInt(q.Get("length"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, n, ok := s.browsed(w, r, p)
	if !ok {
		return
	}
	switch n.typ {
	case cairn.FileTypeDir:
		fail(w, cairn.Errorf(cairn.ReasonPathIsDirectory, "'%s' is a directory", p))
		return
	case cairn.FileTypeSymlink:
		fail(w, cairn.Errorf(cairn.ReasonPathIsSymlink, "'%s' is a symlink, which is never followed", p))
		return
	case cairn.FileTypeOther:
		fail(w, cairn.Errorf(cairn.ReasonPathNotRegular, "'%s' is not a regular file", p))
		return
	}
	start := min(offset, int64(len(n.data)))
	data := n.data[start:min(int64(len(n.data)), start+cmpOr(length, cairn.MaxFileReadBytes))]
	h := w.Header()
	h.Set("Content-Type", mimetype.Detect(data).String())
	h.Set(cairn.HeaderFileSize, strconv.Itoa(len(n.data)))
	h.Set(cairn.HeaderFileMTime, n.mtime.UTC().Format(time.RFC3339Nano))
	h.Set(cairn.HeaderFileOffset, strconv.FormatInt(offset, 10))
	_, _ = w.Write(data) // the client may have gone
}

// pack writes the tree under dir as an archive of format, names relative
// to dir; links stay links.
func pack(v *volume, dir, format string) []byte {
	var names []string
	for p := range v.nodes {
		if strings.HasPrefix(p, dir+"/") {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	var buf bytes.Buffer
	if format == cairn.ArchiveZip {
		zw := zip.NewWriter(&buf)
		for _, p := range names {
			name := strings.TrimPrefix(p, dir+"/")
			switch n := v.nodes[p]; n.typ {
			case cairn.FileTypeFile:
				f, _ := zw.Create(name) // a bytes.Buffer takes every write
				_, _ = f.Write(n.data)
			case cairn.FileTypeDir:
				_, _ = zw.Create(name + "/")
			}
		}
		_ = zw.Close()
		return buf.Bytes()
	}
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range names {
		n := v.nodes[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, dir+"/"), Mode: 0o644, ModTime: n.mtime}
		switch n.typ {
		case cairn.FileTypeFile:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(n.data))
		case cairn.FileTypeDir:
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case cairn.FileTypeSymlink:
			h.Typeflag, h.Linkname = tar.TypeSymlink, n.target
		default:
			continue
		}
		_ = tw.WriteHeader(h) // a bytes.Buffer takes every write
		_, _ = tw.Write(n.data)
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes()
}

// unpackInVolume writes an archive artifact's entries into a new directory
// of its workspace's volume.
func (s *Server) unpackInVolume(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, p, ok := s.artifactPath(w, r, "target_dir")
	if !ok {
		return
	}
	format := cairn.ArchiveFormatOf(a.MIMEType)
	if format == "" {
		fail(w, cairn.Errorf(cairn.ReasonArchiveInvalid, "artifact %s is '%s', not a tar.gz or zip archive", a.ID, a.MIMEType))
		return
	}
	v, ok := s.readyVolume(w, s.ws[a.WorkspaceID], volumeRouteStatus())
	dir := path.Clean(p)
	if !ok || !recorded(w, a) || !fresh(w, v, dir) {
		return
	}
	entries, err := readArchive(s.objects[a.ObjectKey], format)
	if refused(w, err) {
		return
	}
	s.put(v, dir, &node{typ: cairn.FileTypeDir, mode: "0755"})
	res := cairn.UnpackResult{TargetDir: dir}
	for _, e := range entries {
		s.put(v, path.Join(dir, e.name), e.node)
		res.Entries++
		res.Bytes += int64(len(e.node.data))
	}
	reply(w, res)
}

// fresh is the unpack sidecar's verdict on its target: a new directory in
// one that exists.
func fresh(w http.ResponseWriter, v *volume, dir string) bool {
	parent, ok := v.nodes[path.Dir(dir)]
	switch {
	case !ok || parent.typ != cairn.FileTypeDir:
		fail(w, cairn.Errorf(cairn.ReasonTargetDirMissing, "destination directory '%s' does not exist", path.Dir(dir)))
	case v.nodes[dir] != nil:
		fail(w, cairn.Errorf(cairn.ReasonTargetExists, "'%s' already exists", dir))
	default:
		return true
	}
	return false
}

type archived struct {
	name string
	node *node
}

func readArchive(b []byte, format string) ([]archived, error) {
	invalid := cairn.Errorf(cairn.ReasonArchiveInvalid, "the archive cannot be read")
	if format == cairn.ArchiveZip {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, invalid
		}
		var out []archived
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				return nil, invalid
			}
			data, err := io.ReadAll(rc)
			_ = rc.Close() // read to the end already
			if err != nil {
				return nil, invalid
			}
			n := &node{typ: cairn.FileTypeFile, data: data, mode: "0644"}
			if f.FileInfo().IsDir() {
				n = &node{typ: cairn.FileTypeDir, mode: "0755"}
			}
			out = append(out, archived{strings.TrimSuffix(f.Name, "/"), n})
		}
		return out, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, invalid
	}
	return readTar(tar.NewReader(gz), invalid)
}

func readTar(tr *tar.Reader, invalid error) ([]archived, error) {
	var out []archived
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, invalid
		}
		n := &node{typ: cairn.FileTypeFile, mode: "0644"}
		switch h.Typeflag {
		case tar.TypeDir:
			n.typ, n.mode = cairn.FileTypeDir, "0755"
		case tar.TypeSymlink:
			n.typ, n.target, n.mode = cairn.FileTypeSymlink, h.Linkname, "0777"
		default:
			if n.data, err = io.ReadAll(tr); err != nil {
				return nil, invalid
			}
		}
		out = append(out, archived{strings.TrimSuffix(h.Name, "/"), n})
	}
}
