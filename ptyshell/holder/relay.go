package holder

import (
	"io"
	"net"
)

// Relay joins in and out to the holder's socket: the attach relay a server
// runs in the shell's container. It carries bytes only; the holder checks
// every request's proof. It returns once the holder's side has ended.
func Relay(socket string, in io.Reader, out io.Writer) error {
	conn, err := net.Dial("unix", socket)
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
