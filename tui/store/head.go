package store

import "time"

// headKey names one content of an artifact: its ID and the updated_at it
// had when read, so new content never shows the old head.
type headKey struct {
	id string
	at time.Time
}

// Heads is an LRU cache of the first lines of small text artifacts, for
// the artifact detail pane: keyed by (ID, updated_at), holding at most
// Max entries.
type Heads struct {
	Max   int
	lines map[headKey][]string
	order []headKey // least recently used first
}

// NewHeads returns an empty cache of at most max entries.
func NewHeads(max int) *Heads { return &Heads{Max: max, lines: make(map[headKey][]string)} }

// Get returns the cached lines of artifact id at updatedAt, marking them
// recently used.
func (h *Heads) Get(id string, updatedAt time.Time) ([]string, bool) {
	k := headKey{id, updatedAt}
	lines, ok := h.lines[k]
	if ok {
		h.touch(k)
	}
	return lines, ok
}

// Put caches lines for artifact id at updatedAt, evicting the least
// recently used entry past Max.
func (h *Heads) Put(id string, updatedAt time.Time, lines []string) {
	k := headKey{id, updatedAt}
	if _, ok := h.lines[k]; !ok && len(h.lines) >= h.Max {
		oldest := h.order[0]
		h.order = h.order[1:]
		delete(h.lines, oldest)
	}
	h.lines[k] = lines
	h.touch(k)
}

// Len is the number of cached entries.
func (h *Heads) Len() int { return len(h.lines) }

func (h *Heads) touch(k headKey) {
	for i, o := range h.order {
		if o == k {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
	h.order = append(h.order, k)
}
