package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/store"
)

func TestHeads(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	t.Run("KeyedByUpdatedAt", func(t *testing.T) {
		t.Parallel()
		h := store.NewHeads(4)
		h.Put("a", t0, []string{"old"})
		_, ok := h.Get("a", t0.Add(time.Second))
		require.False(t, ok, "new content never shows the old head")
		got, ok := h.Get("a", t0)
		require.True(t, ok)
		require.Equal(t, []string{"old"}, got)
	})
	t.Run("EvictsLeastRecentlyUsed", func(t *testing.T) {
		t.Parallel()
		h := store.NewHeads(2)
		h.Put("a", t0, []string{"a"})
		h.Put("b", t0, []string{"b"})
		_, _ = h.Get("a", t0) // a is now the most recent
		h.Put("c", t0, []string{"c"})
		require.Equal(t, 2, h.Len())
		_, ok := h.Get("b", t0)
		require.False(t, ok, "b was the least recently used")
		_, ok = h.Get("a", t0)
		require.True(t, ok)
		h.Put("a", t0, []string{"a2"})
		require.Equal(t, 2, h.Len(), "a second put of a key replaces it")
	})
}
