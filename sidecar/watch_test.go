package sidecar

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// watchSession is a watch command driven through pipes.
type watchSession struct {
	in    *io.PipeWriter
	lines chan WatchLine
	done  chan int
}

func startWatch(t *testing.T, vars map[string]string) *watchSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &watchSession{in: inW, lines: make(chan WatchLine, 1024), done: make(chan int, 1)}
	go func() {
		code := watch(env(vars), inR, outW)
		outW.Close() //nolint:errcheck // a pipe's Close never fails
		s.done <- code
	}()
	go func() {
		defer close(s.lines)
		ReadWatchLines(outR, s.lines, nil) //nolint:errcheck // the end shows as the closed channel
	}()
	t.Cleanup(func() {
		inW.Close() //nolint:errcheck // a pipe's Close never fails
		select {
		case <-s.done:
		case <-time.After(serveGuard):
			t.Error("watch did not end with its stdin")
		}
	})
	return s
}

// next is the next line, within serveGuard.
func (s *watchSession) next(t *testing.T) WatchLine {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		require.True(t, ok, "the watch ended")
		return l
	case <-time.After(serveGuard):
		t.Fatal("no watch line within the guard")
		return WatchLine{}
	}
}

// await reads lines until every want (path → op) was seen, in any batch.
func (s *watchSession) await(t *testing.T, want map[string]string) {
	t.Helper()
	for len(want) > 0 {
		l := s.next(t)
		require.Empty(t, l.Resync)
		for _, c := range l.Changes {
			if want[c.Path] == c.Op {
				delete(want, c.Path)
			}
		}
	}
}

func TestWatch(t *testing.T) {
	for _, mode := range []string{WatchInotify, WatchPoll} {
		t.Run(mode, func(t *testing.T) {
			v := newVolume(t)
			v.write(t, "old", []byte("x"), 0o644)
			vars := serveVars(v)
			if mode == WatchPoll {
				vars[EnvWatchPollMS] = "20"
			}
			s := startWatch(t, vars)
			ready := s.next(t)
			require.True(t, ready.Ready)
			require.Equal(t, mode, ready.Mode)

			v.write(t, "new", []byte("hello"), 0o644)
			v.mkdir(t, "dir")
			v.write(t, "dir/inner", []byte("x"), 0o644)
			require.NoError(t, os.Remove(v.at("old")))
			s.await(t, map[string]string{v.at("new"): ChangeCreated, v.at("dir"): ChangeCreated,
				v.at("dir/inner"): ChangeCreated, v.at("old"): ChangeRemoved})

			require.NoError(t, os.WriteFile(v.at("dir/inner"), []byte("more bytes"), 0o644))
			s.await(t, map[string]string{v.at("dir/inner"): ChangeWritten})
			require.NoError(t, os.Rename(v.at("new"), v.at("dir/renamed")))
			if mode == WatchInotify {
				s.await(t, map[string]string{v.at("new"): ChangeMovedFrom, v.at("dir/renamed"): ChangeMovedTo})
			} else {
				s.await(t, map[string]string{v.at("new"): ChangeRemoved, v.at("dir/renamed"): ChangeCreated})
			}
			require.NoError(t, os.WriteFile(v.outside+"/secret", []byte("changed"), 0o644))
			v.symlink(t, v.outside, "out")
			s.await(t, map[string]string{v.at("out"): ChangeCreated})
			require.NoError(t, os.WriteFile(v.outside+"/later", nil, 0o644))
			v.write(t, "marker", nil, 0o644)
			for {
				l := s.next(t)
				for _, c := range l.Changes {
					require.NotContains(t, c.Path, v.outside, "nothing behind a symlink is watched")
					require.NotEqual(t, v.at("out/later"), c.Path)
				}
				if len(l.Changes) > 0 && l.Changes[len(l.Changes)-1].Path == v.at("marker") {
					break
				}
			}
		})
	}
}

// TestWatchReportsWhatCameBeforeItsEnd: a change made just before stdin
// ends is still reported, in either mode — a watcher handing over to its
// successor loses nothing. The poll here is too slow to see it but for
// the last walk.
func TestWatchReportsWhatCameBeforeItsEnd(t *testing.T) {
	for _, mode := range []string{WatchInotify, WatchPoll} {
		t.Run(mode, func(t *testing.T) {
			v := newVolume(t)
			vars := serveVars(v)
			if mode == WatchPoll {
				vars[EnvWatchPollMS] = "60000"
			}
			s := startWatch(t, vars)
			require.True(t, s.next(t).Ready)
			v.write(t, "last", []byte("x"), 0o644)
			require.NoError(t, s.in.Close())
			seen := false
			for l := range s.lines {
				for _, c := range l.Changes {
					seen = seen || c.Path == v.at("last")
				}
			}
			require.True(t, seen, "the last change is reported before the watch ends")
		})
	}
}

// TestWatchOverflow stops reading the watch's output while 30 000 files
// are made: the kernel's queue (16 384 events by default) or a batch
// overflows, and the watch says to resync instead of growing or going on
// as if nothing was lost.
func TestWatchOverflow(t *testing.T) {
	v := newVolume(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- watch(env(serveVars(v)), inR, outW)
		outW.Close() //nolint:errcheck // a pipe's Close never fails
	}()
	r := bufio.NewReader(outR)
	line, err := r.ReadBytes('\n')
	require.NoError(t, err)
	require.Contains(t, string(line), `"ready":true`)
	for i := range 30_000 {
		require.NoError(t, os.WriteFile(filepath.Join(v.ws, "f"+strconv.Itoa(i)), nil, 0o644))
	}
	resync := false
	for !resync {
		line, err := r.ReadBytes('\n')
		require.NoError(t, err)
		var l WatchLine
		require.NoError(t, json.Unmarshal(line, &l))
		require.LessOrEqual(t, len(l.Changes), MaxWatchBatch)
		resync = l.Resync == ResyncOverflow
	}
	inW.Close()               //nolint:errcheck // a pipe's Close never fails
	go io.Copy(io.Discard, r) //nolint:errcheck // drain until it ends
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code)
	case <-time.After(serveGuard):
		t.Fatal("watch did not end with its stdin")
	}
}

func TestWatchBatch(t *testing.T) {
	b := newBatch()
	b.add("/w/tmp", ChangeCreated, false)
	b.add("/w/tmp", ChangeWritten, false)
	b.add("/w/tmp", ChangeMovedFrom, false) // a writer's temporary file: never reported
	b.add("/w/f", ChangeMovedTo, false)
	b.add("/w/f", ChangeWritten, false) // closed after its rename: still arrived
	b.add("/w/g", ChangeWritten, false)
	b.add("/w/g", ChangeRemoved, false)
	b.add("/w/d", ChangeCreated, true)
	require.Equal(t, []Change{{Path: "/w/f", Op: ChangeMovedTo}, {Path: "/w/g", Op: ChangeRemoved},
		{Path: "/w/d", Op: ChangeCreated, Dir: true}}, b.changes())
	for i := range MaxWatchBatch {
		b.add("/w/n"+strconv.Itoa(i), ChangeCreated, false)
	}
	require.True(t, b.overflow, "a batch past its bound overflows instead of growing")
}
