package service

import (
	"context"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
)

// Readiness cache: a probe must stay cheap, so only the database is asked
// live; other dependencies are checked at most this often, each bounded.
const (
	readyCacheTTL    = 10 * time.Second
	readyCheckBudget = 2 * time.Second
)

// cachedCheck remembers the last result of a reachability check.
type cachedCheck struct {
	mu      sync.Mutex
	checked time.Time
	err     error
}

func (c *cachedCheck) get(ctx context.Context, now time.Time, check func(context.Context) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.checked.IsZero() && now.Sub(c.checked) < readyCacheTTL {
		return c.err
	}
	// The result is cached for every caller, so it must describe the
	// dependency, not this caller's cancellation.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyCheckBudget)
	defer cancel()
	c.err, c.checked = check(ctx), now
	return c.err
}

// Ready reports whether the server can serve: SELECT 1 on the database,
// and a recent bucket check and Docker ping. The error's detail names the failing
// dependency.
func (s *Service) Ready(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return &cairn.Error{Reason: cairn.ReasonNotReady, Detail: "database", Err: err}
	}
	if err := s.storeCheck.get(ctx, time.Now(), s.objects.Ping); err != nil {
		return &cairn.Error{Reason: cairn.ReasonNotReady, Detail: "object store", Err: err}
	}
	if err := s.dockerCheck.get(ctx, time.Now(), s.runtime.Ping); err != nil {
		return &cairn.Error{Reason: cairn.ReasonNotReady, Detail: "docker", Err: err}
	}
	return nil
}

// Integrity says who checks that stored bytes are the ones their upload
// URL bound: "store", or "server" when the server hashes every registered
// object itself.
func (s *Service) Integrity() string {
	if s.verifyObjects {
		return "server"
	}
	return "store"
}

// ProbePrefix is where the object store's integrity probe writes: under
// the staging prefix, so what a crashed probe leaves is reaped as never
// referenced, and named so no register can claim it.
func (s *Service) ProbePrefix() string { return s.keys.staging + "/integrity-probe" }

// PingDatabase answers whether the database serves queries.
func (s *Service) PingDatabase(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return &cairn.Error{Reason: cairn.ReasonNotReady, Detail: "database", Err: err}
	}
	return nil
}
