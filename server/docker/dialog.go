package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// A dialog run (service.SidecarSpec.Dialog) is a sidecar that asks the
// server for what it can only be given while it runs: a pack asks for each
// upload URL once it knows the size and digest of the bytes that URL will
// carry. It runs attached without a TTY; each line on its stdout that is a
// sidecar.Need goes to the Dialog, whose Grant goes back as one line on its
// stdin, and every other line is the run's output, as a TTY run's would be.

const (
	// maxDialogLine bounds one line the sidecar prints; a longer one is
	// output, cut to this length, never a Need.
	maxDialogLine = 64 << 10
	// drainTimeout bounds the wait, after the exit, for the end of the
	// output (the attach stream closes just after the container stops).
	drainTimeout = 5 * time.Second
)

// runDialog starts the created sidecar id attached, converses until it
// exits and returns its exit code and output. The wait and its timeout are
// RunSidecar's. An error of the Dialog ends the run with that error; the
// caller removes the container.
func (r *Runtime) runDialog(ctx context.Context, id string, spec service.SidecarSpec) (int, []byte, error) {
	att, err := r.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return 0, nil, unavailable("attach to the sidecar", err)
	}
	defer att.Close()
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := &conversation{ctx: dctx, dialog: spec.Dialog, stdin: att.Conn, log: r.log,
		out: boundedBuffer{max: maxSidecarOutput}, stderr: boundedBuffer{max: maxDialogLine}}
	talked := make(chan struct{})
	go func() {
		defer close(talked)
		_, _ = stdcopy.StdCopy(c, &c.stderr, att.Reader) // ends with the stream; a Dialog error is c.failed
		c.flush()
		if c.failed != nil {
			cancel(c.failed)
		}
	}()
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		att.Close()
		<-talked
		return 0, nil, unavailable("start the sidecar", err)
	}
	code, err := r.waitSidecar(dctx, id, spec.Command)
	if dctx.Err() != nil && ctx.Err() == nil {
		err = context.Cause(dctx) // the Dialog failed, which ended the wait
	} else if err == nil {
		drain := time.NewTimer(drainTimeout)
		select {
		case <-talked:
		case <-drain.C:
			r.log.Warn("sidecar output did not end after its exit", "container", id)
		}
		drain.Stop()
	}
	cancel(nil) // a Dialog still running (past the timeout) returns
	att.Close()
	<-talked
	if err != nil {
		return 0, nil, err
	}
	// Stderr first: the result line, on stdout, stays the last line.
	out := append(bytes.Clone(c.stderr.buf.Bytes()), c.out.buf.Bytes()...)
	return code, out, nil
}

// conversation is the io.Writer the sidecar's stdout is demultiplexed into:
// it splits lines, answers Needs and keeps the rest. Its fields are the
// pump goroutine's until the pump ends.
type conversation struct {
	ctx    context.Context // the run's: cancelled when it ends
	dialog func(context.Context, sidecar.Need) (sidecar.Grant, error)
	stdin  io.Writer
	log    *slog.Logger

	line   []byte // the line so far, at most maxDialogLine bytes
	long   bool   // the line so far was longer
	out    boundedBuffer
	stderr boundedBuffer
	failed error // the Dialog's error, which stops the pump
}

func (c *conversation) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		room := max(0, maxDialogLine-len(c.line))
		c.long = c.long || len(chunk) > room
		c.line = append(c.line, chunk[:min(len(chunk), room)]...)
		if i < 0 {
			break
		}
		if err := c.endLine(); err != nil {
			c.failed = err
			return 0, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// endLine answers the line if it is a Need and keeps it as output if not.
func (c *conversation) endLine() error {
	line, long := c.line, c.long
	c.line, c.long = c.line[:0], false
	if need, ok := parseNeed(line); ok && !long {
		return c.grant(need)
	}
	c.out.keep(line)
	c.out.keep([]byte{'\n'})
	return nil
}

// flush keeps a last line that had no newline.
func (c *conversation) flush() {
	if len(c.line) > 0 {
		c.out.keep(c.line)
		c.line = c.line[:0]
	}
}

// grant asks the Dialog and writes its answer to the sidecar's stdin. The
// grant carries a presigned URL: it is never logged.
func (c *conversation) grant(need sidecar.Need) error {
	g, err := c.dialog(c.ctx, need)
	if err != nil {
		return err
	}
	line, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		// The sidecar is gone; its exit code and output tell the rest.
		c.log.Debug("write a grant to the sidecar", "err", err)
	}
	return nil
}

// parseNeed decodes a line that is a JSON object with a "need" key.
func parseNeed(line []byte) (sidecar.Need, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return sidecar.Need{}, false
	}
	var probe struct {
		Need *json.RawMessage `json:"need"`
	}
	var need sidecar.Need
	if json.Unmarshal(line, &probe) != nil || probe.Need == nil || json.Unmarshal(line, &need) != nil {
		return sidecar.Need{}, false
	}
	return need, true
}
