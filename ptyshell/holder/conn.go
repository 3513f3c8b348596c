package holder

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// StreamConn is a net.Conn over a relay's two byte streams (what a runtime
// exec gives: the relay's stdout to read, its stdin to write), so HTTP and
// websockets run over it. Close ends both through closeFn, once. Deadlines
// are kept by cutting: a read or write still blocked when its deadline
// passes fails, and the stream is cut — enough for the HTTP and websocket
// clients, which treat a timeout as the end; one started after its
// deadline fails at once.
type StreamConn struct {
	r       io.Reader
	w       io.Writer
	closeFn func() error

	mu        sync.Mutex
	timers    [2]*time.Timer // read, write
	until     [2]time.Time
	inFlight  [2]int
	closeOnce sync.Once
	closeErr  error
}

// NewStreamConn returns the connection reading r and writing w.
func NewStreamConn(r io.Reader, w io.Writer, closeFn func() error) *StreamConn {
	return &StreamConn{r: r, w: w, closeFn: closeFn}
}

func (c *StreamConn) Read(p []byte) (int, error) {
	if err := c.begin(0); err != nil {
		return 0, err
	}
	defer c.finish(0)
	return c.r.Read(p)
}

func (c *StreamConn) Write(p []byte) (int, error) {
	if err := c.begin(1); err != nil {
		return 0, err
	}
	defer c.finish(1)
	return c.w.Write(p)
}

func (c *StreamConn) begin(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.until[i].IsZero() && !time.Now().Before(c.until[i]) {
		return os.ErrDeadlineExceeded
	}
	c.inFlight[i]++
	return nil
}

func (c *StreamConn) finish(i int) {
	c.mu.Lock()
	c.inFlight[i]--
	c.mu.Unlock()
}

func (c *StreamConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		for _, t := range c.timers {
			if t != nil {
				t.Stop()
			}
		}
		c.mu.Unlock()
		c.closeErr = c.closeFn()
	})
	return c.closeErr
}

func (c *StreamConn) LocalAddr() net.Addr  { return relayAddr{} }
func (c *StreamConn) RemoteAddr() net.Addr { return relayAddr{} }

func (c *StreamConn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t) // never fails
	return c.SetWriteDeadline(t)
}

func (c *StreamConn) SetReadDeadline(t time.Time) error  { c.deadline(0, t); return nil }
func (c *StreamConn) SetWriteDeadline(t time.Time) error { c.deadline(1, t); return nil }

// deadline arms (or, for the zero time, disarms) the timer that cuts the
// stream if an operation is still blocked when the deadline passes.
func (c *StreamConn) deadline(i int, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timers[i] != nil {
		c.timers[i].Stop()
		c.timers[i] = nil
	}
	c.until[i] = t
	if t.IsZero() {
		return
	}
	c.timers[i] = time.AfterFunc(time.Until(t), func() {
		c.mu.Lock()
		blocked := c.inFlight[i] > 0 && c.until[i].Equal(t)
		c.mu.Unlock()
		if blocked {
			_ = c.Close()
		}
	})
}

// relayAddr names the far end of a relay: it has no network address.
type relayAddr struct{}

func (relayAddr) Network() string { return "relay" }
func (relayAddr) String() string  { return "holder-relay" }
