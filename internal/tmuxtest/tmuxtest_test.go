package tmuxtest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// The driver against a real program: what is typed reaches it, what it
// prints is on the screen, a resize reaches it, and its exit status is read.
func TestPane(t *testing.T) {
	t.Parallel()
	p := tmuxtest.Start(t, tmuxtest.Options{Width: 80, Height: 24}, "sh")
	p.Type("echo tmux-$((6*7))")
	p.Keys("Enter")
	p.WaitForText(10*time.Second, "tmux-42")

	p.Type("stty size")
	p.Keys("Enter")
	p.WaitForText(10*time.Second, "24 80")
	p.Resize(100, 30)
	p.Type("stty size")
	p.Keys("Enter")
	p.WaitForText(10*time.Second, "30 100")

	p.Type("exit 3")
	p.Keys("Enter")
	require.Equal(t, 3, p.WaitExit(10*time.Second))
	require.True(t, strings.Contains(p.Capture(), "exit 3"))
}
