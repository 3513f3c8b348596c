package client

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn"
)

// Listing is one page of a list as the server answered a conditional GET.
type Listing[T any] struct {
	// Rows are the page's rows; nil when NotModified.
	Rows []T
	// ETag is the server's tag for the page ("" from a server that sends
	// none). Send it back to learn whether the page changed.
	ETag string
	// NotModified reports that the page is still the one the tag sent
	// named: nothing was decoded, and the caller keeps the rows it has.
	NotModified bool
}

// WorkspacePage lists the one page f names (f.Limit zero: the server's
// maximum, 1 000 rows) and, when ifNoneMatch is a tag the server gave for
// it, answers NotModified instead of the rows if none changed. A cairn
// server's tag moves with any change to the workspace list, not only to
// this page, so an unchanged first page means an unchanged list.
func (c *Client) WorkspacePage(ctx context.Context, f cairn.WorkspaceFilter, ifNoneMatch string) (*Listing[*cairn.Workspace], error) {
	return listPage(ctx, c, pathOf("workspaces"), workspaceQuery(f), f.Page, ifNoneMatch, workspaceRows)
}

// ArtifactPage is WorkspacePage for a workspace's artifacts (RECORDED only
// unless f.States says otherwise); its tag moves with any change to an
// artifact of the workspace.
func (c *Client) ArtifactPage(ctx context.Context, f cairn.ArtifactFilter, ifNoneMatch string) (*Listing[*cairn.Artifact], error) {
	if err := needID("workspace", f.WorkspaceID); err != nil {
		return nil, err
	}
	return listPage(ctx, c, pathOf("workspaces", f.WorkspaceID, "artifacts"), artifactQuery(f), f.Page,
		ifNoneMatch, artifactRows)
}

// listPage asks for one page of a list route conditionally; items picks the
// rows out of an answer.
func listPage[P, T any](ctx context.Context, c *Client, path string, q url.Values, p cairn.Page,
	ifNoneMatch string, items func(*P) []T) (*Listing[T], error) {
	q.Set("offset", strconv.Itoa(p.Offset))
	q.Set("limit", strconv.Itoa(cmp.Or(p.Limit, pageSize)))
	var answer P
	var r reply
	k := call{method: http.MethodGet, path: path, query: q, idempotent: true, ifNoneMatch: ifNoneMatch, reply: &r}
	if err := c.do(ctx, k, &answer); err != nil {
		return nil, err
	}
	if r.notModified {
		return &Listing[T]{ETag: cmp.Or(r.etag, ifNoneMatch), NotModified: true}, nil
	}
	return &Listing[T]{Rows: items(&answer), ETag: r.etag}, nil
}
