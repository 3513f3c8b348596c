package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// A dialog run (service.SidecarSpec.Dialog) converses while it runs: each
// line the sidecar prints that is a sidecar.Need is answered with one
// sidecar.Grant line on its stdin. A pod starts at once and the sidecar
// image has no shell to hold it at a gate, so its output is read from the
// followed log, which holds every byte from the container's first
// instant; only stdin is attached. The log merges stdout and stderr, in
// the order the kubelet saw them.

const (
	// maxDialogLine bounds one line the sidecar prints; a longer one is
	// output, cut to this length, never a Need.
	maxDialogLine = 64 << 10
	// drainTimeout bounds the wait, after the exit, for the end of the log.
	drainTimeout = 5 * time.Second
)

// runDialog converses with the created sidecar pod until it exits and
// returns its exit code and output. The timeouts are RunSidecar's. An
// error of the Dialog ends the run with that error; the caller deletes
// the pod.
func (r *Runtime) runDialog(ctx context.Context, name string, spec service.SidecarSpec) (int, []byte, error) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.waitStarted(ctx, wctx, name, spec.Command); err != nil {
		return 0, nil, err
	}
	dctx, stop := context.WithCancelCause(wctx)
	defer stop(nil)
	stdinR, stdinW := io.Pipe()
	// Closing stdin at the end lets the sidecar read end of file (stdin is
	// open once).
	defer stdinW.CloseWithError(io.EOF)
	if err := r.attachStdin(dctx, name, stdinR); err != nil {
		return 0, nil, unavailable("attach to the sidecar", err)
	}
	c := &conversation{ctx: dctx, dialog: spec.Dialog, stdin: stdinW, log: r.log, out: boundedBuffer{max: maxSidecarOutput}}
	talked, err := r.follow(dctx, name, c, func(err error) { stop(err) })
	if err != nil {
		return 0, nil, unavailable("read the sidecar output", err)
	}
	code, err := r.waitEnded(ctx, dctx, name, spec.Command)
	if cause := context.Cause(dctx); dctx.Err() != nil && wctx.Err() == nil && ctx.Err() == nil {
		err = cause // the Dialog failed, which ended the wait
	} else if err == nil {
		drain := time.NewTimer(drainTimeout)
		select {
		case <-talked:
		case <-drain.C:
			r.log.Warn("sidecar log did not end after its exit", "pod", name)
		}
		drain.Stop()
	}
	stop(nil)
	<-talked
	if err != nil {
		return 0, nil, err
	}
	return code, c.out.buf.Bytes(), nil
}

// attachStdin attaches stdin alone; the attach ends with ctx or the pod.
// Its end fails the next grant write instead of blocking it.
func (r *Runtime) attachStdin(ctx context.Context, name string, stdin *io.PipeReader) error {
	exec, err := r.attachExecutor(name, &corev1.PodAttachOptions{Container: "sidecar", Stdin: true})
	if err != nil {
		return err
	}
	go func() {
		err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin})
		if err == nil {
			err = io.ErrClosedPipe
		}
		stdin.CloseWithError(err)
	}()
	return nil
}

// follow pumps the followed log into c until it ends; talked is closed
// then. A Dialog error is handed to failed, which ends the run.
func (r *Runtime) follow(ctx context.Context, name string, c *conversation, failed func(error)) (<-chan struct{}, error) {
	logs, err := r.api.podLogs(r.cfg.Namespace, name, &corev1.PodLogOptions{Container: "sidecar", Follow: true}).Stream(ctx)
	if err != nil {
		return nil, err
	}
	talked := make(chan struct{})
	go func() {
		defer close(talked)
		defer logs.Close()
		_, _ = io.Copy(c, logs) // ends with the log; a Dialog error is c.failed
		c.flush()
		if c.failed != nil {
			failed(c.failed)
		}
	}()
	return talked, nil
}

// conversation is the io.Writer the sidecar's log is copied into: it
// splits lines, answers Needs and keeps the rest. Its fields are the pump
// goroutine's until the pump ends.
type conversation struct {
	ctx    context.Context // the run's: cancelled when it ends
	dialog func(context.Context, sidecar.Need) (sidecar.Grant, error)
	stdin  io.Writer
	log    *slog.Logger

	line   []byte // the line so far, at most maxDialogLine bytes
	long   bool   // the line so far was longer
	out    boundedBuffer
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

// boundedBuffer keeps at most max bytes; the rest is dropped.
type boundedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) keep(p []byte) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
}
