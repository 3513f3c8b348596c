package service

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/cast"
)

// ShellRecording is shell.record: shells (v1 and v2) recorded as asciicast
// v2 files, stored as artifacts of their workspace when they end.
type ShellRecording struct {
	// Enabled records every shell; otherwise only those asked for with
	// record (the v2 create body's, the v1 handshake's query).
	Enabled bool
	// MaxBytes bounds one recording (cast.DefaultMaxBytes when zero); what
	// would pass it is cut, and the artifact's description says so.
	MaxBytes int64
	// Dir holds the recordings being written (os.TempDir when empty).
	Dir string
}

// recordStoreTimeout bounds storing one recording at the shell's end.
const recordStoreTimeout = 2 * time.Minute

// recordBuffer is the write buffer in front of a recording's file, so the
// output path makes one system call per 64 KiB rather than per chunk.
const recordBuffer = 64 << 10

// recording is one shell's asciicast, written into a temporary file (mode
// 0600) while the shell runs and removed once stored or given up.
type recording struct {
	f     *os.File
	buf   *bufio.Writer
	sum   hash.Hash
	rec   *cast.Recorder
	start time.Time
}

// startRecording begins the session's recording when the configuration or
// the request asks for one. A recording that cannot start is logged and
// the shell runs without it.
func (ss *ShellSession) startRecording(start time.Time) {
	c := ss.s.cfg.Record
	if !c.Enabled && !ss.open.Record {
		return
	}
	r, err := newRecording(c, ss.e.id, ss.open, start)
	if err != nil {
		ss.s.log.Warn("shell recording could not start; the shell runs unrecorded", append(ss.attrs(), "err", err)...)
		return
	}
	ss.rec = r
}

func newRecording(c ShellRecording, id string, o cairn.ShellOpen, start time.Time) (*recording, error) {
	f, err := createRecordingFile(c.Dir, id)
	if err != nil {
		return nil, err
	}
	r := &recording{f: f, sum: sha256.New(), start: start}
	r.buf = bufio.NewWriterSize(io.MultiWriter(f, r.sum), recordBuffer)
	r.rec, err = cast.New(r.buf, o.Cols, o.Rows, c.MaxBytes, start, map[string]string{"TERM": o.Term})
	if err != nil {
		r.remove()
		return nil, err
	}
	return r, nil
}

// wrap is a v1 session's stream with its output and resizes recorded (a
// v2 shell's holder records its own); st itself without a recording.
func (r *recording) wrap(st ptyshell.Stream) ptyshell.Stream {
	if r == nil {
		return st
	}
	return &recordedStream{Stream: st, rec: r.rec}
}

// recordedStream records what is read from a v1 shell and each size
// applied to it. Serve reads from one goroutine; the recorder is safe for
// the resizes of another.
type recordedStream struct {
	ptyshell.Stream
	rec ptyshell.Recorder
}

func (s *recordedStream) Read(p []byte) (int, error) {
	n, err := s.Stream.Read(p)
	if n > 0 {
		_ = s.rec.Output(time.Now(), p[:n]) // the recorder keeps its error
	}
	return n, err
}

func (s *recordedStream) Resize(ctx context.Context, size ptyshell.Size) error {
	err := s.Stream.Resize(ctx, size)
	if err == nil {
		_ = s.rec.Resize(time.Now(), size.Cols, size.Rows) // the recorder keeps its error
	}
	return err
}

// finish ends the file: the last event, the buffer flushed, the file
// rewound for the upload. It returns the size and the SHA-256.
func (r *recording) finish(end time.Time) (int64, []byte, error) {
	if err := r.rec.Close(end); err != nil {
		return 0, nil, err
	}
	if err := r.buf.Flush(); err != nil {
		return 0, nil, err
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return 0, nil, err
	}
	return r.rec.Size(), r.sum.Sum(nil), nil
}

func (r *recording) remove() {
	_ = r.f.Close() // the file goes anyway
	_ = os.Remove(r.f.Name())
}

// recordingName is the artifact a shell's recording becomes: artifact
// names allow no dot, so shell-<id>_cast rather than shell-<id>.cast.
func recordingName(shellID string) string { return "shell-" + shellID + "_cast" }

// recordingDescription says when, why the shell ended, and how much.
func recordingDescription(start, end time.Time, reason ptyshell.Reason, size int64, truncated bool) string {
	d := fmt.Sprintf("shell recording %s–%s, reason %s, %d bytes", start.UTC().Format(time.RFC3339),
		end.UTC().Format(time.RFC3339), reason, size)
	if truncated {
		d += " (truncated)"
	}
	return d
}

// keepRecording stores the session's recording as an artifact of its
// workspace, once the shell has ended for reason. It never fails the
// teardown: a recording that cannot be stored is logged, and its file is
// removed on every path. The time it takes is bounded.
func (ss *ShellSession) keepRecording(reason ptyshell.Reason) {
	r := ss.rec
	if r == nil {
		return
	}
	defer r.remove()
	end := time.Now()
	size, sum, err := r.finish(end)
	if err != nil {
		ss.s.log.Warn("shell recording failed; nothing stored", append(ss.attrs(), "err", err)...)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ss.life), recordStoreTimeout)
	defer cancel()
	if ss.e.tokenName != "" {
		ctx = cairn.WithActor(ctx, ss.e.tokenName)
	}
	desc := recordingDescription(r.start, end, reason, size, r.rec.Truncated())
	a, err := ss.s.svc.storeHeld(ctx, ss.e.ws.ID, recordingName(ss.e.id), &desc, held{body: r.f, size: size, sha256: sum, mimeType: cast.MIME})
	if err != nil {
		ss.s.log.Warn("shell recording not stored", append(ss.attrs(), "reason", string(cairn.ErrorReason(err)), "err", err)...)
		return
	}
	ss.s.log.Info("shell recording stored", append(ss.attrs(), "artifact_id", a.ID, "size", size)...)
}
