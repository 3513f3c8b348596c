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

// shellTTY is the process's terminal and its size.
func shellTTY() (ptyshell.Size, error) {
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return ptyshell.Size{}, ptyshell.ErrNotTerminal
	}
	cols, rows, err := term.GetSize(int(os.Stdout.Fd()))
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
// status.
func (c *cli) attachLoop(ctx context.Context, cl *client.Client, id, secret, ws, detachKey string, detached time.Duration) (int, error) {
	size, err := shellTTY()
	if err != nil {
		return 0, err
	}
	sess, err := cl.AttachShell(ctx, id, secret, size)
	for {
		if errors.Is(err, context.Canceled) {
			return ptyshell.ExitStatusLost, nil
		}
		if err != nil {
			return 0, err
		}
		res, err := runShellTerminal(sess, ptyshell.TerminalOptions{Workspace: ws, DetachKey: detachKey,
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
		sess, err = cl.ReattachShell(ctx, id, secret, time.Now(), detached, shellTTY)
		if err != nil && !errors.Is(err, context.Canceled) {
			if _, refused := errors.AsType[*cairn.Error](err); !refused {
				return res.ExitStatus(), nil // the shell is gone by now: the lost connection's status
			}
		}
	}
}

func runShellTerminal(sess *ptyshell.Session, opts ptyshell.TerminalOptions) (ptyshell.Result, error) {
	tm, err := ptyshell.NewTerminal(sess, opts)
	if err != nil {
		_ = sess.Close() // never used
		return ptyshell.Result{}, usagef("--detach-key: %v", err)
	}
	tm.SetStdin(os.Stdin)
	tm.SetStdout(os.Stdout)
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
	status, err := c.attachLoop(ctx, cl, info.ShellID, info.Secret, ws, detachKey, detached)
	return status, true, err
}

// attachShell is `cairn shell --attach ID`.
func (c *cli) attachShell(ctx context.Context, cl *client.Client, id, detachKey string) (int, error) {
	secret, err := loadShellSecret(id)
	if err != nil {
		return 0, err
	}
	return c.attachLoop(ctx, cl, id, secret, "shell "+id, detachKey, ptyshell.DefaultDetached)
}

// watchShell is `cairn shell --watch ID`: read-only, no reattach.
func (c *cli) watchShell(ctx context.Context, cl *client.Client, id, detachKey string) (int, error) {
	size, err := shellTTY()
	if err != nil {
		return 0, err
	}
	sess, err := cl.WatchShell(ctx, id, size)
	if err != nil {
		return 0, err
	}
	res, err := runShellTerminal(sess, ptyshell.TerminalOptions{Workspace: "shell " + id + " (watching, read-only)",
		DetachKey: detachKey, Resumable: true, ResumeHint: "you were only watching"})
	return res.ExitStatus(), err
}
