package cairn

import "context"

// ListVersionService tells whether a list changed without reading it, so a
// front door can answer a conditional request (an HTTP If-None-Match) with
// one cheap read. A version is kept in the transaction of every change that
// can alter the list and only ever grows: two reads that give the same
// version saw the same list, and a version read before a list is never
// newer than the rows that list returns.
type ListVersionService interface {
	// WorkspaceListVersion is the version of the workspace list: it moves
	// with every workspace created, changed (artifact counts included) or
	// deleted.
	WorkspaceListVersion(ctx context.Context) (int64, error)

	// ArtifactListVersion is the version of a workspace's artifact list: it
	// moves with every artifact of the workspace created, changed in any
	// field or state, or deleted. Reasons: workspace_not_found.
	ArtifactListVersion(ctx context.Context, workspaceID string) (int64, error)
}
