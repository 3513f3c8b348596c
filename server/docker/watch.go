package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Watchers. A watched workspace has one `watch` sidecar mounting its
// volume read-only, with the reader's posture, driven over its attach:
// its stdout is the stream of changes, its stdin is held open and never
// written — the sidecar exits at its end, so a server that dies takes its
// watchers with it (AutoRemove removes them). It lives as long as someone
// watches, not the sidecar timeout: its role is watcher, not sidecar, so
// the leaked-sidecar sweep leaves it alone, and StopBrowse ends it.

// watcherRole names watch containers: <app>.watcher.<workspace>.<ULID>.
const watcherRole = "watcher"

// watchLines bounds the lines waiting for the service: past it the pump
// stops reading, the sidecar's writes block, and the kernel's queue
// overflows into a resync, so a slow reader costs no memory here.
const watchLines = 16

var _ service.WatchStream = (*dockerWatch)(nil)

// Watch starts a watcher of the target's volume. Reasons:
// docker_unavailable, sidecar_busy.
func (r *Runtime) Watch(ctx context.Context, t service.BrowseTarget, pollEvery time.Duration) (service.WatchStream, error) {
	release, err := r.takeStart(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	name := fmt.Sprintf("%s.%s.%s.%s", r.cfg.AppName, watcherRole, t.WorkspaceID, ulid.Make())
	id, err := r.createContainer(ctx, r.watchConfig(t, pollEvery), r.browseHostConfig(t.VolumeName, false), name, "the watch container")
	if err != nil {
		return nil, err
	}
	w := &dockerWatch{r: r, id: id, lines: make(chan sidecar.WatchLine, watchLines), closed: make(chan struct{})}
	if err := w.start(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r.watches.Add(t.WorkspaceID, w)
	return w, nil
}

func (r *Runtime) watchConfig(t service.BrowseTarget, pollEvery time.Duration) *container.Config {
	env := []string{sidecar.EnvMountRoot + "=" + cairn.MountPath}
	if pollEvery > 0 {
		env = append(env, sidecar.EnvWatchPollMS+"="+strconv.FormatInt(pollEvery.Milliseconds(), 10))
	}
	return &container.Config{
		Image: r.cfg.Image, Entrypoint: []string{"/cairn-sidecar"}, Cmd: []string{sidecar.CommandWatch},
		Env: env, User: "0:0", WorkingDir: "/", StopSignal: "SIGINT",
		AttachStdin: true, AttachStdout: true, AttachStderr: true, OpenStdin: true, StdinOnce: true,
		Labels: r.labels(map[string]string{
			LabelRole: watcherRole, LabelCommand: sidecar.CommandWatch, LabelWorkspace: t.WorkspaceID,
		}),
	}
}

// dockerWatch is one watch container and the pump of its lines.
type dockerWatch struct {
	r      *Runtime
	id     string
	lines  chan sidecar.WatchLine
	closed chan struct{}

	mu   sync.Mutex
	att  io.Closer
	err  error
	once sync.Once
}

// start attaches before it starts the container, so no line is lost.
func (w *dockerWatch) start(ctx context.Context) error {
	att, err := w.r.cli.ContainerAttach(ctx, w.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return unavailable("attach to the watch container", err)
	}
	w.mu.Lock()
	w.att = att.Conn
	w.mu.Unlock()
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, io.Discard, att.Reader)
		pw.CloseWithError(err)
	}()
	go w.pump(pr)
	if err := w.r.cli.ContainerStart(ctx, w.id, container.StartOptions{}); err != nil {
		return unavailable("start the watch container", err)
	}
	return nil
}

// pump decodes the sidecar's lines until its output ends.
func (w *dockerWatch) pump(out *io.PipeReader) {
	defer close(w.lines)
	if err := sidecar.ReadWatchLines(out, w.lines, w.closed); err != nil {
		w.fail(err)
	}
	out.CloseWithError(io.EOF) //nolint:errcheck // a pipe's close never fails
}

func (w *dockerWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		select {
		case <-w.closed:
		default:
			w.err = err
		}
	}
}

func (w *dockerWatch) Lines() <-chan sidecar.WatchLine { return w.lines }

func (w *dockerWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close closes the attach (the sidecar reads its stdin's end and exits)
// and removes the container.
func (w *dockerWatch) Close() {
	w.once.Do(func() {
		close(w.closed)
		w.mu.Lock()
		if w.att != nil {
			w.att.Close() //nolint:errcheck // the container goes anyway
		}
		w.mu.Unlock()
		w.r.removeAndWait(w.id)
		w.r.watches.Remove(w)
	})
}
