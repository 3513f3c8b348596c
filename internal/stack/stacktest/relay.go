package stacktest

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Relay forwards connections to host:0 on to target until the test ends
// and returns the port it listens on: a service of the tests on loopback,
// reached by pods at an address of this machine they can route to.
func Relay(t testing.TB, host, target string) int {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(context.Background(), "tcp", net.JoinHostPort(host, "0"))
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	track := func(c net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if conns == nil {
			return false
		}
		conns[c] = struct{}{}
		return true
	}
	wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			if !track(in) || !track(out) {
				in.Close()
				out.Close()
				return
			}
			// Each direction passes on its end of file as a half-close (a
			// client that shuts its side still reads the answer); the pair
			// closes when both are done.
			var pair sync.WaitGroup
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				_ = dst.(*net.TCPConn).CloseWrite()
			}
			pair.Go(func() { pipe(out, in) })
			pair.Go(func() { pipe(in, out) })
			wg.Go(func() {
				pair.Wait()
				in.Close()
				out.Close()
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		conns = nil
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().(*net.TCPAddr).Port
}
