package docker

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Browse containers. A workspace being browsed has one
// warm `serve` sidecar mounting its volume read-only, driven over its
// attached stdin and stdout: one JSON line per request, one per reply, a
// read's bytes raw after its reply. A docker exec would be cheaper to write but cannot be killed through the
// API; a line protocol can be bounded and cut, and a cut stream is a
// removed container, so the next request always starts in step.
//
// The pool's rules: at most MaxBrowsers containers (the least recently used
// idle one makes room), removed after BrowseIdle without a request, replaced
// before the end of their lifetime (the sidecar timeout, which the
// maintainer's leaked-sidecar sweep adds 60 s to), and always removed on a
// timeout, a cancelled request or a stream out of protocol.

const (
	// browseRole names browse containers: <app>.browse.<workspace>.<ULID>;
	// writerRole, the writers.
	browseRole = "browse"
	writerRole = "writer"
)

// Why a browse container's stream was cut.
var (
	// errBrowseEnded: the output ended before a byte of the reply — the
	// container died, or exited by itself between requests.
	errBrowseEnded = errors.New("the browse container's output ended")
	// errBrowseStopped: StopBrowse or CloseBrowsers ended it.
	errBrowseStopped = errors.New("the browse container was stopped")
	// errBrowseRetired: the reaper or the pool's bound ended it, idle.
	errBrowseRetired = errors.New("the browse container was retired")
	// errBrowseProtocol: the sidecar answered out of protocol.
	errBrowseProtocol = errors.New("the browse sidecar answered out of protocol")
)

// browsers is the runtime's pool of browse containers.
type browsers struct {
	starts chan struct{} // bounds the containers being started at once
	// sent, when set, runs after a request line is written: the tests'
	// way to act while a request is in flight.
	sent func(ctx context.Context)

	mu      sync.Mutex
	byWS    map[string]*browser   // the one in use for each workspace
	all     map[*browser]struct{} // those, and those still being removed
	changed chan struct{}         // closed and replaced when one goes idle or is removed
	reaping bool
	closed  bool
	stop    chan struct{} // closed by CloseBrowsers: ends the reaper
	wg      sync.WaitGroup
}

func newBrowsers(maxStarts int) *browsers {
	return &browsers{
		starts:  make(chan struct{}, maxStarts),
		byWS:    map[string]*browser{},
		all:     map[*browser]struct{}{},
		changed: make(chan struct{}),
		stop:    make(chan struct{}),
	}
}

// Browse answers one request in the workspace's browse container, started
// on first use. Requests of one workspace run one at a time, of different
// workspaces in parallel. A request is bounded by BrowseTimeout and by ctx;
// past either, or when ctx is cancelled, the container is removed before
// Browse returns. A container whose output ended before its reply began
// (it died, or exited idle) is replaced and the request sent again, once:
// a read is harmless to repeat; a write, which may have been made, is
// never repeated. A reply with
// OK false is the sidecar's refusal, not an error. Reasons:
// docker_unavailable, sidecar_busy, sidecar_timeout, sidecar_failed (an
// answer out of protocol), server_shutting_down.
func (r *Runtime) Browse(ctx context.Context, t service.BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.BrowseTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		b, err := r.acquire(ctx, t)
		if err != nil {
			return nil, r.browseError(err)
		}
		reply, err := r.exchange(ctx, b, req)
		r.release(b, err != nil)
		if err == nil {
			return reply, nil
		}
		if attempt == 1 && errors.Is(err, errBrowseEnded) && ctx.Err() == nil && !sidecar.Writes(req.Op) {
			r.log.Info("browse container ended before it answered; asking a fresh one", "workspace_id", t.WorkspaceID)
			continue
		}
		return nil, r.browseError(err)
	}
}

// StopBrowse removes the workspace's browse container, if it has one, and
// returns once the engine has removed it, so that a teardown finds the
// volume free. A request in flight there fails. Idempotent. Reasons:
// docker_unavailable (ctx ended first).
func (r *Runtime) StopBrowse(ctx context.Context, workspaceID string) error {
	r.watches.Stop(workspaceID)
	return r.stopBrowsers(ctx, func(b *browser) bool { return b.ws == workspaceID })
}

