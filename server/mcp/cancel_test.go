package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// TestCancelScope: a notifications/cancelled ends the request it names
// only when it comes from the request's own caller, and never reaches the
// transport; the same ID as a string is another request.
func TestCancelScope(t *testing.T) {
	r := newReplica(t, nil)

	call := r.call("alice", "7")
	r.cancel("bob", "7")     // another caller's request 7
	r.cancel("alice", `"7"`) // another ID: the string "7"
	require.Equal(t, "finished", call.finish(), "only alice's cancel of her request 7 ends it")

	call = r.call("alice", "7")
	r.cancel("alice", " 7 ")
	require.Equal(t, "cancelled", call.end())
	r.requireNoneInFlight()
}

// TestCancelAcrossReplicas: a cancel that reaches another replica than its
// request is broadcast and ends the request where it runs — the caller's
// own request only.
func TestCancelAcrossReplicas(t *testing.T) {
	var replicas []*replica
	var mu sync.Mutex
	var sent []string
	broadcast := func(_ context.Context, payload string) error { // as a NOTIFY: every replica receives it
		mu.Lock()
		sent = append(sent, payload)
		mu.Unlock()
		for _, r := range replicas {
			r.calls.Receive(payload)
		}
		return nil
	}
	a, b := newReplica(t, broadcast), newReplica(t, broadcast)
	replicas = []*replica{a, b}

	call := a.call("alice", "7")
	b.cancel("bob", "7")
	require.Equal(t, []string{`{"caller":"bob","id":"7"}`}, sent)
	b.cancel("alice", "8")
	require.Equal(t, "finished", call.finish(), "neither bob's cancel nor alice's of another request ends it")

	call = a.call("alice", "7")
	b.cancel("alice", "7")
	require.Equal(t, "cancelled", call.end())
	a.cancel("alice", "9")
	require.Len(t, sent, 4, "a cancel that matches nothing here is broadcast")
	a.calls.Receive("not json") // logged, and nothing else
	a.requireNoneInFlight()
	b.requireNoneInFlight()
}

// replica is one endpoint's Calls in front of a transport whose every
// request runs until its context ends or the test releases it.
type replica struct {
	t       *testing.T
	calls   *Calls
	handler http.Handler
	started chan chan struct{} // a request is served: its release
	ended   chan string
}

func newReplica(t *testing.T, broadcast Broadcast) *replica {
	r := &replica{t: t, calls: NewCalls(broadcast, nil), started: make(chan chan struct{}), ended: make(chan string, 1)}
	r.handler = boundBody(r.calls.scope(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		require.NoError(t, err)
		require.NotContains(t, string(body), "notifications/cancelled", "a cancel reached the transport")
		release := make(chan struct{})
		r.started <- release
		select {
		case <-req.Context().Done():
			r.ended <- "cancelled"
		case <-release:
			r.ended <- "finished"
		}
	})))
	return r
}

func (r *replica) send(caller, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(cairn.WithActor(context.Background(), caller), http.MethodPost, "/v1/mcp",
		strings.NewReader(body))
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	return rec
}

// inFlight is a request being served.
type inFlight struct {
	r       *replica
	release chan struct{}
	done    chan struct{}
}

// call starts caller's tools/call of ID id and returns once it is served.
func (r *replica) call(caller, id string) *inFlight {
	c := &inFlight{r: r, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		r.send(caller, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"upload_artifact"}}`)
	}()
	c.release = <-r.started
	return c
}

// finish releases the request and says how it ended.
func (c *inFlight) finish() string {
	close(c.release)
	return c.end()
}

// end waits for the request's end and says how it ended.
func (c *inFlight) end() string {
	<-c.done
	return <-c.r.ended
}

func (r *replica) cancel(caller, id string) {
	rec := r.send(caller, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`)
	require.Equal(r.t, http.StatusAccepted, rec.Code)
}

func (r *replica) requireNoneInFlight() {
	r.calls.mu.Lock()
	defer r.calls.mu.Unlock()
	require.Empty(r.t, r.calls.calls, "a request is registered only while it is served")
}
