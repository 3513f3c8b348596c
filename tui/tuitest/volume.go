package tuitest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
)

// vnode is one entry of a fake workspace volume. Directories above a file
// exist without a node of their own; the mount root always exists.
type vnode struct {
	typ    string // a cairn.FileType*
	data   []byte
	target string // a symlink's
	mode   string
	mtime  time.Time
}

// VolumeCall is one call the fake answered on a workspace volume, with the
// paths exactly as the TUI sent them.
type VolumeCall struct {
	Method      string // ListFiles, ReadFile, ArtifactFromVolume, LoadIntoVolume, UpdateFromVolume, UnpackArtifact
	WorkspaceID string
	ArtifactID  string
	Path        string
	After       string // ListFiles
	Limit       int    // ListFiles
	Length      int64  // ReadFile
	Name        string // ArtifactFromVolume
	Format      string // ArtifactFromVolume
}

func (b *Backend) record(c VolumeCall) {
	b.callsMu.Lock()
	b.calls = append(b.calls, c)
	b.callsMu.Unlock()
}

// VolumeCalls is every volume call so far, oldest first.
func (b *Backend) VolumeCalls() []VolumeCall {
	b.callsMu.Lock()
	defer b.callsMu.Unlock()
	return slices.Clone(b.calls)
}

// VolumeCallsOf is the volume calls of one method.
func (b *Backend) VolumeCallsOf(method string) []VolumeCall {
	var out []VolumeCall
	for _, c := range b.VolumeCalls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (w *World) volume(wsID string) map[string]*vnode {
	v := w.volumes[wsID]
	if v == nil {
		v = map[string]*vnode{}
		w.volumes[wsID] = v
	}
	return v
}

func (w *World) put(wsID, p string, n *vnode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n.mtime.IsZero() {
		n.mtime = w.clock.Now()
	}
	w.volume(wsID)[path.Clean(p)] = n
}

// PutVolumeFile writes a file of a workspace volume (mode 0644); its
// directories appear with it.
func (w *World) PutVolumeFile(wsID, p string, b []byte) {
	w.put(wsID, p, &vnode{typ: cairn.FileTypeFile, data: append([]byte(nil), b...), mode: "0644"})
}

// PutVolumeDir makes a directory of a workspace volume (mode 0755).
func (w *World) PutVolumeDir(wsID, p string) {
	w.put(wsID, p, &vnode{typ: cairn.FileTypeDir, mode: "0755"})
}

// PutVolumeLink makes a symlink of a workspace volume pointing at target.
func (w *World) PutVolumeLink(wsID, p, target string) {
	w.put(wsID, p, &vnode{typ: cairn.FileTypeSymlink, target: target, mode: "0777"})
}

// PutVolumeOther makes a FIFO (or socket, or device) of a workspace volume.
func (w *World) PutVolumeOther(wsID, p string) {
	w.put(wsID, p, &vnode{typ: cairn.FileTypeOther, mode: "0644"})
}

// VolumeFile reads a file of a workspace volume.
func (w *World) VolumeFile(wsID, p string) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, ok := w.volumes[wsID][path.Clean(p)]
	if !ok || n.typ != cairn.FileTypeFile {
		return nil, false
	}
	return append([]byte(nil), n.data...), true
}

// lookup finds the entry at a cleaned path: a node, or a directory implied
// by the paths below it. The caller holds the lock.
func (w *World) lookup(wsID, p string) (*vnode, bool) {
	if p == cairn.MountPath {
		return &vnode{typ: cairn.FileTypeDir, mode: "0777", mtime: w.clock.Now()}, true
	}
	v := w.volumes[wsID]
	if n, ok := v[p]; ok {
		return n, true
	}
	var newest time.Time
	found := false
	for q, n := range v {
		if strings.HasPrefix(q, p+"/") {
			found = true
			if n.mtime.After(newest) {
				newest = n.mtime
			}
		}
	}
	if !found {
		return nil, false
	}
	return &vnode{typ: cairn.FileTypeDir, mode: "0755", mtime: newest}, true
}

func pathErr(reason cairn.Reason, status int, p string) error {
	return &cairn.Error{Reason: reason, Status: status, Detail: "path '" + p + "'"}
}

