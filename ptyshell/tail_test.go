package ptyshell_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
)

func TestTailScreenKeepsTheLastBytes(t *testing.T) {
	s := &ptyshell.TailScreen{Limit: 8}
	for _, p := range []string{"abc", "defgh", "ij"} {
		_, err := s.Write([]byte(p))
		require.NoError(t, err)
	}
	require.Equal(t, "cdefghij", string(s.Render()))
	_, err := s.Write([]byte(strings.Repeat("x", 20) + "end"))
	require.NoError(t, err)
	require.Equal(t, "xxxxxend", string(s.Render()))
}
