package service_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestReady(t *testing.T) {
	t.Parallel()

	// countPings makes the runtime's ping answer err and counts the calls.
	countPings := func(f *fixture, err error) *atomic.Int32 {
		var n atomic.Int32
		f.objects.PingFunc = func(context.Context) error { return nil }
		f.runtime.PingFunc = func(context.Context) error {
			n.Add(1)
			return err
		}
		return &n
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		countPings(f, nil)

		require.NoError(t, svc.Ready(t.Context()))
	})

	t.Run("ErrDatabase", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		down := errors.New("connection refused")
		f.store.PingFunc = func(context.Context) error { return down }
		pings := countPings(f, nil)

		err := svc.Ready(t.Context())
		require.Equal(t, cairn.ReasonNotReady, cairn.ErrorReason(err))
		require.Equal(t, "database", cairn.ErrorDetail(err))
		require.ErrorIs(t, err, down)
		require.Zero(t, pings.Load())
	})

	t.Run("ErrObjectStore", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		pings := countPings(f, nil)
		f.objects.PingFunc = func(context.Context) error {
			return cairn.Errorf(cairn.ReasonStoreUnavailable, "bucket missing")
		}

		err := svc.Ready(t.Context())
		require.Equal(t, cairn.ReasonNotReady, cairn.ErrorReason(err))
		require.Equal(t, "object store", cairn.ErrorDetail(err))
		require.Zero(t, pings.Load(), "docker is not asked once the store failed")
	})

	t.Run("ErrDocker", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		down := cairn.Errorf(cairn.ReasonDockerUnavailable, "docker unavailable")
		countPings(f, down)

		err := svc.Ready(t.Context())
		require.Equal(t, cairn.ReasonNotReady, cairn.ErrorReason(err))
		require.Equal(t, "docker", cairn.ErrorDetail(err))
		require.ErrorIs(t, err, down)
	})

	t.Run("DockerCheckCached", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		var dbPings atomic.Int32
		f.store.PingFunc = func(context.Context) error { dbPings.Add(1); return nil }
		pings := countPings(f, nil)

		require.NoError(t, svc.Ready(t.Context()))
		require.NoError(t, svc.Ready(t.Context()))
		require.Equal(t, int32(2), dbPings.Load(), "the database is asked live")
		require.Equal(t, int32(1), pings.Load(), "docker is asked at most every 10 s")
	})

	t.Run("DockerFailureCached", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		pings := countPings(f, errors.New("no docker"))

		for range 2 {
			require.Equal(t, "docker", cairn.ErrorDetail(svc.Ready(t.Context())))
		}
		require.Equal(t, int32(1), pings.Load())
	})

	t.Run("DockerCheckCachedConcurrently", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		pings := countPings(f, nil)

		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { require.NoError(t, svc.Ready(t.Context())) })
		}
		wg.Wait()
		require.Equal(t, int32(1), pings.Load())
	})

	t.Run("DockerCheckBounded", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		f.runtime.PingFunc = func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Second):
				return errors.New("ctx was not bounded")
			}
		}

		start := time.Now()
		err := svc.Ready(t.Context())
		// Under the stub's own 5 s: a loaded machine may be late to wake
		// the bounded check, but an unbounded one takes the full 5 s.
		require.Less(t, time.Since(start), 4*time.Second, "the docker check is bounded by 2 s")
		require.Equal(t, "docker", cairn.ErrorDetail(err))
	})

	t.Run("DockerCheckOutlivesCaller", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.PingFunc = func(context.Context) error { return nil }
		var pings atomic.Int32
		f.runtime.PingFunc = func(ctx context.Context) error {
			pings.Add(1)
			return ctx.Err() // what a real ping returns on a cancelled context
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()

		// A caller that went away must not leave its cancellation cached as
		// Docker's state for the next 10 s.
		_ = svc.Ready(ctx)
		require.NoError(t, svc.Ready(t.Context()))
		require.Equal(t, int32(1), pings.Load())
	})
}
