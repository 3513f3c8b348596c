package clienttest

import (
	"net/http"
	"path"

	"github.com/cairn-dev/cairn"
)

// volume is a workspace volume: files by cleaned path, and directories
// (the mount root always exists).
type volume struct {
	files map[string][]byte
	dirs  map[string]bool
}

func newVolume() *volume {
	return &volume{files: map[string][]byte{}, dirs: map[string]bool{cairn.MountPath: true}}
}

// PutVolumeFile writes a file of the workspace's volume (its directories
// appear with it), as a shell or a tool run would.
func (s *Server) PutVolumeFile(wsID, p string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[wsID]
	if v == nil {
		return
	}
	p = path.Clean(p)
	v.files[p] = append([]byte(nil), content...)
	for d := path.Dir(p); d != cairn.MountPath && d != "/" && d != "."; d = path.Dir(d) {
		v.dirs[d] = true
	}
}

// VolumeFile reads a file of the workspace's volume.
func (s *Server) VolumeFile(wsID, p string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[wsID]
	if v == nil {
		return nil, false
	}
	b, ok := v.files[path.Clean(p)]
	return append([]byte(nil), b...), ok
}

// readyVolume runs the checks every transfer shares: the path rule, then
// a READY volume (API.md §5.1); on failure it has answered.
func (s *Server) readyVolume(w http.ResponseWriter, x *cairn.Workspace, p string) (*volume, bool) {
	if err := cairn.ValidateVolumePath(p); err != nil {
		fail(w, err.(*cairn.Error))
		return nil, false
	}
	if x.VolumeState != cairn.VolumeReady {
		fail(w, cairn.Errorf(cairn.ReasonVolumeNotReady, "workspace %s has no runtime volume (volume state '%s')", x.ID, x.VolumeState))
		return nil, false
	}
	return s.volumes[x.ID], true
}

// source is the put sidecar's verdict on a source path.
func source(w http.ResponseWriter, v *volume, p string) ([]byte, bool) {
	c := path.Clean(p)
	if v.dirs[c] {
		fail(w, cairn.Errorf(cairn.ReasonSourceIsDirectory, "source path '%s' is a directory, not a single uploadable file", p))
		return nil, false
	}
	b, ok := v.files[c]
	if !ok {
		fail(w, cairn.Errorf(cairn.ReasonSourceNotFound, "source file '%s' does not exist", p))
	}
	return b, ok
}

func (s *Server) artifactFromVolume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SourcePath  string  `json:"source_path"`
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) {
		return
	}
	if err := cairn.ValidateName("artifact", body.Name); err != nil {
		fail(w, err.(*cairn.Error))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if s.artifactNamed(x.ID, body.Name) {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named '%s'", x.ID, body.Name))
		return
	}
	v, ok := s.readyVolume(w, x, body.SourcePath)
	if !ok {
		return
	}
	content, ok := source(w, v, body.SourcePath)
	if !ok {
		return
	}
	reply(w, map[string]any{"artifact": s.addArtifact(x.ID, body.Name, body.Description, content)})
}

func (s *Server) updateFromVolume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SourcePath string `json:"source_path"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok {
		return
	}
	v, ok := s.readyVolume(w, s.ws[a.WorkspaceID], body.SourcePath)
	if !ok {
		return
	}
	content, ok := source(w, v, body.SourcePath)
	if !ok {
		return
	}
	s.rewrite(a, content)
	reply(w, map[string]any{"artifact": a})
}

func (s *Server) loadIntoVolume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TargetPath string `json:"target_path"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok {
		return
	}
	v, ok := s.readyVolume(w, s.ws[a.WorkspaceID], body.TargetPath)
	if !ok {
		return
	}
	content, stored := s.objects[a.ObjectKey]
	c := path.Clean(body.TargetPath)
	switch {
	case a.State != cairn.ArtifactRecorded || !stored:
		fail(w, cairn.Errorf(cairn.ReasonObjectMissing, "artifact %s has no object", a.ID))
	case v.dirs[c]:
		fail(w, cairn.Errorf(cairn.ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", body.TargetPath))
	case !v.dirs[path.Dir(c)]:
		fail(w, cairn.Errorf(cairn.ReasonTargetDirMissing, "destination directory '%s' does not exist", path.Dir(c)))
	default:
		v.files[c] = append([]byte(nil), content...)
		reply(w, nil)
	}
}
