package sidecar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCapabilities(t *testing.T) {
	t.Parallel()
	// Unpack restores owners and modes of files it does not own.
	for command, want := range map[string][]string{
		CommandPrep:     nil,
		CommandPut:      {"DAC_OVERRIDE"},
		CommandDownload: {"DAC_OVERRIDE", "CHOWN"},
		CommandPack:     {"DAC_OVERRIDE"},
		CommandUnpack:   {"DAC_OVERRIDE", "CHOWN", "FOWNER"},
		CommandSnapshot: {"DAC_OVERRIDE"},
		CommandRestore:  {"DAC_OVERRIDE", "CHOWN", "FOWNER", "FSETID"},
	} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, want, Capabilities(command))
		})
	}
}
