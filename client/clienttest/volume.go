package clienttest

import (
	"net/http"
	"path"
	"time"

	"github.com/cairn-dev/cairn"
)

// volume is a workspace volume: its entries by cleaned path. The mount
// root is always there; a file's directories appear with it, as mkdir -p
// makes them.
type volume struct {
	nodes map[string]*node
}

// node is one entry of a volume.
type node struct {
	typ    string // a cairn.FileType*
	data   []byte
	target string // a symlink's
	mode   string
	mtime  time.Time
}

// newVolume is an empty volume; the caller holds mu.
func (s *Server) newVolume() *volume {
	return &volume{nodes: map[string]*node{cairn.MountPath: {typ: cairn.FileTypeDir, mode: "0777", mtime: s.clock()}}}
}

// put writes n at p and the directories above it; the caller holds mu.
func (s *Server) put(v *volume, p string, n *node) {
	now := s.clock()
	n.mtime = now
	p = path.Clean(p)
	v.nodes[p] = n
	for d := path.Dir(p); d != cairn.MountPath && d != "/" && d != "."; d = path.Dir(d) {
		if parent, ok := v.nodes[d]; !ok || parent.typ != cairn.FileTypeDir {
			v.nodes[d] = &node{typ: cairn.FileTypeDir, mode: "0755", mtime: now}
		}
	}
}

// putNode writes n at p of the workspace's volume, as a shell or a tool
// run would.
func (s *Server) putNode(wsID, p string, n *node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.volumes[wsID]; v != nil {
		s.put(v, p, n)
	}
}

// PutVolumeFile writes a file (mode 0644) of the workspace's volume.
func (s *Server) PutVolumeFile(wsID, p string, content []byte) {
	s.putNode(wsID, p, &node{typ: cairn.FileTypeFile, data: append([]byte(nil), content...), mode: "0644"})
}

// PutVolumeDir makes a directory (mode 0755) of the workspace's volume.
func (s *Server) PutVolumeDir(wsID, p string) {
	s.putNode(wsID, p, &node{typ: cairn.FileTypeDir, mode: "0755"})
}

// PutVolumeLink makes a symlink of the workspace's volume pointing at
// target.
func (s *Server) PutVolumeLink(wsID, p, target string) {
	s.putNode(wsID, p, &node{typ: cairn.FileTypeSymlink, target: target, mode: "0777"})
}

// PutVolumeOther makes a FIFO (or a socket, or a device) of the
// workspace's volume.
func (s *Server) PutVolumeOther(wsID, p string) {
	s.putNode(wsID, p, &node{typ: cairn.FileTypeOther, mode: "0644"})
}

// VolumeFile reads a file of the workspace's volume.
func (s *Server) VolumeFile(wsID, p string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[wsID]
	if v == nil {
		return nil, false
	}
	n, ok := v.nodes[path.Clean(p)]
	if !ok || n.typ != cairn.FileTypeFile {
		return nil, false
	}
	return append([]byte(nil), n.data...), true
}

// readyVolume is the volume of a workspace whose volume is READY; on
// failure it has answered with status (0: the reason's).
func (s *Server) readyVolume(w http.ResponseWriter, x *cairn.Workspace, status int) (*volume, bool) {
	if x.VolumeState != cairn.VolumeReady {
		fail(w, &cairn.Error{Reason: cairn.ReasonVolumeNotReady, Status: status,
			Detail: "workspace " + x.ID + " has no runtime volume (volume state '" + string(x.VolumeState) + "')"})
		return nil, false
	}
	return s.volumes[x.ID], true
}

// source is the put sidecar's verdict on a file to save.
func source(w http.ResponseWriter, v *volume, p string) ([]byte, bool) {
	n, ok := v.nodes[path.Clean(p)]
	switch {
	case !ok:
		fail(w, cairn.Errorf(cairn.ReasonSourceNotFound, "source file '%s' does not exist", p))
	case n.typ == cairn.FileTypeDir:
		fail(w, cairn.Errorf(cairn.ReasonSourceIsDirectory, "source path '%s' is a directory, not a single uploadable file", p))
	case n.typ != cairn.FileTypeFile:
		fail(w, cairn.Errorf(cairn.ReasonSourceNotRegular, "source path '%s' is not a regular file", p))
	default:
		return n.data, true
	}
	return nil, false
}

