package rest

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
)

type artifactResponse struct {
	Artifact *cairn.Artifact `json:"artifact"`
}

func (a *API) mintStaging(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		Size        int64  `json:"size"`
		SHA256B64   string `json:"sha256_b64"`
		ContentType string `json:"content_type"`
		Multipart   bool   `json:"multipart"`
		Stream      bool   `json:"stream"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse staging upload parameters from request")
	}
	st, err := a.svc.MintStaging(r.Context(), id, cairn.StagingRequest{
		Size: req.Size, SHA256B64: req.SHA256B64, ContentType: req.ContentType, Multipart: req.Multipart,
		Stream: req.Stream,
	})
	switch {
	case isValidation(err):
		return nil, failed(err, "Staging upload parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound:
		return nil, failed(err, "Failed to fetch workspace %s", id)
	case err != nil:
		return nil, failed(err, "Failed to mint a staging upload URL for workspace %s", id)
	}
	return struct {
		Staging *cairn.Staging `json:"staging"`
	}{st}, nil
}

func (a *API) registerArtifact(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		stagedBody
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse new artifact parameters from request")
	}
	staged := req.staged()
	art, err := a.svc.RegisterArtifact(r.Context(), id, cairn.ArtifactCreate{
		StagingKey: staged.Key, Upload: staged.Upload, SHA256B64: staged.SHA256B64, Name: req.Name, Description: req.Description,
	})
	switch {
	case isValidation(err):
		return nil, failed(err, "New artifact parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound:
		return nil, failed(err, "Failed to fetch workspace %s", id)
	case err != nil:
		return nil, failed(err, "Failed to register artifact '%s' in workspace %s", req.Name, id)
	}
	return artifactResponse{art}, nil
}

func (a *API) listArtifacts(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p, err := page(q)
	if err != nil {
		return nil, err
	}
	f := cairn.ArtifactFilter{WorkspaceID: id, Names: q["name"], Page: p}
	for _, s := range q["state"] {
		state, err := cairn.ParseArtifactState(s)
		if err != nil {
			return nil, failed(err, "Failed to list workspace %s artifacts", id)
		}
		f.States = append(f.States, state)
	}
	// An unknown workspace is left to FindArtifacts, which checks the query
	// before the workspace: the answer to a bad query stays the same.
	tag, err := a.artifactsTag(r.Context(), f)
	if err != nil && cairn.ErrorReason(err) != cairn.ReasonWorkspaceNotFound {
		return nil, failed(err, "Failed to list workspace %s artifacts", id)
	}
	cond := parseIfNoneMatch(r.Header)
	if cond.matches(tag) {
		return listAnswer[*cairn.Artifact]{etag: tag, notModified: true}, nil
	}
	list, err := a.svc.FindArtifacts(r.Context(), f)
	if err != nil {
		return nil, failed(err, "Failed to list workspace %s artifacts", id)
	}
	return listAnswer[*cairn.Artifact]{key: "artifacts", rows: list, appendRow: appendArtifact,
		etag: tag, notModified: cond.any}, nil
}

func (a *API) getArtifact(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	g, err := artifactGet(r.URL.Query())
	if err != nil {
		return nil, err
	}
	d, err := a.svc.GetArtifact(r.Context(), id, g)
	switch {
	case cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound:
		return nil, failed(err, "Failed to fetch artifact %s", id)
	case err != nil:
		return nil, failed(err, "Failed to mint a GET URL for artifact %s", id)
	}
	return struct {
		Artifact *cairn.Artifact `json:"artifact"`
		GetURL   string          `json:"get_url,omitempty"`
	}{d.Artifact, d.GetURL}, nil
}

// artifactGet reads 'presign' and 'ttl'. The TTL is validated even without
// presign, as the first cairn did.
func artifactGet(q url.Values) (cairn.ArtifactGet, error) {
	var g cairn.ArtifactGet
	if q.Has("presign") {
		v := q.Get("presign")
		b, err := strconv.ParseBool(v)
		if v != "" && err != nil {
			return g, queryError("Query parameter 'presign' must be a boolean")
		}
		g.Presign = v == "" || b
	}
	if q.Has("ttl") {
		secs, err := strconv.Atoi(q.Get("ttl"))
		if err != nil {
			return g, queryError("Query parameter 'ttl' must be an integer number of seconds")
		}
		if secs <= 0 {
			return g, queryError("Query parameter 'ttl' must be a positive number of seconds")
		}
		g.TTL = time.Duration(secs) * time.Second
	}
	return g, nil
}

func (a *API) deleteArtifact(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	if err := a.svc.DeleteArtifact(r.Context(), id); err != nil {
		return nil, failed(err, "Failed to delete artifact %s", id)
	}
	return nil, nil
}

func (a *API) renameArtifact(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	name, err := requiredName(r.URL.Query())
	if err != nil {
		return nil, err
	}
	art, err := a.svc.RenameArtifact(r.Context(), id, name)
	if err != nil {
		return nil, failed(err, "Failed to update artifact %s name to '%s'", id, name)
	}
	return artifactResponse{art}, nil
}

func (a *API) describeArtifact(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	var req struct {
		Description *string `json:"description"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse new artifact description from request")
	}
	art, err := a.svc.SetArtifactDescription(r.Context(), id, req.Description)
	if err != nil {
		return nil, failed(err, "Failed to update artifact %s description", id)
	}
	return artifactResponse{art}, nil
}

func (a *API) replaceContent(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	var req stagedBody
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse new artifact content parameters from request")
	}
	art, err := a.svc.ReplaceContent(r.Context(), id, req.staged())
	switch {
	case isValidation(err):
		return nil, failed(err, "New artifact content parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound:
		return nil, failed(err, "Failed to fetch artifact %s", id)
	case err != nil:
		return nil, failed(err, "Failed to update artifact %s content", id)
	}
	return artifactResponse{art}, nil
}
