package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn"
)

// stagedBody is the JSON of the content a register or replace takes.
type stagedBody struct {
	StagingKey string `json:"staging_object_key"`
	UploadID   string `json:"upload_id,omitempty"`
	Size       int64  `json:"size,omitempty"`
	SHA256B64  string `json:"sha256_b64,omitempty"`
}

func newStagedBody(s cairn.Staged) stagedBody {
	b := stagedBody{StagingKey: s.Key, SHA256B64: s.SHA256B64}
	if s.Upload != nil {
		b.UploadID, b.Size, b.SHA256B64 = s.Upload.ID, s.Upload.Size, s.Upload.SHA256B64
	}
	return b
}

// MintParts presigns uploads of parts of a multipart staging upload, each
// bound to its size and SHA-256. Minting writes nothing, so it is retried.
func (c *Client) MintParts(ctx context.Context, workspaceID string, r cairn.PartRequest) (*cairn.PartURLs, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	body := struct {
		StagingKey string           `json:"staging_object_key"`
		UploadID   string           `json:"upload_id"`
		Parts      []cairn.PartSpec `json:"parts"`
	}{r.StagingKey, r.UploadID, r.Parts}
	var out cairn.PartURLs
	k := call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "new-staging", "parts"), body: body, idempotent: true}
	if err := c.do(ctx, k, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UploadedParts lists the parts the store holds for a multipart upload.
func (c *Client) UploadedParts(ctx context.Context, workspaceID, stagingKey, uploadID string) ([]cairn.UploadedPart, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	var out struct {
		Parts []cairn.UploadedPart `json:"parts"`
	}
	k := call{method: http.MethodGet, path: pathOf("workspaces", workspaceID, "new-staging", "parts"),
		query: uploadQuery(stagingKey, uploadID), idempotent: true}
	if err := c.do(ctx, k, &out); err != nil {
		return nil, err
	}
	return out.Parts, nil
}

// AbortUpload discards a multipart upload and its parts; an unknown one
// succeeds, so it is retried.
func (c *Client) AbortUpload(ctx context.Context, workspaceID, stagingKey, uploadID string) error {
	if err := needID("workspace", workspaceID); err != nil {
		return err
	}
	k := call{method: http.MethodDelete, path: pathOf("workspaces", workspaceID, "new-staging", "parts"),
		query: uploadQuery(stagingKey, uploadID), idempotent: true}
	return c.do(ctx, k, nil)
}

func uploadQuery(key, uploadID string) url.Values {
	return url.Values{"staging_object_key": {key}, "upload_id": {uploadID}}
}
