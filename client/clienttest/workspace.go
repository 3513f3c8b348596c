package clienttest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
)

func (s *Server) routes(mux *http.ServeMux) {
	for pattern, h := range map[string]http.HandlerFunc{
		"POST /v1/workspaces":                           s.createWorkspace,
		"GET /v1/workspaces":                            s.listWorkspaces,
		"GET /v1/workspaces/{id}":                       s.getWorkspace,
		"DELETE /v1/workspaces/{id}":                    s.deleteWorkspace,
		"PUT /v1/workspaces/{id}/name":                  s.renameWorkspace,
		"PUT /v1/workspaces/{id}/description":           s.describeWorkspace,
		"PUT /v1/workspaces/{id}/volume-metadata":       s.setVolumeMetadata,
		"POST /v1/workspaces/{id}/volume":               s.setupVolume,
		"DELETE /v1/workspaces/{id}/volume":             s.teardownVolume,
		"POST /v1/workspaces/{id}/new-staging":          s.mintStaging,
		"POST /v1/workspaces/{id}/artifacts":            s.registerArtifact,
		"GET /v1/workspaces/{id}/artifacts":             s.listArtifacts,
		"POST /v1/workspaces/{id}/artifact-from-volume": s.artifactFromVolume,
		"GET /v1/workspaces/{id}/files":                 s.listFiles,
		"GET /v1/workspaces/{id}/files/content":         s.readFile,
		"GET /v1/artifacts/{id}":                        s.getArtifact,
		"DELETE /v1/artifacts/{id}":                     s.deleteArtifact,
		"PUT /v1/artifacts/{id}/name":                   s.renameArtifact,
		"PUT /v1/artifacts/{id}/description":            s.describeArtifact,
		"PUT /v1/artifacts/{id}/content":                s.replaceContent,
		"POST /v1/artifacts/{id}/load-in-volume":        s.loadIntoVolume,
		"POST /v1/artifacts/{id}/update-from-volume":    s.updateFromVolume,
		"POST /v1/artifacts/{id}/unpack-in-volume":      s.unpackInVolume,
		"PUT /store/{key...}":                           s.storePut,
		"GET /store/{key...}":                           s.storeGet,
		"GET /v1/events":                                s.events,
		"GET /v1/workspaces/{id}/shell":                 s.shell,
		"GET /v1/shells":                                s.listShells,
		"POST /v1/workspaces/{id}/snapshots":            s.createSnapshot,
		"GET /v1/workspaces/{id}/snapshots":             s.listSnapshots,
		"GET /v1/snapshots/{id}":                        s.getSnapshot,
		"DELETE /v1/snapshots/{id}":                     s.deleteSnapshot,
		"POST /v1/workspaces/{id}/restore":              s.restoreSnapshot,
		"POST /v1/workspaces/{id}/fork":                 s.forkWorkspace,
		"PUT /v1/workspaces/{id}/lifecycle":             s.setLifecycle,
		"POST /v1/workspaces/{id}/touch":                s.touchWorkspace,
	} {
		s.handle(mux, pattern, h)
	}
}

func copyWS(w *cairn.Workspace) *cairn.Workspace {
	c := *w
	return &c
}

func (s *Server) nameTaken(name, except string) bool {
	for _, w := range s.ws {
		if w.Name == name && w.ID != except {
			return true
		}
	}
	return false
}

// changed stamps a workspace's update and announces it.
func (s *Server) changed(w *cairn.Workspace) {
	w.UpdatedAt = s.stamp()
	s.emitWS(w)
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name           string                `json:"name"`
		Description    *string               `json:"description"`
		VolumeMetadata *cairn.VolumeMetadata `json:"volume_metadata"`
		FromSnapshot   string                `json:"from_snapshot"`
		cairn.Lifecycle
	}
	if !decode(w, r, &body) {
		return
	}
	c := cairn.WorkspaceCreate{Name: body.Name, Description: body.Description, VolumeMetadata: body.VolumeMetadata, FromSnapshot: body.FromSnapshot,
		Lifecycle: body.Lifecycle}
	if refused(w, s.validCreate(c)) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nameTaken(body.Name, "") {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", body.Name))
		return
	}
	describe := func(x *cairn.Workspace) {
		x.Description, x.VolumeMetadata, x.LastActiveAt = body.Description, body.VolumeMetadata, x.CreatedAt
		applyLifecycle(x, body.Lifecycle, x.CreatedAt)
	}
	if body.FromSnapshot == "" {
		reply(w, map[string]any{"workspace": s.addWorkspace(body.Name, cairn.VolumeNone, describe)})
		return
	}
	if sn, ok := s.snapshotAt(w, body.FromSnapshot); ok {
		reply(w, map[string]any{"workspace": s.fromSnapshot(body.Name, sn, describe)})
	}
}

// pageOf reads a list's offset and limit.
func pageOf(q url.Values) (cairn.Page, error) {
	var p cairn.Page
	for name, into := range map[string]*int{"offset": &p.Offset, "limit": &p.Limit} {
		if !q.Has(name) {
			continue
		}
		n, err := strconv.Atoi(q.Get(name))
		if err != nil {
			return p, cairn.Errorf(cairn.ReasonInvalidQuery, "Query parameter '%s' must be an integer", name)
		}
		*into = n
	}
	return p, p.Validate()
}

