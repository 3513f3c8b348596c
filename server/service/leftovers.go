package service

import "sync"

// Leftover is something a failed operation stored and could not remove
// when it failed — the store was down by then: an object, or a multipart
// upload when UploadID is set. No row names its key.
type Leftover struct {
	Key      string
	UploadID string
}

// maxLeftovers bounds what a process remembers; past it the oldest are
// forgotten, and the reconciler's age-out takes them as before.
const maxLeftovers = 10000

// Leftovers remembers, in this process, the discards that failed, so that
// the next full reconciliation pass here retries them at once instead of
// leaving them an hour for the age-out (a pack's parts hold space
// meanwhile). A restart forgets them, to the same fallback. Safe for
// concurrent use.
type Leftovers struct {
	mu    sync.Mutex
	items []Leftover
}

// Add remembers one leftover.
func (l *Leftovers) Add(it Leftover) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, it)
	if over := len(l.items) - maxLeftovers; over > 0 {
		l.items = append(l.items[:0:0], l.items[over:]...)
	}
}

// Take returns every leftover remembered and forgets them; a pass gives
// back with Add those it could not remove either.
func (l *Leftovers) Take() []Leftover {
	l.mu.Lock()
	defer l.mu.Unlock()
	items := l.items
	l.items = nil
	return items
}

// Leftovers is what this service failed to discard, for the reconciler.
func (s *Service) Leftovers() *Leftovers { return &s.leftovers }
