package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// dialTimeout bounds a websocket dial. A v1 shell's or an exec's server
// creates the session's container before it answers 101, and may take its
// open timeout for that (a pod on a busy node takes seconds), so the dial
// waits that long plus the handshake itself.
const dialTimeout = ptyshell.DefaultOpenTimeout + ptyshell.HandshakeTimeout

// dialWebsocket dials a websocket route (a shell, an exec) offering the
// subprotocol proto, with read and write buffers of buffer bytes: a
// refused upgrade is a *cairn.Error with the answer's status, reason and
// message; no answer at all is a transport error. The caller checks the
// subprotocol the 101 named.
func (c *Client) dialWebsocket(ctx context.Context, path string, q url.Values, h http.Header, proto string, buffer int) (*websocket.Conn, error) {
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  c.tlsConfig(),
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
