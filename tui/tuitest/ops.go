package tuitest

import (
	"context"

	"github.com/cairn-dev/cairn"
)

func notFound(kind string) error {
	reason := cairn.ReasonWorkspaceNotFound
	if kind == "artifact" {
		reason = cairn.ReasonArtifactNotFound
	}
	return &cairn.Error{Reason: reason, Detail: kind + " does not exist", Status: 404, RequestID: "req-404"}
}

func (w *World) nameTaken(name, except string) bool {
	for _, ws := range w.ws {
		if ws.Name == name && ws.ID != except {
			return true
		}
	}
	return false
}

func (w *World) createWorkspace(_ context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	taken := w.nameTaken(c.Name, "")
	w.mu.Unlock()
	if taken {
		return nil, &cairn.Error{Reason: cairn.ReasonNameTaken, Status: 409, Detail: "name taken"}
	}
	desc := ""
	if c.Description != nil {
		desc = *c.Description
	}
	return w.AddWorkspace(c.Name, cairn.VolumeNone, desc), nil
}

func (w *World) renameWorkspace(_ context.Context, id, name string) (*cairn.Workspace, error) {
	if err := cairn.ValidateName("workspace", name); err != nil {
		return nil, err
	}
	w.mu.Lock()
	taken := w.nameTaken(name, id)
	w.mu.Unlock()
	if taken {
		return nil, &cairn.Error{Reason: cairn.ReasonNameTaken, Status: 409}
	}
	if ws := w.UpdateWorkspace(id, func(x *cairn.Workspace) { x.Name = name }); ws != nil {
		return ws, nil
	}
	return nil, notFound("workspace")
}

func (w *World) describeWorkspace(_ context.Context, id string, d *string) (*cairn.Workspace, error) {
	if ws := w.UpdateWorkspace(id, func(x *cairn.Workspace) { x.Description = d }); ws != nil {
		return ws, nil
	}
	return nil, notFound("workspace")
}

func (w *World) inspectWorkspace(_ context.Context, id string) (*cairn.WorkspaceDetail, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.ws[id]
	if !ok {
		return nil, notFound("workspace")
	}
	n, ok := w.mounts[id]
	if !ok {
		n = -1
		if ws.VolumeState == cairn.VolumeReady {
			n = 0
		}
	}
	return &cairn.WorkspaceDetail{Workspace: copyWS(ws), MountCount: n}, nil
}

func (w *World) setVolume(id string, state cairn.VolumeState) error {
	if ws := w.UpdateWorkspace(id, func(x *cairn.Workspace) { x.VolumeState = state }); ws == nil {
		return notFound("workspace")
	}
	return nil
}

func (w *World) teardown(_ context.Context, id string) error {
	w.mu.Lock()
	n := w.mounts[id]
	w.mu.Unlock()
	if n > 0 {
		return &cairn.Error{Reason: cairn.ReasonVolumeInUse, Status: 409}
	}
	return w.setVolume(id, cairn.VolumeNone)
}

func (w *World) deleteWorkspace(_ context.Context, id string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.ws[id]
	if !ok {
		return notFound("workspace")
	}
	if ws.VolumeState != cairn.VolumeNone {
		return &cairn.Error{Reason: cairn.ReasonVolumeExists, Status: 409}
	}
	delete(w.ws, id)
	for aid, a := range w.arts {
		if a.WorkspaceID == id {
			delete(w.arts, aid)
		}
	}
	if w.Events != nil {
		w.Events.Emit(cairn.Event{Type: cairn.EventWorkspaceDeleted, ID: id})
	}
	return nil
}

// DeleteArtifact removes an artifact as another client would.
func (w *World) DeleteArtifact(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.arts[id]
	if !ok {
		return
	}
	delete(w.arts, id)
	if w.Events != nil {
		w.Events.Emit(cairn.Event{Type: cairn.EventArtifactDeleted, ID: id})
	}
	w.count(a.WorkspaceID, a.State, "")
}

func (w *World) renameArtifact(_ context.Context, id, name string) (*cairn.Artifact, error) {
	if err := cairn.ValidateName("artifact", name); err != nil {
		return nil, err
	}
	if a := w.UpdateArtifact(id, func(x *cairn.Artifact) { x.Name = name }); a != nil {
		return a, nil
	}
	return nil, notFound("artifact")
}

func (w *World) describeArtifact(_ context.Context, id string, d *string) (*cairn.Artifact, error) {
	if a := w.UpdateArtifact(id, func(x *cairn.Artifact) { x.Description = d }); a != nil {
		return a, nil
	}
	return nil, notFound("artifact")
}

func (w *World) getArtifact(_ context.Context, id string, _ cairn.ArtifactGet) (*cairn.ArtifactDetail, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.arts[id]
	if !ok {
		return nil, notFound("artifact")
	}
	return &cairn.ArtifactDetail{Artifact: copyArt(a)}, nil
}