// StopWriter removes the workspace's writer, if it has one.
func (r *Runtime) StopWriter(ctx context.Context, workspaceID string) error {
	return r.stopBrowsers(ctx, func(b *browser) bool { return b.ws == workspaceID && b.writable })
}

// stopBrowsers removes the browse containers that match.
func (r *Runtime) stopBrowsers(ctx context.Context, match func(*browser) bool) error {
	bs := r.browse
	bs.mu.Lock()
	var ending []*browser
	for b := range bs.all {
		if match(b) {
			bs.takeOut(b)
			ending = append(ending, b)
		}
	}
	bs.mu.Unlock()
	for _, b := range ending {
		if err := r.end(ctx, b, errBrowseStopped); err != nil {
			return unavailable("stop the browse container", err)
		}
	}
	return nil
}

// CloseBrowsers removes every browse container and stops the reaper; Browse
// then answers server_shutting_down. The runtime's owner calls it once, on
// shutdown. Reasons: docker_unavailable (ctx ended first).
func (r *Runtime) CloseBrowsers(ctx context.Context) error {
	r.watches.Stop("")
	bs := r.browse
	bs.mu.Lock()
	if !bs.closed {
		bs.closed = true
		close(bs.stop)
	}
	var ending []*browser
	for b := range bs.all {
		bs.takeOut(b)
		ending = append(ending, b)
	}
	bs.mu.Unlock()
	err := r.endAll(ctx, ending, errBrowseStopped)
	reaped := make(chan struct{})
	go func() { bs.wg.Wait(); close(reaped) }()
	select {
	case <-reaped:
	case <-ctx.Done():
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		return unavailable("stop the browse containers", err)
	}
	return nil
}

// pick is what the pool offers a request.
type pick struct {
	b     *browser        // the workspace's browser, pinned
	fresh bool            // made by this pick: its turn is held, it is not started
	evict *browser        // an idle browser to end before trying again, pinned
	wait  <-chan struct{} // the pool is full of busy browsers: try again once closed
}

// acquire returns the target's browser, started, with its turn held; the
// caller gives it back with release.
func (r *Runtime) acquire(ctx context.Context, t service.BrowseTarget) (*browser, error) {
	for {
		p, err := r.pick(t)
		if err != nil {
			return nil, err
		}
		switch {
		case p.wait != nil:
			select {
			case <-p.wait:
			case <-ctx.Done():
				return nil, &cairn.Error{Reason: cairn.ReasonSidecarBusy,
					Detail: "every browse container stayed busy until the request deadline; try again later", Err: ctx.Err()}
			}
		case p.evict != nil:
			if err := r.end(ctx, p.evict, errBrowseRetired); err != nil {
				return nil, unavailable("stop an idle browse container", err)
			}
		case p.fresh:
			if err := r.startBrowser(ctx, p.b); err != nil {
				r.release(p.b, true)
				return nil, err
			}
			return p.b, nil
		default:
			select {
			case p.b.turn <- struct{}{}:
			case <-ctx.Done():
				r.unpin(p.b)
				return nil, &cairn.Error{Reason: cairn.ReasonSidecarBusy,
					Detail: "the workspace's browse container stayed busy until the request deadline; try again later", Err: ctx.Err()}
			}
			if r.stale(p.b, t) {
				r.release(p.b, true)
				continue
			}
			return p.b, nil
		}
	}
}

// pick finds the workspace's browser, or makes room for a new one, or says
// what to wait for.
func (r *Runtime) pick(t service.BrowseTarget) (pick, error) {
	bs := r.browse
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.closed {
		return pick{}, cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down")
	}
	if b := bs.byWS[t.Key()]; b != nil {
		b.users++
		return pick{b: b}, nil
	}
	if len(bs.all) >= r.cfg.MaxBrowsers {
		if victim := bs.leastRecentIdle(); victim != nil {
			bs.takeOut(victim)
			return pick{evict: victim}, nil
		}
		return pick{wait: bs.changed}, nil
	}
	b := newBrowser(t, r.now())
	b.users = 1
	b.turn <- struct{}{}
	bs.byWS[b.key] = b
	bs.all[b] = struct{}{}
	if !bs.reaping {
		bs.reaping = true
		bs.wg.Add(1)
		go r.reap(bs.stop)
	}
	return pick{b: b, fresh: true}, nil
}