// children are the entries directly in dir, in byte order of names. The
// caller holds the lock.
func (w *World) children(wsID, dir string) []cairn.FileEntry {
	names := map[string]bool{}
	for q := range w.volumes[wsID] {
		if rest, ok := strings.CutPrefix(q, dir+"/"); ok {
			name, _, _ := strings.Cut(rest, "/")
			names[name] = true
		}
	}
	out := make([]cairn.FileEntry, 0, len(names))
	for name := range names {
		n, _ := w.lookup(wsID, dir+"/"+name)
		out = append(out, entryOf(name, n))
	}
	slices.SortFunc(out, func(a, b cairn.FileEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func entryOf(name string, n *vnode) cairn.FileEntry {
	e := cairn.FileEntry{Name: name, Type: n.typ, Size: int64(len(n.data)), Mode: n.mode, MTime: n.mtime}
	switch n.typ {
	case cairn.FileTypeSymlink:
		t := n.target
		e.LinkTarget, e.Size = &t, int64(len(t))
	case cairn.FileTypeDir:
		e.Size = 4096
	}
	return e
}

// readyVolume refuses a workspace that is gone or has no READY volume.
func (w *World) readyVolume(wsID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.ws[wsID]
	switch {
	case !ok:
		return notFound("workspace")
	case ws.VolumeState != cairn.VolumeReady:
		return &cairn.Error{Reason: cairn.ReasonVolumeNotReady, Status: 409}
	}
	return nil
}

// ListFiles lists a page of a directory as the server does: byte order,
// limit (default 200, at most 1000), after; a path that is not a
// directory lists as its one entry.
func (w *World) ListFiles(_ context.Context, wsID string, p cairn.FileListParams) (*cairn.FileListing, error) {
	if err := cairn.ValidateListPath(p.Path); err != nil {
		return nil, err
	}
	limit := cmpOr(p.Limit, cairn.DefaultFileListLimit)
	if limit < 1 || limit > cairn.MaxFileListLimit {
		return nil, &cairn.Error{Reason: cairn.ReasonInvalidParameters, Status: 400}
	}
	if err := w.readyVolume(wsID); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c := path.Clean(p.Path)
	n, ok := w.lookup(wsID, c)
	switch {
	case !ok:
		return nil, pathErr(cairn.ReasonPathNotFound, 404, p.Path)
	case n.typ == cairn.FileTypeSymlink:
		return nil, pathErr(cairn.ReasonPathIsSymlink, 400, p.Path)
	case n.typ != cairn.FileTypeDir:
		return &cairn.FileListing{Path: c, Entries: []cairn.FileEntry{entryOf(path.Base(c), n)}}, nil
	}
	all := w.children(wsID, c)
	start, _ := slices.BinarySearchFunc(all, p.After, func(e cairn.FileEntry, after string) int {
		if e.Name <= after {
			return -1
		}
		return 1 // the first name past after
	})
	page := all[start:min(len(all), start+limit)]
	out := &cairn.FileListing{Path: c, Entries: slices.Clone(page)}
	if start+limit < len(all) {
		out.NextAfter = page[len(page)-1].Name
	}
	return out, nil
}

func cmpOr(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// ReadFile reads a byte range of a regular file, sniffed as
// http.DetectContentType does.
func (w *World) ReadFile(_ context.Context, wsID string, p cairn.FileReadParams) (*cairn.FileContent, error) {
	if err := cairn.ValidateVolumePath(p.Path); err != nil {
		return nil, err
	}
	length := p.Length
	if length == 0 {
		length = cairn.MaxFileReadBytes
	}
	if length > cairn.MaxFileReadBytes {
		return nil, &cairn.Error{Reason: cairn.ReasonRangeTooLarge, Status: 400}
	}
	if err := w.readyVolume(wsID); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n, ok := w.lookup(wsID, path.Clean(p.Path))
	switch {
	case !ok:
		return nil, pathErr(cairn.ReasonPathNotFound, 404, p.Path)
	case n.typ == cairn.FileTypeDir:
		return nil, pathErr(cairn.ReasonPathIsDirectory, 400, p.Path)
	case n.typ == cairn.FileTypeSymlink:
		return nil, pathErr(cairn.ReasonPathIsSymlink, 400, p.Path)
	case n.typ != cairn.FileTypeFile:
		return nil, pathErr(cairn.ReasonPathNotRegular, 400, p.Path)
	}
	start := min(p.Offset, int64(len(n.data)))
	data := append([]byte(nil), n.data[start:min(int64(len(n.data)), start+length)]...)
	return &cairn.FileContent{Path: path.Clean(p.Path), Offset: p.Offset, Data: data, Size: int64(len(n.data)), MTime: n.mtime,
		ContentType: http.DetectContentType(data)}, nil
}

// fromVolume is what artifact-from-volume stores: a file's bytes, or a
// directory packed in format, with its MIME type.
func (w *World) fromVolume(wsID, p, format string) ([]byte, string, error) {
	if err := cairn.ValidateVolumePath(p); err != nil {
		return nil, "", err
	}
	if err := w.readyVolume(wsID); err != nil {
		return nil, "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c := path.Clean(p)
	n, ok := w.lookup(wsID, c)
	switch {
	case !ok:
		return nil, "", &cairn.Error{Reason: cairn.ReasonSourceNotFound, Status: 400}
	case format == "" && n.typ == cairn.FileTypeDir:
		return nil, "", &cairn.Error{Reason: cairn.ReasonSourceIsDirectory, Status: 400}
	case format != "" && n.typ != cairn.FileTypeDir:
		return nil, "", &cairn.Error{Reason: cairn.ReasonSourceNotDir, Status: 400}
	case format == "" && n.typ != cairn.FileTypeFile:
		return nil, "", &cairn.Error{Reason: cairn.ReasonSourceNotRegular, Status: 400}
	case format == "":
		return append([]byte(nil), n.data...), "text/plain; charset=utf-8", nil
	}
	return w.pack(wsID, c, format)
}

// pack writes the tree under dir as a real archive; links stay links.
// The caller holds the lock.
func (w *World) pack(wsID, dir, format string) ([]byte, string, error) {
	var names []string
	for q := range w.volumes[wsID] {
		if strings.HasPrefix(q, dir+"/") {
			names = append(names, q)
		}
	}
	slices.Sort(names)
	var buf bytes.Buffer
	if format == cairn.ArchiveZip {
		zw := zip.NewWriter(&buf)
		for _, q := range names {
			if n := w.volumes[wsID][q]; n.typ == cairn.FileTypeFile {
				f, _ := zw.Create(strings.TrimPrefix(q, dir+"/"))
				_, _ = f.Write(n.data)
			}
		}
		_ = zw.Close()
		return buf.Bytes(), cairn.MIMEZip, nil
	}
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, q := range names {
		n := w.volumes[wsID][q]
		h := &tar.Header{Name: strings.TrimPrefix(q, dir+"/"), Mode: 0o644, ModTime: n.mtime}
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
		_ = tw.WriteHeader(h)
		_, _ = tw.Write(n.data)
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes(), cairn.MIMEGzip, nil
}

// unpack writes an archive's entries under the new directory dir.
func (w *World) unpack(wsID, dir string, archive []byte, mime string) (*cairn.UnpackResult, error) {
	entries, err := readArchive(archive, mime)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.volume(wsID)
	res := &cairn.UnpackResult{TargetDir: dir}
	v[dir] = &vnode{typ: cairn.FileTypeDir, mode: "0755", mtime: w.clock.Now()}
	for _, e := range entries {
		e.n.mtime = w.clock.Now()
		v[path.Join(dir, e.name)] = e.n
		res.Entries++
		res.Bytes += int64(len(e.n.data))
	}
	return res, nil
}

type archived struct {
	name string
	n    *vnode
}

func readArchive(b []byte, mime string) ([]archived, error) {
	invalid := &cairn.Error{Reason: cairn.ReasonArchiveInvalid, Status: 400}
	var out []archived
	if cairn.ArchiveFormatOf(mime) == cairn.ArchiveZip {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, invalid
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				return nil, invalid
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			out = append(out, archived{f.Name, &vnode{typ: cairn.FileTypeFile, data: data, mode: "0644"}})
		}
		return out, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, invalid
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, invalid
		}
		n := &vnode{typ: cairn.FileTypeFile, mode: "0644"}
		switch h.Typeflag {
		case tar.TypeDir:
			n.typ, n.mode = cairn.FileTypeDir, "0755"
		case tar.TypeSymlink:
			n.typ, n.target, n.mode = cairn.FileTypeSymlink, h.Linkname, "0777"
		default:
			n.data, _ = io.ReadAll(tr)
		}
		out = append(out, archived{strings.TrimSuffix(h.Name, "/"), n})
	}
}

// target checks a load or unpack target: its directory must exist; an
// unpack's must not exist itself. The caller holds no lock.
func (w *World) target(wsID, p string, fresh bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := path.Clean(p)
	n, exists := w.lookup(wsID, c)
	parent, ok := w.lookup(wsID, path.Dir(c))
	switch {
	case !ok || parent.typ != cairn.FileTypeDir:
		return &cairn.Error{Reason: cairn.ReasonTargetDirMissing, Status: 400}
	case fresh && exists:
		return &cairn.Error{Reason: cairn.ReasonTargetExists, Status: 409}
	case exists && n.typ == cairn.FileTypeDir:
		return &cairn.Error{Reason: cairn.ReasonTargetIsDirectory, Status: 400}
	}
	return nil
}

func (b *Backend) ListFiles(ctx context.Context, wsID string, p cairn.FileListParams) (*cairn.FileListing, error) {
	b.record(VolumeCall{Method: "ListFiles", WorkspaceID: wsID, Path: p.Path, After: p.After, Limit: p.Limit})
	if b.ListFilesFunc != nil {
		return b.ListFilesFunc(ctx, wsID, p)
	}
	return b.World.ListFiles(ctx, wsID, p)
}

func (b *Backend) ReadFile(ctx context.Context, wsID string, p cairn.FileReadParams) (*cairn.FileContent, error) {
	b.record(VolumeCall{Method: "ReadFile", WorkspaceID: wsID, Path: p.Path, Length: p.Length})
	if b.ReadFileFunc != nil {
		return b.ReadFileFunc(ctx, wsID, p)
	}
	return b.World.ReadFile(ctx, wsID, p)
}

func (b *Backend) UnpackArtifact(ctx context.Context, id, dir string) (*cairn.UnpackResult, error) {
	b.record(VolumeCall{Method: "UnpackArtifact", ArtifactID: id, Path: dir})
	if b.UnpackArtifactFunc != nil {
		return b.UnpackArtifactFunc(ctx, id, dir)
	}
	if err := cairn.ValidateVolumePath(dir); err != nil {
		return nil, err
	}
	a := b.World.artifact(id)
	if a == nil {
		return nil, notFound("artifact")
	}
	if err := b.World.readyVolume(a.WorkspaceID); err != nil {
		return nil, err
	}
	if err := b.World.target(a.WorkspaceID, dir, true); err != nil {
		return nil, err
	}
	return b.World.unpack(a.WorkspaceID, path.Clean(dir), b.World.Content(id), a.MIMEType)
}

func (b *Backend) ArtifactFromVolume(ctx context.Context, wsID string, c cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
	b.record(VolumeCall{Method: "ArtifactFromVolume", WorkspaceID: wsID, Path: c.SourcePath, Name: c.Name, Format: c.Format})
	if b.ArtifactFromVolumeFunc != nil {
		return b.ArtifactFromVolumeFunc(ctx, wsID, c)
	}
	data, mime, err := b.World.fromVolume(wsID, c.SourcePath, c.Format)
	if err != nil {
		return nil, err
	}
	desc := ""
	if c.Description != nil {
		desc = *c.Description
	}
	a := b.World.AddArtifact(wsID, c.Name, cairn.ArtifactRecorded, int64(len(data)), desc)
	b.World.SetContent(a.ID, data)
	if c.Format != "" {
		b.World.UpdateArtifact(a.ID, func(x *cairn.Artifact) { x.MIMEType = mime })
	}
	return b.World.artifact(a.ID), nil
}

func (b *Backend) UpdateFromVolume(ctx context.Context, id, p string) (*cairn.Artifact, error) {
	b.record(VolumeCall{Method: "UpdateFromVolume", ArtifactID: id, Path: p})
	if b.UpdateFromVolumeFunc != nil {
		return b.UpdateFromVolumeFunc(ctx, id, p)
	}
	a := b.World.artifact(id)
	if a == nil {
		return nil, notFound("artifact")
	}
	data, _, err := b.World.fromVolume(a.WorkspaceID, p, "")
	if err != nil {
		return nil, err
	}
	b.World.UpdateArtifact(id, func(a *cairn.Artifact) { a.State = cairn.ArtifactRecorded })
	b.World.SetContent(id, data)
	return b.World.artifact(id), nil
}

func (b *Backend) LoadIntoVolume(ctx context.Context, id, p string) error {
	b.record(VolumeCall{Method: "LoadIntoVolume", ArtifactID: id, Path: p})
	if b.LoadIntoVolumeFunc != nil {
		return b.LoadIntoVolumeFunc(ctx, id, p)
	}
	if err := cairn.ValidateVolumePath(p); err != nil {
		return err
	}
	a := b.World.artifact(id)
	if a == nil {
		return notFound("artifact")
	}
	if a.State != cairn.ArtifactRecorded {
		return &cairn.Error{Reason: cairn.ReasonObjectMissing, Status: 409}
	}
	if err := b.World.readyVolume(a.WorkspaceID); err != nil {
		return err
	}
	if err := b.World.target(a.WorkspaceID, p, false); err != nil {
		return err
	}
	b.World.PutVolumeFile(a.WorkspaceID, p, b.World.Content(id))
	return nil
}

// String renders a call for failure messages.
func (c VolumeCall) String() string {
	return fmt.Sprintf("%s(%s%s %q)", c.Method, c.WorkspaceID, c.ArtifactID, c.Path)
}