// validNames checks a list's name filter.
func validNames(kind string, names []string) error {
	for _, n := range names {
		if err := cairn.ValidateName(kind, n); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := workspaceFilter(q)
	if refused(w, err) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []*cairn.Workspace
	for _, x := range s.ws {
		if (len(f.Names) == 0 || slices.Contains(f.Names, x.Name)) &&
			(len(f.VolumeStates) == 0 || slices.Contains(f.VolumeStates, x.VolumeState)) {
			rows = append(rows, x)
		}
	}
	answerList(w, r, s.listTag(workspaceList, q), "workspaces", rows, f.Page,
		func(x *cairn.Workspace) (time.Time, string) { return x.CreatedAt, x.ID })
}

// workspaceFilter reads the workspace list's query.
func workspaceFilter(q url.Values) (cairn.WorkspaceFilter, error) {
	p, err := pageOf(q)
	if err != nil {
		return cairn.WorkspaceFilter{}, err
	}
	f := cairn.WorkspaceFilter{Names: q["name"], Page: p}
	for _, v := range q["volume_state"] {
		state, err := cairn.ParseVolumeState(v)
		if err != nil {
			return f, err
		}
		f.VolumeStates = append(f.VolumeStates, state)
	}
	return f, validNames("workspace", f.Names)
}

// workspace looks up {id}; on failure it has answered.
func (s *Server) workspace(w http.ResponseWriter, r *http.Request) (*cairn.Workspace, bool) {
	x, ok := s.ws[r.PathValue("id")]
	if !ok {
		fail(w, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "workspace '%s' does not exist", r.PathValue("id")))
	}
	return x, ok
}

func (s *Server) getWorkspace(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	mounts := -1
	if x.VolumeState != cairn.VolumeNone {
		mounts = s.mounts[x.ID]
	}
	reply(w, map[string]any{"workspace": x, "mount_count": mounts})
}

func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok || !noVolume(w, x) {
		return
	}
	delete(s.ws, x.ID)
	s.dropSnapshots(x.ID)
	for id, a := range s.arts {
		if a.WorkspaceID == x.ID {
			delete(s.arts, id)
			delete(s.objects, a.ObjectKey)
		}
	}
	s.bump(workspaceList)
	s.emit(cairn.Event{Type: cairn.EventWorkspaceDeleted, ID: x.ID})
	reply(w, nil)
}

// editWorkspace runs edit on workspace {id} and answers the changed row;
// an edit that refuses has answered and returns false.
func (s *Server) editWorkspace(w http.ResponseWriter, r *http.Request, edit func(*cairn.Workspace) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok || !edit(x) {
		return
	}
	s.changed(x)
	reply(w, map[string]any{"workspace": x})
}

// noVolume refuses a workspace that has a volume; on failure it has
// answered.
func noVolume(w http.ResponseWriter, x *cairn.Workspace) bool {
	if x.VolumeState != cairn.VolumeNone {
		fail(w, cairn.Errorf(cairn.ReasonVolumeExists, "workspace %s still has a persistent volume", x.ID))
		return false
	}
	return true
}

// description reads and checks the body of a description edit; on failure
// it has answered.
func description(w http.ResponseWriter, r *http.Request) (*string, bool) {
	var body struct {
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) || refused(w, cairn.ValidateDescription(body.Description)) {
		return nil, false
	}
	return body.Description, true
}

func (s *Server) renameWorkspace(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if refused(w, cairn.ValidateName("workspace", name)) {
		return
	}
	s.editWorkspace(w, r, func(x *cairn.Workspace) bool {
		if s.nameTaken(name, x.ID) {
			fail(w, cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", name))
			return false
		}
		x.Name = name
		return true
	})
}

func (s *Server) describeWorkspace(w http.ResponseWriter, r *http.Request) {
	if d, ok := description(w, r); ok {
		s.editWorkspace(w, r, func(x *cairn.Workspace) bool { x.Description = d; return true })
	}
}

func (s *Server) setVolumeMetadata(w http.ResponseWriter, r *http.Request) {
	var body struct {
		VolumeMetadata *cairn.VolumeMetadata `json:"volume_metadata"`
	}
	if !decode(w, r, &body) || refused(w, body.VolumeMetadata.Validate()) {
		return
	}
	s.editWorkspace(w, r, func(x *cairn.Workspace) bool {
		if !noVolume(w, x) {
			return false
		}
		x.VolumeMetadata = body.VolumeMetadata
		return true
	})
}

func (s *Server) setupVolume(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if x.VolumeState != cairn.VolumeReady {
		if refused(w, s.unarchive(x)) {
			return
		}
		x.VolumeState = cairn.VolumeReady
		s.changed(x)
	}
	reply(w, nil)
}

func (s *Server) teardownVolume(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if s.mounts[x.ID] > 0 {
		fail(w, cairn.Errorf(cairn.ReasonVolumeInUse, "docker volume '%s' is currently mounted", x.VolumeName))
		return
	}
	if x.VolumeState != cairn.VolumeNone {
		x.VolumeState = cairn.VolumeNone
		s.volumes[x.ID] = s.newVolume()
		s.changed(x)
	}
	reply(w, nil)
}