// leastRecentIdle is the idle browser used longest ago, or nil.
func (bs *browsers) leastRecentIdle() *browser {
	var lru *browser
	for _, b := range bs.byWS {
		if b.users == 0 && (lru == nil || b.lastUsed.Before(lru.lastUsed)) {
			lru = b
		}
	}
	return lru
}

// takeOut removes b from use and pins it for its ender: no request finds
// it any more. The caller holds bs.mu.
func (bs *browsers) takeOut(b *browser) {
	if bs.byWS[b.key] == b {
		delete(bs.byWS, b.key)
	}
	b.gone = true
	b.users++
}

// signal wakes the requests waiting for room. The caller holds bs.mu.
func (bs *browsers) signal() {
	close(bs.changed)
	bs.changed = make(chan struct{})
}

// stale reports whether b, whose turn the caller holds, must be replaced:
// ended, cut, out of use, past its usable lifetime, or on another volume.
func (r *Runtime) stale(b *browser, t service.BrowseTarget) bool {
	if b.hasEnded() || b.cause() != nil || b.volume != t.VolumeName {
		return true
	}
	r.browse.mu.Lock()
	defer r.browse.mu.Unlock()
	return b.gone || r.expired(b, r.now())
}

// expired reports whether b is past its usable lifetime: the sidecar exits
// by itself at the sidecar timeout, so a request is never begun closer to
// it than one request's timeout (or half the lifetime, when that is
// shorter). The caller holds bs.mu.
func (r *Runtime) expired(b *browser, now time.Time) bool {
	if b.started.IsZero() {
		return false
	}
	lifetime := r.cfg.Timeout
	return now.Sub(b.started) >= lifetime-min(r.cfg.BrowseTimeout, lifetime/2)
}

// release gives back b's turn; a broken b is ended first, before Browse
// returns, so nothing it ran is left behind.
func (r *Runtime) release(b *browser, broken bool) {
	bs := r.browse
	bs.mu.Lock()
	if broken && !b.gone {
		bs.takeOut(b)
		b.users-- // takeOut pins for an ender; the caller is that ender
	}
	gone := b.gone
	bs.mu.Unlock()
	if gone {
		r.finish(b)
	}
	bs.mu.Lock()
	b.lastUsed = r.now()
	bs.mu.Unlock()
	r.unpin(b)
	<-b.turn
}

// unpin drops one request's (or ender's) hold on b.
func (r *Runtime) unpin(b *browser) {
	bs := r.browse
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b.users--
	if b.users == 0 {
		bs.signal()
	}
}

// end ends b, taken out and pinned by the caller: it cuts the stream, so a
// request in flight fails at once, then takes the turn and removes the
// container.
func (r *Runtime) end(ctx context.Context, b *browser, cause error) error {
	b.cut(cause)
	select {
	case b.turn <- struct{}{}:
	case <-ctx.Done():
		r.unpin(b)
		return ctx.Err()
	}
	r.release(b, true)
	return nil
}

