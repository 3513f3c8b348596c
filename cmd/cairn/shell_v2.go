package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
)

// shellSecretEnv, when set, is the secret `cairn shell --attach` uses
// instead of the one kept in the state directory.
const shellSecretEnv = "CAIRN_SHELL_SECRET"

// saveShellSecret keeps a new shell's secret where every cairn client of
// this machine finds it (client.ShellSecrets).
func saveShellSecret(info *cairn.ShellSessionInfo) error {
	keep, err := client.DefaultShellSecrets()
	if err != nil {
		return err
	}
	return keep.Keep(*info)
}

func loadShellSecret(id string) (string, error) {
	if s := os.Getenv(shellSecretEnv); s != "" {
		return s, nil
	}
	keep, err := client.DefaultShellSecrets()
	if err != nil {
		return "", err
	}
	info, ok := keep.Lookup(id)
	if !ok {
		return "", usagef("no secret kept for shell %s here; set %s", id, shellSecretEnv)
	}
	return info.Secret, nil
}

func forgetShellSecret(id string) {
	if keep, err := client.DefaultShellSecrets(); err == nil {
		keep.Forget(id)
	}
}

// tty is the terminal a shell runs on: the process's own (processTTY),
// or a pseudo-terminal in tests.
type tty struct{ in, out *os.File }

func processTTY() tty { return tty{in: os.Stdin, out: os.Stdout} }

// size is the terminal's size; it fails when in or out is no terminal.
func (t tty) size() (ptyshell.Size, error) {
	if !term.IsTerminal(int(t.in.Fd())) || !term.IsTerminal(int(t.out.Fd())) {
		return ptyshell.Size{}, ptyshell.ErrNotTerminal
	}
	cols, rows, err := term.GetSize(int(t.out.Fd()))
	if err != nil {
		return ptyshell.Size{}, fmt.Errorf("read the terminal size: %w", err)
	}
	return ptyshell.Size{Cols: cols, Rows: rows}.Clamp(), nil
}

// attachLoop attaches to the v2 shell id as its writer and runs it on the
// terminal; after a lost connection it reattaches by itself, with backoff,
// for at most the detached timeout. The summary line of each lost
// connection ("reconnecting…") is printed between sessions, after the
// terminal was restored, never over the remote screen. It returns the exit
// status, or the error of an attach or reattach that did not happen: a
// reattach refused or unanswered is a reattachError.
func (c *cli) attachLoop(ctx context.Context, cl *client.Client, tt tty, id, secret, ws, detachKey string, detached time.Duration) (int, error) {
	size, err := tt.size()
	if err != nil {
		return 0, err
	}
	// One err for the whole loop: the dial's error must be the one checked
	// before a session runs, or a refused reattach runs a nil session.
	sess, err := cl.AttachShell(ctx, id, secret, size)
	for {
		if errors.Is(err, context.Canceled) {
			return ptyshell.ExitStatusLost, nil // interrupted; the shell keeps running
		}
		if err != nil {
			return 0, err
		}
		var res ptyshell.Result
		res, err = runShellTerminal(tt, sess, ptyshell.TerminalOptions{Workspace: ws, DetachKey: detachKey,
			Resumable: true, ResumeHint: "cairn shell --attach " + id + " reattaches"})
		if err != nil {
			return 0, err
		}
		if res.Ending != ptyshell.EndLost {
			if res.Ending == ptyshell.EndExit && res.Exit.Reason != ptyshell.ReasonTakenOver {
				forgetShellSecret(id)
			}
			return res.ExitStatus(), nil
		}
		sess, err = c.reattach(ctx, cl, tt, id, secret, detached)
	}
}

// reattach dials the shell again after a lost connection. A refusal, or
// no answer within the detached timeout, comes back as a reattachError;
// a cancelled ctx as itself.
func (c *cli) reattach(ctx context.Context, cl *client.Client, tt tty, id, secret string, detached time.Duration) (*ptyshell.Session, error) {
	sess, err := cl.ReattachShell(ctx, id, secret, time.Now(), detached, tt.size)
	if err == nil || errors.Is(err, context.Canceled) {
		return sess, err
	}
	if cairn.ErrorReason(err) == cairn.ReasonShellNotFound {
		forgetShellSecret(id) // the shell is gone: its secret opens nothing
	}
	return nil, reattachFailed(id, detached, err)
}

// reattachFailed is the one line and the exit code of a reattach that will
// not happen: the code of the refusal as for any command (3 for
// shell_not_found, 5 for a secret refused, 6 for no answer, …).
func reattachFailed(id string, detached time.Duration, err error) error {
	why := describe(err)
	if client.IsUnreachable(err) {
		why = fmt.Sprintf("no answer from the server within the shell's detached timeout (%v), after which it ends the shell: %s", detached, why)
	}
	// The line is made here: describe would print only the server's part of
	// a wrapped refusal.
	line := errors.New("shell " + id + " could not be reattached: " + why)
	return &commandError{err: line, code: exitCodeOf(err)}
}

func runShellTerminal(tt tty, sess *ptyshell.Session, opts ptyshell.TerminalOptions) (ptyshell.Result, error) {
	tm, err := ptyshell.NewTerminal(sess, opts)
	if err != nil {
		_ = sess.Close() // never used
		return ptyshell.Result{}, usagef("--detach-key: %v", err)
	}
	tm.SetStdin(tt.in)
	tm.SetStdout(tt.out)
	if err := tm.Run(); errors.Is(err, ptyshell.ErrNotTerminal) {
		return ptyshell.Result{}, err
	}
	return tm.Result(), nil
}

// shellV2 creates a v2 shell in workspace id and attaches; ok is false when
// the server has no v2 routes, and the caller falls back to v1.
func (c *cli) shellV2(ctx context.Context, cl *client.Client, id, ws string, create cairn.ShellCreate, detachKey string) (int, bool, error) {
	info, err := cl.CreateShellWith(ctx, id, create)
	if client.IsV2Unsupported(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, true, err
	}
	if err := saveShellSecret(info); err != nil {
		return 0, true, err
	}
	detached := time.Duration(info.DetachedTimeoutSecs) * time.Second
	status, err := c.attachLoop(ctx, cl, processTTY(), info.ShellID, info.Secret, ws, detachKey, detached)
	return status, true, err
}

// attachShell is `cairn shell --attach ID`.
func (c *cli) attachShell(ctx context.Context, cl *client.Client, id, detachKey string) (int, error) {
	secret, err := loadShellSecret(id)
	if err != nil {
		return 0, err
	}
	return c.attachLoop(ctx, cl, processTTY(), id, secret, "shell "+id, detachKey, ptyshell.DefaultDetached)
}

// watchShell is `cairn shell --watch ID`: read-only, no reattach.
func (c *cli) watchShell(ctx context.Context, cl *client.Client, id, detachKey string) (int, error) {
	tt := processTTY()
	size, err := tt.size()
	if err != nil {
		return 0, err
	}
	sess, err := cl.WatchShell(ctx, id, size)
	if err != nil {
		return 0, err
	}
	res, err := runShellTerminal(tt, sess, ptyshell.TerminalOptions{Workspace: "shell " + id + " (watching, read-only)",
		DetachKey: detachKey, Resumable: true, ResumeHint: "you were only watching"})
	return res.ExitStatus(), err
}
