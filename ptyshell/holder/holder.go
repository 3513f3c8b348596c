package holder

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/screen"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/cast"
)

// Holder keeps one shell for as long as it lives: the process on its PTY,
// the virtual screen, the recording and the clocks (a ptyshell.Hub), and
// serves the servers that attach to it over a local socket. It never
// writes a byte of the session to its own stdout or stderr.
type Holder struct {
	cfg    Config
	proofs *verifier
	stream *ptyStream
	hub    *ptyshell.Hub
	rec    *recording

	mu        sync.Mutex
	lastInput time.Time
	end       *EndResult    // set once the shell has ended
	endedCh   chan struct{} // closed once end is set
	released  chan struct{}
	release   sync.Once
	serving   sync.WaitGroup // the connections being served
}

// New returns the holder of cfg, whose proofs are keyed by key.
func New(cfg Config, key []byte) (*Holder, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	h := &Holder{cfg: cfg, proofs: newVerifier(key), endedCh: make(chan struct{}), released: make(chan struct{})}
	h.stream = newPTYStream(cfg.Argv, shellEnv(), h.size(), cfg.Stop)
	return h, nil
}

func (h *Holder) size() ptyshell.Size { return ptyshell.Size{Cols: h.cfg.Cols, Rows: h.cfg.Rows} }

// Run starts the shell and serves ln until the shell has ended and its
// end was collected (or Collect passed). It returns the start's error, or
// nil.
func (h *Holder) Run(ctx context.Context, ln net.Listener) error {
	reapCtx, stopReaping := context.WithCancel(context.Background())
	defer stopReaping()
	go reapChildren(reapCtx, h.stream.reaped)

	start := time.Now()
	if h.cfg.Record {
		rec, err := newRecording(filepath.Dir(h.cfg.Socket), h.cfg, start)
		if err != nil {
			return err
		}
		h.rec = rec
	}
	h.hub = ptyshell.NewHub(h.stream, h.hubOptions())
	if err := h.hub.Start(ctx); err != nil {
		return err
	}
	srv := &http.Server{Handler: h.routes(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 8 << 10}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown below

	h.recordEnd(h.hub.Result(), start)
	t := time.NewTimer(h.cfg.Collect)
	defer t.Stop()
	select {
	case <-h.released:
	case <-t.C:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx) // the connections left are gone with the process
	return nil
}

func (h *Holder) hubOptions() ptyshell.HubOptions {
	c := h.cfg
	return ptyshell.HubOptions{
		Size:         h.size(),
		NewScreen:    func(cols, rows int) ptyshell.Screen { return screen.New(cols, rows, c.Scrollback) },
		Recorder:     h.rec.recorder(),
		Detached:     c.Detached,
		IdleTimeout:  c.Idle,
		MaxLifetime:  c.MaxLifetime,
		StopTimeout:  c.Stop + 10*time.Second,
		DrainTimeout: c.Drain,
		Logger:       slog.New(slog.DiscardHandler),
	}
}

// connOptions are one connection's ServeOptions before its tap completes
// them.
func (h *Holder) connOptions() ptyshell.ServeOptions {
	c := h.cfg
	return ptyshell.ServeOptions{
		Status: ptyshell.Status{ShellID: c.ShellID, Container: c.Container, WorkspaceID: c.WorkspaceID,
			WorkspaceName: c.WorkspaceName},
		IdleWarning:  c.IdleWarning,
		PingInterval: c.Ping,
		PongWait:     c.PongWait,
		WriteWait:    c.WriteWait,
		StopTimeout:  c.Stop + 10*time.Second,
		DrainTimeout: c.Drain,
		Logger:       slog.New(slog.DiscardHandler),
		OnInput: func(at time.Time, _ int) {
			h.mu.Lock()
			h.lastInput = at
			h.mu.Unlock()
		},
	}
}

// EndResult is how the shell ended, as GET /v1/state reports it once it
// has.
type EndResult struct {
	Reason    ptyshell.Reason `json:"reason"`
	ExitCode  int             `json:"exit_code"`
	BytesIn   int64           `json:"bytes_in"`
	BytesOut  int64           `json:"bytes_out"`
	StartedAt time.Time       `json:"started_at"`
	EndedAt   time.Time       `json:"ended_at"`
	// Error says what failed when Reason is "error"; never terminal
	// content.
	Error string `json:"error,omitempty"`
	// Recording is the recording's size, SHA-256 (hex) and whether it was
	// cut at its bound; absent without one or when it failed.
	Recording *RecordingInfo `json:"recording,omitempty"`
}

// RecordingInfo describes a finished recording.
type RecordingInfo struct {
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
	Truncated bool   `json:"truncated"`
}

func (h *Holder) recordEnd(res ptyshell.HubResult, start time.Time) {
	end := &EndResult{Reason: res.Reason, ExitCode: res.ExitCode, BytesIn: res.BytesIn, BytesOut: res.BytesOut,
		StartedAt: start.UTC(), EndedAt: time.Now().UTC()}
	if res.Err != nil {
		end.Error = res.Err.Error()
	}
	if h.rec != nil {
		end.Recording = h.rec.finish(end.EndedAt)
	}
	h.mu.Lock()
	h.end = end
	h.mu.Unlock()
	close(h.endedCh)
}

func (h *Holder) ended() *EndResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.end
}

// recording is the session's asciicast in a file of the holder's private
// directory, hashed as it is written.
type recording struct {
	f   *os.File
	buf *bufio.Writer
	sum hash.Hash
	rec *cast.Recorder
}

func newRecording(dir string, cfg Config, start time.Time) (*recording, error) {
	f, err := os.OpenFile(filepath.Join(dir, "recording.cast"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	r := &recording{f: f, sum: sha256.New()}
	r.buf = bufio.NewWriterSize(io.MultiWriter(f, r.sum), 64<<10)
	r.rec, err = cast.New(r.buf, cfg.Cols, cfg.Rows, cfg.RecordMaxBytes, start, map[string]string{"TERM": cfg.Term})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

func (r *recording) recorder() ptyshell.Recorder {
	if r == nil {
		return nil
	}
	return r.rec
}

// finish closes the recording; nil when it failed (the shell's end is
// reported anyway).
func (r *recording) finish(at time.Time) *RecordingInfo {
	if r.rec.Close(at) != nil || r.buf.Flush() != nil {
		return nil
	}
	return &RecordingInfo{Size: r.rec.Size(), SHA256: hexSum(r.sum), Truncated: r.rec.Truncated()}
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// errNotEnded refuses what needs the shell's end.
var errNotEnded = errors.New("the shell has not ended")

// errShellExited refuses a signal for a shell that has exited: its group's
// IDs may be other processes' by now.
var errShellExited = errors.New("the shell has exited")
