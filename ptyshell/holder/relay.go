package holder

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"syscall"
	"time"

	"github.com/hashicorp/yamux"
)

// relayWait bounds how long the relay waits for a holder that is still
// starting to listen.
const relayWait = 10 * time.Second

// relayStreams bounds the streams one relay carries at once: a server's
// attachments of one shell and its requests to the holder.
const relayStreams = 64

// Relay carries a server's streams to the holder's socket: the relay a
// server runs in the shell's container, once, and keeps. in and out carry
// a yamux session (the server opens the streams); each stream is joined to
// a connection of its own to the socket, so an attach or a request costs a
// stream, not a runtime exec. It carries bytes only; the holder checks
// every request's proof. A holder that has not started listening yet is
// waited for (a server may reach the container as it starts). It returns
// once the server's side has ended.
func Relay(socket string, in io.Reader, out io.Writer) error {
	sess, err := yamux.Server(stdio{in, out}, muxConfig())
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }() // closing ends every stream; nothing is left to report
	slots := make(chan struct{}, relayStreams)
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			if errors.Is(err, io.EOF) || sess.IsClosed() {
				return nil // the server closed its side
			}
			return err
		}
		select {
		case slots <- struct{}{}:
			go func() {
				defer func() { <-slots }()
				joinSocket(socket, st)
			}()
		default:
			_ = st.Close() // over the bound: refused, the server sees its stream end
		}
	}
}

// joinSocket copies st to a new connection to the socket and back, until
// the holder's side ends.
func joinSocket(socket string, st net.Conn) {
	defer st.Close()
	conn, err := dialHolder(socket, time.Now().Add(relayWait))
	if err != nil {
		return
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, st) // ends with the server's stream
		_ = conn.(*net.UnixConn).CloseWrite()
	}()
	_, _ = io.Copy(st, conn)
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

// muxConfig is the relay session's configuration, the same on both ends.
func muxConfig() *yamux.Config {
	c := yamux.DefaultConfig()
	c.AcceptBacklog = relayStreams
	c.LogOutput = io.Discard // the relay's stderr goes nowhere; the server reports what it sees
	return c
}

// stdio is the relay's end of its session: its stdin and stdout.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	if c, ok := s.Writer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
