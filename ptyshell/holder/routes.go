package holder

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/cast"
)

// The holder's routes, each behind a proof of the shell's key.
const (
	PathAttach    = "/v1/attach"    // GET, websocket: ?role=writer|watcher&cols=&rows=
	PathState     = "/v1/state"     // GET: State
	PathEnd       = "/v1/end"       // POST: end the shell (reason terminated), answer State once ended
	PathRecording = "/v1/recording" // GET, once ended: the asciicast
	PathRelease   = "/v1/release"   // POST, once ended: the holder exits
	// PathSignal + "/" + name: POST, the signal (ptyshell.SignalNames) to
	// the terminal's foreground job. The name is in the path, which the
	// proof covers.
	PathSignal = "/v1/signal"
)

// State is the answer of GET /v1/state.
type State struct {
	Running     bool       `json:"running"`
	Detached    bool       `json:"detached"`
	Watchers    int        `json:"watchers"`
	StartedAt   time.Time  `json:"started_at"`
	LastInputAt time.Time  `json:"last_input_at"`
	End         *EndResult `json:"end,omitempty"`
}

func (h *Holder) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathAttach, h.attach)
	mux.HandleFunc("GET "+PathState, h.getState)
	mux.HandleFunc("POST "+PathEnd, h.endShell)
	mux.HandleFunc("GET "+PathRecording, h.recording)
	mux.HandleFunc("POST "+PathRelease, h.releaseHolder)
	mux.HandleFunc("POST "+PathSignal+"/{name}", h.signalShell)
	return h.proven(mux)
}

// proven refuses every request without a valid proof: 403, no detail.
func (h *Holder) proven(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.proofs.check(r, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// getState answers the state. A shell that has exited but whose end is not
// recorded yet (the output drains, the recording is sealed) is waited for:
// a client that has seen the exit frame must never be told it still runs.
func (h *Holder) getState(w http.ResponseWriter, r *http.Request) {
	select {
	case <-h.hub.Exited():
		select {
		case <-h.endedCh:
		case <-r.Context().Done():
			return
		}
	default:
	}
	writeJSON(w, h.state())
}

func (h *Holder) state() State {
	h.mu.Lock()
	st := State{LastInputAt: h.lastInput, End: h.end}
	h.mu.Unlock()
	st.Running = st.End == nil
	st.StartedAt = h.hub.StartedAt()
	if st.Running {
		st.Detached, st.Watchers = h.hub.Detached(), h.hub.Watchers()
	}
	return st
}

var upgrader = websocket.Upgrader{
	Subprotocols:    []string{ptyshell.SubprotocolV2},
	ReadBufferSize:  4 << 10,
	WriteBufferSize: ptyshell.MaxDataPayload + 64,
	// The only client is a server that proved the key; there is no
	// browser on this socket.
	CheckOrigin: func(*http.Request) bool { return true },
}

// attach lends the shell to one connection: the server relays its client's
// frames, so the client is served exactly as by ptyshell.Serve. 410 once the
// shell has ended.
func (h *Holder) attach(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	role := q.Get("role")
	var size ptyshell.Size
	switch role {
	case ptyshell.RoleWriter:
		if hs, err := ptyshell.ParseHandshake(q); err == nil {
			size = hs.Size
		}
	case ptyshell.RoleWatcher:
	default:
		http.Error(w, "role must be writer or watcher", http.StatusBadRequest)
		return
	}
	tap, err := h.hub.Attach(r.Context(), role, size)
	if err != nil {
		http.Error(w, err.Error(), http.StatusGone)
		return
	}
	h.serving.Add(1) // before the end: a tap is had only while the shell runs
	defer h.serving.Done()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		_ = tap.Close() // a tap's Close cannot fail
		return
	}
	ptyshell.Serve(tap.Context(), conn, tap, tap.Options(h.connOptions()))
}

// endShell ends the shell as a kill does (reason terminated) and answers
// its state once it has ended, or when the request gives up.
func (h *Holder) endShell(w http.ResponseWriter, r *http.Request) {
	h.hub.End(ptyshell.ErrTerminated)
	select {
	case <-h.endedCh:
		writeJSON(w, h.state())
	case <-r.Context().Done():
	}
}

// signalShell delivers a signal to the foreground job: 400 for a name that
// is none a client may send, 409 once the shell has exited.
func (h *Holder) signalShell(w http.ResponseWriter, r *http.Request) {
	sig, ok := ptyshell.SignalOf(r.PathValue("name"))
	if !ok {
		http.Error(w, "no signal a shell may be sent", http.StatusBadRequest)
		return
	}
	if err := h.stream.foreground(sig); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	writeJSON(w, h.state())
}

func (h *Holder) recording(w http.ResponseWriter, _ *http.Request) {
	end := h.ended()
	switch {
	case end == nil:
		http.Error(w, errNotEnded.Error(), http.StatusConflict)
		return
	case end.Recording == nil:
		http.Error(w, "this shell has no recording", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", cast.MIME)
	w.Header().Set("Content-Length", strconv.FormatInt(end.Recording.Size, 10))
	_, _ = io.Copy(w, io.NewSectionReader(h.rec.f, 0, end.Recording.Size)) // the peer is gone if this fails
}

// releaseHolder lets the holder of an ended shell exit, once every
// connection's close handshake is done (each is bounded by its own
// timeouts, the wait by the request): the caller removes the container
// next, and a connection bridged through another replica must have its
// close frame first, or its client sees a lost connection, not the end.
func (h *Holder) releaseHolder(w http.ResponseWriter, r *http.Request) {
	if h.ended() == nil {
		http.Error(w, errNotEnded.Error(), http.StatusConflict)
		return
	}
	served := make(chan struct{})
	go func() {
		h.serving.Wait()
		close(served)
	}()
	select {
	case <-served:
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(http.StatusNoContent)
	h.release.Do(func() { close(h.released) })
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // the peer is gone if this fails
}
