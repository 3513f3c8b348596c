package ptyshell_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// hubbed is one v2 shell: the fake process, its Hub, and a server lending
// it to connections.
type hubbed struct {
	stream *ptyshelltest.Stream
	hub    *ptyshell.Hub
	srv    *ptyshelltest.HubServer
}

func startHub(t *testing.T, opts ptyshell.HubOptions) *hubbed {
	t.Helper()
	stream := ptyshelltest.NewStream()
	stream.Echo = true
	if opts.Size == (ptyshell.Size{}) {
		opts.Size = ptyshell.Size{Cols: 80, Rows: 24}
	}
	hub := ptyshell.NewHub(stream, opts)
	require.NoError(t, hub.Start(context.Background()))
	t.Cleanup(func() {
		hub.End(ptyshell.ErrServerShutdown)
		<-hub.Done()
	})
	return &hubbed{stream: stream, hub: hub, srv: ptyshelltest.NewHubServer(t, hub, ptyshell.ServeOptions{Status: testStatus})}
}

// attach dials path (/attach or /watch) and reads the two STATUS frames,
// returning the running one.
func (h *hubbed) attach(t *testing.T, path string) (*ptyshelltest.Conn, ptyshell.Status) {
	t.Helper()
	c := ptyshelltest.DialV2(t, h.srv.URL+path+"?cols=100&rows=30")
	require.Equal(t, ptyshell.SubprotocolV2, c.Subprotocol())
	var st ptyshell.Status
	for _, state := range []string{ptyshell.StateStarting, ptyshell.StateRunning} {
		f, err := c.Next()
		require.NoError(t, err)
		require.Equal(t, ptyshell.FrameStatus, f.Type)
		require.NoError(t, ptyshell.DecodeControl(f.Payload, &st))
		require.Equal(t, state, st.State)
	}
	return c, st
}

func TestHubNegotiatesV2(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{})
	_, st := h.attach(t, "/attach")
	require.Equal(t, ptyshell.RoleWriter, st.Role)

	// A v1 client never gets v2: the upgrade names no subprotocol it
	// offered, and a v1 Session refuses a v2 answer.
	v1, resp, err := websocket.DefaultDialer.Dial(h.srv.URL+"/watch", http.Header{"Sec-WebSocket-Protocol": {ptyshell.Subprotocol}})
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Empty(t, v1.Subprotocol())
	require.NoError(t, v1.Close())
	c := ptyshelltest.DialV2(t, h.srv.URL+"/watch")
	_, err = ptyshell.NewSession(c.Conn, ptyshell.SessionOptions{})
	require.ErrorIs(t, err, ptyshell.ErrUnsupportedProtocol)

	c = ptyshelltest.DialV2(t, h.srv.URL+"/watch")
	sess, err := ptyshell.NewSession(c.Conn, ptyshell.SessionOptions{Subprotocol: ptyshell.SubprotocolV2})
	require.NoError(t, err)
	require.NoError(t, sess.Close())
}

func TestHubTakeOver(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{})
	a, _ := h.attach(t, "/attach")
	require.NoError(t, a.SendInput([]byte("from-a;")))
	_, err := a.ReadOutput("from-a;")
	require.NoError(t, err)

	b, _ := h.attach(t, "/attach")
	tr := a.Collect()
	require.Equal(t, 1, tr.Exits)
	require.Equal(t, ptyshell.ReasonTakenOver, tr.Exit.Reason)
	require.Equal(t, ptyshell.CloseTakenOver, tr.CloseCode)

	require.NoError(t, b.SendInput([]byte("from-b;")))
	_, err = b.ReadOutput("from-b;")
	require.NoError(t, err)
	require.Equal(t, "from-a;from-b;", string(h.stream.Input()))
	require.False(t, h.hub.Detached())
	select {
	case <-h.hub.Done():
		t.Fatal("a take-over ended the shell")
	default:
	}
}

func TestHubWatcherIsReadOnly(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{})
	w, st := h.attach(t, "/watch")
	require.Equal(t, ptyshell.RoleWatcher, st.Role)
	require.Equal(t, 1, h.hub.Watchers())
	require.NoError(t, w.SendInput([]byte("typed-by-watcher")))
	require.NoError(t, w.SendResize(ptyshell.Size{Cols: 10, Rows: 5}))
	for range 2 { // one for the INPUT, one for the RESIZE
		f, _, err := w.NextOfType(ptyshell.FrameError)
		require.NoError(t, err)
		var e ptyshell.ErrorInfo
		require.NoError(t, ptyshell.DecodeControl(f.Payload, &e))
		require.Equal(t, ptyshell.ErrorReadOnly, e.Code)
		require.False(t, e.Fatal)
	}

	wr, _ := h.attach(t, "/attach")
	require.NoError(t, wr.SendInput([]byte("writer-typed")))
	_, err := w.ReadOutput("writer-typed")
	require.NoError(t, err)
	require.Equal(t, "writer-typed", string(h.stream.Input()))
	require.NotContains(t, h.stream.Resizes(), ptyshell.Size{Cols: 10, Rows: 5})
}

