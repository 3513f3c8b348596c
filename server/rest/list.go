package rest

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
)

// responder is a payload that writes its whole answer — status, headers,
// body — and returns the status it wrote. The list routes answer so: their
// conditional GETs may be a 304, and their rows skip encoding/json.
type responder interface {
	respond(w http.ResponseWriter, requestID string) int
}

// listAnswer is a list route's success: rows merged into the envelope
// under key (omitted when there are none, as the first cairn did), with
// the list's ETag; or, when notModified, a 304 with only the tag.
type listAnswer[T any] struct {
	key         string
	rows        []T
	appendRow   func([]byte, T) ([]byte, error)
	etag        string
	notModified bool
}

func (l listAnswer[T]) respond(w http.ResponseWriter, requestID string) int {
	if l.etag != "" {
		w.Header().Set("ETag", l.etag)
	}
	if l.notModified {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified
	}
	body, err := l.envelope(nil, requestID)
	if err != nil {
		// What writeSuccess answers when encoding/json fails.
		w.Header().Del("ETag")
		envelope.WriteJSON(w, http.StatusInternalServerError, envelope.NewFailure(requestID, http.StatusInternalServerError,
			"Failed to encode response", &cairn.Error{Reason: cairn.ReasonInternal, Detail: "internal error"}))
		return http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body) //nolint:errcheck // the client went away
	return http.StatusOK
}

// envelope appends what writeSuccess writes for the payload
// struct{ Rows []T `json:"<key>,omitempty"` }.
func (l listAnswer[T]) envelope(b []byte, requestID string) ([]byte, error) {
	b = append(b, `{"success":true,"request_id":`...)
	b = appendString(b, requestID)
	if len(l.rows) > 0 {
		b = append(b, ',', '"')
		b = append(b, l.key...)
		b = append(b, `":[`...)
		for i, row := range l.rows {
			if i > 0 {
				b = append(b, ',')
			}
			start := len(b)
			var err error
			if b, err = l.appendRow(b, row); err != nil {
				return nil, err
			}
			if i == 0 { // room for the rest, sized on the first row, so the answer grows once
				b = slices.Grow(b, (len(b)-start+1)*(len(l.rows)-1)*9/8)
			}
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...), nil
}

// versions is the service's cairn.ListVersionService, nil when it keeps
// none: its lists then go out without an ETag.
func (a *API) versions() cairn.ListVersionService {
	v, _ := a.svc.(cairn.ListVersionService)
	return v
}

// workspacesTag is the ETag of the workspace list f selects, read before
// the list so that it is never newer than the rows it goes out with.
func (a *API) workspacesTag(ctx context.Context, f cairn.WorkspaceFilter) (string, error) {
	lv := a.versions()
	if lv == nil {
		return "", nil
	}
	v, err := lv.WorkspaceListVersion(ctx)
	if err != nil {
		return "", err
	}
	states := make([]string, len(f.VolumeStates))
	for i, s := range f.VolumeStates {
		states[i] = string(s)
	}
	return listTag(v, listQuery{Route: "workspaces", Names: f.Names, States: states,
		Offset: f.Offset, Limit: f.Limit}), nil
}

// artifactsTag is workspacesTag for a workspace's artifact list.
// Reasons: workspace_not_found.
func (a *API) artifactsTag(ctx context.Context, f cairn.ArtifactFilter) (string, error) {
	lv := a.versions()
	if lv == nil {
		return "", nil
	}
	v, err := lv.ArtifactListVersion(ctx, f.WorkspaceID)
	if err != nil {
		return "", err
	}
	states := make([]string, len(f.States))
	for i, s := range f.States {
		states[i] = string(s)
	}
	return listTag(v, listQuery{Route: "artifacts", Workspace: f.WorkspaceID, Names: f.Names, States: states,
		Offset: f.Offset, Limit: f.Limit}), nil
}