func (s *Server) artifactFromVolume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SourcePath  string  `json:"source_path"`
		Name        string  `json:"name"`
		Description *string `json:"description"`
		Format      string  `json:"format"`
	}
	if !decode(w, r, &body) {
		return
	}
	c := cairn.VolumeArtifactCreate{SourcePath: body.SourcePath, Name: body.Name, Description: body.Description, Format: body.Format}
	s.newArtifact(w, r, c.Validate(), c.Name, func(x *cairn.Workspace) {
		validPath := cairn.ValidateVolumePath
		if c.Format != "" {
			validPath = cairn.ValidateListPath // the whole volume packs too
		}
		if refused(w, validPath(c.SourcePath)) {
			return
		}
		v, ok := s.readyVolume(w, x, 0)
		if !ok {
			return
		}
		if content, ok := s.saved(w, v, c); ok {
			a := s.addArtifact(x.ID, c.Name, "", content, func(a *cairn.Artifact) {
				a.Description = c.Description
				if c.Format != "" {
					a.MIMEType = cairn.ArchiveMIME(c.Format)
				}
			})
			reply(w, map[string]any{"artifact": a})
		}
	})
}

// saved is what a save from the volume stores: the file, or the directory
// packed in the format asked for.
func (s *Server) saved(w http.ResponseWriter, v *volume, c cairn.VolumeArtifactCreate) ([]byte, bool) {
	if c.Format == "" {
		return source(w, v, c.SourcePath)
	}
	dir := path.Clean(c.SourcePath)
	switch n, ok := v.nodes[dir]; {
	case !ok:
		fail(w, cairn.Errorf(cairn.ReasonSourceNotFound, "source directory '%s' does not exist", c.SourcePath))
	case n.typ != cairn.FileTypeDir:
		fail(w, cairn.Errorf(cairn.ReasonSourceNotDir, "source path '%s' is not a directory to pack", c.SourcePath))
	default:
		return pack(v, dir, c.Format), true
	}
	return nil, false
}

// artifactPath reads the volume path a call on artifact {id} names in its
// body's field and runs what every such call checks first, in order: the
// path is given, the artifact exists, the path is a volume path. On failure
// it has answered. The caller holds mu.
func (s *Server) artifactPath(w http.ResponseWriter, r *http.Request, field string) (*cairn.Artifact, string, bool) {
	var body map[string]string
	if !decode(w, r, &body) || refused(w, cairn.RequireParam(field, body[field])) {
		return nil, "", false
	}
	a, ok := s.artifact(w, r)
	if !ok || refused(w, cairn.ValidateVolumePath(body[field])) {
		return nil, "", false
	}
	return a, body[field], true
}

// recorded refuses an artifact whose object is not servable; on failure it
// has answered.
func recorded(w http.ResponseWriter, a *cairn.Artifact) bool {
	if a.State != cairn.ArtifactRecorded {
		fail(w, cairn.Errorf(cairn.ReasonObjectMissing, "artifact %s is '%s'; only a 'RECORDED' artifact has a servable object", a.ID, a.State))
		return false
	}
	return true
}

func (s *Server) updateFromVolume(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, p, ok := s.artifactPath(w, r, "source_path")
	if !ok {
		return
	}
	v, ok := s.readyVolume(w, s.ws[a.WorkspaceID], 0)
	if !ok {
		return
	}
	content, ok := source(w, v, p)
	if !ok {
		return
	}
	s.store(a, content)
	s.rewritten(a)
	reply(w, map[string]any{"artifact": a})
}

func (s *Server) loadIntoVolume(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, p, ok := s.artifactPath(w, r, "target_path")
	if !ok {
		return
	}
	v, ok := s.readyVolume(w, s.ws[a.WorkspaceID], 0)
	if !ok || !recorded(w, a) || !writable(w, v, p) {
		return
	}
	s.put(v, p, &node{typ: cairn.FileTypeFile, data: append([]byte(nil), s.objects[a.ObjectKey]...), mode: "0644"})
	reply(w, nil)
}

// writable is the load sidecar's verdict on a file to write: its directory
// exists, and it is no directory itself.
func writable(w http.ResponseWriter, v *volume, p string) bool {
	c := path.Clean(p)
	parent, ok := v.nodes[path.Dir(c)]
	switch {
	case !ok || parent.typ != cairn.FileTypeDir:
		fail(w, cairn.Errorf(cairn.ReasonTargetDirMissing, "destination directory '%s' does not exist", path.Dir(c)))
	case v.nodes[c] != nil && v.nodes[c].typ == cairn.FileTypeDir:
		fail(w, cairn.Errorf(cairn.ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p))
	default:
		return true
	}
	return false
}
