package sshui

import (
	"fmt"
	"sync"
)

// limits counts the open sessions, in all and per key.
type limits struct {
	mu        sync.Mutex
	total     int
	perKey    map[string]int
	max       int
	maxPerKey int
}

func newLimits(maxTotal, maxPerKey int) *limits {
	return &limits{perKey: make(map[string]int), max: maxTotal, maxPerKey: maxPerKey}
}

// acquire takes a place for a session of key, or says why there is none.
// release gives it back; call it once.
func (l *limits) acquire(key string) (release func(), refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.max:
		return nil, fmt.Sprintf("the server has %d workbench sessions open, its limit (ssh.maxSessions); try again later", l.total)
	case l.perKey[key] >= l.maxPerKey:
		return nil, fmt.Sprintf("key %s has %d sessions open, its limit (ssh.maxSessionsPerKey); close one first", key, l.perKey[key])
	}
	l.total++
	l.perKey[key]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if l.perKey[key]--; l.perKey[key] == 0 {
			delete(l.perKey, key)
		}
	}, ""
}

// open counts the sessions holding a place now.
func (l *limits) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}
