package client

import (
	"context"
	"net/http"

	"github.com/cairn-dev/cairn"
)

var _ cairn.VolumeTransferService = (*Client)(nil)

// ArtifactFromVolume stores a file of the workspace volume as a new
// artifact; the server runs two sidecars, so the request may take minutes.
// Not retried.
func (c *Client) ArtifactFromVolume(ctx context.Context, workspaceID string, vc cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	body := struct {
		SourcePath  string  `json:"source_path"`
		Name        string  `json:"name"`
		Description *string `json:"description,omitempty"`
		Format      string  `json:"format,omitempty"`
	}{vc.SourcePath, vc.Name, vc.Description, vc.Format}
	return c.artifactCall(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "artifact-from-volume"),
		body: body, long: true})
}

// UpdateFromVolume replaces an artifact's content from a volume file. Not
// retried.
func (c *Client) UpdateFromVolume(ctx context.Context, artifactID, sourcePath string) (*cairn.Artifact, error) {
	if err := needID("artifact", artifactID); err != nil {
		return nil, err
	}
	return c.artifactCall(ctx, call{method: http.MethodPost, path: pathOf("artifacts", artifactID, "update-from-volume"),
		body: struct {
			SourcePath string `json:"source_path"`
		}{sourcePath}, long: true})
}

// LoadIntoVolume writes an artifact's content to a file of its workspace
// volume. Not retried.
func (c *Client) LoadIntoVolume(ctx context.Context, artifactID, targetPath string) error {
	if err := needID("artifact", artifactID); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodPost, path: pathOf("artifacts", artifactID, "load-in-volume"),
		body: struct {
			TargetPath string `json:"target_path"`
		}{targetPath}, long: true}, nil)
}
