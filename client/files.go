package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
)

var _ cairn.FileService = (*Client)(nil)

// ListFiles lists one page of a directory of the workspace volume (or the
// one entry of a path that is not a directory).
func (c *Client) ListFiles(ctx context.Context, workspaceID string, p cairn.FileListParams) (*cairn.FileListing, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	q := url.Values{"path": {p.Path}}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.After != "" {
		q.Set("after", p.After)
	}
	var out cairn.FileListing
	if err := c.get(ctx, pathOf("workspaces", workspaceID, "files"), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAllFiles pages through a whole directory, at most maxEntries entries;
// truncated reports that more remain.
func (c *Client) ListAllFiles(ctx context.Context, workspaceID, path string, maxEntries int) (entries []cairn.FileEntry, truncated bool, err error) {
	after := ""
	for {
		page, err := c.ListFiles(ctx, workspaceID, cairn.FileListParams{Path: path, Limit: cairn.MaxFileListLimit, After: after})
		if err != nil {
			return nil, false, err
		}
		entries = append(entries, page.Entries...)
		if len(entries) >= maxEntries {
			return entries[:maxEntries], len(entries) > maxEntries || page.NextAfter != "", nil
		}
		if page.NextAfter == "" {
			return entries, false, nil
		}
		after = page.NextAfter
	}
}

// ReadFile reads a byte range of a regular file of the workspace volume, at
// most cairn.MaxFileReadBytes.
func (c *Client) ReadFile(ctx context.Context, workspaceID string, p cairn.FileReadParams) (*cairn.FileContent, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	q := url.Values{"path": {p.Path}}
	if p.Offset != 0 {
		q.Set("offset", strconv.FormatInt(p.Offset, 10))
	}
	if p.Length != 0 {
		q.Set("length", strconv.FormatInt(p.Length, 10))
	}
	var raw rawAnswer
	if err := c.get(ctx, pathOf("workspaces", workspaceID, "files", "content"), q, &raw); err != nil {
		return nil, err
	}
	out := &cairn.FileContent{Path: p.Path, Offset: p.Offset, Data: raw.body, ContentType: raw.header.Get("Content-Type")}
	out.Size, _ = strconv.ParseInt(raw.header.Get(cairn.HeaderFileSize), 10, 64)
	out.MTime, _ = time.Parse(time.RFC3339Nano, raw.header.Get(cairn.HeaderFileMTime))
	out.ETag, _ = strconv.Unquote(raw.header.Get("ETag"))
	return out, nil
}

// UnpackArtifact unpacks an archive artifact into a new directory of its
// workspace volume. Not retried.
func (c *Client) UnpackArtifact(ctx context.Context, artifactID, targetDir string) (*cairn.UnpackResult, error) {
	if err := needID("artifact", artifactID); err != nil {
		return nil, err
	}
	var out cairn.UnpackResult
	err := c.do(ctx, call{method: http.MethodPost, path: pathOf("artifacts", artifactID, "unpack-in-volume"),
		body: struct {
			TargetDir string `json:"target_dir"`
		}{targetDir}, long: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
