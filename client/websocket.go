package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// dialTimeout bounds a websocket dial's wait for the server's answer. A
// v1 shell's or an exec's server starts the session's container before it
// answers 101, and may take up to cairn.MaxStartWait for that (a pod on a
// busy node), so the dial waits that long plus the handshake itself. The
// connection itself is bounded by the handshake alone: a server that is
// not there is found out at once.
const dialTimeout = cairn.MaxStartWait + ptyshell.HandshakeTimeout

// dialWebsocket dials a websocket route (a shell, an exec) offering the
// subprotocol proto, with read and write buffers of buffer bytes: a
// refused upgrade is a *cairn.Error with the answer's status, reason and
// message; no answer at all is a transport error. The caller checks the
// subprotocol the 101 named.
func (c *Client) dialWebsocket(ctx context.Context, path string, q url.Values, h http.Header, proto string, buffer int) (*websocket.Conn, error) {
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  c.tlsConfig(),
		NetDialContext:   (&net.Dialer{Timeout: ptyshell.HandshakeTimeout}).DialContext,
		HandshakeTimeout: dialTimeout,
		Subprotocols:     []string{proto},
		ReadBufferSize:   buffer,
		WriteBufferSize:  buffer,
	}
	conn, resp, err := d.DialContext(ctx, c.websocketURL(path, q), h)
	if resp != nil && resp.Body != nil {
		if err != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			err = decodeError(resp)
		}
		resp.Body.Close() //nolint:errcheck // read what was needed
	}
	if err != nil {
		if _, refused := errors.AsType[*cairn.Error](err); refused {
			return nil, err
		}
		return nil, transportError(ctx, "GET "+path, err)
	}
	return conn, nil
}
