package store

import (
	"time"

	"github.com/cairn-dev/cairn"
)

type wsEntry struct {
	ws        *cairn.Workspace
	touched   int64 // generation of the last event or reply that wrote it
	changedAt time.Time
	mounts    int
	hasMounts bool
}

type artEntry struct {
	art       *cairn.Artifact
	touched   int64
	changedAt time.Time
}

// set is a cached artifact set of one workspace.
type set struct {
	ids    map[string]struct{}
	seeded bool  // a complete list was applied
	viewed int64 // LRU clock of the last view
	pinned bool  // on the screen stack: never evicted
}

type tomb struct {
	gen         int64
	kind        Kind
	workspaceID string
}

// listing is a list in progress: its generation and the IDs its pages had.
type listing struct {
	gen  int64
	seen map[string]struct{}
	gap  bool // a delete arrived meanwhile
}

// Store holds every entity the TUI shows. It is not safe for concurrent use:
// the root model's Update is its only writer and screens read it from the
// same goroutine.
type Store struct {
	gen          int64
	lru          int64
	maxArtifacts int
	nArtifacts   int

	workspaces map[string]*wsEntry
	artifacts  map[string]*artEntry
	sets       artifactSets
	tombs      tombstones
	missing    map[string]string // artifact ID → workspace ID, MISSING_OBJECT only
	lists      listings
	seeded     map[Scope]bool
}

// New returns an empty store that caches at most maxArtifacts artifact rows
// (off-stack sets are evicted least recently viewed first).
func New(maxArtifacts int) *Store {
	return &Store{
		maxArtifacts: maxArtifacts,
		workspaces:   make(map[string]*wsEntry),
		artifacts:    make(map[string]*artEntry),
		sets:         make(map[string]*set),
		tombs:        make(map[string]tomb),
		missing:      make(map[string]string),
		lists:        make(map[Scope]*listing),
		seeded:       make(map[Scope]bool),
	}
}

// Workspace returns the stored workspace.
func (s *Store) Workspace(id string) (*cairn.Workspace, bool) {
	e, ok := s.workspaces[id]
	if !ok {
		return nil, false
	}
	return e.ws, true
}

// Workspaces returns every stored workspace, in no order.
func (s *Store) Workspaces() []*cairn.Workspace {
	out := make([]*cairn.Workspace, 0, len(s.workspaces))
	for _, e := range s.workspaces {
		out = append(out, e.ws)
	}
	return out
}

// WorkspaceCount is how many workspaces are stored.
func (s *Store) WorkspaceCount() int { return len(s.workspaces) }

// Artifact returns a cached artifact.
func (s *Store) Artifact(id string) (*cairn.Artifact, bool) {
	e, ok := s.artifacts[id]
	if !ok {
		return nil, false
	}
	return e.art, true
}

// Artifacts returns the cached artifacts of a workspace, in no order; ok is
// false when the set is not cached.
func (s *Store) Artifacts(workspaceID string) ([]*cairn.Artifact, bool) {
	st, ok := s.sets[workspaceID]
	if !ok {
		return nil, false
	}
	out := make([]*cairn.Artifact, 0, len(st.ids))
	for id := range st.ids {
		out = append(out, s.artifacts[id].art)
	}
	return out, true
}

// Cached reports whether the workspace's artifact set is cached and was
// listed completely at least once.
func (s *Store) Cached(workspaceID string) bool {
	st, ok := s.sets[workspaceID]
	return ok && st.seeded
}

// Seeded reports whether a complete list of scope was applied.
func (s *Store) Seeded(sc Scope) bool { return s.seeded[sc] }

// Listing reports whether a list of scope is in progress.
func (s *Store) Listing(sc Scope) bool { return s.lists[sc] != nil }

// ChangedAt is when a row last changed (zero for rows from a first list).
func (s *Store) ChangedAt(id string) time.Time {
	if e, ok := s.workspaces[id]; ok {
		return e.changedAt
	}
	if e, ok := s.artifacts[id]; ok {
		return e.changedAt
	}
	return time.Time{}
}

// Deleted reports whether id was deleted (a tombstone remains).
func (s *Store) Deleted(id string) bool {
	_, ok := s.tombs[id]
	return ok
}

// Mounts returns the last fetched mount count of a workspace (-1: unknown).
func (s *Store) Mounts(id string) (int, bool) {
	e, ok := s.workspaces[id]
	if !ok || !e.hasMounts {
		return 0, false
	}
	return e.mounts, true
}

// SetMounts records a fetched mount count.
func (s *Store) SetMounts(id string, n int) {
	if e, ok := s.workspaces[id]; ok {
		e.mounts, e.hasMounts = n, true
	}
}

// Counts returns the server-kept artifact counts of a workspace's row: no
// request per workspace, and current with every workspace.upserted.
func (s *Store) Counts(workspaceID string) (Counts, bool) {
	e, ok := s.workspaces[workspaceID]
	if !ok {
		return Counts{}, false
	}
	return rowCounts(e.ws), true
}

// MissingTotal is the header badge: MISSING_OBJECT artifacts over every
// workspace. ok is false until the workspaces were listed once.
func (s *Store) MissingTotal() (int64, bool) {
	if !s.seeded[Workspaces()] {
		return 0, false
	}
	var total int64
	for _, e := range s.workspaces {
		total += rowCounts(e.ws).Missing
	}
	return total, true
}

// MissingIn returns how many artifacts of the workspace the missing index
// holds.
func (s *Store) MissingIn(workspaceID string) int {
	n := 0
	for _, ws := range s.missing {
		if ws == workspaceID {
			n++
		}
	}
	return n
}