// endAll ends each browser, in parallel.
func (r *Runtime) endAll(ctx context.Context, ending []*browser, cause error) error {
	errs := make([]error, len(ending))
	var wg sync.WaitGroup
	for i, b := range ending {
		wg.Go(func() { errs[i] = r.end(ctx, b, cause) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// finish removes b's container once and waits for its output pump; the
// caller holds b's turn, and b is out of use.
func (r *Runtime) finish(b *browser) {
	if b.finished {
		return
	}
	b.finished = true
	b.cut(errBrowseStopped)
	if b.id != "" {
		r.removeAndWait(b.id)
	}
	if b.attached {
		select {
		case <-b.ended:
		case <-time.After(cleanupTimeout):
			r.log.Warn("browse container output did not end", "container", b.id)
		}
	}
	if b.hasEnded() && b.stderr.Len() > 0 {
		r.log.Debug("browse container stderr", "container", b.id, "stderr", b.stderr.String())
	}
	bs := r.browse
	bs.mu.Lock()
	delete(bs.all, b)
	bs.signal()
	bs.mu.Unlock()
}

// reapIdle ends every browser that is idle past BrowseIdle, past its usable
// lifetime, or dead, and reports how many. The reaper calls it each tick;
// tests call it with the time they need.
func (r *Runtime) reapIdle(now time.Time) int {
	bs := r.browse
	bs.mu.Lock()
	var idle []*browser
	for _, b := range bs.byWS {
		if b.users == 0 && (now.Sub(b.lastUsed) >= r.cfg.BrowseIdle || r.expired(b, now) || b.hasEnded()) {
			bs.takeOut(b)
			idle = append(idle, b)
		}
	}
	bs.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*cleanupTimeout)
	defer cancel()
	if err := r.endAll(ctx, idle, errBrowseRetired); err != nil {
		r.log.Warn("reap idle browse containers", "err", err)
	}
	return len(idle)
}

// reap runs reapIdle every quarter of BrowseIdle (1–15 s) while the pool
// has browsers; the next browser starts it again.
func (r *Runtime) reap(stop <-chan struct{}) {
	bs := r.browse
	defer bs.wg.Done()
	tick := time.NewTicker(min(max(r.cfg.BrowseIdle/4, time.Second), 15*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			r.reapIdle(r.now())
			bs.mu.Lock()
			empty := len(bs.all) == 0
			if empty {
				bs.reaping = false
			}
			bs.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

// takeStart bounds the browse containers being started at once; a wait
// that outlasts the request is sidecar_busy.
func (r *Runtime) takeStart(ctx context.Context) (func(), error) {
	select {
	case r.browse.starts <- struct{}{}:
		return func() { <-r.browse.starts }, nil
	case <-ctx.Done():
		return nil, &cairn.Error{Reason: cairn.ReasonSidecarBusy,
			Detail: "too many browse containers were starting until the request deadline; try again later", Err: ctx.Err()}
	}
}

// startBrowser creates b's container, attaches to it before it starts (so
// no output is lost) and starts it. The caller holds b's turn; on failure
// it ends b, which removes what was made.
func (r *Runtime) startBrowser(ctx context.Context, b *browser) error {
	release, err := r.takeStart(ctx)
	if err != nil {
		return err
	}
	defer release()
	role := browseRole
	if b.writable {
		role = writerRole
	}
	name := fmt.Sprintf("%s.%s.%s.%s", r.cfg.AppName, role, b.ws, ulid.Make())
	if b.id, err = r.createContainer(ctx, r.browseConfig(b), r.browseHostConfig(b.volume, b.writable), name, "the browse container"); err != nil {
		return err
	}
	att, err := r.cli.ContainerAttach(ctx, b.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return unavailable("attach to the browse container", err)
	}
	if !b.attach(att) {
		return b.cause()
	}
	if err := r.cli.ContainerStart(ctx, b.id, container.StartOptions{}); err != nil {
		return unavailable("start the browse container", err)
	}
	r.browse.mu.Lock()
	b.started = r.now()
	r.browse.mu.Unlock()
	return nil
}

// browseConfig runs `serve` with stdin open and attached, no TTY (stdout
// and stderr stay apart), and StdinOnce, so the sidecar reads end of file
// when the server drops the stream — and exits, even if the server died.
func (r *Runtime) browseConfig(b *browser) *container.Config {
	return &container.Config{
		Image:      r.cfg.Image,
		Entrypoint: []string{"/cairn-sidecar"},
		Cmd:        []string{sidecar.CommandServe},
		Env: append([]string{
			// Twice the pool's idle limit: the reaper removes it first;
			// the sidecar's own exit is for a server that stopped looking.
			sidecar.EnvIdleSecs + "=" + seconds(2*r.cfg.BrowseIdle),
			sidecar.EnvLifetimeSecs + "=" + seconds(r.cfg.Timeout),
			sidecar.EnvMountRoot + "=" + cairn.MountPath,
		}, writerEnv(b.writable)...),
		User:         "0:0",
		WorkingDir:   "/",
		StopSignal:   "SIGINT",
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		OpenStdin:    true,
		StdinOnce:    true,
		// Role sidecar: the maintainer's sweep of sidecars older than the
		// sidecar timeout + 60 s covers a leftover browse container.
		Labels: r.labels(map[string]string{
			LabelRole: "sidecar", LabelSidecar: "true",
			LabelCommand: sidecar.CommandServe, LabelWorkspace: b.ws,
		}),
	}
}

// browseHostConfig is the sidecar posture for a reader (a browse or a
// watch container): the volume mounted read-only, no network, and only
// DAC_READ_SEARCH, which lets root read and list every user's files and
// nothing more. A writer mounts it read-write with the capabilities of
// sidecar.CommandWrite. The engine removes either once it exits.
func (r *Runtime) browseHostConfig(volume string, writable bool) *container.HostConfig {
	m, caps := readOnlyWorkspaceMount(volume), []string{"DAC_READ_SEARCH"}
	if writable {
		m, caps = workspaceMount(volume), sidecar.Capabilities(sidecar.CommandWrite)
	}
	return &container.HostConfig{
		Mounts:         []mount.Mount{m},
		CapDrop:        []string{"ALL"},
		CapAdd:         caps,
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		NetworkMode:    "none",
		Resources:      sidecarResources(),
		AutoRemove:     true,
		// The replies travel over the attach stream only. Logged, every
		// byte of every file read would also be JSON-escaped into the
		// engine's log file on disk — a copy of the workspace's contents
		// outside it, and most of the time a 1 MiB read takes.
		LogConfig: container.LogConfig{Type: "none"},
	}
}

// seconds renders d in whole seconds, rounded up, at least 1.
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}

// removeAndWait force-removes a container and waits until the engine has
// removed it — AutoRemove racing it or not — so its volume is free. A
// failure is only logged (the maintainer sweeps leftovers by label).
func (r *Runtime) removeAndWait(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	results, errs := r.cli.ContainerWait(ctx, id, container.WaitConditionRemoved)
	if err := r.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}); err != nil &&
		!isGoneOrGoing(err) {
		r.log.Warn("remove browse container; retrying", "container", id, "err", err)
		r.removeLater(id)
		return
	}
	select {
	case <-results:
	case err := <-errs:
		if !isGoneOrGoing(err) {
			r.log.Warn("wait for the browse container's removal", "container", id, "err", err)
		}
	}
}

// isGoneOrGoing reports a container removed, or whose removal is under
// way (AutoRemove got there first).
func isGoneOrGoing(err error) bool { return cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) }

// browseError turns what ended a request into the caller's error.
func (r *Runtime) browseError(err error) error {
	if _, ok := errors.AsType[*cairn.Error](err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &cairn.Error{Reason: cairn.ReasonSidecarTimeout, Err: err,
			Detail: fmt.Sprintf("the browse sidecar did not answer in time (at most %s) and was removed", r.cfg.BrowseTimeout)}
	case errors.Is(err, context.Canceled):
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: "the request ended before the browse sidecar answered; it was removed"}
	case errors.Is(err, errBrowseStopped), errors.Is(err, errBrowseRetired):
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: "the browse container was stopped during the request (the volume is being torn down, or the server is stopping)"}
	default:
		return &cairn.Error{Reason: cairn.ReasonSidecarFailed, Err: err,
			Detail: "the browse sidecar ended or answered out of protocol; it was removed"}
	}
}

