package store

import (
	"time"

	"github.com/cairn-dev/cairn"
)

// newer reports whether incoming should replace stored: the stored row wins
// only when its updated_at is strictly newer (ties go to the later arrival).
func newer(stored, incoming time.Time) bool { return !stored.After(incoming) }

func sameWorkspace(a, b *cairn.Workspace) bool {
	return a.Name == b.Name && str(a.Description) == str(b.Description) &&
		a.VolumeState == b.VolumeState && a.VolumeName == b.VolumeName &&
		a.UpdatedAt.Equal(b.UpdatedAt) && rowCounts(a) == rowCounts(b) && issue(a) == issue(b) && sameLifecycle(a, b)
}

// sameLifecycle compares the lifecycle fields: a row read after activity
// the server records without a change event (its last_active_at) differs
// in them alone.
func sameLifecycle(a, b *cairn.Workspace) bool {
	return sameTime(a.ExpiresAt, b.ExpiresAt) && sameInt(a.TTLSecs, b.TTLSecs) &&
		sameInt(a.ArchiveIdleAfterSecs, b.ArchiveIdleAfterSecs) && str(a.ArchivedSnapshotID) == str(b.ArchivedSnapshotID) &&
		a.LastActiveAt.Equal(b.LastActiveAt)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func sameInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// issue is w's volume issue as a comparable value, zero when none.
func issue(w *cairn.Workspace) cairn.VolumeIssue {
	if w.VolumeIssue == nil {
		return cairn.VolumeIssue{}
	}
	return *w.VolumeIssue
}

func sameArtifact(a, b *cairn.Artifact) bool {
	return a.Name == b.Name && str(a.Description) == str(b.Description) &&
		a.State == b.State && a.Size == b.Size && a.MIMEType == b.MIMEType &&
		a.ObjectKey == b.ObjectKey && a.UpdatedAt.Equal(b.UpdatedAt)
}

func str(p *string) string {
	if p == nil {
		return "\x00"
	}
	return *p
}

// upsertWorkspace writes w at generation gen. quiet rows (a first list)
// are not marked changed.
func (s *Store) upsertWorkspace(w *cairn.Workspace, gen int64, at time.Time, quiet bool, ch *Changes) {
	ref := Ref{Kind: KindWorkspace, ID: w.ID, WorkspaceID: w.ID}
	e, ok := s.workspaces[w.ID]
	if !ok {
		e = &wsEntry{ws: w, touched: gen}
		s.workspaces[w.ID] = e
		if !quiet {
			e.changedAt = at
		}
		ch.Added = append(ch.Added, ref)
		return
	}
	e.touched = max(e.touched, gen)
	if !newer(e.ws.UpdatedAt, w.UpdatedAt) || sameWorkspace(e.ws, w) {
		return
	}
	s.noteCountRise(e.ws, w, ch)
	e.ws = w
	if !quiet {
		e.changedAt = at
	}
	ch.Updated = append(ch.Updated, ref)
}

// noteCountRise reports a grown missing count of a workspace whose
// artifacts are not cached; a cached one raises per-artifact transitions.
func (s *Store) noteCountRise(old, w *cairn.Workspace, ch *Changes) {
	if s.Cached(w.ID) {
		return
	}
	co, cn := rowCounts(old), rowCounts(w)
	if cn.Missing > co.Missing {
		ch.Rises = append(ch.Rises, CountRise{WorkspaceID: w.ID, By: cn.Missing - co.Missing})
	}
}

// upsertArtifact writes a into its workspace's cached set. For an uncached
// workspace only the missing index learns of it.
func (s *Store) upsertArtifact(a *cairn.Artifact, gen int64, at time.Time, quiet bool, ch *Changes) {
	st, cached := s.sets[a.WorkspaceID]
	var old *cairn.Artifact
	e, known := s.artifacts[a.ID]
	if known {
		old = e.art
	}
	if known && !newer(old.UpdatedAt, a.UpdatedAt) {
		e.touched = max(e.touched, gen)
		return
	}
	s.trackMissing(a, old, cached && st.seeded, quiet, ch)
	if !cached {
		return
	}
	ref := Ref{Kind: KindArtifact, ID: a.ID, WorkspaceID: a.WorkspaceID}
	if !known {
		e = &artEntry{art: a, touched: gen}
		s.artifacts[a.ID] = e
		s.nArtifacts++
		st.ids[a.ID] = struct{}{}
		if !quiet {
			e.changedAt = at
		}
		ch.Added = append(ch.Added, ref)
		return
	}
	e.touched = max(e.touched, gen)
	if sameArtifact(old, a) {
		return
	}
	e.art = a
	if !quiet {
		e.changedAt = at
	}
	ch.Updated = append(ch.Updated, ref)
}

// trackMissing keeps the missing index and raises a transition for an
// artifact that was RECORDED, or unknown in a seeded set, and is now
// MISSING_OBJECT.
func (s *Store) trackMissing(a, old *cairn.Artifact, seeded, quiet bool, ch *Changes) {
	if a.State != cairn.ArtifactMissingObject {
		delete(s.missing, a.ID)
		return
	}
	_, indexed := s.missing[a.ID]
	s.missing[a.ID] = a.WorkspaceID
	wasRecorded := old != nil && old.State == cairn.ArtifactRecorded
	unknownInSeeded := old == nil && seeded
	if quiet || indexed || (!wasRecorded && !unknownInSeeded) {
		return
	}
	ch.Missing = append(ch.Missing, Transition{ArtifactID: a.ID, WorkspaceID: a.WorkspaceID, Name: a.Name})
}

// removeArtifact drops a cached artifact row and its index entry.
func (s *Store) removeArtifact(id string, ch *Changes) {
	ws, indexed := s.missing[id]
	delete(s.missing, id)
	e, ok := s.artifacts[id]
	if !ok {
		if indexed {
			ch.Removed = append(ch.Removed, Ref{Kind: KindArtifact, ID: id, WorkspaceID: ws})
		}
		return
	}
	delete(s.artifacts, id)
	s.nArtifacts--
	if st, ok := s.sets[e.art.WorkspaceID]; ok {
		delete(st.ids, id)
	}
	ch.Removed = append(ch.Removed, Ref{Kind: KindArtifact, ID: id, WorkspaceID: e.art.WorkspaceID})
}

// deleteArtifact removes an artifact and leaves a tombstone at gen.
func (s *Store) deleteArtifact(id string, gen int64, ch *Changes) {
	ws := s.missing[id]
	if e, ok := s.artifacts[id]; ok {
		ws = e.art.WorkspaceID
	}
	s.tombs[id] = tomb{gen: gen, kind: KindArtifact, workspaceID: ws}
	s.removeArtifact(id, ch)
	s.lists.markGaps(ScopeArtifacts, ws)
}

// deleteWorkspace removes a workspace, its cached set and its missing
// entries (a cascade may send no per-artifact events).
func (s *Store) deleteWorkspace(id string, gen int64, ch *Changes) {
	s.tombs[id] = tomb{gen: gen, kind: KindWorkspace, workspaceID: id}
	if _, ok := s.workspaces[id]; ok {
		delete(s.workspaces, id)
		ch.Removed = append(ch.Removed, Ref{Kind: KindWorkspace, ID: id, WorkspaceID: id})
	}
	if st, ok := s.sets[id]; ok {
		for aid := range st.ids {
			s.removeArtifact(aid, ch)
		}
		delete(s.sets, id)
	}
	for aid, ws := range s.missing {
		if ws == id {
			delete(s.missing, aid)
		}
	}
	s.lists.markGaps(ScopeWorkspaces, "")
}

// Apply applies a batch of change frames at the current generation.
func (s *Store) Apply(events []cairn.Event, at time.Time) Changes {
	var ch Changes
	for _, ev := range events {
		s.applyEvent(ev, at, &ch)
	}
	s.evict()
	return ch
}

func (s *Store) applyEvent(ev cairn.Event, at time.Time, ch *Changes) {
	switch ev.Type {
	case cairn.EventWorkspaceUpserted:
		if ev.Workspace != nil && !s.Deleted(ev.Workspace.ID) {
			s.upsertWorkspace(ev.Workspace, s.gen, at, false, ch)
		}
	case cairn.EventArtifactUpserted:
		if ev.Artifact != nil && !s.Deleted(ev.Artifact.ID) {
			s.upsertArtifact(ev.Artifact, s.gen, at, false, ch)
		}
	case cairn.EventWorkspaceDeleted:
		s.deleteWorkspace(ev.ID, s.gen, ch)
	case cairn.EventArtifactDeleted:
		s.deleteArtifact(ev.ID, s.gen, ch)
	}
}

// PutWorkspace applies a workspace from a GET or an operation's reply; it
// obeys the same updated_at order as events.
func (s *Store) PutWorkspace(w *cairn.Workspace, at time.Time) Changes {
	var ch Changes
	if w != nil && !s.Deleted(w.ID) {
		s.upsertWorkspace(w, s.gen, at, false, &ch)
	}
	return ch
}

// PutArtifact applies an artifact from an operation's reply.
func (s *Store) PutArtifact(a *cairn.Artifact, at time.Time) Changes {
	var ch Changes
	if a != nil && !s.Deleted(a.ID) {
		s.upsertArtifact(a, s.gen, at, false, &ch)
	}
	return ch
}

// DropWorkspace records a workspace deleted by this TUI.
func (s *Store) DropWorkspace(id string) Changes {
	var ch Changes
	s.deleteWorkspace(id, s.gen, &ch)
	return ch
}

// DropArtifact records an artifact deleted by this TUI.
func (s *Store) DropArtifact(id string) Changes {
	var ch Changes
	s.deleteArtifact(id, s.gen, &ch)
	return ch
}
