package service

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestActivityMarks: a workspace's activity is recorded once a minute per
// process, each workspace on its own, and the memory of them is bounded.
func TestActivityMarks(t *testing.T) {
	t.Parallel()
	var a activityMarks
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	require.True(t, a.due("w1", now))
	require.False(t, a.due("w1", now.Add(59*time.Second)), "within the minute")
	require.True(t, a.due("w2", now.Add(time.Second)), "another workspace")
	require.True(t, a.due("w1", now.Add(time.Minute)))
	for i := range maxActivityMarks {
		a.due(string(rune('a'+i%26))+time.Duration(i).String(), now)
	}
	require.LessOrEqual(t, len(a.at), maxActivityMarks)
}
