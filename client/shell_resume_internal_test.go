package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// A reattach goes on trying while another try may change the answer: a
// replica shutting down, the shell's node not ready; it stops at any other
// refusal, and retries what is no refusal at all (no answer).
func TestReattachRefusedForGood(t *testing.T) {
	t.Parallel()
	for reason, forGood := range map[cairn.Reason]bool{
		cairn.ReasonServerShuttingDown:    false,
		cairn.ReasonVolumeNodeUnavailable: false,
		cairn.ReasonShellNotFound:         true,
		cairn.ReasonShellSecretInvalid:    true,
		cairn.ReasonDockerUnavailable:     true,
	} {
		require.Equal(t, forGood, refusedForGood(cairn.Errorf(reason, "x")), "%s", reason)
	}
	require.False(t, refusedForGood(errors.New("connection refused")))
}
