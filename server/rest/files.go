package rest

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
)

// listFiles answers GET /v1/workspaces/{id}/files: one page of a directory.
func (a *API) listFiles(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p := cairn.FileListParams{Path: q.Get("path"), After: q.Get("after")}
	if p.Path == "" {
		p.Path = cairn.MountPath
	}
	limit, err := intParam(q, "limit")
	if err != nil {
		return nil, err
	}
	if q.Has("limit") && (limit < 1 || limit > cairn.MaxFileListLimit) {
		return nil, queryError("Query parameter 'limit' must be between 1 and 1000")
	}
	p.Limit = limit
	listing, err := a.svc.ListFiles(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to list files of workspace %s volume", id)
	}
	return listing, nil
}

// readFile answers GET /v1/workspaces/{id}/files/content: at most 1 MiB of
// a regular file, raw, as a download that no browser renders.
func (a *API) readFile(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p := cairn.FileReadParams{Path: q.Get("path")}
	if p.Path == "" {
		return nil, queryError("Query parameter 'path' is required")
	}
	var err error
	if p.Offset, err = int64Param(q, "offset"); err != nil {
		return nil, err
	}
	if p.Length, err = int64Param(q, "length"); err != nil {
		return nil, err
	}
	content, err := a.svc.ReadFile(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to read a file of workspace %s volume", id)
	}
	return fileBytes{content}, nil
}

// unpackInVolume answers POST /v1/artifacts/{id}/unpack-in-volume.
func (a *API) unpackInVolume(r *http.Request) (any, error) {
	id := r.PathValue("artifactID")
	var req struct {
		TargetDir string `json:"target_dir"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse artifact unpack parameters from request")
	}
	res, err := a.svc.UnpackArtifact(r.Context(), id, req.TargetDir)
	switch {
	case isValidation(err):
		return nil, failed(err, "Artifact unpack parameters not valid")
	case cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound:
		return nil, failed(err, "Failed to fetch artifact %s", id)
	case err != nil:
		return nil, filesFailure(err, "Failed to unpack artifact %s into %s volume", id, a.workspaceOf(r, id))
	}
	return res, nil
}

// filesFailure attaches the route's sentence, with the status a refusal has
// on the routes that work inside a volume (cairn.Reason.VolumeRouteStatus).
func filesFailure(err error, format string, args ...any) error {
	if status, own := cairn.ErrorReason(err).VolumeRouteStatus(); own {
		err = &statusError{status: status, err: err}
	}
	return failed(err, format, args...)
}

// statusError answers with its own status instead of its reason's.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func statusOverride(err error) (int, bool) {
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.status, true
	}
	return 0, false
}

func int64Param(q url.Values, name string) (int64, error) {
	if !q.Has(name) {
		return 0, nil
	}
	n, err := strconv.ParseInt(q.Get(name), 10, 64)
	if err != nil {
		return 0, queryError("Query parameter '" + name + "' must be an integer")
	}
	return n, nil
}

// fileBytes writes a read's bytes with the file's size, mtime and offset
// in headers. The bytes are the volume's, written by anyone: nosniff and
// attachment keep a browser from rendering them as a page of this origin.
type fileBytes struct{ c *cairn.FileContent }

func (f fileBytes) respond(w http.ResponseWriter, _ string) int {
	h := w.Header()
	h.Set("Content-Type", f.c.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", disposition(path.Base(f.c.Path)))
	h.Set("Content-Length", strconv.Itoa(len(f.c.Data)))
	h.Set("Cache-Control", "no-store")
	h.Set(cairn.HeaderFileSize, strconv.FormatInt(f.c.Size, 10))
	h.Set(cairn.HeaderFileMTime, f.c.MTime.UTC().Format(time.RFC3339Nano))
	h.Set(cairn.HeaderFileOffset, strconv.FormatInt(f.c.Offset, 10))
	if f.c.ETag != "" {
		h.Set("ETag", strconv.Quote(f.c.ETag))
	}
	w.WriteHeader(http.StatusOK)
	w.Write(f.c.Data) //nolint:errcheck // the client went away
	return http.StatusOK
}

// disposition names the file in an attachment disposition, or names none
// when the name cannot be carried safely.
func disposition(name string) string {
	if d := mime.FormatMediaType("attachment", map[string]string{"filename": name}); d != "" {
		return d
	}
	return "attachment"
}
