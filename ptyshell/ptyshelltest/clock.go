package ptyshelltest

import (
	"sort"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/ptyshell"
)

var _ ptyshell.Clock = (*Clock)(nil)

// Clock is a manual ptyshell.Clock: time moves only when Advance is
// called, and timers fire then, in deadline order. A timer created with a
// deadline already due fires at once.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

// NewClock returns a Clock that reads start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires when the clock reaches Now()+d.
func (c *Clock) NewTimer(d time.Duration) ptyshell.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, ch: make(chan time.Time, 1), at: c.now.Add(d)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock forward by d and fires every timer now due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			keep = append(keep, t)
			continue
		}
		t.ch <- t.at
	}
	c.timers = keep
}

// Pending counts the timers that have not fired and were not stopped.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

type timer struct {
	c  *Clock
	ch chan time.Time
	at time.Time
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	for i, o := range t.c.timers {
		if o == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}
