// Package store is cairn-tui's entity store: workspaces, cached artifact sets
// and the missing index, keyed by ID, with list generations and tombstones so
// that events and lists can interleave in any order. Only the root model
// writes it; screens read it. Every write returns Changes, whether it came
// from an event or a list. It imports no Charm library.
package store

import "github.com/cairn-dev/cairn"

// ScopeKind names a listable set of rows.
type ScopeKind uint8

const (
	// ScopeWorkspaces is every workspace.
	ScopeWorkspaces ScopeKind = iota + 1
	// ScopeArtifacts is one workspace's artifacts, RECORDED and MISSING_OBJECT.
	ScopeArtifacts
)

// Scope is a list the TUI keeps current: re-listed on resync and polling.
type Scope struct {
	Kind        ScopeKind
	WorkspaceID string
}

// Workspaces is the scope of the workspaces list.
func Workspaces() Scope { return Scope{Kind: ScopeWorkspaces} }

// Artifacts is the scope of one workspace's artifacts.
func Artifacts(workspaceID string) Scope {
	return Scope{Kind: ScopeArtifacts, WorkspaceID: workspaceID}
}

func (s Scope) String() string {
	if s.Kind == ScopeArtifacts {
		return "artifacts of " + s.WorkspaceID
	}
	return "workspaces"
}

// Kind is the entity kind of a row.
type Kind uint8

const (
	KindWorkspace Kind = iota + 1
	KindArtifact
)

// Ref names a changed row.
type Ref struct {
	Kind        Kind
	ID          string
	WorkspaceID string
}

// Transition is an artifact that became MISSING_OBJECT, the
// change that raises an alert.
type Transition struct {
	ArtifactID, WorkspaceID, Name string
}

// CountRise is a workspace whose missing count grew while its artifacts are
// not cached, so no per-artifact transition could be seen.
type CountRise struct {
	WorkspaceID string
	By          int64
}

// Changes is what one store operation did.
type Changes struct {
	Added, Updated, Removed []Ref
	Missing                 []Transition
	Rises                   []CountRise
	// Relist holds scopes to list once more: a delete arrived while a paged
	// list of theirs ran, so offset paging may have skipped a row.
	Relist []Scope
}

// Merge appends o to c.
func (c *Changes) Merge(o Changes) {
	c.Added = append(c.Added, o.Added...)
	c.Updated = append(c.Updated, o.Updated...)
	c.Removed = append(c.Removed, o.Removed...)
	c.Missing = append(c.Missing, o.Missing...)
	c.Rises = append(c.Rises, o.Rises...)
	c.Relist = append(c.Relist, o.Relist...)
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Added)+len(c.Updated)+len(c.Removed)+len(c.Missing)+len(c.Rises)+len(c.Relist) == 0
}

// Counts is a workspace's artifact counts.
type Counts struct {
	Recorded, Missing int64
}

// Total is every artifact row of the workspace.
func (c Counts) Total() int64 { return c.Recorded + c.Missing }

// rowCounts reads the server-kept counts of a workspace row. It is the one
// place that knows where they live on cairn.Workspace.
func rowCounts(w *cairn.Workspace) Counts {
	return Counts{Recorded: w.ArtifactCounts.Recorded, Missing: w.ArtifactCounts.MissingObject}
}
