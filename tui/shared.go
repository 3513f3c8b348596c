package tui

import (
	"time"

	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/transfer"
)

// shared is what screens read through deps.Data; only the root writes
// it.
type shared struct {
	st      *store.Store
	pending func(id string) string // the operations'
	now     time.Time
	start   time.Time
	// feed holds the lists' states and the server clock offset.
	feed *feed.Feed
	// transfers is every transfer since start, oldest first (the
	// queue's).
	transfers func() []*transfer.Transfer
	// shellBlocked is why the server opens no shell ("" when unknown or
	// fine).
	shellBlocked func() string
}

func newShared(maxArtifacts int, now time.Time) *shared {
	return &shared{
		st:  store.New(maxArtifacts),
		now: now, start: now,
	}
}

func (s *shared) Store() deps.Store        { return s.st }
func (s *shared) Pending(id string) string { return s.pending(id) }
func (s *shared) Now() time.Time           { return s.now.Add(s.feed.Offset()) }

// Frame is the spinner step: 0 at start, one per 100 ms.
func (s *shared) Frame() int { return int(s.now.Sub(s.start) / (100 * time.Millisecond)) }

func (s *shared) List(sc store.Scope) deps.ListStatus { return s.feed.List(sc) }

func (s *shared) Transfers() []*transfer.Transfer { return s.transfers() }

func (s *shared) ShellBlocked() string { return s.shellBlocked() }

func (s *shared) Head(id string, updatedAt time.Time) ([]string, bool) {
	return s.feed.Head(id, updatedAt)
}
