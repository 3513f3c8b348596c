package toast_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

func TestExpiryByID(t *testing.T) {
	t.Parallel()
	var m toast.Model
	old := m.Push(toast.LevelOK, "first", time.Time{}, "")
	newer := m.Push(toast.LevelOK, "second", time.Time{}, "")
	m.Expire(old.ID) // an old timer does not remove the newer toast
	cur, ok := m.Current()
	require.True(t, ok)
	require.Equal(t, newer.ID, cur.ID)
	m.Expire(newer.ID)
	_, ok = m.Current()
	require.False(t, ok)
	require.Len(t, m.Log(), 2)
}

func TestErrorsStayUntilDismissedOrReplaced(t *testing.T) {
	t.Parallel()
	var m toast.Model
	m.Push(toast.LevelError, "one", time.Time{}, "req-1")
	m.Push(toast.LevelError, "two", time.Time{}, "")
	info := m.Push(toast.LevelInfo, "note", time.Time{}, "")
	m.Expire(info.ID)
	cur, _ := m.Current()
	require.Equal(t, "two", cur.Text, "a newer error replaced the first")
	require.True(t, m.DismissError())
	require.False(t, m.DismissError())
	require.Equal(t, time.Duration(0), toast.Lifetime(toast.LevelError))
	require.Equal(t, 8*time.Second, toast.Lifetime(toast.LevelWarn))
	require.Equal(t, 4*time.Second, toast.Lifetime(toast.LevelOK))
}

func TestLogBounded(t *testing.T) {
	t.Parallel()
	var m toast.Model
	for range toast.LogSize + 20 {
		m.Push(toast.LevelInfo, "x", time.Time{}, "")
	}
	m.Note(toast.LevelWarn, "noted", time.Time{})
	require.Len(t, m.Log(), toast.LogSize)
	require.Equal(t, "noted", m.Log()[toast.LogSize-1].Text)
}
