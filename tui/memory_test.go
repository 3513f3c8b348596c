package tui

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client/clienttest"
)

// heapBudget bounds the live heap with 10 000 artifacts listed through
// the real client.
const heapBudget = 60 << 20

// TestMemory10k lists 10 000 artifacts through the real client from
// clienttest's server and opens them; the live heap after a GC stays under
// 60 MB (the server's own copy of the rows included).
func TestMemory10k(t *testing.T) {
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		for i := range 10000 {
			s.AddArtifact(ws.ID, fmt.Sprintf("artifact_%05d_%s", i, []string{"csv", "json", "parquet", "log"}[i%4]), nil)
		}
	})
	w.keys("enter")
	w.waitFor("artifacts (10 000)")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("live heap with 10 000 artifacts open: %.1f MB (budget %d MB)", float64(ms.HeapAlloc)/(1<<20), heapBudget>>20)
	require.Less(t, ms.HeapAlloc, uint64(heapBudget))
	arts, ok := w.m.Store().Artifacts(w.ws.ID)
	require.True(t, ok)
	require.Len(t, arts, 10000)
}
