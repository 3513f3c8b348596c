package holder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// Dial opens a byte stream to one holder's socket: the runtime runs the
// holder's relay in the shell's container (a Docker exec, a Kubernetes
// pods/exec) and joins its stdin and stdout.
type Dial func(ctx context.Context) (net.Conn, error)

// Client is a server's side of one holder: each call runs over a stream of
// its own, and proves the shell's key.
type Client struct {
	dial Dial
	key  []byte
}

// NewClient returns the client of the holder reached by dial, whose shell's
// key is key.
func NewClient(dial Dial, key []byte) *Client { return &Client{dial: dial, key: key} }

// ErrEnded answers an attach to a shell that has ended.
var ErrEnded = errors.New("holder: the shell has ended")

// maxAnswer bounds a JSON answer of a holder.
const maxAnswer = 64 << 10

// attachTries bounds the attempts of one attach whose stream to the holder
// failed before any answer: an engine under load may fail an exec now and
// then, which a fresh one gets past.
const attachTries = 3

// Attach opens a connection to the shell in role (writer or watcher); a
// writer's size, when valid, is applied first. The connection speaks
// ptyshell v2 exactly as a client sees it. A stream that fails before the
// holder answered is tried again, up to attachTries in all, within ctx.
// Reasons: ErrEnded.
func (c *Client) Attach(ctx context.Context, role string, size ptyshell.Size) (*websocket.Conn, error) {
	q := url.Values{"role": {role}}
	if role == ptyshell.RoleWriter && size.Valid() {
		q.Set("cols", strconv.Itoa(size.Cols))
		q.Set("rows", strconv.Itoa(size.Rows))
	}
	u := "ws://holder" + PathAttach + "?" + q.Encode()
	var err error
	for try := 1; try <= attachTries; try++ {
		var conn *websocket.Conn
		var answered bool
		if conn, answered, err = c.attachOnce(ctx, u); err == nil || answered || ctx.Err() != nil {
			return conn, err
		}
		t := time.NewTimer(time.Duration(try) * 100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
	}
	return nil, err
}

// attachOnce is one attempt; answered says the holder answered (a refusal
// that another attempt would meet again).
func (c *Client) attachOnce(ctx context.Context, u string) (*websocket.Conn, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, true, err
	}
	if err := Sign(req, c.key, time.Now()); err != nil { // a fresh nonce each time
		return nil, true, err
	}
	d := websocket.Dialer{
		NetDialContext:   func(ctx context.Context, _, _ string) (net.Conn, error) { return c.dial(ctx) },
		Subprotocols:     []string{ptyshell.SubprotocolV2},
		HandshakeTimeout: ptyshell.HandshakeTimeout,
		ReadBufferSize:   ptyshell.MaxDataPayload + 64,
		WriteBufferSize:  4 << 10,
	}
	conn, resp, err := d.DialContext(ctx, u, req.Header)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close() // only the status matters
	}
	switch {
	case err == nil:
		return conn, true, nil
	case resp != nil && resp.StatusCode == http.StatusGone:
		return nil, true, ErrEnded
	case resp != nil:
		return nil, true, fmt.Errorf("attach to the shell's holder: %w", err)
	}
	return nil, false, fmt.Errorf("attach to the shell's holder: %w", err)
}

// State asks the holder how its shell is.
func (c *Client) State(ctx context.Context) (*State, error) {
	var st State
	return &st, c.call(ctx, http.MethodGet, PathState, &st)
}

// End ends the shell (reason terminated) and returns its state once it has
// ended.
func (c *Client) End(ctx context.Context) (*State, error) {
	var st State
	return &st, c.call(ctx, http.MethodPost, PathEnd, &st)
}

// Signal sends the signal name to the shell's foreground job. A shell that
// has exited answers a *StatusError of 409.
func (c *Client) Signal(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodPost, PathSignal+"/"+url.PathEscape(name), nil)
}

// Release lets the holder of an ended shell exit.
func (c *Client) Release(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, PathRelease, nil)
}

// Recording returns the ended shell's recording; the caller closes it.
func (c *Client) Recording(ctx context.Context) (io.ReadCloser, error) {
	resp, err := c.do(ctx, http.MethodGet, PathRecording)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (c *Client) call(ctx context.Context, method, path string, into any) error {
	resp, err := c.do(ctx, method, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if into == nil {
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(into)
}

// do sends one proven request over a new stream; any status but 2xx is an
// error carrying the holder's one line.
func (c *Client) do(ctx context.Context, method, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://holder"+path, nil)
	if err != nil {
		return nil, err
	}
	if err := Sign(req, c.key, time.Now()); err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{
		DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return c.dial(ctx) },
		DisableKeepAlives: true,
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s on the shell's holder: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		line, _ := io.ReadAll(io.LimitReader(resp.Body, 512)) // the error's text, best effort
		return nil, &StatusError{Code: resp.StatusCode, Text: strings.TrimSpace(string(line))}
	}
	return resp, nil
}

// StatusError is a holder's refusal.
type StatusError struct {
	Code int
	Text string
}

func (e *StatusError) Error() string { return fmt.Sprintf("holder answered %d: %s", e.Code, e.Text) }
