package rest

import (
	"cmp"
	"net/http"

	"github.com/cairn-dev/cairn"
)

// searchFiles answers GET /v1/workspaces/{id}/files/search.
func (a *API) searchFiles(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p := cairn.FileSearchParams{Path: cmp.Or(q.Get("path"), cairn.MountPath), Glob: q.Get("glob"), Content: q.Get("content")}
	var err error
	if p.Limit, err = intParam(q, "limit"); err != nil {
		return nil, err
	}
	out, err := a.svc.SearchFiles(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to search the files of workspace %s volume", id)
	}
	return out, nil
}

// fileTree answers GET /v1/workspaces/{id}/files/tree.
func (a *API) fileTree(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	q := r.URL.Query()
	p := cairn.FileTreeParams{Path: cmp.Or(q.Get("path"), cairn.MountPath)}
	var err error
	if p.Depth, err = intParam(q, "depth"); err != nil {
		return nil, err
	}
	if p.Limit, err = intParam(q, "limit"); err != nil {
		return nil, err
	}
	out, err := a.svc.FileTree(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to list the tree of workspace %s volume", id)
	}
	return out, nil
}

// statFile answers GET /v1/workspaces/{id}/files/stat: the path's own entry.
func (a *API) statFile(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	p := r.URL.Query().Get("path")
	if p == "" {
		return nil, queryError("Query parameter 'path' is required")
	}
	out, err := a.svc.StatFile(r.Context(), id, p)
	if err != nil {
		return nil, filesFailure(err, "Failed to describe a file of workspace %s volume", id)
	}
	return out, nil
}
