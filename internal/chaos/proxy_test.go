//go:build chaos

package chaos

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// storeProxy is a TCP relay in front of the object store, used as the
// server's presign endpoint so that every presigned PUT and GET passes
// through it: the scenarios watch how many bytes have moved without
// asking the server they are about to hurt.
type storeProxy struct {
	ln       net.Listener
	upstream string
	up, down atomic.Int64 // bytes to the store, bytes from it

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// startStoreProxy relays to upstream (host:port) until the test ends.
func startStoreProxy(t *testing.T, upstream string) *storeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &storeProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *storeProxy) addr() string { return p.ln.Addr().String() }

// moved is the bytes relayed both ways.
func (p *storeProxy) moved() int64 { return p.up.Load() + p.down.Load() }

func (p *storeProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve relays one connection, counting, until either side ends.
func (p *storeProxy) serve(c net.Conn) {
	u, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	p.track(c, u)
	defer p.untrack(c, u)
	var both sync.WaitGroup
	relay := func(dst, src net.Conn, n *atomic.Int64) {
		defer both.Done()
		_, _ = io.CopyBuffer(&countingWriter{dst, n}, src, make([]byte, 256<<10)) // ends when either side goes
		_ = dst.(*net.TCPConn).CloseWrite()
	}
	both.Add(2)
	go relay(u, c, &p.up)
	go relay(c, u, &p.down)
	both.Wait()
}

func (p *storeProxy) track(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
}

func (p *storeProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *storeProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// reset zeroes the counts.
func (p *storeProxy) reset() {
	p.up.Store(0)
	p.down.Store(0)
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	k, err := c.w.Write(b)
	c.n.Add(int64(k))
	return k, err
}
