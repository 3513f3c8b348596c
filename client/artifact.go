package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
)

var _ cairn.ArtifactService = (*Client)(nil)

type artifactPayload struct {
	Artifact *cairn.Artifact `json:"artifact"`
}

// MintStaging presigns an upload slot. Not retried.
func (c *Client) MintStaging(ctx context.Context, workspaceID string, r cairn.StagingRequest) (*cairn.Staging, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	body := struct {
		Size        int64  `json:"size"`
		SHA256B64   string `json:"sha256_b64,omitempty"`
		ContentType string `json:"content_type,omitempty"`
		Multipart   bool   `json:"multipart,omitempty"`
		Stream      bool   `json:"stream,omitempty"`
	}{r.Size, r.SHA256B64, r.ContentType, r.Multipart, r.Stream}
	var out struct {
		Staging *cairn.Staging `json:"staging"`
	}
	k := call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "new-staging"), body: body}
	if err := c.do(ctx, k, &out); err != nil {
		return nil, err
	}
	return out.Staging, nil
}

// RegisterArtifact turns an uploaded staging object into an artifact. Not
// retried.
func (c *Client) RegisterArtifact(ctx context.Context, workspaceID string, ac cairn.ArtifactCreate) (*cairn.Artifact, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	body := struct {
		stagedBody
		Name        string  `json:"name"`
		Description *string `json:"description,omitempty"`
	}{newStagedBody(cairn.Staged{Key: ac.StagingKey, Upload: ac.Upload, SHA256B64: ac.SHA256B64}), ac.Name, ac.Description}
	return c.artifactCall(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "artifacts"), body: body,
		long: ac.Upload != nil})
}

// FindArtifacts lists a workspace's artifacts in creation order (RECORDED
// only unless f.States says otherwise). With f.Limit zero it pages through
// every match, 1 000 rows a request, and never answers list_too_large;
// otherwise it returns the one page f asks for.
func (c *Client) FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
	return collect(c.Artifacts(ctx, f))
}

// Artifacts yields the artifacts f selects as pages arrive, stopping at
// the first error, which it yields.
func (c *Client) Artifacts(ctx context.Context, f cairn.ArtifactFilter) iter.Seq2[*cairn.Artifact, error] {
	if err := needID("workspace", f.WorkspaceID); err != nil {
		return func(yield func(*cairn.Artifact, error) bool) { yield(nil, err) }
	}
	return pages(ctx, c, pathOf("workspaces", f.WorkspaceID, "artifacts"), artifactQuery(f), f.Page, artifactRows)
}

// artifactQuery is the list's query without its page.
func artifactQuery(f cairn.ArtifactFilter) url.Values {
	q := url.Values{"name": f.Names}
	for _, s := range f.States {
		q.Add("state", string(s))
	}
	return q
}

func artifactRows(p *struct {
	Artifacts []*cairn.Artifact `json:"artifacts"`
}) []*cairn.Artifact {
	return p.Artifacts
}

// GetArtifact returns an artifact and, with g.Presign, a GET URL valid for
// g.TTL (rounded up to whole seconds; zero: the server's maximum).
func (c *Client) GetArtifact(ctx context.Context, id string, g cairn.ArtifactGet) (*cairn.ArtifactDetail, error) {
	if err := needID("artifact", id); err != nil {
		return nil, err
	}
	q := url.Values{}
	if g.Presign {
		q.Set("presign", "true")
		if g.TTL > 0 {
			q.Set("ttl", strconv.FormatInt(int64((g.TTL+time.Second-1)/time.Second), 10))
		}
	}
	var out struct {
		Artifact *cairn.Artifact `json:"artifact"`
		GetURL   string          `json:"get_url"`
	}
	if err := c.get(ctx, pathOf("artifacts", id), q, &out); err != nil {
		return nil, err
	}
	return &cairn.ArtifactDetail{Artifact: out.Artifact, GetURL: out.GetURL}, nil
}

// RenameArtifact changes the name; retried after a connection failure.
func (c *Client) RenameArtifact(ctx context.Context, id, name string) (*cairn.Artifact, error) {
	if err := needID("artifact", id); err != nil {
		return nil, err
	}
	return c.artifactCall(ctx, call{method: http.MethodPut, path: pathOf("artifacts", id, "name"),
		query: url.Values{"name": {name}}, idempotent: true})
}

// SetArtifactDescription replaces the description; nil clears it.
func (c *Client) SetArtifactDescription(ctx context.Context, id string, d *string) (*cairn.Artifact, error) {
	if err := needID("artifact", id); err != nil {
		return nil, err
	}
	return c.artifactCall(ctx, call{method: http.MethodPut, path: pathOf("artifacts", id, "description"),
		body: struct {
			Description *string `json:"description"`
		}{d}, idempotent: true})
}

// ReplaceContent points the artifact at uploaded content. Not retried:
// the first attempt may have consumed a legacy staging object.
func (c *Client) ReplaceContent(ctx context.Context, id string, src cairn.Staged) (*cairn.Artifact, error) {
	if err := needID("artifact", id); err != nil {
		return nil, err
	}
	return c.artifactCall(ctx, call{method: http.MethodPut, path: pathOf("artifacts", id, "content"),
		body: newStagedBody(src), long: src.Upload != nil})
}

// DeleteArtifact deletes the artifact; an unknown ID succeeds, so it is
// retried after a connection failure.
func (c *Client) DeleteArtifact(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	return c.do(ctx, call{method: http.MethodDelete, path: pathOf("artifacts", id), idempotent: true}, nil)
}

func (c *Client) artifactCall(ctx context.Context, k call) (*cairn.Artifact, error) {
	var out artifactPayload
	if err := c.do(ctx, k, &out); err != nil {
		return nil, err
	}
	return out.Artifact, nil
}
