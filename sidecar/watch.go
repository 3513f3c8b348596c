package sidecar

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// The watch command: the changes under the mount root as WatchLines on
// stdout, until stdin ends. inotify follows every directory, a new one
// as soon as it is made; where inotify cannot be had (a filesystem
// without it, such as NFS, reports nothing through it, so the server asks
// for polling there), the tree is walked every CAIRN_WATCH_POLL_MS and
// compared with the walk before. Changes are batched for WatchWindow, each
// path once with its last op, at most MaxWatchBatch paths a batch. Nothing
// grows without bound: a batch that would pass its bound, and a kernel
// queue that overflowed because stdout was not read, end in a resync line.

const inotifyMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_CLOSE_WRITE | syscall.IN_MODIFY |
	syscall.IN_ATTRIB | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF |
	syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW

// inCloexec and inNonblock are IN_CLOEXEC and IN_NONBLOCK, which package
// syscall does not export.
const (
	inCloexec  = syscall.O_CLOEXEC
	inNonblock = syscall.O_NONBLOCK
)

func watch(env Env, in io.Reader, out io.Writer) int {
	root, bad := mountRoot(env)
	if bad != nil {
		return emit(out, *bad, ExitUsage)
	}
	every, f := pollEvery(env)
	if f != nil {
		return emit(out, refusal(f), ExitUsage)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, in) //nolint:errcheck // any end of stdin is the end
		close(done)
	}()
	w := &watcher{root: root, out: bufio.NewWriter(out), batch: newBatch()}
	if every == 0 {
		if err := w.inotify(done); !errors.Is(err, errNoInotify) {
			return exitOf(err)
		}
		every = DefaultPollEvery
	}
	return exitOf(w.poll(done, every))
}

func exitOf(err error) int {
	if err != nil {
		return ExitFailure
	}
	return ExitOK
}

