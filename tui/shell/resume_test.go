package shell_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/shell"
)

// scripted is a Command that ends as told and records what it was given.
type scripted struct {
	end  ptyshell.Result
	opts shell.Options
	out  io.Writer
	ran  *int
}

func (s *scripted) Run() error {
	*s.ran++
	if s.out == nil {
		return errors.New("no stdout given")
	}
	_, _ = io.WriteString(s.out, "session\r\n")
	return nil
}
func (s *scripted) SetStdin(io.Reader)      {}
func (s *scripted) SetStdout(w io.Writer)   { s.out = w }
func (s *scripted) SetStderr(io.Writer)     {}
func (s *scripted) Result() ptyshell.Result { return s.end }

// factory hands out the ends in order.
func factory(ran *int, opts *[]shell.Options, ends ...ptyshell.Result) shell.Factory {
	return func(_ *ptyshell.Session, o shell.Options) (shell.Command, error) {
		*opts = append(*opts, o)
		end := ends[0]
		ends = ends[1:]
		return &scripted{end: end, opts: o, ran: ran}, nil
	}
}

var (
	lost   = ptyshell.Result{Ending: ptyshell.EndLost, Err: errors.New("read: connection reset")}
	exited = ptyshell.Result{Ending: ptyshell.EndExit, Exit: ptyshell.Exit{ExitCode: 0}}
)

func TestResumingReattachesAfterALostConnection(t *testing.T) {
	t.Parallel()
	ran, attaches := 0, 0
	var opts []shell.Options
	o := shell.NewOptions("ws-alpha", "ctrl+]", "auto")
	cmd, err := shell.Resuming(factory(&ran, &opts, lost, lost, exited), nil, o, func(time.Time) (*ptyshell.Session, error) {
		attaches++
		return nil, nil
	})
	require.NoError(t, err)
	var out bytes.Buffer
	cmd.SetStdout(&out)
	cmd.SetStdin(strings.NewReader(""))
	require.NoError(t, cmd.Run())
	require.Equal(t, 3, ran, "two lost connections, each attached again")
	require.Equal(t, 2, attaches)
	require.Equal(t, ptyshell.EndExit, cmd.Result().Ending)
	require.NotContains(t, out.String(), "Press Enter", "a clean exit at the end does not pause")
	for _, op := range opts {
		require.True(t, op.Resumable)
		require.False(t, op.PauseOnExit, "no session pauses before its reattach")
	}
}

func TestResumingStopsWhenTheShellIsGone(t *testing.T) {
	t.Parallel()
	ran := 0
	var opts []shell.Options
	o := shell.NewOptions("ws-alpha", "ctrl+]", "auto")
	cmd, err := shell.Resuming(factory(&ran, &opts, lost), nil, o, func(time.Time) (*ptyshell.Session, error) {
		return nil, errors.New("shell_not_found")
	})
	require.NoError(t, err)
	var out bytes.Buffer
	cmd.SetStdout(&out)
	cmd.SetStdin(strings.NewReader("\n"))
	require.NoError(t, cmd.Run())
	require.Equal(t, 1, ran)
	require.Equal(t, ptyshell.EndLost, cmd.Result().Ending, "a missing EXIT stays a lost connection")
	require.Contains(t, out.String(), "could not be reattached: shell_not_found")
	require.Contains(t, out.String(), "Press Enter to return.", "the last end pauses as pause_on_exit auto says")
}
