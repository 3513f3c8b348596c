package rest

import (
	"errors"
	"io"
	"net/http"

	"github.com/cairn-dev/cairn"
)

type snapshotResponse struct {
	Snapshot *cairn.Snapshot `json:"snapshot"`
}

// createSnapshot answers POST /v1/workspaces/{workspaceID}/snapshots; an
// empty body takes a point-in-time snapshot with a generated name.
func (a *API) createSnapshot(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req cairn.SnapshotCreate
	if err := decodeJSON(r, &req); err != nil && !errors.Is(err, io.EOF) {
		return nil, failed(err, "Unable to parse snapshot parameters from request")
	}
	snap, err := a.svc.CreateSnapshot(r.Context(), id, req)
	if err != nil {
		return nil, failed(err, "Failed to snapshot workspace %s", id)
	}
	return snapshotResponse{snap}, nil
}

// listSnapshots answers GET /v1/workspaces/{workspaceID}/snapshots.
func (a *API) listSnapshots(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	list, err := a.svc.ListSnapshots(r.Context(), id)
	if err != nil {
		return nil, failed(err, "Failed to list the snapshots of workspace %s", id)
	}
	return struct {
		Snapshots []*cairn.Snapshot `json:"snapshots"`
	}{append([]*cairn.Snapshot{}, list...)}, nil
}

// getSnapshot answers GET /v1/snapshots/{snapshotID}.
func (a *API) getSnapshot(r *http.Request) (any, error) {
	id := r.PathValue("snapshotID")
	snap, err := a.svc.GetSnapshot(r.Context(), id)
	if err != nil {
		return nil, failed(err, "Failed to fetch snapshot %s", id)
	}
	return snapshotResponse{snap}, nil
}

// deleteSnapshot answers DELETE /v1/snapshots/{snapshotID}.
func (a *API) deleteSnapshot(r *http.Request) (any, error) {
	id := r.PathValue("snapshotID")
	if err := a.svc.DeleteSnapshot(r.Context(), id); err != nil {
		return nil, failed(err, "Failed to delete snapshot %s", id)
	}
	return nil, nil
}

// restoreSnapshot answers POST /v1/workspaces/{workspaceID}/restore.
func (a *API) restoreSnapshot(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req struct {
		SnapshotID string `json:"snapshot_id"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse restore parameters from request")
	}
	if err := cairn.RequireParam("snapshot_id", req.SnapshotID); err != nil {
		return nil, err
	}
	out, err := a.svc.RestoreSnapshot(r.Context(), id, req.SnapshotID)
	if err != nil {
		return nil, failed(err, "Failed to restore workspace %s", id)
	}
	return struct {
		Restore *cairn.RestoreResult `json:"restore"`
	}{out}, nil
}

// forkWorkspace answers POST /v1/workspaces/{workspaceID}/fork.
func (a *API) forkWorkspace(r *http.Request) (any, error) {
	id := r.PathValue("workspaceID")
	var req cairn.WorkspaceFork
	if err := decodeJSON(r, &req); err != nil {
		return nil, failed(err, "Unable to parse fork parameters from request")
	}
	ws, err := a.svc.ForkWorkspace(r.Context(), id, req)
	if err != nil {
		return nil, failed(err, "Failed to fork workspace %s", id)
	}
	return workspaceResponse{ws}, nil
}
