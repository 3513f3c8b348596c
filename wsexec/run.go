package wsexec

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// RunOptions shape the client half; zero values take the defaults.
type RunOptions struct {
	PingInterval time.Duration // default 20 s
	PongWait     time.Duration // a silent server is gone after this; default 60 s
	WriteWait    time.Duration // per write; default 10 s
	// Signals, when set, are delivered to the command as they come: each
	// a name of Signals (others are dropped here, never sent).
	Signals <-chan string
}

// Run drives an exec over conn, whose 101 named Subprotocol: it streams
// stdin (nil: none) in frames, then close(0) at its end of file, copies
// stdout and stderr to their writers as they come, and returns the status
// frame. A connection that ends without one is ErrConnectionLost; a
// failing stdout or stderr writer ends the session (the server then ends
// the command) with that writer's error. ctx cancelled ends it too. Run
// closes conn. A read of stdin still blocked when Run returns is left to
// finish in its goroutine; what it returns is dropped.
func Run(ctx context.Context, conn *websocket.Conn, stdin io.Reader, stdout, stderr io.Writer, o RunOptions) (Status, error) {
	o.PingInterval = cmp.Or(o.PingInterval, ptyshell.DefaultPingInterval)
	o.PongWait = cmp.Or(o.PongWait, ptyshell.DefaultPongWait)
	o.WriteWait = cmp.Or(o.WriteWait, ptyshell.DefaultWriteWait)
	c := &runner{conn: conn, o: o, done: make(chan struct{})}
	defer func() { _ = conn.Close() }() // the session is over either way
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	c.alive = keepAlive(conn, o.PongWait, o.WriteWait)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pingUntil(conn, o.PingInterval, o.WriteWait, c.done)
	}()
	defer wg.Wait()
	defer close(c.done)
	go c.pumpStdin(stdin) // not waited: a read of a terminal may never return
	go c.pumpSignals(o.Signals)
	st, err := c.receive(stdout, stderr)
	if err != nil && ctx.Err() != nil {
		return Status{}, ctx.Err()
	}
	return st, err
}

type runner struct {
	conn  *websocket.Conn
	o     RunOptions
	done  chan struct{} // closed when Run returns
	alive func()        // moves the read deadline: a message arrived

	wmu sync.Mutex // one writer of messages at a time
}

// pumpStdin sends stdin in frames, then close(0). A read error other than
// end of file ends stdin the same way: the command sees end of file.
func (c *runner) pumpStdin(stdin io.Reader) {
	if stdin != nil {
		buf := make([]byte, MaxDataPayload)
		for {
			n, err := stdin.Read(buf)
			if n > 0 && c.send(ChannelStdin, buf[:n]) != nil {
				return
			}
			if err != nil {
				break
			}
		}
	}
	_ = c.send(ChannelClose, []byte{ChannelStdin}) // a failure shows in receive
}

// pumpSignals sends each signal asked for until Run returns.
func (c *runner) pumpSignals(signals <-chan string) {
	for {
		select {
		case name := <-signals:
			if slices.Contains(Signals, name) && c.send(ChannelSignal, []byte(name)) != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (c *runner) send(ch byte, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return errSealed
	default:
	}
	return writeFrame(c.conn, c.o.WriteWait, ch, p)
}

// receive reads frames until the status, then closes.
func (c *runner) receive(stdout, stderr io.Writer) (Status, error) {
	buf := make([]byte, MaxDataPayload)
	for {
		c.alive()
		mt, r, err := c.conn.NextReader()
		if err != nil {
			return Status{}, fmt.Errorf("%w: %w", ErrConnectionLost, err)
		}
		if mt != websocket.BinaryMessage {
			continue
		}
		var ch [1]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			continue // an empty message carries nothing
		}
		switch ch[0] {
		case ChannelStdout, ChannelStderr:
			w := stdout
			if ch[0] == ChannelStderr {
				w = stderr
			}
			if err := copyTo(w, r, buf); err != nil {
				c.abort()
				return Status{}, err
			}
		case ChannelStatus:
			st, err := readStatus(r)
			c.closeAfter()
			return st, err
		}
	}
}

// copyTo copies one payload to w (io.Discard when nil).
func copyTo(w io.Writer, r io.Reader, buf []byte) error {
	if w == nil {
		w = io.Discard
	}
	_, err := io.CopyBuffer(onlyWriter{w}, r, buf)
	return err
}

// onlyWriter hides ReadFrom, so CopyBuffer uses the bounded buffer.
type onlyWriter struct{ io.Writer }

func readStatus(r io.Reader) (Status, error) {
	p, err := io.ReadAll(io.LimitReader(r, MaxStatusPayload+1))
	if err != nil {
		return Status{}, fmt.Errorf("%w: %w", ErrConnectionLost, err)
	}
	var st Status
	if len(p) > MaxStatusPayload || json.Unmarshal(p, &st) != nil {
		return Status{}, errors.New("the server sent a malformed exit status")
	}
	return st, nil
}

// closeAfter answers the server's close after the status, waiting briefly
// for it.
func (c *runner) closeAfter() {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	_ = c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(c.o.WriteWait))
	awaitPeerClose(c.conn)
}

// abort closes the session from our side: the server ends the command.
func (c *runner) abort() {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	_ = c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(c.o.WriteWait))
}
