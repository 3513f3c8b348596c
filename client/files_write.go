package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn"
)

var (
	_ cairn.FileWriter = (*Client)(nil)
	_ cairn.FileFinder = (*Client)(nil)
)

// WriteFile replaces a file's whole content. Not retried: with IfMatch or
// CreateOnly a repeat would be refused although the first one was made.
func (c *Client) WriteFile(ctx context.Context, workspaceID string, p cairn.FileWriteParams) (*cairn.FileChange, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	q := url.Values{"path": {p.Path}}
	if p.Mode != "" {
		q.Set("mode", p.Mode)
	}
	h := http.Header{}
	if p.IfMatch != "" {
		h.Set("If-Match", strconv.Quote(p.IfMatch))
	}
	if p.CreateOnly {
		h.Set("If-None-Match", "*")
	}
	data := p.Data
	if data == nil {
		data = []byte{} // an empty file, still a raw body
	}
	var out cairn.FileChange
	err := c.do(ctx, call{method: http.MethodPut, path: pathOf("workspaces", workspaceID, "files", "content"),
		query: q, raw: data, header: h, long: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// RemovePath removes a path of a workspace volume. Not retried: a repeat
// of a remove that was made answers path_not_found.
func (c *Client) RemovePath(ctx context.Context, workspaceID string, p cairn.FileRemoveParams) (*cairn.FileChange, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	q := url.Values{"path": {p.Path}}
	if p.Recursive {
		q.Set("recursive", "true")
	}
	var out cairn.FileChange
	if err := c.do(ctx, call{method: http.MethodDelete, path: pathOf("workspaces", workspaceID, "files"), query: q, long: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MakeDir makes a directory in a workspace volume.
func (c *Client) MakeDir(ctx context.Context, workspaceID string, p cairn.MakeDirParams) (*cairn.FileChange, error) {
	return c.fileChange(ctx, workspaceID, "mkdir", p)
}

// MovePath renames a path of a workspace volume.
func (c *Client) MovePath(ctx context.Context, workspaceID string, p cairn.MoveParams) (*cairn.FileChange, error) {
	return c.fileChange(ctx, workspaceID, "move", p)
}

func (c *Client) fileChange(ctx context.Context, workspaceID, op string, body any) (*cairn.FileChange, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	var out cairn.FileChange
	if err := c.do(ctx, call{method: http.MethodPost, path: pathOf("workspaces", workspaceID, "files", op), body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SearchFiles searches a workspace volume's names and lines.
func (c *Client) SearchFiles(ctx context.Context, workspaceID string, p cairn.FileSearchParams) (*cairn.FileSearch, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	q := url.Values{"path": {p.Path}}
	setNonEmpty(q, "glob", p.Glob)
	setNonEmpty(q, "content", p.Content)
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var out cairn.FileSearch
	if err := c.get(ctx, pathOf("workspaces", workspaceID, "files", "search"), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FileTree lists a directory of a workspace volume recursively.
func (c *Client) FileTree(ctx context.Context, workspaceID string, p cairn.FileTreeParams) (*cairn.FileTree, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	q := url.Values{"path": {p.Path}}
	if p.Depth != 0 {
		q.Set("depth", strconv.Itoa(p.Depth))
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var out cairn.FileTree
	if err := c.get(ctx, pathOf("workspaces", workspaceID, "files", "tree"), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func setNonEmpty(q url.Values, name, value string) {
	if value != "" {
		q.Set(name, value)
	}
}

// StatFile describes a path of a workspace volume itself.
func (c *Client) StatFile(ctx context.Context, workspaceID, path string) (*cairn.FileTreeEntry, error) {
	if err := needID("workspace", workspaceID); err != nil {
		return nil, err
	}
	var out cairn.FileTreeEntry
	if err := c.get(ctx, pathOf("workspaces", workspaceID, "files", "stat"), url.Values{"path": {path}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