// browser is one browse container and its stream. Its turn is a one-token
// lock, held by whoever uses the stream: the request, the start, the ender.
type browser struct {
	ws, volume string
	writable   bool   // mounts the volume read-write and answers writes
	key        string // its place in browsers.byWS: BrowseTarget.Key
	turn       chan struct{}
	ended      chan struct{} // closed when the output pump stops

	// Guarded by browsers.mu.
	users    int // requests and enders holding or waiting for the turn
	lastUsed time.Time
	started  time.Time
	gone     bool // out of use: being or been removed

	// Owned by the turn's holder.
	id       string
	attached bool
	finished bool
	conn     net.Conn              // the container's stdin
	out      *bufio.Reader         // its stdout, demultiplexed
	stderr   sidecar.BoundedBuffer // written by the pump until ended

	mu     sync.Mutex
	att    *types.HijackedResponse
	pr     *io.PipeReader
	cutErr error
}

func newBrowser(t service.BrowseTarget, now time.Time) *browser {
	return &browser{ws: t.WorkspaceID, volume: t.VolumeName, writable: t.Writable, key: t.Key(), lastUsed: now,
		turn: make(chan struct{}, 1), ended: make(chan struct{}), stderr: sidecar.BoundedBuffer{Max: 64 << 10}}
}

