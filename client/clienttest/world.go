package clienttest

import (
	"github.com/cairn-dev/cairn"
)

// The world of a test: rows and objects set up or changed behind the API's
// back, as another client, the maintainer or a database write would. Every
// change is announced on the events stream, as the server's notifications
// announce a row change.

// AddWorkspace stores a workspace whose volume is in state; edits set the
// rest of the row (a description, say) before it is announced.
func (s *Server) AddWorkspace(name string, state cairn.VolumeState, edits ...func(*cairn.Workspace)) *cairn.Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyWS(s.addWorkspace(name, state, edits...))
}

func (s *Server) addWorkspace(name string, state cairn.VolumeState, edits ...func(*cairn.Workspace)) *cairn.Workspace {
	id, at := workspaceID(s.nextRow()), s.stamp()
	w := &cairn.Workspace{ID: id, Name: name, VolumeName: s.app + "-" + id, VolumeState: state, CreatedAt: at, UpdatedAt: at}
	for _, e := range edits {
		e(w)
	}
	s.ws[id] = w
	s.volumes[id] = s.newVolume()
	s.emitWS(w)
	return w
}

// UpdateWorkspace changes a stored workspace (updated_at moves) and
// returns it; nil when there is none.
func (s *Server) UpdateWorkspace(id string, edit func(*cairn.Workspace)) *cairn.Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.ws[id]
	if !ok {
		return nil
	}
	edit(w)
	s.changed(w)
	return copyWS(w)
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

// SetMounts sets how many running containers mount the workspace's volume:
// what GET /v1/workspaces/{id} reports, and what refuses a teardown.
func (s *Server) SetMounts(wsID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mounts[wsID] = n
}

// AddArtifact stores a RECORDED artifact with content; edits set the rest
// of the row before it is announced. A row an edit leaves in another state
// has no object, and a size an edit sets is the row's alone: the store
// keeps content.
func (s *Server) AddArtifact(wsID, name string, content []byte, edits ...func(*cairn.Artifact)) *cairn.Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyArt(s.addArtifact(wsID, name, "", content, edits...))
}

// addArtifact records an artifact whose object is content under key ("" a
// fresh one). The caller holds mu.
func (s *Server) addArtifact(wsID, name, key string, content []byte, edits ...func(*cairn.Artifact)) *cairn.Artifact {
	at := s.stamp()
	a := &cairn.Artifact{ID: artifactID(s.nextRow()), WorkspaceID: wsID, Name: name, State: cairn.ArtifactRecorded,
		CreatedAt: at, UpdatedAt: at}
	if key == "" {
		key = s.nextKey(wsID)
	}
	s.storeAt(a, key, content)
	for _, e := range edits {
		e(a)
	}
	if a.State != cairn.ArtifactRecorded {
		delete(s.objects, a.ObjectKey)
	}
	s.arts[a.ID] = a
	s.emitArt(a)
	s.recount(wsID)
	return a
}

// UpdateArtifact changes a stored artifact's row (updated_at moves) and
// returns it; nil when there is none. Its object stays as it is.
func (s *Server) UpdateArtifact(id string, edit func(*cairn.Artifact)) *cairn.Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[id]
	if !ok {
		return nil
	}
	edit(a)
	a.UpdatedAt = s.stamp()
	s.emitArt(a)
	s.recount(a.WorkspaceID)
	return copyArt(a)
}

// Artifact is the stored artifact.
func (s *Server) Artifact(id string) (*cairn.Artifact, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[id]
	if !ok {
		return nil, false
	}
	return copyArt(a), true
}

// DeleteArtifact deletes an artifact as another client would.
func (s *Server) DeleteArtifact(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.arts[id]; ok {
		s.removeArtifact(a)
	}
}

// Object is the content the store holds for an artifact.
func (s *Server) Object(artifactID string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[artifactID]
	if !ok {
		return nil, false
	}
	b, ok := s.objects[a.ObjectKey]
	return append([]byte(nil), b...), ok
}

// SetContent gives a stored artifact new content in place, its size,
// digest and type following, as a seed would have it; nothing is
// announced.
func (s *Server) SetContent(artifactID string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.arts[artifactID]; ok {
		s.storeAt(a, a.ObjectKey, content)
	}
}

// CorruptObject replaces the bytes in the store behind the artifact's
// back: its row keeps the recorded size and digest.
func (s *Server) CorruptObject(artifactID string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.arts[artifactID]; ok {
		s.objects[a.ObjectKey] = append([]byte(nil), content...)
	}
}

// MarkMissing deletes the artifact's object and flags it MISSING_OBJECT,
// as the maintainer does.
func (s *Server) MarkMissing(artifactID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[artifactID]
	if !ok {
		return
	}
	delete(s.objects, a.ObjectKey)
	a.State = cairn.ArtifactMissingObject
	a.UpdatedAt = s.stamp()
	s.emitArt(a)
	s.recount(a.WorkspaceID)
}
