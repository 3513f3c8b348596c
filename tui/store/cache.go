package store

// Viewed marks a workspace's artifact set as just viewed (the LRU order of
// eviction).
func (s *Store) Viewed(workspaceID string) {
	if st, ok := s.sets[workspaceID]; ok {
		s.lru++
		st.viewed = s.lru
	}
}

// Pin keeps exactly the given workspaces' sets from eviction: those on the
// screen stack.
func (s *Store) Pin(workspaceIDs ...string) {
	for _, st := range s.sets {
		st.pinned = false
	}
	for _, id := range workspaceIDs {
		if st, ok := s.sets[id]; ok {
			st.pinned = true
		}
	}
	s.evict()
}

// CachedSets lists the workspaces whose artifacts are cached.
func (s *Store) CachedSets() []string {
	out := make([]string, 0, len(s.sets))
	for id := range s.sets {
		out = append(out, id)
	}
	return out
}

// evict drops least recently viewed off-stack sets while the cache holds
// more rows than allowed. The missing index keeps their entries.
func (s *Store) evict() {
	for s.maxArtifacts > 0 && s.nArtifacts > s.maxArtifacts {
		victim, ok := s.sets.victim(s.lists)
		if !ok {
			return
		}
		st := s.sets[victim]
		for id := range st.ids {
			delete(s.artifacts, id)
			s.nArtifacts--
		}
		delete(s.sets, victim)
		delete(s.seeded, Artifacts(victim))
	}
}

// artifactSets is the cached artifact sets by workspace ID.
type artifactSets map[string]*set

// victim is the least recently viewed set neither pinned nor listing.
func (ss artifactSets) victim(lists listings) (string, bool) {
	var victim string
	var oldest int64
	for id, st := range ss {
		if st.pinned || lists[Artifacts(id)] != nil {
			continue
		}
		if victim == "" || st.viewed < oldest {
			victim, oldest = id, st.viewed
		}
	}
	return victim, victim != ""
}
