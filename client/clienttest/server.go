// Package clienttest is an in-memory cairn server for tests of code that
// talks to one through package client (the TUI's teatest flows, TUI.md
// §7.3): the REST routes a client uses, presigned PUT and GET stand-ins
// that check what a real store checks (length, SHA-256, range), the
// volume transfer routes over an in-memory volume, the /v1/events
// websocket the test drives (Emit, Resync, DropConnection), the shell
// websocket over ptyshell.Serve with a scripted process, and failure
// injection by route (FailNext, Hold). Every mutation emits its change
// frames, as the real server's notifications do.
package clienttest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// Server is the in-memory cairn. It is safe for concurrent use.
type Server struct {
	// URL is the server's base URL, for client.New.
	URL  string
	http *httptest.Server

	mu       sync.Mutex
	n        int
	ws       map[string]*cairn.Workspace
	arts     map[string]*cairn.Artifact
	objects  map[string][]byte // object key → content
	staging  map[string]*slot  // staging key → slot
	sigs     map[string]string // object or staging key → its URL signature
	volumes  map[string]*volume
	mounts   map[string]int
	failures map[string][]failure
	holds    map[string]chan struct{}
	hits     map[string]int
	queries  map[string]url.Values // route → the last request's query
	storeURL string                // the presigned URLs' base; "" is URL
	subs     map[*subscriber]struct{}

	shellEnabled bool
	onShell      func(wsID string, s *ptyshelltest.Stream)
	shellDone    sync.WaitGroup
	closing      chan struct{}
}

type failure struct {
	status int
	reason cairn.Reason
}

// New starts a server; Cleanup closes it, its websockets and its shells.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		ws: map[string]*cairn.Workspace{}, arts: map[string]*cairn.Artifact{},
		objects: map[string][]byte{}, staging: map[string]*slot{}, sigs: map[string]string{},
		volumes: map[string]*volume{}, mounts: map[string]int{},
		failures: map[string][]failure{}, holds: map[string]chan struct{}{}, hits: map[string]int{}, queries: map[string]url.Values{},
		subs: map[*subscriber]struct{}{}, shellEnabled: true, onShell: ExitOnCommand,
		closing: make(chan struct{}),
	}
	mux := http.NewServeMux()
	s.routes(mux)
	s.http = httptest.NewServer(mux)
	s.URL = s.http.URL
	t.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	close(s.closing)
	s.DropConnection()
	s.http.CloseClientConnections()
	s.http.Close()
	s.shellDone.Wait()
}

// Client returns a client of the server, closed with the test.
func (s *Server) Client(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, opts...)
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	return c
}

// FailNext makes the next request of route answer status with reason
// (its envelope, or an S3 error document on the store routes). Routes are
// named by their pattern: "POST /v1/workspaces/{id}/new-staging",
// "PUT /store/{key...}". Failures queue up in order.
func (s *Server) FailNext(route string, status int, reason cairn.Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], failure{status: status, reason: reason})
}

// Hold makes requests of route wait, before anything is read, until
// release is called (or the request is cancelled).
func (s *Server) Hold(route string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.holds[route] = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.holds, route)
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Hits is how many requests route has had.
func (s *Server) Hits(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[route]
}

// LastQuery is the query of route's latest request (nil before the
// first): what a test checks a client asked, such as a presign's ttl.
func (s *Server) LastQuery(route string) url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[route]
}

// SetStoreURL makes later presigned PUT and GET URLs start with base
// instead of the server's URL, as a server whose
// artifact.s3.presignEndpoint names another host does; "" restores the
// server's own. A base where nothing listens makes the store unreachable
// while the API answers.
func (s *Server) SetStoreURL(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeURL = base
}

// storeBase is the presigned URLs' base; the caller holds mu.
func (s *Server) storeBase() string {
	if s.storeURL != "" {
		return s.storeURL
	}
	return s.URL
}

// handle registers h for pattern behind the hold, failure and count
// middleware.
func (s *Server) handle(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[pattern]++
		s.queries[pattern] = r.URL.Query()
		hold := s.holds[pattern]
		var f *failure
		if q := s.failures[pattern]; len(q) > 0 {
			f, s.failures[pattern] = &q[0], q[1:]
		}
		s.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if f != nil {
			if strings.Contains(pattern, " /store/") {
				storeError(w, f.status, string(f.reason))
				return
			}
			fail(w, &cairn.Error{Reason: f.reason, Status: f.status, Detail: "injected by the test"})
			return
		}
		h(w, r)
	})
}

var requestIDs struct {
	sync.Mutex
	n int
}

func requestID() string {
	requestIDs.Lock()
	defer requestIDs.Unlock()
	requestIDs.n++
	return fmt.Sprintf("req-%d", requestIDs.n)
}

// reply writes a 200 envelope with the payload's fields at the top level.
func reply(w http.ResponseWriter, payload map[string]any) {
	if payload == nil {
		payload = map[string]any{}
	}
	id := requestID()
	payload["success"], payload["request_id"] = true, id
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-ID", id)
	_ = json.NewEncoder(w).Encode(payload) // the client may have gone
}

// fail writes the error envelope of e; its status defaults by reason.
func fail(w http.ResponseWriter, e *cairn.Error) {
	status := e.Status
	if status == 0 {
		status, _ = e.Reason.HTTPStatus()
	}
	id := requestID()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-ID", id)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{ // the client may have gone
		"success": false, "request_id": id,
		"error": map[string]any{"code": status, "message": "refused by clienttest", "detail": e.Detail, "reason": e.Reason},
	})
}

// nextID returns a fresh counter value and the time to stamp rows with.
func (s *Server) nextID() (int, time.Time) {
	s.n++
	return s.n, time.Now().UTC().Truncate(time.Microsecond)
}

func ulid(n int) string { return fmt.Sprintf("01J%023d", n) }

func signature() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand never fails
	return hex.EncodeToString(b)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		fail(w, &cairn.Error{Reason: cairn.ReasonInvalidJSON, Detail: "the body is not the expected JSON"})
		return false
	}
	return true
}
