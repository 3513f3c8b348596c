package kube

import (
	"context"
	"io"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Watchers, Kubernetes' watch containers. A watched workspace has one
// watcher pod in the reader's posture (the claim read-only, only
// DAC_READ_SEARCH), held up by its own serve as a browse pod is; the
// changes come from an exec of `watch` in it, whose output the kubelet
// does not log, and the exec ends at its stdin's end — with the server.
//
// Every pod of cairn's ends by its deadline, the sidecar timeout, so a
// watch outlives its pods: when one has lived watcherLife, a successor
// starts, and once the successor watches, the first one's stdin ends; it
// reports what it still holds (the kernel's queue, or a last walk) and
// goes. Nothing is lost in a handover; a change made while both watched
// may be reported twice. A watcher that ends any other way (its node
// lost, its pod deleted) ends the watch with its error.

const (
	watcherRole = "watcher"
	// watchLines bounds the lines waiting for the service, as on Docker:
	// past it the exec's stream backs up into the kernel's queue, which
	// overflows into a resync.
	watchLines = 16
	// watchReadyMax bounds a watch exec's start, up to its Ready line.
	watchReadyMax = 30 * time.Second
	// watchRetireMax bounds a retiring watcher's last lines.
	watchRetireMax = 10 * time.Second
)

var _ service.WatchStream = (*kubeWatch)(nil)

// Watch starts a watch of the target's volume. Reasons:
// docker_unavailable, sidecar_busy, sidecar_failed,
// container_start_timeout, server_shutting_down.
func (r *Runtime) Watch(ctx context.Context, t service.BrowseTarget, pollEvery time.Duration) (service.WatchStream, error) {
	r.browse.mu.Lock()
	closed := r.browse.closed
	r.browse.mu.Unlock()
	if closed {
		return nil, cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down")
	}
	first, err := r.startWatcher(ctx, t, pollEvery)
	if err != nil {
		return nil, err
	}
	w := &kubeWatch{r: r, t: t, poll: pollEvery, lines: make(chan sidecar.WatchLine, watchLines),
		closed: make(chan struct{}), ended: make(chan struct{})}
	w.lines <- sidecar.WatchLine{Ready: true, Mode: first.mode}
	r.watches.Add(t.WorkspaceID, w)
	go w.run(first)
	return w, nil
}

// watcherLife is how long a watcher pod serves before a successor
// starts: time enough before its deadline for the successor to start.
func (r *Runtime) watcherLife() time.Duration {
	return r.cfg.Timeout - min(r.cfg.PodStartTimeout+watchReadyMax, r.cfg.Timeout/2)
}

// kubeWatch is one watch: its current watcher pod, its successors, and
// the lines of each in turn.
type kubeWatch struct {
	r      *Runtime
	t      service.BrowseTarget
	poll   time.Duration
	lines  chan sidecar.WatchLine
	closed chan struct{} // Close was called
	ended  chan struct{} // run returned: every pod of the watch is gone

	mu   sync.Mutex
	err  error
	once sync.Once
}

func (w *kubeWatch) Lines() <-chan sidecar.WatchLine { return w.lines }

func (w *kubeWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close ends the watch and returns once its pods are gone.
func (w *kubeWatch) Close() {
	w.once.Do(func() { close(w.closed) })
	<-w.ended
	w.r.watches.Remove(w)
}

func (w *kubeWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !isClosed(w.closed) {
		w.err = err
	}
}

// send hands a line to the service; false once the watch is closed.
func (w *kubeWatch) send(l sidecar.WatchLine) bool {
	select {
	case w.lines <- l:
		return true
	case <-w.closed:
		return false
	}
}

// run follows one watcher after another until one ends or the watch is
// closed, then removes the last one's pod.
func (w *kubeWatch) run(cur *watcherPod) {
	defer close(w.ended)
	defer close(w.lines)
	for cur != nil {
		next := w.follow(cur)
		if next == nil {
			cur.stop()
			ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			if err := w.r.removePodAndWait(ctx, cur.name); err != nil {
				w.r.log.Warn("delete a watcher pod", "pod", cur.name, "err", err)
			}
			cancel()
			return
		}
		w.handOver(cur, next)
		cur = next
	}
}

// successor is a watcher starting in the background.
type successor struct {
	p   *watcherPod
	err error
}

// follow forwards cur's lines until its time is up and returns its
// successor, watching; nil when cur ended, the watch was closed, or no
// successor could start (the watch's error says which).
func (w *kubeWatch) follow(cur *watcherPod) *watcherPod {
	due := time.NewTimer(w.r.watcherLife() - w.r.now().Sub(cur.born))
	defer due.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var next chan successor
	defer func() {
		if next != nil { // nobody takes it: it goes
			go func() {
				if s := <-next; s.p != nil {
					s.p.stop()
					w.r.deletePod(context.Background(), s.p.name, 0)
				}
			}()
		}
	}()
	for {
		select {
		case l, ok := <-cur.lines:
			if !ok {
				w.fail(cur.err)
				return nil
			}
			if !w.send(l) {
				return nil
			}
		case <-due.C:
			next = make(chan successor, 1)
			go func() {
				p, err := w.r.startWatcher(ctx, w.t, w.poll)
				next <- successor{p, err}
			}()
		case s := <-next:
			next = nil
			if s.err != nil {
				w.fail(s.err)
				return nil
			}
			return s.p
		case <-w.closed:
			return nil
		}
	}
}

// handOver ends cur now that next watches: what cur still holds goes to
// the service before next's first line. A cur that does not finish in
// watchRetireMax is ended, and the service told to resync.
func (w *kubeWatch) handOver(cur, next *watcherPod) {
	cur.retire()
	defer func() {
		cur.stop()
		w.r.deletePod(context.Background(), cur.name, 0)
	}()
	limit := time.NewTimer(watchRetireMax)
	defer limit.Stop()
	for {
		select {
		case l, ok := <-cur.lines:
			if !ok || !w.send(l) {
				return
			}
		case <-limit.C:
			w.r.log.Warn("a retiring watcher did not finish; its last changes are lost", "pod", cur.name)
			w.send(sidecar.WatchLine{Resync: cairn.ResyncWatcherReplaced})
			return
		}
	}
}

// watcherPod is one watcher pod and the watch exec in it.
type watcherPod struct {
	name, mode string
	born       time.Time
	lines      chan sidecar.WatchLine // closed when the exec's output ended
	err        error                  // why it ended; read once lines is closed
	stdin      *io.PipeWriter
	stopped    chan struct{}
	cancel     context.CancelFunc
	once       sync.Once
}

// retire ends the exec's stdin: the watch reports what it holds and ends.
func (p *watcherPod) retire() { p.stdin.Close() } //nolint:errcheck // a pipe's Close never fails

// stop ends the exec and lets go of its lines; the pod stays.
func (p *watcherPod) stop() {
	p.once.Do(func() {
		close(p.stopped)
		p.cancel()
		p.stdin.Close() //nolint:errcheck // a pipe's Close never fails
	})
}

// startWatcher starts a watcher pod and its watch exec, and returns once
// the watch is Ready. Reasons as Watch's.
func (r *Runtime) startWatcher(ctx context.Context, t service.BrowseTarget, pollEvery time.Duration) (*watcherPod, error) {
	spec, err := r.watcherPodSpec(t, pollEvery)
	if err != nil {
		return nil, err
	}
	name, err := r.startServePod(ctx, spec, "the watcher pod")
	if err != nil {
		return nil, err
	}
	p, err := r.watchIn(ctx, name)
	if err != nil {
		r.deletePod(context.Background(), name, 0)
		return nil, err
	}
	return p, nil
}

// watcherPodSpec is the reader's posture; the watch it serves polls
// every pollEvery, if set.
func (r *Runtime) watcherPodSpec(t service.BrowseTarget, pollEvery time.Duration) (*corev1.Pod, error) {
	var env []corev1.EnvVar
	if pollEvery > 0 {
		env = []corev1.EnvVar{{Name: sidecar.EnvWatchPollMS, Value: strconv.FormatInt(pollEvery.Milliseconds(), 10)}}
	}
	t.Writable = false
	return r.servePodSpec(t, watcherRole, readerCaps, env)
}

// watchIn runs `watch` in the pod and waits for its Ready line.
func (r *Runtime) watchIn(ctx context.Context, pod string) (*watcherPod, error) {
	ex, err := r.execExecutor(pod, &corev1.PodExecOptions{Container: browseRole,
		Command: []string{"/cairn-sidecar", sidecar.CommandWatch}, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, unavailable("run the watch in its pod", err)
	}
	execCtx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &watcherPod{name: pod, born: r.now(), lines: make(chan sidecar.WatchLine, watchLines),
		stdin: inW, stopped: make(chan struct{}), cancel: cancel}
	go func() {
		stderr := &capped{max: maxBrowseStderr, quiet: true}
		err := ex.StreamWithContext(execCtx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Stderr: stderr})
		if err != nil && stderr.Len() > 0 {
			r.log.Debug("watch exec stderr", "pod", pod, "stderr", stderr.String())
		}
		outW.CloseWithError(err) //nolint:errcheck // a pipe's Close never fails
	}()
	go func() {
		p.err = sidecar.ReadWatchLines(outR, p.lines, p.stopped)
		close(p.lines)
		outR.CloseWithError(io.EOF) //nolint:errcheck // as above
	}()
	ready, cancelReady := context.WithTimeout(ctx, watchReadyMax)
	defer cancelReady()
	select {
	case l, ok := <-p.lines:
		if ok && l.Ready {
			p.mode = l.Mode
			return p, nil
		}
		p.stop()
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the watch ended before it was ready")
	case <-ready.Done():
		p.stop()
		return nil, &cairn.Error{Reason: cairn.ReasonSidecarTimeout, Detail: "the watch was not ready in time", Err: ready.Err()}
	}
}
