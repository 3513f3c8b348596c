package service

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// mountCountTimeout bounds the Docker calls behind mount_count.
const mountCountTimeout = 2 * time.Second

// mountCounter answers mount counts in rounds, like a group commit: a
// caller joins the next round, which starts only after the round in flight
// ends, so its answer is never older than the call; one round answers all
// of its callers with one MountCounts, however many they are.
type mountCounter struct {
	count func(ctx context.Context, volumes []string) (map[string]int, error)

	mu      sync.Mutex
	next    *mountRound // the round not yet started, which callers join
	running bool        // a goroutine is working through the rounds
}

type mountRound struct {
	volumes map[string]bool
	done    chan struct{}
	counts  map[string]int
	err     error
}

// Count returns the number of running containers mounting volume; -1, with
// the reason, when Docker failed or did not answer before ctx ended.
func (m *mountCounter) Count(ctx context.Context, volume string) (int, error) {
	m.mu.Lock()
	if m.next == nil {
		m.next = &mountRound{volumes: map[string]bool{}, done: make(chan struct{})}
	}
	r := m.next
	r.volumes[volume] = true
	if !m.running {
		m.running = true
		go m.run()
	}
	m.mu.Unlock()

	select {
	case <-r.done:
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	if r.err != nil {
		return -1, r.err
	}
	return r.counts[volume], nil
}

// run works through the rounds until none is waiting.
func (m *mountCounter) run() {
	for {
		m.mu.Lock()
		r := m.next
		m.next = nil
		if r == nil {
			m.running = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), mountCountTimeout)
		r.counts, r.err = m.count(ctx, slices.Sorted(maps.Keys(r.volumes)))
		cancel()
		close(r.done)
	}
}
