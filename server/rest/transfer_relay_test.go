package rest_test

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// relay is a TCP relay in front of the store, named as the presign endpoint
// so that a sidecar's upload passes through it on the wire, where a test
// can hold it at a fixed byte or alter one byte. It relays every
// connection; the offsets count each connection's bytes towards the store,
// request line and headers included.
type relay struct {
	endpoint string        // http://127.0.0.1:port, for xferOpts.presign
	held     chan struct{} // closed when a connection reaches holdAt
	release  chan struct{} // close to let a held connection go on

	opts relayOpts
	stop chan struct{}
	once sync.Once
	mu   sync.Mutex
	open map[net.Conn]bool
	wg   sync.WaitGroup
}

// relayOpts places the relay's interventions; a negative offset is none.
type relayOpts struct {
	holdAt int64 // stop passing bytes on here until release
	flipAt int64 // invert the byte here
}

// startRelay relays to target (host:port) until the test ends.
func startRelay(t testing.TB, target string, o relayOpts) *relay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &relay{endpoint: "http://" + l.Addr().String(), held: make(chan struct{}), release: make(chan struct{}),
		opts: o, stop: make(chan struct{}), open: map[net.Conn]bool{}}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.serve(c, target)
			}()
		}
	}()
	t.Cleanup(func() {
		close(r.stop)
		l.Close()
		r.mu.Lock()
		for c := range r.open {
			c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
	return r
}

// track registers a connection for closing at cleanup; false once the
// relay is stopping.
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.stop:
		return false
	default:
	}
	r.open[c] = true
	return true
}

func (r *relay) serve(client net.Conn, target string) {
	defer client.Close()
	if !r.track(client) {
		return
	}
	store, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer store.Close()
	if !r.track(store) {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(client, store) //nolint:errcheck // either side closing ends the relay
		client.Close()
	}()
	r.forward(store, client)
	store.Close()
	<-done
}

// forward copies the client's bytes to the store, intervening at the
// configured offsets.
func (r *relay) forward(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	var off int64
	for {
		n, err := src.Read(buf)
		chunk := buf[:n]
		if f := r.opts.flipAt - off; r.opts.flipAt >= 0 && f >= 0 && f < int64(n) {
			chunk[f] ^= 0xff
		}
		if h := r.opts.holdAt - off; r.opts.holdAt >= 0 && h >= 0 && h < int64(n) {
			if _, werr := dst.Write(chunk[:h]); werr != nil {
				return
			}
			if !r.hold() {
				return
			}
			chunk = chunk[h:]
		}
		if _, werr := dst.Write(chunk); werr != nil {
			return
		}
		off += int64(n)
		if err != nil {
			return
		}
	}
}

// hold signals held once and waits for release; false when the relay
// stops first.
func (r *relay) hold() bool {
	r.once.Do(func() { close(r.held) })
	select {
	case <-r.release:
		return true
	case <-r.stop:
		return false
	}
}
