package rest

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn"
)

// writeFile answers PUT /v1/workspaces/{id}/files/content: the raw body
// becomes the file's whole content. If-Match takes the ETag of a listing
// or read; If-None-Match: * creates only.
func (a *API) writeFile(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p := cairn.FileWriteParams{Path: q.Get("path"), Mode: q.Get("mode")}
	if p.Path == "" {
		return nil, queryError("Query parameter 'path' is required")
	}
	var err error
	if p.IfMatch, p.CreateOnly, err = writeConditions(r.Header); err != nil {
		return nil, failed(err, "Failed to write a file of workspace %s volume", id)
	}
	if p.Data, err = io.ReadAll(r.Body); err != nil {
		return nil, failed(bodyError(err, a.maxFileWrite()), "Failed to write a file of workspace %s volume", id)
	}
	change, err := a.svc.WriteFile(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to write a file of workspace %s volume", id)
	}
	return change, nil
}

// writeConditions reads If-Match (one strong ETag) and If-None-Match (only
// "*", which creates only).
func writeConditions(h http.Header) (ifMatch string, createOnly bool, err error) {
	if v := h.Get("If-None-Match"); v != "" {
		if strings.TrimSpace(v) != "*" {
			return "", false, cairn.Errorf(cairn.ReasonInvalidParameters, "If-None-Match takes only *, which creates the file only")
		}
		createOnly = true
	}
	if v := strings.TrimSpace(h.Get("If-Match")); v != "" {
		tag, err := strconv.Unquote(v)
		if err != nil || tag == "" || strings.ContainsAny(tag, "\", ") {
			return "", false, cairn.Errorf(cairn.ReasonInvalidParameters, "If-Match takes one strong ETag, quoted, as a listing or read gives it")
		}
		ifMatch = tag
	}
	return ifMatch, createOnly, nil
}

// bodyError names a body that could not be read: over the bound, or cut.
func bodyError(err error, max int64) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &cairn.Error{Reason: cairn.ReasonBodyTooLarge, Err: err,
			Detail: "a file write carries at most " + strconv.FormatInt(max, 10) + " bytes; save a larger file as an artifact and load it"}
	}
	return &cairn.Error{Reason: cairn.ReasonInvalidParameters, Detail: "the request body could not be read whole", Err: err}
}

// removePath answers DELETE /v1/workspaces/{id}/files.
func (a *API) removePath(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p := cairn.FileRemoveParams{Path: q.Get("path")}
	if p.Path == "" {
		return nil, queryError("Query parameter 'path' is required")
	}
	var err error
	if p.Recursive, err = boolQuery(q, "recursive"); err != nil {
		return nil, err
	}
	change, err := a.svc.RemovePath(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to remove a path of workspace %s volume", id)
	}
	return change, nil
}

// makeDir answers POST /v1/workspaces/{id}/files/mkdir.
func (a *API) makeDir(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var p cairn.MakeDirParams
	if err := decodeJSON(r, &p); err != nil {
		return nil, failed(err, "Unable to parse directory parameters from request")
	}
	change, err := a.svc.MakeDir(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to make a directory in workspace %s volume", id)
	}
	return change, nil
}

// movePath answers POST /v1/workspaces/{id}/files/move.
func (a *API) movePath(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var p cairn.MoveParams
	if err := decodeJSON(r, &p); err != nil {
		return nil, failed(err, "Unable to parse move parameters from request")
	}
	change, err := a.svc.MovePath(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to move a path of workspace %s volume", id)
	}
	return change, nil
}

// boolQuery reads an optional true/false query parameter.
func boolQuery(q url.Values, name string) (bool, error) {
	switch q.Get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, queryError("Query parameter '" + name + "' must be true or false")
}

func (a *API) maxFileWrite() int64 {
	if a.cfg.MaxFileWrite > 0 {
		return a.cfg.MaxFileWrite
	}
	return cairn.DefaultMaxFileWriteBytes
}
