package clientconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// maxCommandOutput bounds what a token_command may print: a token is a
// line, and a command that prints more is not printing a token.
const maxCommandOutput = 64 << 10

// readTokenFile reads the token in path (~/ is $HOME/). source names it in
// an error, from in the result.
func (in Input) readTokenFile(ctxName, source, path, from string) (token, error) {
	path = in.expandHome(path)
	b, err := in.ReadFile(path)
	if err != nil {
		return token{}, &ContextError{Context: ctxName, Source: source, Err: err}
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return token{}, &ContextError{Context: ctxName, Source: source, Err: fmt.Errorf("%s is empty", path)}
	}
	return token{value: t, from: from, path: path}, nil
}

func (in Input) expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home := in.Getenv("HOME"); home != "" {
			return filepath.Join(home, rest)
		}
	}
	return path
}

func (in Input) readTokenEnv(c Context) (token, error) {
	t := strings.TrimSpace(in.Getenv(c.TokenEnv))
	if t == "" {
		return token{}, &ContextError{Context: c.Name, Source: "token_env " + c.TokenEnv, Err: errors.New("not set or empty")}
	}
	return token{value: t, from: fmt.Sprintf("context %s (token_env %s)", c.Name, c.TokenEnv)}, nil
}

// runTokenCommand runs the context's command, without a shell and with no
// stdin, under CommandTimeout, and takes its trimmed stdout as the token.
// Its stderr is kept (the first 4 KiB) to say why it failed.
func (in Input) runTokenCommand(ctx context.Context, c Context) (token, error) {
	source := "token_command " + c.TokenCommand[0]
	fail := func(err error) (token, error) {
		return token{}, &ContextError{Context: c.Name, Source: source, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, in.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.TokenCommand[0], c.TokenCommand[1:]...)
	stdout := &boundedBuffer{limit: maxCommandOutput}
	stderr := &boundedBuffer{limit: 4 << 10, truncate: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A child the command left behind may hold its pipes open; do not wait
	// for it past the kill.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case stdout.over:
		return fail(fmt.Errorf("printed more than %d KiB", maxCommandOutput>>10))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(fmt.Errorf("did not finish within %s", in.CommandTimeout))
	case err != nil:
		return fail(commandFailure(err, stderr.buf.String()))
	}
	t := strings.TrimSpace(stdout.buf.String())
	if t == "" {
		return fail(errors.New("printed nothing"))
	}
	return token{value: t, from: fmt.Sprintf("context %s (token_command %s)", c.Name, c.TokenCommand[0])}, nil
}

// commandFailure is err with the last line the command wrote on stderr,
// which usually says why.
func commandFailure(err error, stderr string) error {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return fmt.Errorf("%w: %s", err, last)
	}
	return err
}

// boundedBuffer keeps at most limit bytes. Past it, a truncating buffer
// drops the rest; another fails the write, which stops the copy and closes
// the pipe, so that a command printing forever ends on SIGPIPE rather than
// at the timeout.
type boundedBuffer struct {
	limit    int
	truncate bool
	buf      bytes.Buffer
	over     bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	b.over = true
	if b.truncate {
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return 0, errors.New("output too long")
}
