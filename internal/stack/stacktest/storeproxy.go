package stacktest

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// StoreProxy is a TCP proxy in front of the object store, made the
// server's presign endpoint so that every presigned PUT and GET — the
// client's and the sidecars' — passes through it. It counts the bytes
// each way, and a trip armed with killAt runs the fault at a real point of
// a transfer: when the bytes one way reach a mark, before the chunk that
// reaches it goes on.
//
// Its counts: Up is the bytes sent to the store (requests, bodies), Down
// those from it.
type StoreProxy struct {
	ln       net.Listener
	upstream string
	up, down atomic.Int64

	trip atomic.Pointer[trip]

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// trip is a fault armed on one direction's count.
type trip struct {
	count *atomic.Int64
	mark  int64
	fault func()
	once  sync.Once
	fired chan struct{} // closed once fault has returned
}

// StartStoreProxy listens on a free loopback port and relays each
// connection to upstream until the test ends.
func StartStoreProxy(t testing.TB, upstream string) *StoreProxy {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &StoreProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port, for ServerOptions.PresignEndpoint.
func (p *StoreProxy) Addr() string { return p.ln.Addr().String() }

// Up is the bytes relayed to the store since the last reset.
func (p *StoreProxy) Up() int64 { return p.up.Load() }

// Down is the bytes relayed from the store since the last reset.
func (p *StoreProxy) Down() int64 { return p.down.Load() }

// Moved is the bytes relayed both ways since the last reset.
func (p *StoreProxy) Moved() int64 { return p.up.Load() + p.down.Load() }

// Reset zeroes the counts.
func (p *StoreProxy) Reset() {
	p.up.Store(0)
	p.down.Store(0)
}

// At zeroes the counts and arms fault to run once the bytes sent to
// the store (up) or from it (!up) reach mark; the channel is closed once
// the fault has run.
func (p *StoreProxy) At(up bool, mark int64, fault func()) <-chan struct{} {
	p.Reset()
	tr := &trip{count: &p.down, mark: mark, fault: fault, fired: make(chan struct{})}
	if up {
		tr.count = &p.up
	}
	p.trip.Store(tr)
	return tr.fired
}

// Cut closes every connection the proxy relays, at once: bytes the store
// sent that were not relayed yet are lost, as a killed store's are to a
// client that has not read them. A fault that kills the store calls it, so
// a transfer past the mark cannot finish on what was in flight.
func (p *StoreProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// Disarm drops the armed trip, whether it fired or not.
func (p *StoreProxy) Disarm() { p.trip.Store(nil) }

func (p *StoreProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve relays one connection, counting, until either side ends. A store
// that is down refuses the dial, and the client sees its connection
// closed.
func (p *StoreProxy) serve(c net.Conn) {
	u, err := new(net.Dialer).DialContext(context.Background(), "tcp", p.upstream) // ends with the proxy, not a test
	if err != nil {
		c.Close()
		return
	}
	p.track(c, u)
	defer p.untrack(c, u)
	var both sync.WaitGroup
	both.Add(2)
	go p.relay(&both, u, c, &p.up)
	go p.relay(&both, c, u, &p.down)
	both.Wait()
}

func (p *StoreProxy) relay(both *sync.WaitGroup, dst, src net.Conn, n *atomic.Int64) {
	defer both.Done()
	buf := make([]byte, 64<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			p.pass(n, int64(k))
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = dst.(*net.TCPConn).CloseWrite()
	if n == &p.down {
		// The store's side ended: a connection the store dropped must not
		// stay half-open towards the client, who waits for the rest.
		_ = src.Close()
		_ = dst.Close()
	}
}

// pass counts k bytes one way and runs the armed fault when they reach
// its mark.
func (p *StoreProxy) pass(n *atomic.Int64, k int64) {
	total := n.Add(k)
	tr := p.trip.Load()
	if tr == nil || tr.count != n || total < tr.mark {
		return
	}
	tr.once.Do(func() {
		tr.fault()
		close(tr.fired)
	})
}

func (p *StoreProxy) track(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
}

func (p *StoreProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *StoreProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
