package ptyshell_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
)

func TestSignalOf(t *testing.T) {
	for _, name := range ptyshell.SignalNames {
		s, ok := ptyshell.SignalOf(name)
		require.True(t, ok, name)
		require.NotZero(t, s)
	}
	for _, name := range []string{"SEGV", "SIGINT", "int", "", "ABRT"} {
		_, ok := ptyshell.SignalOf(name)
		require.False(t, ok, name)
	}
}
