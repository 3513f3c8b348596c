package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
)

// stagedBody is what register and replace take: a staging key and, for a
// multipart upload, the upload to complete with the whole object's size
// (and, optionally, its SHA-256). A single PUT's optional SHA-256 is the
// digest its uploader took while streaming it.
type stagedBody struct {
	StagingKey string `json:"staging_object_key"`
	UploadID   string `json:"upload_id"`
	Size       int64  `json:"size"`
	SHA256B64  string `json:"sha256_b64"`
}

func (b stagedBody) staged() cairn.Staged {
	s := cairn.Staged{Key: b.StagingKey}
	switch {
	case b.UploadID != "" || b.Size != 0:
		s.Upload = &cairn.StagedUpload{ID: b.UploadID, Size: b.Size, SHA256B64: b.SHA256B64}
	default:
		s.SHA256B64 = b.SHA256B64
	}
	return s
}

func (a *API) mintParts(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		StagingKey string           `json:"staging_object_key"`
		UploadID   string           `json:"upload_id"`
		Parts      []cairn.PartSpec `json:"parts"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse upload part parameters from request")
	}
	urls, err := a.svc.MintParts(r.Context(), id, cairn.PartRequest{StagingKey: req.StagingKey, UploadID: req.UploadID, Parts: req.Parts})
	if err != nil {
		return nil, uploadFailed(err, "Failed to mint upload part URLs", id)
	}
	return urls, nil
}

func (a *API) uploadedParts(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	parts, err := a.svc.UploadedParts(r.Context(), id, q.Get("staging_object_key"), q.Get("upload_id"))
	if err != nil {
		return nil, uploadFailed(err, "Failed to list the uploaded parts", id)
	}
	return struct {
		Parts []cairn.UploadedPart `json:"parts"`
	}{append([]cairn.UploadedPart{}, parts...)}, nil
}

func (a *API) abortUpload(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	if err := a.svc.AbortUpload(r.Context(), id, q.Get("staging_object_key"), q.Get("upload_id")); err != nil {
		return nil, uploadFailed(err, "Failed to abort the upload", id)
	}
	return nil, nil
}

// uploadFailed words a refusal of the multipart routes as the staging
// routes word theirs.
func uploadFailed(err error, what, workspaceID string) error {
	switch {
	case isValidation(err):
		return failed(err, "Upload part parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound:
		return failed(err, "Failed to fetch workspace %s", workspaceID)
	}
	return failed(err, "%s for workspace %s", what, workspaceID)
}
