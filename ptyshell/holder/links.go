package holder

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
	"golang.org/x/sync/singleflight"
)

// linkDialTimeout bounds starting a relay: the runtime's exec and the
// session over it.
const linkDialTimeout = 30 * time.Second

// DialRelay starts the relay in a shell's container (a runtime exec) and
// returns its byte stream.
type DialRelay func(ctx context.Context, container string) (net.Conn, error)

// Links keeps one relay per shell container open and opens a stream over
// it for every connection to that holder, so an attach costs a stream
// rather than a runtime exec (which takes a loaded engine 100 ms and
// more). A relay that ends (its container gone, a runtime restarted) is
// forgotten and started again at the next dial. Safe for concurrent use.
type Links struct {
	dial   DialRelay
	flight singleflight.Group

	mu       sync.Mutex
	sessions map[string]*yamux.Session
	closed   bool
}

// NewLinks returns links that start relays with dial.
func NewLinks(dial DialRelay) *Links {
	return &Links{dial: dial, sessions: map[string]*yamux.Session{}}
}

// Dial opens a stream to the holder of container. The relay's errors (the
// runtime's reasons) are returned as they are. A relay that fails to open
// a stream is replaced once.
func (l *Links) Dial(ctx context.Context, container string) (net.Conn, error) {
	for fresh := false; ; fresh = true {
		sess, err := l.session(ctx, container)
		if err != nil {
			return nil, err
		}
		st, err := sess.OpenStream()
		if err == nil {
			return st, nil
		}
		l.drop(container, sess)
		if fresh {
			return nil, err
		}
	}
}

// For is the Dial of one container's holder, for a Client.
func (l *Links) For(container string) Dial {
	return func(ctx context.Context) (net.Conn, error) { return l.Dial(ctx, container) }
}

// Forget closes the relay of container, if there is one: its shell ended.
func (l *Links) Forget(container string) {
	l.mu.Lock()
	sess := l.sessions[container]
	l.mu.Unlock()
	if sess != nil {
		l.drop(container, sess)
	}
}

// Close closes every relay; later dials fail. The shells are untouched.
func (l *Links) Close() {
	l.mu.Lock()
	l.closed = true
	all := l.sessions
	l.sessions = map[string]*yamux.Session{}
	l.mu.Unlock()
	for _, sess := range all {
		_ = sess.Close()
	}
}

// Open reports how many relays are open.
func (l *Links) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sessions)
}

// session returns the open relay of container, starting one if there is
// none; concurrent dials of one container share the start.
func (l *Links) session(ctx context.Context, container string) (*yamux.Session, error) {
	if sess := l.current(container); sess != nil {
		return sess, nil
	}
	ch := l.flight.DoChan(container, func() (any, error) {
		if sess := l.current(container); sess != nil {
			return sess, nil
		}
		if l.isClosed() {
			return nil, net.ErrClosed
		}
		// Shared by every waiting dial: the first caller leaving does not
		// cancel the others'.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), linkDialTimeout)
		defer cancel()
		conn, err := l.dial(dctx, container)
		if err != nil {
			return nil, err
		}
		sess, err := yamux.Client(conn, muxConfig())
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		return sess, l.keep(container, sess)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*yamux.Session), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Links) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *Links) current(container string) *yamux.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sess := l.sessions[container]; sess != nil && !sess.IsClosed() {
		return sess
	}
	return nil
}

// keep records sess for container and forgets it once it ends.
func (l *Links) keep(container string, sess *yamux.Session) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = sess.Close()
		return net.ErrClosed
	}
	l.sessions[container] = sess
	l.mu.Unlock()
	go func() {
		<-sess.CloseChan()
		l.drop(container, sess)
	}()
	return nil
}

// drop closes sess and removes it, unless a newer relay replaced it.
func (l *Links) drop(container string, sess *yamux.Session) {
	_ = sess.Close()
	l.mu.Lock()
	if l.sessions[container] == sess {
		delete(l.sessions, container)
	}
	l.mu.Unlock()
}
