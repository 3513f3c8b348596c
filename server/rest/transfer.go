package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
)

func (a *API) artifactFromVolume(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		SourcePath  string  `json:"source_path"`
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse volume artifact parameters from request")
	}
	art, err := a.svc.ArtifactFromVolume(r.Context(), id, cairn.VolumeArtifactCreate{
		SourcePath: req.SourcePath, Name: req.Name, Description: req.Description,
	})
	switch {
	case isValidation(err):
		return nil, failed(err, "Volume artifact parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound:
		return nil, failed(err, "Failed to fetch workspace %s", id)
	case err != nil:
		return nil, failed(err, "Failed to save artifact '%s' from workspace %s volume", req.Name, id)
	}
	return artifactResponse{art}, nil
}

func (a *API) updateFromVolume(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	var req struct {
		SourcePath string `json:"source_path"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse volume artifact update parameters from request")
	}
	art, err := a.svc.UpdateFromVolume(r.Context(), id, req.SourcePath)
	switch {
	case isValidation(err):
		return nil, failed(err, "Volume artifact update parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound:
		return nil, failed(err, "Failed to fetch artifact %s", id)
	case err != nil:
		return nil, failed(err, "Failed to update artifact %s content from its workspace volume", id)
	}
	return artifactResponse{art}, nil
}

func (a *API) loadInVolume(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	var req struct {
		TargetPath string `json:"target_path"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse artifact load parameters from request")
	}
	err := a.svc.LoadIntoVolume(r.Context(), id, req.TargetPath)
	switch {
	case isValidation(err):
		return nil, failed(err, "Artifact load parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound:
		return nil, failed(err, "Failed to fetch artifact %s", id)
	case err != nil:
		return nil, failed(err, "Failed to load artifact %s into its workspace volume", id)
	}
	return nil, nil
}
