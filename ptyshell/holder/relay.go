package holder

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"syscall"
	"time"
)

// relayWait bounds how long the relay waits for a holder that is still
// starting to listen.
const relayWait = 10 * time.Second

// Relay joins in and out to the holder's socket: the attach relay a server
// runs in the shell's container. It carries bytes only; the holder checks
// every request's proof. A holder that has not started listening yet is
// waited for (a server may reach the container as it starts). It returns
// once the holder's side has ended.
func Relay(socket string, in io.Reader, out io.Writer) error {
	conn, err := dialHolder(socket, time.Now().Add(relayWait))
	if err != nil {
		return err
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, in) // ends with the server's stream
		_ = conn.(*net.UnixConn).CloseWrite()
	}()
	_, err = io.Copy(out, conn)
	return err
}

// dialHolder connects to the socket, retrying while it does not exist yet
// or refuses, until the deadline.
func dialHolder(socket string, deadline time.Time) (net.Conn, error) {
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		conn, err := (&net.Dialer{}).DialContext(context.Background(), "unix", socket)
		starting := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)
		if err == nil || !starting || time.Now().Add(pause).After(deadline) {
			return conn, err
		}
		time.Sleep(pause) // the holder is starting: nothing to wait on but its socket
	}
}
