package holder

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// BridgeResult says how a bridged connection ended.
type BridgeResult struct {
	// ShellClosed is true when the holder ended the connection (its Serve
	// sent EXIT and a close frame); false when the client left or a stream
	// broke.
	ShellClosed bool
	// Code is the close code that ended it, or 1006 (abnormal) when there
	// was none.
	Code int
	// BytesIn and BytesOut count the payloads relayed each way.
	BytesIn, BytesOut int64
}

// BridgeOptions tune a Bridge.
type BridgeOptions struct {
	// WriteWait bounds each write to either side.
	WriteWait time.Duration
}

// Bridge relays a client's connection to the holder's, message by message
// and in both directions, until either ends or ctx is done (which cuts
// both, as a lost connection would).
// The holder serves the client as ptyshell.Serve does, so the server adds
// nothing: its pings and the client's pongs are forwarded too, which keeps
// the holder's keepalive end to end, and a close frame of either side is
// passed on with its code. When a side ends without one, the other's
// stream is cut, so the holder sees a client gone (and the shell detaches)
// and the client sees an abnormal close (and reattaches).
func Bridge(ctx context.Context, client, shell *websocket.Conn, opts BridgeOptions) BridgeResult {
	client.SetReadLimit(ptyshell.ServerReadLimit)
	shell.SetReadLimit(ptyshell.ClientReadLimit)
	deadline := func() time.Time { return time.Now().Add(opts.WriteWait) }
	shell.SetPingHandler(func(data string) error {
		_ = client.WriteControl(websocket.PingMessage, []byte(data), deadline()) // a lost ping is the holder's to time out
		return nil
	})
	client.SetPongHandler(func(data string) error {
		_ = shell.WriteControl(websocket.PongMessage, []byte(data), deadline()) // as above
		return nil
	})
	var once sync.Once
	cut := func() {
		once.Do(func() {
			_ = client.NetConn().Close() // both streams end here; nothing is left to flush
			_ = shell.NetConn().Close()
		})
	}
	stop := context.AfterFunc(ctx, cut)
	defer stop()
	var in inbound
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.n, in.code, in.closed = pump(client, shell, deadline)
		if !in.closed {
			cut()
			return
		}
		// The holder answers a client's close and ends its side; it gets
		// as long as a write to finish.
		_ = shell.SetReadDeadline(deadline())
	}()
	out, code, closed := pump(shell, client, deadline)
	cut()
	<-done
	res := BridgeResult{ShellClosed: closed, Code: code, BytesIn: in.n, BytesOut: out}
	if !closed {
		res.Code = in.code
	}
	if res.Code == 0 {
		res.Code = websocket.CloseAbnormalClosure
	}
	return res
}

// inbound is what the client-to-holder pump reports.
type inbound struct {
	n      int64
	code   int
	closed bool
}

// pump copies messages from src to dst until src ends. A close frame from
// src is passed on to dst (closed true, with its code); any other end is
// not.
// A message is streamed into dst's write buffer, never held whole: a
// burst of output costs no allocation per message.
func pump(src, dst *websocket.Conn, deadline func() time.Time) (n int64, code int, closed bool) {
	for {
		typ, r, err := src.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				return n, 0, false
			}
			_ = dst.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(ce.Code, ce.Text), deadline())
			return n, ce.Code, true
		}
		_ = dst.SetWriteDeadline(deadline())
		w, err := dst.NextWriter(typ)
		if err != nil {
			return n, 0, false
		}
		m, err := io.Copy(w, r)
		n += m
		if err != nil || w.Close() != nil {
			return n, 0, false
		}
	}
}
