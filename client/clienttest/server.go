// Package clienttest is an in-memory cairn server for the tests of code that
// talks to one through package client: the client's own tests and the
// TUI's. It serves the REST routes a client uses, presigned PUT and GET
// stand-ins that check what a store checks (length, SHA-256, range), the
// volume routes over in-memory volumes (transfers, file listing and reads,
// pack and unpack), the snapshot routes over them (take, list, restore,
// fork, delete), a workspace's lifecycle (its settings and touch; the
// maintainer's warnings and archiving as the test drives them: Warn,
// ArchiveVolume), the /v1/events websocket the test can drive (Emit,
// Resync, DropConnection) and the shell websocket over ptyshell.Serve with
// a scripted process. Failures are injected by route (FailNext, Hold).
//
// It keeps no rule of its own where package cairn has one: request checks,
// name and path rules and the reason→status table are cairn's. What it must
// decide itself (the order of the checks, what a route answers) is held to
// the real server's behaviour by the client's contract suite, which runs
// the same cases against both.
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

	clock     func() time.Time
	app       string
	maxObject int64

	mu       sync.Mutex
	rows     int       // the last row number: workspaces and artifacts share it
	keys     int       // the last object key number
	stamped  time.Time // the last row stamp: stamps only grow
	ws       map[string]*cairn.Workspace
	arts     map[string]*cairn.Artifact
	objects  map[string][]byte // object key → content
	staging  map[string]*slot  // staging key → slot
	sigs     map[string]string // object or staging key → its URL signature
	volumes  map[string]*volume
	snaps    map[string]*snapshot
	mounts   map[string]int
	versions map[string]int64 // list → how often it changed: the ETags' source
	failures map[string][]failure
	refusals map[string]failure // route → how it answers every request
	holds    map[string]chan struct{}
	hits     map[string]int
	queries  map[string]url.Values // route → the last request's query
	storeURL string                // the presigned URLs' base; "" is URL
	subs     map[*subscriber]struct{}
	muted    bool // change frames are not sent: Unannounced runs

	shellEnabled bool
	onShell      func(wsID string, s *ptyshelltest.Stream)
	shellDone    sync.WaitGroup
	closing      chan struct{}
}

type failure struct {
	status int
	reason cairn.Reason
}

// Option configures a Server.
type Option func(*Server)

// WithClock stamps rows, file times and the events hello with now instead of
// time.Now; row stamps still grow by at least a microsecond each, as a
// database's do.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.clock = now } }

// WithMaxObjectSize refuses staging uploads above n bytes (object_too_large),
// as a server with artifact.store.maxObjectSize n does. Without it nothing is
// too large.
func WithMaxObjectSize(n int64) Option { return func(s *Server) { s.maxObject = n } }

// WithAppName names volumes <app>-<workspace ID>; the default is "cairn".
func WithAppName(app string) Option { return func(s *Server) { s.app = app } }

// New starts a server; Cleanup closes it, its websockets and its shells.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		clock: time.Now, app: "cairn",
		ws: map[string]*cairn.Workspace{}, arts: map[string]*cairn.Artifact{},
		objects: map[string][]byte{}, staging: map[string]*slot{}, sigs: map[string]string{},
		volumes: map[string]*volume{}, snaps: map[string]*snapshot{}, mounts: map[string]int{}, versions: map[string]int64{},
		failures: map[string][]failure{}, refusals: map[string]failure{}, holds: map[string]chan struct{}{}, hits: map[string]int{}, queries: map[string]url.Values{},
		subs: map[*subscriber]struct{}{}, shellEnabled: true, onShell: ExitOnCommand,
		closing: make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
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

// Client returns a client of the server.
func (s *Server) Client(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, opts...)
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	return c
}

// FailNext makes the next request of route answer status with reason (its
// envelope, or an S3 error document on the store routes). A route is named
// by its pattern, "POST /v1/workspaces/{id}/new-staging", "PUT
// /store/{key...}", or as one request is, "DELETE /v1/artifacts/01J…".
// Failures queue up in order.
func (s *Server) FailNext(route string, status int, reason cairn.Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], failure{status: status, reason: reason})
}

// FailEvery makes every later request of route answer status with reason,
// as a server without the route would; requests FailNext fails first.
func (s *Server) FailEvery(route string, status int, reason cairn.Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals[route] = failure{status: status, reason: reason}
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
		hold, f := s.arrive(pattern, r)
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		switch {
		case f == nil:
			h(w, r)
		case strings.Contains(pattern, " /store/"):
			storeError(w, f.status, string(f.reason))
		default:
			fail(w, &cairn.Error{Reason: f.reason, Status: f.status, Detail: "injected by the test"})
		}
	})
}

// arrive counts a request and takes its hold and its injected failure: the
// one queued for the request itself, then for its pattern, then the
// pattern's refusal of every request.
func (s *Server) arrive(pattern string, r *http.Request) (chan struct{}, *failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[pattern]++
	s.queries[pattern] = r.URL.Query()
	for _, route := range []string{r.Method + " " + r.URL.Path, pattern} {
		if q := s.failures[route]; len(q) > 0 {
			s.failures[route] = q[1:]
			return s.holds[pattern], &q[0]
		}
	}
	if f, ok := s.refusals[pattern]; ok {
		return s.holds[pattern], &f
	}
	return s.holds[pattern], nil
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
func reply(w http.ResponseWriter, payload any) {
	fields := map[string]any{}
	if payload != nil {
		b, _ := json.Marshal(payload)  // the payloads are plain data
		_ = json.Unmarshal(b, &fields) // an object, so it decodes
	}
	id := requestID()
	fields["success"], fields["request_id"] = true, id
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-ID", id)
	_ = json.NewEncoder(w).Encode(fields) // the client may have gone
}

// fail writes the error envelope of e; its status is the reason's unless
// e names one.
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

// refused answers err's envelope, a *cairn.Error as it is and anything else
// as an internal error, and reports whether there was one: a failed check
// ends its handler.
func refused(w http.ResponseWriter, err error) bool {
	if err == nil {
		return false
	}
	e, ok := err.(*cairn.Error)
	if !ok {
		e = cairn.Internal("clienttest failed", err)
	}
	fail(w, e)
	return true
}

// stamp is the time of a row change: the clock's, moved past the last
// stamp when it is not later. The caller holds mu.
func (s *Server) stamp() time.Time {
	t := cairn.Timestamp(s.clock())
	if !t.After(s.stamped) {
		t = s.stamped.Add(time.Microsecond)
	}
	s.stamped = t
	return t
}

// nextRow numbers a new row; the caller holds mu.
func (s *Server) nextRow() int {
	s.rows++
	return s.rows
}

// nextKey is a fresh object key of the workspace; the caller holds mu.
func (s *Server) nextKey(wsID string) string {
	s.keys++
	return fmt.Sprintf("store/%s/01K%023d", wsID, s.keys)
}

func workspaceID(n int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", n, n) }

func artifactID(n int) string { return fmt.Sprintf("01J%023d", n) }

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