// pollEvery reads CAIRN_WATCH_POLL_MS: 0 (unset) for inotify.
func pollEvery(env Env) (time.Duration, *failure) {
	v := env(EnvWatchPollMS)
	if v == "" {
		return 0, nil
	}
	ms, err := strconv.Atoi(v)
	if err != nil || ms < 10 || ms > 60_000 {
		return 0, fail(ReasonEnvInvalid, "%s must be 10 to 60000 milliseconds", EnvWatchPollMS)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

var errNoInotify = errors.New("inotify cannot be had here")

type watcher struct {
	root  string
	out   *bufio.Writer
	batch *batch

	// inotify's
	ino  *os.File
	dirs map[int32]string // watch descriptor → its directory, relative to root
}

// send writes one line and flushes it.
func (w *watcher) send(l WatchLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	w.out.Write(b)        //nolint:errcheck // a bufio.Writer keeps its first error for Flush
	w.out.WriteByte('\n') //nolint:errcheck // as above
	return w.out.Flush()
}

// flush sends the batch, or the resync it ran into, and empties it.
func (w *watcher) flush() error {
	if w.batch.empty() {
		return nil
	}
	l := WatchLine{Changes: w.batch.changes()}
	switch {
	case w.batch.overflow:
		l = WatchLine{Resync: ResyncOverflow}
	case w.batch.tooLarge:
		l = WatchLine{Resync: ResyncTooLarge}
	}
	w.batch = newBatch()
	return w.send(l)
}

// inotify watches until done; errNoInotify when it cannot start.
func (w *watcher) inotify(done <-chan struct{}) error {
	fd, err := syscall.InotifyInit1(inCloexec | inNonblock)
	if err != nil {
		return errNoInotify
	}
	w.ino, w.dirs = os.NewFile(uintptr(fd), "inotify"), map[int32]string{}
	defer w.ino.Close()
	if !w.addTree(".", false) {
		return errNoInotify
	}
	if err := w.send(WatchLine{Ready: true, Mode: WatchInotify}); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := w.readEvents(buf)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
		case err != nil:
			return err
		default:
			w.takeEvents(buf[:n])
		}
		select {
		case <-done:
			// What the kernel queued before stdin ended is still reported,
			// so a watcher handing over to its successor loses nothing.
			w.drain(buf)
			return w.flush()
		default:
		}
		if w.batch.full() || w.batch.due() {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
}

// watchWake bounds how long a watch with nothing to send waits before it
// looks whether its stdin ended.
const watchWake = 250 * time.Millisecond

// readEvents reads events, waiting at most until the open batch is due.
func (w *watcher) readEvents(buf []byte) (int, error) {
	deadline := time.Now().Add(watchWake)
	if !w.batch.empty() {
		deadline = w.batch.since.Add(WatchWindow)
	}
	if err := w.ino.SetReadDeadline(deadline); err != nil {
		return 0, err
	}
	return w.ino.Read(buf)
}

// drain takes the events already queued, without waiting for more.
func (w *watcher) drain(buf []byte) {
	rc, err := w.ino.SyscallConn()
	if err != nil {
		return
	}
	for {
		n, rerr := 0, error(nil)
		if err := rc.Read(func(fd uintptr) bool { n, rerr = syscall.Read(int(fd), buf); return true }); err != nil || rerr != nil || n <= 0 {
			return
		}
		w.takeEvents(buf[:n])
	}
}

// takeEvents adds one read's events to the batch.
func (w *watcher) takeEvents(buf []byte) {
	for len(buf) >= syscall.SizeofInotifyEvent {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := syscall.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			return
		}
		name := strings.TrimRight(string(buf[syscall.SizeofInotifyEvent:end]), "\x00")
		buf = buf[end:]
		w.take(ev.Wd, ev.Mask, name)
	}
}

// take handles one event.
func (w *watcher) take(wd int32, mask uint32, name string) {
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		w.batch.overflow = true
		return
	}
	dir, ok := w.dirs[wd]
	if !ok {
		return
	}
	if mask&syscall.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		return
	}
	if name == "" {
		return // the directory itself (IN_DELETE_SELF): its parent reports it
	}
	rel := path.Join(dir, name)
	isDir := mask&syscall.IN_ISDIR != 0
	switch {
	case mask&syscall.IN_CREATE != 0:
		w.batch.add(w.full(rel), ChangeCreated, isDir)
		if isDir {
			w.addTree(rel, true)
		}
	case mask&syscall.IN_MOVED_TO != 0:
		w.batch.add(w.full(rel), ChangeMovedTo, isDir)
		if isDir {
			w.addTree(rel, true)
		}
	case mask&syscall.IN_MOVED_FROM != 0:
		w.batch.add(w.full(rel), ChangeMovedFrom, isDir)
		if isDir {
			w.forget(rel)
		}
	case mask&syscall.IN_DELETE != 0:
		w.batch.add(w.full(rel), ChangeRemoved, isDir)
	default: // written, closed after writing, or its mode or owner changed
		w.batch.add(w.full(rel), ChangeWritten, isDir)
	}
}

func (w *watcher) full(rel string) string { return path.Join(w.root, rel) }

// addTree watches the directory rel and every directory under it, never
// through a symlink. With report, what it finds is reported created: it
// may have been made before its directory was watched. It returns false
// when the first watch could not be added.
func (w *watcher) addTree(rel string, report bool) bool {
	first := true
	_ = filepath.WalkDir(filepath.Join(w.root, rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone, or unreadable: its parent's events still come
		}
		r, _ := filepath.Rel(w.root, p)
		if report && p != filepath.Join(w.root, rel) {
			w.batch.add(w.full(r), ChangeCreated, d.IsDir())
		}
		if !d.IsDir() {
			return nil
		}
		if len(w.dirs) >= MaxWatchDirs {
			w.batch.tooLarge = true
			return filepath.SkipAll
		}
		wd, err := syscall.InotifyAddWatch(int(w.ino.Fd()), p, inotifyMask)
		if err != nil {
			if first {
				first = false
				return filepath.SkipAll
			}
			w.batch.tooLarge = errors.Is(err, syscall.ENOSPC)
			return filepath.SkipDir
		}
		first = false
		w.dirs[int32(wd)] = r
		return nil
	})
	return len(w.dirs) > 0
}

