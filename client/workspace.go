package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn"
)

var _ cairn.WorkspaceService = (*Client)(nil)

type workspacePayload struct {
	Workspace *cairn.Workspace `json:"workspace"`
}

// CreateWorkspace records a new workspace with no volume. Not retried.
func (c *Client) CreateWorkspace(ctx context.Context, wc cairn.WorkspaceCreate) (*cairn.Workspace, error) {
	body := struct {
		Name           string                `json:"name"`
		Description    *string               `json:"description,omitempty"`
		VolumeMetadata *cairn.VolumeMetadata `json:"volume_metadata,omitempty"`
		FromSnapshot   string                `json:"from_snapshot,omitempty"`
		cairn.Lifecycle
	}{wc.Name, wc.Description, wc.VolumeMetadata, wc.FromSnapshot, wc.Lifecycle}
	var out workspacePayload
	if err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces"), body: body, long: wc.FromSnapshot != ""}, &out); err != nil {
		return nil, err
	}
	return out.Workspace, nil
}

// FindWorkspaces lists workspaces in creation order. With f.Limit zero it
// pages through every match (1 000 rows a request), so, unlike the
// server's unpaged list, it never answers list_too_large; otherwise it
// returns the one page f asks for.
func (c *Client) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	return collect(c.Workspaces(ctx, f))
}

// Workspaces yields the workspaces f selects as pages arrive; f.Limit
// zero means every match, f.Offset where to start. It stops at the first
// error, which it yields.
func (c *Client) Workspaces(ctx context.Context, f cairn.WorkspaceFilter) iter.Seq2[*cairn.Workspace, error] {
	return pages(ctx, c, pathOf("workspaces"), workspaceQuery(f), f.Page, workspaceRows)
}

// workspaceQuery is the list's query without its page.
func workspaceQuery(f cairn.WorkspaceFilter) url.Values {
	q := url.Values{"name": f.Names}
	for _, s := range f.VolumeStates {
		q.Add("volume_state", string(s))
	}
	return q
}

func workspaceRows(p *struct {
	Workspaces []*cairn.Workspace `json:"workspaces"`
}) []*cairn.Workspace {
	return p.Workspaces
}

// InspectWorkspace returns a workspace, its live mount count and the size
// its volume was given (0 when unknown).
func (c *Client) InspectWorkspace(ctx context.Context, id string) (*cairn.WorkspaceDetail, error) {
	if err := needID("workspace", id); err != nil {
		return nil, err
	}
	var out struct {
		Workspace       *cairn.Workspace `json:"workspace"`
		MountCount      int              `json:"mount_count"`
		VolumeSizeBytes int64            `json:"volume_size_bytes"`
	}
	if err := c.get(ctx, pathOf("workspaces", id), nil, &out); err != nil {
		return nil, err
	}
	return &cairn.WorkspaceDetail{Workspace: out.Workspace, MountCount: out.MountCount, VolumeSizeBytes: out.VolumeSizeBytes}, nil
}

// RenameWorkspace changes the name; retried after a connection failure
// (a repeat sets the same name).
func (c *Client) RenameWorkspace(ctx context.Context, id, name string) (*cairn.Workspace, error) {
	return c.putWorkspace(ctx, id, "name", url.Values{"name": {name}}, nil)
}

// SetWorkspaceDescription replaces the description; nil clears it.
func (c *Client) SetWorkspaceDescription(ctx context.Context, id string, d *string) (*cairn.Workspace, error) {
	return c.putWorkspace(ctx, id, "description", nil, struct {
		Description *string `json:"description"`
	}{d})
}

// SetWorkspaceVolumeMetadata replaces the volume hint; nil clears it.
func (c *Client) SetWorkspaceVolumeMetadata(ctx context.Context, id string, m *cairn.VolumeMetadata) (*cairn.Workspace, error) {
	return c.putWorkspace(ctx, id, "volume-metadata", nil, struct {
		VolumeMetadata *cairn.VolumeMetadata `json:"volume_metadata"`
	}{m})
}

func (c *Client) putWorkspace(ctx context.Context, id, field string, q url.Values, body any) (*cairn.Workspace, error) {
	if err := needID("workspace", id); err != nil {
		return nil, err
	}
	var out workspacePayload
	k := call{method: http.MethodPut, path: pathOf("workspaces", id, field), query: q, body: body, idempotent: true}
	if err := c.do(ctx, k, &out); err != nil {
		return nil, err
	}
	return out.Workspace, nil
}

// DeleteWorkspace deletes a workspace that has no volume. Not retried: a
// repeat of a delete that went through answers workspace_not_found.
func (c *Client) DeleteWorkspace(ctx context.Context, id string) error {
	if err := needID("workspace", id); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: pathOf("workspaces", id)}, nil)
}

// SetupVolume creates or adopts the workspace's volume and marks it READY.
// Not retried (a POST), though the server treats a repeat as a repair.
func (c *Client) SetupVolume(ctx context.Context, id string) error {
	if err := needID("workspace", id); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", id, "volume"), long: true}, nil)
}

// TeardownVolume removes the workspace's volume and marks it NONE;
// retried after a connection failure (an absent volume is no error).
func (c *Client) TeardownVolume(ctx context.Context, id string) error {
	if err := needID("workspace", id); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: pathOf("workspaces", id, "volume"),
		idempotent: true, long: true}, nil)
}

// needID answers an empty ID as the server would answer an unknown one,
// instead of sending a request to another route.
func needID(kind, id string) error {
	if id != "" {
		return nil
	}
	reason := cairn.ReasonWorkspaceNotFound
	if kind == "artifact" {
		reason = cairn.ReasonArtifactNotFound
	}
	return &cairn.Error{Reason: reason, Status: http.StatusNotFound, Detail: "no " + kind + " ID given"}
}
