package client

import (
	"context"
	"net/http"

	"github.com/cairn-dev/cairn"
)

var _ cairn.SnapshotService = (*Client)(nil)

type snapshotPayload struct {
	Snapshot *cairn.Snapshot `json:"snapshot"`
}

// CreateSnapshot snapshots a workspace's volume (scope write).
func (c *Client) CreateSnapshot(ctx context.Context, workspaceID string, sc cairn.SnapshotCreate) (*cairn.Snapshot, error) {
	var out snapshotPayload
	err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "snapshots"), body: sc, long: true}, &out)
	if err != nil {
		return nil, err
	}
	return out.Snapshot, nil
}

// ListSnapshots lists a workspace's snapshots, oldest first.
func (c *Client) ListSnapshots(ctx context.Context, workspaceID string) ([]*cairn.Snapshot, error) {
	var out struct {
		Snapshots []*cairn.Snapshot `json:"snapshots"`
	}
	err := c.do(ctx, call{method: http.MethodGet, path: pathOf("workspaces", workspaceID, "snapshots"), idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return out.Snapshots, nil
}

// GetSnapshot reads one snapshot.
func (c *Client) GetSnapshot(ctx context.Context, id string) (*cairn.Snapshot, error) {
	var out snapshotPayload
	if err := c.do(ctx, call{method: http.MethodGet, path: pathOf("snapshots", id), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Snapshot, nil
}

// DeleteSnapshot deletes one snapshot. Not idempotent: a repeat answers
// snapshot_not_found.
func (c *Client) DeleteSnapshot(ctx context.Context, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: pathOf("snapshots", id)}, nil)
}

// RestoreSnapshot replaces a workspace volume's contents with a snapshot's
// tree.
func (c *Client) RestoreSnapshot(ctx context.Context, workspaceID, snapshotID string) (*cairn.RestoreResult, error) {
	var out struct {
		Restore *cairn.RestoreResult `json:"restore"`
	}
	body := struct {
		SnapshotID string `json:"snapshot_id"`
	}{snapshotID}
	err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "restore"), body: body, long: true}, &out)
	if err != nil {
		return nil, err
	}
	return out.Restore, nil
}

// ForkWorkspace snapshots a workspace and makes a new one from it.
func (c *Client) ForkWorkspace(ctx context.Context, workspaceID string, f cairn.WorkspaceFork) (*cairn.Workspace, error) {
	var out workspacePayload
	err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "fork"), body: f, long: true}, &out)
	if err != nil {
		return nil, err
	}
	return out.Workspace, nil
}

var _ cairn.LifecycleService = (*Client)(nil)

// SetWorkspaceLifecycle replaces a workspace's ttl, expiry and idle bound;
// nil fields clear them.
func (c *Client) SetWorkspaceLifecycle(ctx context.Context, id string, l cairn.Lifecycle) (*cairn.Workspace, error) {
	var out workspacePayload
	err := c.do(ctx, call{method: http.MethodPut, path: pathOf("workspaces", id, "lifecycle"), body: l, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return out.Workspace, nil
}

// TouchWorkspace records activity: the idle clock restarts and a ttl's
// expiry moves to now plus the ttl; warnings sent are withdrawn.
func (c *Client) TouchWorkspace(ctx context.Context, id string) (*cairn.Workspace, error) {
	var out workspacePayload
	err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", id, "touch")}, &out)
	if err != nil {
		return nil, err
	}
	return out.Workspace, nil
}