// attach takes the stream and starts its pump, which demultiplexes stdout
// into a pipe the requests read; false if b was cut meanwhile.
func (b *browser) attach(att types.HijackedResponse) bool {
	pr, pw := io.Pipe()
	b.mu.Lock()
	if b.cutErr != nil {
		b.mu.Unlock()
		att.Close()
		return false
	}
	b.att, b.pr = &att, pr
	b.mu.Unlock()
	b.attached, b.conn, b.out = true, att.Conn, bufio.NewReaderSize(pr, 64<<10)
	go func() {
		defer close(b.ended)
		_, err := stdcopy.StdCopy(pw, &b.stderr, att.Reader)
		pw.CloseWithError(err) // nil: the reader sees io.EOF
	}()
	return true
}

// cut closes the stream for good, unblocking a request in flight; the
// first cause is kept. The sidecar reads end of file and exits.
func (b *browser) cut(cause error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cutErr != nil {
		return
	}
	b.cutErr = cause
	if b.att != nil {
		b.att.Close()
	}
	if b.pr != nil {
		b.pr.CloseWithError(cause)
	}
}

func (b *browser) cause() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cutErr
}

func (b *browser) hasEnded() bool {
	select {
	case <-b.ended:
		return true
	default:
		return false
	}
}

// exchange sends one request and reads its reply; the end of ctx cuts the
// stream (the caller then removes the container: it would be out of step).
func (r *Runtime) exchange(ctx context.Context, b *browser, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%w: encode the request: %v", errBrowseProtocol, err)
	}
	stop := context.AfterFunc(ctx, func() { b.cut(ctx.Err()) })
	reply, err := b.roundTrip(ctx, append(line, '\n'), req, r.browse.sent)
	if !stop() {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, cmp.Or(b.cause(), err)
	}
	return reply, nil
}

// roundTrip writes the request line and a put's body, reads the reply line and, for a read,
// exactly the reply's Length bytes after it.
func (b *browser) roundTrip(ctx context.Context, line []byte, req sidecar.BrowseRequest, sent func(context.Context)) (*sidecar.BrowseReply, error) {
	bufs := net.Buffers{line, req.Body}
	if _, err := bufs.WriteTo(b.conn); err != nil {
		return nil, fmt.Errorf("%w: write the request: %v", errBrowseEnded, err)
	}
	if sent != nil {
		sent(ctx)
	}
	raw, long, err := readLine(b.out, sidecar.MaxReplyLine)
	switch {
	case err != nil && len(raw) == 0:
		return nil, fmt.Errorf("%w: %v", errBrowseEnded, err)
	case err != nil:
		return nil, fmt.Errorf("%w: the reply line ended early: %v", errBrowseProtocol, err)
	case long:
		return nil, fmt.Errorf("%w: a reply line over %d bytes", errBrowseProtocol, sidecar.MaxReplyLine)
	}
	var reply sidecar.BrowseReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, fmt.Errorf("%w: decode the reply: %v", errBrowseProtocol, err)
	}
	if reply.Length < 0 || reply.Length > sidecar.MaxReadBytes ||
		(req.Op == sidecar.OpRead && req.Length > 0 && reply.Length > req.Length) {
		return nil, fmt.Errorf("%w: a reply of %d bytes", errBrowseProtocol, reply.Length)
	}
	if reply.Length > 0 {
		reply.Data = make([]byte, reply.Length)
		if _, err := io.ReadFull(b.out, reply.Data); err != nil {
			return nil, fmt.Errorf("%w: read the bytes of the reply: %v", errBrowseProtocol, err)
		}
	}
	return &reply, nil
}

// readLine reads one line, without its newline, keeping at most max bytes;
// long reports that the line was longer (it is consumed to its end).
func readLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	total := 0
	for {
		frag, err := br.ReadSlice('\n')
		if err == nil {
			frag = frag[:len(frag)-1]
		}
		total += len(frag)
		if room := max - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return line, total > max, err
		}
	}
}

// writerEnv tells a writer's serve that it writes, up to the bound of the
// protocol: the service holds a write to the deployment's own.
func writerEnv(writable bool) []string {
	if !writable {
		return nil
	}
	return []string{sidecar.EnvWritable + "=1", sidecar.EnvMaxWriteBytes + "=" + strconv.Itoa(sidecar.MaxWriteBytes)}
}
