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
		Format      string  `json:"format"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse volume artifact parameters from request")
	}
	art, err := a.svc.ArtifactFromVolume(r.Context(), id, cairn.VolumeArtifactCreate{
		SourcePath: req.SourcePath, Name: req.Name, Description: req.Description, Format: req.Format,
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
		return nil, failed(err, "Failed to update artifact %s content from %s volume", id, a.workspaceOf(r, id))
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
		return nil, failed(err, "Failed to load artifact %s into %s volume", id, a.workspaceOf(r, id))
	}
	return nil, nil
}

// workspaceOf names an artifact's workspace for a failure message
// ("… workspace <wsid> volume"). The failed call found the artifact,
// so this lookup normally succeeds; if it does not, the message stays
// truthful without the ID.
func (a *API) workspaceOf(r *http.Request, artifactID string) string {
	d, err := a.svc.GetArtifact(r.Context(), artifactID, cairn.ArtifactGet{})
	if err != nil {
		return "its workspace"
	}
	return "workspace " + d.Artifact.WorkspaceID
}
