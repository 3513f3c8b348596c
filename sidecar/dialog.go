package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"time"
)

// The server's end of a dialog run, which every runtime shares. A pack
// asks for each upload URL once it knows the size and digest of the bytes
// that URL will carry: it prints a Need line on stdout and reads the Grant
// line that answers it on stdin (conversation, in archive_upload.go, is its
// end). The runtime moves the sidecar's output into a DialogRun and its
// grants into the sidecar's stdin; how it reaches the streams is its own.

const (
	// MaxOutput bounds what a runtime keeps of one sidecar run's output;
	// the rest is dropped.
	MaxOutput = 1 << 20
	// maxDialogLine bounds one line a dialog run prints; a longer one is
	// output, cut to this length, never a Need. It bounds what is kept of
	// stderr too.
	maxDialogLine = 64 << 10
	// dialogDrain bounds the wait, after the sidecar's exit, for the end of
	// its output stream, which closes just after the container stops.
	dialogDrain = 5 * time.Second
)

// DialogRun splits the output of a dialog run into lines: each stdout line
// that is a Need goes to answer, whose Grant goes back as one line on the
// sidecar's stdin, and every other line is the run's output. It keeps at
// most MaxOutput bytes of stdout and maxDialogLine of stderr. Its state is
// the pump's (Pump) until Done is closed.
type DialogRun struct {
	ctx    context.Context // the run's: cancelled when it ends
	answer func(context.Context, Need) (Grant, error)
	stdin  io.Writer
	debug  func(msg string, args ...any)
	drain  time.Duration // AwaitOutput's bound

	line   []byte // the line so far, at most maxDialogLine bytes
	long   bool   // the line so far was longer
	stdout BoundedBuffer
	stderr BoundedBuffer
	failed error // answer's error, which stops the pump
	done   chan struct{}
}

// NewDialogRun returns the DialogRun of one run: ctx is the run's, answer
// the spec's Dialog, stdin the sidecar's and debug the runtime's logger
// (a grant that cannot be written is only logged: the sidecar is gone,
// and its exit code and output tell the rest).
func NewDialogRun(ctx context.Context, answer func(context.Context, Need) (Grant, error), stdin io.Writer, debug func(msg string, args ...any)) *DialogRun {
	return &DialogRun{ctx: ctx, answer: answer, stdin: stdin, debug: debug, drain: dialogDrain,
		stdout: BoundedBuffer{Max: MaxOutput}, stderr: BoundedBuffer{Max: maxDialogLine}, done: make(chan struct{})}
}

// Pump runs stream on a goroutine of its own: stream copies the sidecar's
// output into stdout and stderr until it ends (a runtime that reads one
// merged stream writes only stdout). An error of answer stops the copy
// and is handed to failed, which ends the run. Done is closed after.
func (d *DialogRun) Pump(stream func(stdout, stderr io.Writer), failed func(error)) {
	go func() {
		defer close(d.done)
		stream(writerFunc(d.write), &d.stderr)
		d.flush()
		if d.failed != nil {
			failed(d.failed)
		}
	}()
}

// Done is closed when the pump has ended.
func (d *DialogRun) Done() <-chan struct{} { return d.done }

// AwaitOutput waits, after the sidecar's exit, for the pump to end, within
// a bound; false means the output did not end in time and the caller goes
// on without waiting.
func (d *DialogRun) AwaitOutput() bool {
	drain := time.NewTimer(d.drain)
	defer drain.Stop()
	select {
	case <-d.done:
		return true
	case <-drain.C:
		return false
	}
}

// Output is what the run printed, once Done is closed: stderr first, so
// that the result line, last on stdout, stays the last line.
func (d *DialogRun) Output() []byte {
	return append(bytes.Clone(d.stderr.Bytes()), d.stdout.Bytes()...)
}

// write takes stdout: it splits lines and ends each one.
func (d *DialogRun) write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		room := max(0, maxDialogLine-len(d.line))
		d.long = d.long || len(chunk) > room
		d.line = append(d.line, chunk[:min(len(chunk), room)]...)
		if i < 0 {
			break
		}
		if err := d.endLine(); err != nil {
			d.failed = err
			return 0, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// endLine answers the line if it is a Need and keeps it as output if not.
func (d *DialogRun) endLine() error {
	line, long := d.line, d.long
	d.line, d.long = d.line[:0], false
	if need, ok := parseNeed(line); ok && !long {
		return d.grant(need)
	}
	d.stdout.Keep(line)
	d.stdout.Keep([]byte{'\n'})
	return nil
}

// flush keeps a last line that had no newline.
func (d *DialogRun) flush() {
	if len(d.line) > 0 {
		d.stdout.Keep(d.line)
		d.line = d.line[:0]
	}
}

// grant asks answer and writes its Grant to the sidecar's stdin. The
// grant carries a presigned URL: it is never logged.
func (d *DialogRun) grant(need Need) error {
	g, err := d.answer(d.ctx, need)
	if err != nil {
		return err
	}
	line, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if _, err := d.stdin.Write(append(line, '\n')); err != nil {
		d.debug("write a grant to the sidecar", "err", err)
	}
	return nil
}

// parseNeed decodes a line that is a JSON object with a "need" key.
func parseNeed(line []byte) (Need, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Need{}, false
	}
	var probe struct {
		Need *json.RawMessage `json:"need"`
	}
	var need Need
	if json.Unmarshal(line, &probe) != nil || probe.Need == nil || json.Unmarshal(line, &need) != nil {
		return Need{}, false
	}
	return need, true
}

// writerFunc is an io.Writer that is one function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
