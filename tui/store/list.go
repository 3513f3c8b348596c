package store

import (
	"time"

	"github.com/cairn-dev/cairn"
)

// BeginList starts a list of scope and returns its generation. A list of
// artifacts makes their set cached from now on, so events arriving while
// the pages load are kept.
func (s *Store) BeginList(sc Scope) int64 {
	s.gen++
	s.lists[sc] = &listing{gen: s.gen, seen: make(map[string]struct{})}
	if sc.Kind == ScopeArtifacts {
		s.ensureSet(sc.WorkspaceID)
	}
	return s.gen
}

func (s *Store) ensureSet(workspaceID string) *set {
	st, ok := s.sets[workspaceID]
	if !ok {
		s.lru++
		st = &set{ids: make(map[string]struct{}), viewed: s.lru}
		s.sets[workspaceID] = st
	}
	return st
}

// listings is the running list of each scope.
type listings map[Scope]*listing

// current returns the running list of scope when gen is its generation.
func (ls listings) current(sc Scope, gen int64) (*listing, bool) {
	l, ok := ls[sc]
	return l, ok && l.gen == gen
}

// markGaps notes that a delete may have made offset paging skip a row of
// the running lists of kind (of one workspace, or all): they list again.
func (ls listings) markGaps(kind ScopeKind, workspaceID string) {
	for sc, l := range ls {
		if sc.Kind == kind && (workspaceID == "" || sc.WorkspaceID == workspaceID) {
			l.gap = true
		}
	}
}

// tombstones is the deleted rows by ID.
type tombstones map[string]tomb

// skip reports whether a listed row must not be applied: a delete at or
// after the list's start removed it. An older tombstone is purged.
func (ts tombstones) skip(id string, gen int64) bool {
	t, ok := ts[id]
	if !ok {
		return false
	}
	if t.gen >= gen {
		return true
	}
	delete(ts, id)
	return false
}

// WorkspacePage applies one page of a workspaces list of generation gen.
// A page of a stale list is ignored.
func (s *Store) WorkspacePage(gen int64, rows []*cairn.Workspace, at time.Time) Changes {
	var ch Changes
	sc := Workspaces()
	l, ok := s.lists.current(sc, gen)
	if !ok {
		return ch
	}
	quiet := !s.seeded[sc]
	for _, w := range rows {
		l.seen[w.ID] = struct{}{}
		if !s.tombs.skip(w.ID, gen) {
			s.upsertWorkspace(w, gen, at, quiet, &ch)
		}
	}
	return ch
}

// ArtifactPage applies one page of an artifacts list of generation gen.
func (s *Store) ArtifactPage(workspaceID string, gen int64, rows []*cairn.Artifact, at time.Time) Changes {
	var ch Changes
	sc := Artifacts(workspaceID)
	l, ok := s.lists.current(sc, gen)
	if !ok {
		return ch
	}
	s.ensureSet(workspaceID)
	quiet := !s.seeded[sc]
	for _, a := range rows {
		l.seen[a.ID] = struct{}{}
		if !s.tombs.skip(a.ID, gen) {
			s.upsertArtifact(a, gen, at, quiet, &ch)
		}
	}
	return ch
}

// FinishList completes the list of generation gen: rows of the scope that
// it did not return are removed unless an event touched them since it
// started; older tombstones are purged. A stale generation does nothing.
func (s *Store) FinishList(sc Scope, gen int64) Changes {
	var ch Changes
	l, ok := s.lists.current(sc, gen)
	if !ok {
		return ch
	}
	delete(s.lists, sc)
	s.removeUnseen(sc, l, &ch)
	for id, t := range s.tombs {
		if t.gen < gen && t.inScope(sc) {
			delete(s.tombs, id)
		}
	}
	s.seeded[sc] = true
	if sc.Kind == ScopeArtifacts {
		if st, ok := s.sets[sc.WorkspaceID]; ok {
			st.seeded = true
		}
	}
	if l.gap {
		ch.Relist = append(ch.Relist, sc)
	}
	s.evict()
	return ch
}

// inScope reports a tombstone of a row that scope sc lists.
func (t tomb) inScope(sc Scope) bool {
	if sc.Kind == ScopeWorkspaces {
		return t.kind == KindWorkspace
	}
	return t.kind == KindArtifact && t.workspaceID == sc.WorkspaceID
}

func (s *Store) removeUnseen(sc Scope, l *listing, ch *Changes) {
	if sc.Kind == ScopeWorkspaces {
		for id, e := range s.workspaces {
			if _, seen := l.seen[id]; !seen && e.touched < l.gen {
				delete(s.workspaces, id)
				ch.Removed = append(ch.Removed, Ref{Kind: KindWorkspace, ID: id, WorkspaceID: id})
			}
		}
		return
	}
	st, ok := s.sets[sc.WorkspaceID]
	if !ok {
		return
	}
	for id := range st.ids {
		if _, seen := l.seen[id]; !seen && s.artifacts[id].touched < l.gen {
			s.removeArtifact(id, ch)
		}
	}
}

// AbortList forgets a list that failed; its pages stay applied.
func (s *Store) AbortList(sc Scope, gen int64) {
	if _, ok := s.lists.current(sc, gen); ok {
		delete(s.lists, sc)
	}
}
