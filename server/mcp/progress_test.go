package mcp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgressTally: the reports of one transfer pass as they are; those
// of a second transfer of the same call (a fork's restore after its
// snapshot) count on from where the first ended, so progress only grows.
func TestProgressTally(t *testing.T) {
	t.Parallel()
	var p progressTally
	type report struct{ done, total, progress, callTotal int64 }
	for i, r := range []report{
		{10, 0, 10, 0}, {40, 0, 40, 0}, {40, 0, 40, 0}, // a snapshot: bytes read, total unknown
		{5, 100, 45, 140}, {100, 100, 140, 140}, // its restore: the second transfer
		{20, 100, 160, 240}, // a third that went back to 0
	} {
		progress, total := p.next(r.done, r.total)
		require.Equal(t, r.progress, progress, "report %d", i)
		require.Equal(t, r.callTotal, total, "report %d", i)
	}
}
