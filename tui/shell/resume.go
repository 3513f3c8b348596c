package shell

import (
	"io"
	"time"

	"github.com/cairn-dev/cairn/ptyshell"
)

// Reattach dials a v2 shell again after its connection was lost at lostAt
// (client.ReattachShell with the terminal's size: backoff, for at most the
// shell's detached timeout).
type Reattach func(lostAt time.Time) (*ptyshell.Session, error)

// Resuming is the Command of a v2 shell, which outlives its connection: a
// lost connection is reattached by itself — the terminal shows
// "reconnecting…" between the sessions, never over the remote screen, and
// the server's render of the screen comes back first — and only the last
// end pauses, as shell.pause_on_exit says.
func Resuming(f Factory, s *ptyshell.Session, o Options, again Reattach) (Command, error) {
	inner := o
	inner.Resumable, inner.PauseOnExit, inner.Pause = true, false, "never"
	if inner.ResumeHint == "" {
		inner.ResumeHint = "the shells screen (W) lists it"
	}
	cur, err := f(s, inner)
	if err != nil {
		return nil, err
	}
	return &resuming{cur: cur, factory: f, opts: inner, pause: o.Pause, again: again}, nil
}

type resuming struct {
	cur     Command
	factory Factory
	opts    Options
	pause   string
	again   Reattach

	in       io.Reader
	out, err io.Writer
}

func (r *resuming) SetStdin(in io.Reader)   { r.in = in; r.cur.SetStdin(in) }
func (r *resuming) SetStdout(w io.Writer)   { r.out = w; r.cur.SetStdout(w) }
func (r *resuming) SetStderr(w io.Writer)   { r.err = w; r.cur.SetStderr(w) }
func (r *resuming) Result() ptyshell.Result { return r.cur.Result() }

// Run runs sessions until one ends other than by a lost connection, or
// the shell cannot be reattached.
func (r *resuming) Run() error {
	for {
		err := r.cur.Run()
		if r.cur.Result().Ending != ptyshell.EndLost || !r.next() {
			r.pauseAfter()
			return err
		}
	}
}

// next attaches again; false when the shell is gone or refused.
func (r *resuming) next() bool {
	sess, err := r.again(time.Now())
	if err != nil {
		r.say("[cairn: the shell could not be reattached: " + err.Error() + "]")
		return false
	}
	cmd, err := r.factory(sess, r.opts)
	if err != nil {
		_ = sess.Close() // never used
		return false
	}
	cmd.SetStdin(r.in)
	cmd.SetStdout(r.out)
	cmd.SetStderr(r.err)
	r.cur = cmd
	return true
}

func (r *resuming) say(line string) {
	if r.out != nil {
		_, _ = io.WriteString(r.out, line+"\r\n") // best effort: the terminal may be gone
	}
}

// pauseAfter is shell.pause_on_exit after the last session.
func (r *resuming) pauseAfter() {
	if Pauses(r.pause, r.cur.Result()) && r.in != nil && r.out != nil {
		_, _ = io.WriteString(r.out, "Press Enter to return.")
		waitForEnter(r.in)
	}
}
