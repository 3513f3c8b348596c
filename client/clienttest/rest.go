package clienttest

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

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
		"POST /v1/workspaces/{id}/volume":               s.setupVolume,
		"DELETE /v1/workspaces/{id}/volume":             s.teardownVolume,
		"POST /v1/workspaces/{id}/new-staging":          s.mintStaging,
		"POST /v1/workspaces/{id}/artifacts":            s.registerArtifact,
		"GET /v1/workspaces/{id}/artifacts":             s.listArtifacts,
		"POST /v1/workspaces/{id}/artifact-from-volume": s.artifactFromVolume,
		"GET /v1/artifacts/{id}":                        s.getArtifact,
		"DELETE /v1/artifacts/{id}":                     s.deleteArtifact,
		"PUT /v1/artifacts/{id}/name":                   s.renameArtifact,
		"PUT /v1/artifacts/{id}/description":            s.describeArtifact,
		"PUT /v1/artifacts/{id}/content":                s.replaceContent,
		"POST /v1/artifacts/{id}/load-in-volume":        s.loadIntoVolume,
		"POST /v1/artifacts/{id}/update-from-volume":    s.updateFromVolume,
		"PUT /store/{key...}":                           s.storePut,
		"GET /store/{key...}":                           s.storeGet,
		"GET /v1/events":                                s.events,
		"GET /v1/workspaces/{id}/shell":                 s.shell,
		"GET /v1/shells":                                s.listShells,
	} {
		s.handle(mux, pattern, h)
	}
}

// AddWorkspace stores a workspace (its volume in state) and emits it.
func (s *Server) AddWorkspace(name string, state cairn.VolumeState) *cairn.Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyWS(s.addWorkspace(name, nil, state))
}

func (s *Server) addWorkspace(name string, desc *string, state cairn.VolumeState) *cairn.Workspace {
	n, at := s.nextID()
	id := fmt.Sprintf("%08d-0000-4000-8000-%012d", n, n)
	w := &cairn.Workspace{ID: id, Name: name, Description: desc, VolumeName: "cairn-" + id, VolumeState: state, CreatedAt: at, UpdatedAt: at}
	s.ws[id] = w
	s.volumes[id] = newVolume()
	s.emitWS(w)
	return w
}

// Workspace is the stored workspace.
func (s *Server) Workspace(id string) (*cairn.Workspace, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.ws[id]
	if !ok {
		return nil, false
	}
	return copyWS(w), true
}

// SetMounts sets the mount_count GET /v1/workspaces/{id} reports.
func (s *Server) SetMounts(wsID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mounts[wsID] = n
}

func copyWS(w *cairn.Workspace) *cairn.Workspace {
	c := *w
	return &c
}

func copyArt(a *cairn.Artifact) *cairn.Artifact {
	c := *a
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

// touch moves a workspace's updated_at and emits it.
func (s *Server) touch(w *cairn.Workspace) {
	_, w.UpdatedAt = s.nextID()
	s.emitWS(w)
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) {
		return
	}
	if err := (cairn.WorkspaceCreate{Name: body.Name, Description: body.Description}).Validate(); err != nil {
		fail(w, err.(*cairn.Error))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nameTaken(body.Name, "") {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", body.Name))
		return
	}
	reply(w, map[string]any{"workspace": s.addWorkspace(body.Name, body.Description, cairn.VolumeNone)})
}

// page applies offset and limit, as §3.1 pages.
func page[T any](rows []T, q url.Values) ([]T, *cairn.Error) {
	off, lim := 0, len(rows)
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, cairn.Errorf(cairn.ReasonInvalidQuery, "Query parameter 'offset' must be an integer")
		}
		off = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > cairn.MaxListLimit {
			return nil, cairn.Errorf(cairn.ReasonInvalidQuery, "Query parameter 'limit' must be an integer")
		}
		lim = n
	}
	off = min(off, len(rows))
	return rows[off:min(len(rows), off+lim)], nil
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var rows []*cairn.Workspace
	names := r.URL.Query()["name"]
	for _, x := range s.ws {
		if len(names) == 0 || slices.Contains(names, x.Name) {
			rows = append(rows, copyWS(x))
		}
	}
	s.mu.Unlock()
	slices.SortFunc(rows, func(a, b *cairn.Workspace) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	rows, err := page(rows, r.URL.Query())
	if err != nil {
		fail(w, err)
		return
	}
	out := map[string]any{}
	if len(rows) > 0 {
		out["workspaces"] = rows
	}
	reply(w, out)
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
	if x.VolumeState == cairn.VolumeReady {
		mounts = s.mounts[x.ID]
	}
	reply(w, map[string]any{"workspace": x, "mount_count": mounts})
}

func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if x.VolumeState != cairn.VolumeNone {
		fail(w, cairn.Errorf(cairn.ReasonVolumeExists, "workspace %s still has a persistent volume", x.ID))
		return
	}
	delete(s.ws, x.ID)
	for id, a := range s.arts {
		if a.WorkspaceID == x.ID {
			delete(s.arts, id)
		}
	}
	s.emit(cairn.Event{Type: cairn.EventWorkspaceDeleted, ID: x.ID})
	reply(w, nil)
}

func (s *Server) renameWorkspace(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if err := cairn.ValidateName("workspace", name); err != nil {
		fail(w, err.(*cairn.Error))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if s.nameTaken(name, x.ID) {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", name))
		return
	}
	x.Name = name
	s.touch(x)
	reply(w, map[string]any{"workspace": x})
}

func (s *Server) describeWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	x.Description = body.Description
	s.touch(x)
	reply(w, map[string]any{"workspace": x})
}

func (s *Server) setupVolume(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	x.VolumeState = cairn.VolumeReady
	s.touch(x)
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
	x.VolumeState = cairn.VolumeNone
	s.volumes[x.ID] = newVolume()
	s.touch(x)
	reply(w, nil)
}