func TestHubReattachRendersThenLive(t *testing.T) {
	detached := make(chan struct{}, 1)
	h := startHub(t, ptyshell.HubOptions{NewScreen: ptyshelltest.NewScreen, OnDetach: func() { detached <- struct{}{} }})
	a, _ := h.attach(t, "/attach")
	require.NoError(t, h.stream.Print([]byte("before-drop;")))
	_, err := a.ReadOutput("before-drop;")
	require.NoError(t, err)
	require.NoError(t, a.Close()) // dropped: no close frame
	select {
	case <-detached:
	case <-time.After(ptyshelltest.Guard):
		t.Fatal("the writer never left")
	}
	require.True(t, h.hub.Detached())
	require.NoError(t, h.stream.Print([]byte("while-detached;")))

	b, _ := h.attach(t, "/attach")
	out, err := b.ReadOutput("while-detached;")
	require.NoError(t, err)
	// The attach's size (100×30) reached the screen before its render.
	require.True(t, strings.HasPrefix(string(out), string(ptyshelltest.RenderMarker(100, 30))), "%q", out)
	require.Contains(t, string(out), "before-drop;")
	require.NoError(t, h.stream.Print([]byte("live;")))
	_, err = b.ReadOutput("live;")
	require.NoError(t, err)
}

func TestHubDetachedTimeout(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{Detached: 50 * time.Millisecond})
	select {
	case <-h.hub.Done():
	case <-time.After(ptyshelltest.Guard):
		t.Fatal("a detached shell outlived its timeout")
	}
	res := h.hub.Result()
	require.Equal(t, ptyshell.ReasonDetachedTimeout, res.Reason)
	require.Equal(t, 1, h.stream.Closes())
	require.Equal(t, 1, h.stream.Stops())
}

func TestHubEndReachesWriterAndWatcher(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{})
	wr, _ := h.attach(t, "/attach")
	w, _ := h.attach(t, "/watch")
	h.hub.End(ptyshell.ErrTerminated)
	for _, c := range []*ptyshelltest.Conn{wr, w} {
		tr := c.Collect()
		require.Equal(t, 1, tr.Exits)
		require.Equal(t, ptyshell.ReasonTerminated, tr.Exit.Reason)
		require.Equal(t, ptyshell.CloseTerminated, tr.CloseCode)
	}
	require.Equal(t, ptyshell.ReasonTerminated, h.hub.Result().Reason)
	require.Equal(t, 1, h.stream.Closes())
}

func TestHubExitReachesEveryone(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{})
	wr, _ := h.attach(t, "/attach")
	w, _ := h.attach(t, "/watch")
	require.NoError(t, h.stream.Print([]byte("done")))
	h.stream.Exit(3)
	for _, c := range []*ptyshelltest.Conn{wr, w} {
		tr := c.Collect()
		require.Contains(t, string(tr.Output), "done")
		require.Equal(t, ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited, Message: "the shell exited with status 3"}, tr.Exit)
	}
	require.Equal(t, ptyshell.HubResult{Reason: ptyshell.ReasonExited, ExitCode: 3, BytesOut: 4}, h.hub.Result())
}

// events is a Recorder that keeps what it was given.
type events struct {
	mu   sync.Mutex
	got  []string
	last time.Time
}

func (e *events) Output(at time.Time, p []byte) error { return e.add(at, "o:"+string(p)) }

func (e *events) Resize(at time.Time, cols, rows int) error {
	return e.add(at, fmt.Sprintf("r:%dx%d", cols, rows))
}

func (e *events) add(at time.Time, ev string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if at.Before(e.last) {
		ev += " (time went back)"
	}
	e.got, e.last = append(e.got, ev), at
	return nil
}

func (e *events) all() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.got, "|")
}

func TestHubRecordsOutputAndResizes(t *testing.T) {
	rec := &events{}
	h := startHub(t, ptyshell.HubOptions{Recorder: rec})
	a, _ := h.attach(t, "/attach") // 100×30, from 80×24
	require.NoError(t, h.stream.Print([]byte("printed;")))
	_, err := a.ReadOutput("printed;")
	require.NoError(t, err)
	require.NoError(t, a.SendInput([]byte("typed;")))
	_, err = a.ReadOutput("typed;")
	require.NoError(t, err)
	w, _ := h.attach(t, "/watch")
	require.NoError(t, w.SendResize(ptyshell.Size{Cols: 10, Rows: 5})) // refused: read-only
	_, _, err = w.NextOfType(ptyshell.FrameError)
	require.NoError(t, err)
	h.stream.Exit(0)
	a.Collect()
	<-h.hub.Done()
	require.Equal(t, "r:100x30|o:printed;|o:typed;", rec.all())
}

// TestTapReadTakesWhatIsQueued: output that queued up while its connection
// was busy leaves in one read, not one read per chunk of the process.
func TestTapReadTakesWhatIsQueued(t *testing.T) {
	h := startHub(t, ptyshell.HubOptions{})
	tap, err := h.hub.Attach(t.Context(), ptyshell.RoleWriter, ptyshell.Size{Cols: 80, Rows: 24})
	require.NoError(t, err)
	for _, chunk := range []string{"first;", "second;", "third;", "fourth;"} {
		// The fake's output is a pipe: a print returns once the hub read
		// it, so every chunk before the last has been queued for the tap.
		require.NoError(t, h.stream.Print([]byte(chunk)))
	}
	buf := make([]byte, ptyshell.MaxDataPayload)
	n, err := tap.Read(buf)
	require.NoError(t, err)
	require.Contains(t, string(buf[:n]), "first;second;third;", "one read took the three queued chunks")
}