// forget stops watching rel and what is under it: it moved away, and its
// watches would report it under its old name.
func (w *watcher) forget(rel string) {
	for wd, dir := range w.dirs {
		if dir == rel || strings.HasPrefix(dir, rel+"/") {
			_, _ = syscall.InotifyRmWatch(int(w.ino.Fd()), uint32(wd))
			delete(w.dirs, wd)
		}
	}
}

// poll walks the tree every interval until done, and reports what changed
// since the walk before.
func (w *watcher) poll(done <-chan struct{}, every time.Duration) error {
	before, _ := w.scan()
	if err := w.send(WatchLine{Ready: true, Mode: WatchPoll}); err != nil {
		return err
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		final := false
		select {
		case <-done:
			final = true // one last walk: what changed before the end is reported
		case <-tick.C:
		}
		now, complete := w.scan()
		diffScans(before, now, w.batch)
		if !complete {
			w.batch.tooLarge = true
		}
		before = now
		if err := w.flush(); err != nil || final {
			return err
		}
	}
}

// stamp is what a poll compares of one entry.
type stamp struct {
	ino, size uint64
	mtime     int64
	dir       bool
}

// scan records every entry under the root, at most MaxPollEntries; false
// when it stopped there.
func (w *watcher) scan() (map[string]stamp, bool) {
	seen := make(map[string]stamp)
	complete := true
	_ = filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == w.root {
			return nil
		}
		if len(seen) >= MaxPollEntries {
			complete = false
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st := info.Sys().(*syscall.Stat_t)
		seen[p] = stamp{ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano(), dir: d.IsDir()}
		return nil
	})
	return seen, complete
}

// diffScans adds to b what differs between two scans.
func diffScans(before, now map[string]stamp, b *batch) {
	for p, s := range now {
		old, ok := before[p]
		switch {
		case !ok:
			b.add(p, ChangeCreated, s.dir)
		case old != s:
			b.add(p, ChangeWritten, s.dir)
		}
	}
	for p, s := range before {
		if _, ok := now[p]; !ok {
			b.add(p, ChangeRemoved, s.dir)
		}
	}
}

// batch is the changes of one window: each path once, in the order first
// seen, with its last op — but a path that arrived (created, moved in)
// stays arrived when it is then written, and one created and gone again
// (a writer's temporary file) is not reported.
type batch struct {
	order    []string
	ops      map[string]Change
	since    time.Time
	overflow bool // more than MaxWatchBatch paths, or the kernel's queue overflowed
	tooLarge bool // more than a watch follows: the next line is a resync
}

func newBatch() *batch { return &batch{ops: make(map[string]Change)} }

func (b *batch) add(p, op string, dir bool) {
	if b.overflow {
		return
	}
	if len(b.order) == 0 {
		b.since = time.Now()
	}
	old, seen := b.ops[p]
	if !seen {
		if len(b.order) >= MaxWatchBatch {
			b.overflow = true
			return
		}
		b.order = append(b.order, p)
	}
	arrived := seen && (old.Op == ChangeCreated || old.Op == ChangeMovedTo)
	switch {
	case arrived && op == ChangeWritten:
		return // what arrived in this batch stays arrived
	case arrived && old.Op == ChangeCreated && (op == ChangeRemoved || op == ChangeMovedFrom):
		delete(b.ops, p) // came and went within the batch: a writer's temporary file
		return
	}
	b.ops[p] = Change{Path: p, Op: op, Dir: dir}
}

func (b *batch) empty() bool { return len(b.order) == 0 && !b.overflow && !b.tooLarge }
func (b *batch) full() bool  { return len(b.order) >= MaxWatchBatch || b.overflow }

// due: the batch has waited its WatchWindow.
func (b *batch) due() bool { return !b.empty() && !time.Now().Before(b.since.Add(WatchWindow)) }

func (b *batch) changes() []Change {
	out := make([]Change, 0, len(b.order))
	for _, p := range b.order {
		if c, ok := b.ops[p]; ok {
			out = append(out, c)
		}
	}
	return out
}
