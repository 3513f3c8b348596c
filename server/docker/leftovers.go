package docker

import (
	"context"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
)

// A container the runtime is done with and the engine failed to remove
// (it was down, or restarting) is removed again here until it goes. The
// maintainer's sweep would take it too, but only once the sidecar timeout
// and a minute have passed: it cannot tell a leftover from a sidecar that
// another replica still runs. This runtime knows its own.

// Retries start after removalRetry and back off, doubled, to
// removalRetryMax.
const (
	removalRetry    = time.Second
	removalRetryMax = 30 * time.Second
)

// maxLeftovers bounds the set; past it a container is left to the
// maintainer's sweep.
const maxLeftovers = 1000

// leftovers is the set of containers whose removal is to be retried.
type leftovers struct {
	mu       sync.Mutex
	ids      map[string]struct{}
	retrying bool
}

// removeLater retries the removal of container id until the engine removes
// it (or says it is gone), or the runtime closes.
func (r *Runtime) removeLater(id string) {
	l := &r.leftovers
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids == nil {
		l.ids = map[string]struct{}{}
	}
	if len(l.ids) >= maxLeftovers {
		return
	}
	l.ids[id] = struct{}{}
	if !l.retrying {
		l.retrying = true
		go r.retryRemovals(r.browse.stop)
	}
}

// retryRemovals tries every leftover's removal after each wait, until none
// is left or stop is closed (the runtime's shutdown).
func (r *Runtime) retryRemovals(stop <-chan struct{}) {
	l := &r.leftovers
	wait := removalRetry
	for {
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		l.mu.Lock()
		ids := make([]string, 0, len(l.ids))
		for id := range l.ids {
			ids = append(ids, id)
		}
		l.mu.Unlock()
		for _, id := range ids {
			if r.removeLeftover(id) {
				l.mu.Lock()
				delete(l.ids, id)
				l.mu.Unlock()
			}
		}
		l.mu.Lock()
		if len(l.ids) == 0 {
			l.retrying = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		wait = min(2*wait, removalRetryMax)
	}
}

// removeLeftover force-removes one leftover and reports whether it is gone.
func (r *Runtime) removeLeftover(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	err := r.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
	if err != nil && !isGoneOrGoing(err) {
		r.log.Debug("remove a leftover container: not yet", "container", id, "err", err)
		return false
	}
	r.log.Info("removed a container the engine had failed to remove", "container", id)
	return true
}
