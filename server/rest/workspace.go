package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
)

type workspaceResponse struct {
	Workspace *cairn.Workspace `json:"workspace"`
}

func (a *API) createWorkspace(r *http.Request) (any, error) {
	var req struct {
		Name           string                `json:"name"`
		Description    *string               `json:"description"`
		VolumeMetadata *cairn.VolumeMetadata `json:"volume_metadata"`
		FromSnapshot   string                `json:"from_snapshot"`
		cairn.Lifecycle
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse new workspace parameters from request")
	}
	ws, err := a.svc.CreateWorkspace(r.Context(), cairn.WorkspaceCreate{
		Name: req.Name, Description: req.Description, VolumeMetadata: req.VolumeMetadata, FromSnapshot: req.FromSnapshot,
		Lifecycle: req.Lifecycle,
	})
	if isValidation(err) {
		return nil, failed(err, "New workspace parameters not valid")
	}
	if err != nil {
		return nil, failed(err, "Failed to define new workspace '%s'", req.Name)
	}
	return workspaceResponse{ws}, nil
}

func (a *API) listWorkspaces(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, err := page(q)
	if err != nil {
		return nil, err
	}
	f := cairn.WorkspaceFilter{Names: q["name"], Page: p}
	for _, s := range q["volume_state"] {
		state, err := cairn.ParseVolumeState(s)
		if err != nil {
			return nil, failed(err, "Failed to list workspaces")
		}
		f.VolumeStates = append(f.VolumeStates, state)
	}
	tag, err := a.workspacesTag(r.Context(), f)
	if err != nil {
		return nil, failed(err, "Failed to list workspaces")
	}
	cond := parseIfNoneMatch(r.Header)
	if cond.matches(tag) {
		return listAnswer[*cairn.Workspace]{etag: tag, notModified: true}, nil
	}
	list, err := a.svc.FindWorkspaces(r.Context(), f)
	if err != nil {
		return nil, failed(err, "Failed to list workspaces")
	}
	return listAnswer[*cairn.Workspace]{key: "workspaces", rows: list, appendRow: appendWorkspace,
		etag: tag, notModified: cond.any}, nil
}

func (a *API) getWorkspace(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	d, err := a.svc.InspectWorkspace(r.Context(), id)
	if err != nil {
		return nil, failed(err, "Failed to fetch workspace %s", id)
	}
	return struct {
		Workspace       *cairn.Workspace `json:"workspace"`
		MountCount      int              `json:"mount_count"`
		VolumeSizeBytes int64            `json:"volume_size_bytes,omitempty"`
	}{d.Workspace, d.MountCount, d.VolumeSizeBytes}, nil
}

func (a *API) deleteWorkspace(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	if err := a.svc.DeleteWorkspace(r.Context(), id); err != nil {
		return nil, failed(err, "Failed to delete workspace %s", id)
	}
	return nil, nil
}

func (a *API) renameWorkspace(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	name, err := requiredName(r.URL.Query())
	if err != nil {
		return nil, err
	}
	ws, err := a.svc.RenameWorkspace(r.Context(), id, name)
	if err != nil {
		return nil, failed(err, "Failed to update workspace %s name to '%s'", id, name)
	}
	return workspaceResponse{ws}, nil
}

func (a *API) describeWorkspace(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		Description *string `json:"description"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse new workspace description from request")
	}
	ws, err := a.svc.SetWorkspaceDescription(r.Context(), id, req.Description)
	if err != nil {
		return nil, failed(err, "Failed to update workspace %s description", id)
	}
	return workspaceResponse{ws}, nil
}

func (a *API) setVolumeMetadata(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		VolumeMetadata *cairn.VolumeMetadata `json:"volume_metadata"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse new workspace volume metadata from request")
	}
	ws, err := a.svc.SetWorkspaceVolumeMetadata(r.Context(), id, req.VolumeMetadata)
	if isValidation(err) {
		return nil, failed(err, "New workspace volume metadata not valid")
	}
	if err != nil {
		return nil, failed(err, "Failed to update workspace %s volume metadata", id)
	}
	return workspaceResponse{ws}, nil
}

func (a *API) setupVolume(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	if err := a.svc.SetupVolume(r.Context(), id); err != nil {
		if cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound {
			return nil, failed(err, "Failed to fetch workspace %s", id)
		}
		return nil, failed(err, "Failed to set up workspace %s persistent volume", id)
	}
	return nil, nil
}

func (a *API) teardownVolume(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	if err := a.svc.TeardownVolume(r.Context(), id); err != nil {
		if cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound {
			return nil, failed(err, "Failed to fetch workspace %s", id)
		}
		return nil, failed(err, "Failed to tear down workspace %s persistent volume", id)
	}
	return nil, nil
}

// setLifecycle answers PUT /v1/workspaces/{workspaceID}/lifecycle: the
// body replaces every setting; an absent one is cleared.
func (a *API) setLifecycle(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req cairn.Lifecycle
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse lifecycle parameters from request")
	}
	ws, err := a.svc.SetWorkspaceLifecycle(r.Context(), id, req)
	if err != nil {
		return nil, failed(err, "Failed to set the lifecycle of workspace %s", id)
	}
	return workspaceResponse{ws}, nil
}

// touchWorkspace answers POST /v1/workspaces/{workspaceID}/touch.
func (a *API) touchWorkspace(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	ws, err := a.svc.TouchWorkspace(r.Context(), id)
	if err != nil {
		return nil, failed(err, "Failed to touch workspace %s", id)
	}
	return workspaceResponse{ws}, nil
}
