package shell

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestMemoryKeeperIsBoundedOldestFirst(t *testing.T) {
	t.Parallel()
	k := NewMemoryKeeper()
	for i := range memoryKeeps + 3 {
		require.NoError(t, k.Keep(cairn.ShellSessionInfo{ShellID: fmt.Sprint("s", i), Secret: fmt.Sprint("x", i)}))
	}
	for i := range 3 {
		_, ok := k.Lookup(fmt.Sprint("s", i))
		require.False(t, ok, "the oldest went first")
	}
	info, ok := k.Lookup(fmt.Sprint("s", memoryKeeps+2))
	require.True(t, ok)
	require.Equal(t, fmt.Sprint("x", memoryKeeps+2), info.Secret)
	require.Len(t, k.infos, memoryKeeps)
	require.Len(t, k.order, memoryKeeps)

	k.Forget("s10")
	_, ok = k.Lookup("s10")
	require.False(t, ok)
	require.Len(t, k.order, memoryKeeps-1, "the order forgets it too")
	require.NoError(t, k.Keep(cairn.ShellSessionInfo{ShellID: "s20", Secret: "again"}))
	require.Len(t, k.order, memoryKeeps-1, "keeping a kept shell again replaces it")
}
