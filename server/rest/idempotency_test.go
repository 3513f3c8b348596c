package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// TestIdempotencyKey: one key sent ×50 at once creates one workspace and
// every answer is the first one; a key comes back with another request →
// idempotency_conflict; a refusal is kept like a success; routes that
// take no key refuse it.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	h := xferSetup(t, xferOpts{timeout: 20 * time.Second})
	name := sprintf("keyed-%d", time.Now().UnixNano())
	body := `{"name":"` + name + `"}`

	t.Run("OKFiftyAtOnceMakeOne", func(t *testing.T) {
		const n = 50
		answers := make([]*response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				answers[i] = do(t, http.MethodPost, h.url+"/v1/workspaces", body, cairn.HeaderIdempotencyKey, "create-"+name)
			})
		}
		wg.Wait()
		replayed := 0
		for _, a := range answers {
			require.Equal(t, http.StatusOK, a.status, "body: %s", a.body)
			require.JSONEq(t, string(answers[0].body), string(a.body), "every answer is the first one")
			if a.header.Get(cairn.HeaderIdempotentReplayed) == "true" {
				replayed++
			}
		}
		require.Equal(t, n-1, replayed)
		r := h.do(t, h.url, http.MethodGet, "/v1/workspaces?name="+name, "")
		ok(t, r)
		var list struct {
			Workspaces []cairn.Workspace `json:"workspaces"`
		}
		require.NoError(t, json.Unmarshal(r.body, &list))
		require.Len(t, list.Workspaces, 1, "one workspace")
	})
	t.Run("ErrReused", func(t *testing.T) {
		r := do(t, http.MethodPost, h.url+"/v1/workspaces", `{"name":"other-`+name+`"}`, cairn.HeaderIdempotencyKey, "create-"+name)
		fails(t, r, http.StatusConflict, "idempotency_conflict")
	})
	t.Run("OKIgnoredOnAGet", func(t *testing.T) {
		r := do(t, http.MethodGet, h.url+"/v1/workspaces?name="+name, "", cairn.HeaderIdempotencyKey, "a b")
		ok(t, r)
		require.Empty(t, r.header.Get(cairn.HeaderIdempotentReplayed))
	})
	t.Run("OKRefusalKept", func(t *testing.T) {
		first := do(t, http.MethodPost, h.url+"/v1/workspaces", body, cairn.HeaderIdempotencyKey, "again-"+name)
		fails(t, first, http.StatusConflict, "name_taken")
		again := do(t, http.MethodPost, h.url+"/v1/workspaces", body, cairn.HeaderIdempotencyKey, "again-"+name)
		require.Equal(t, string(first.body), string(again.body))
		require.Equal(t, "true", again.header.Get(cairn.HeaderIdempotentReplayed))
	})
	for _, tc := range []struct{ outcome, method, path, body, key string }{
		{"ErrOnAMint", http.MethodPost, "/v1/workspaces/00000000-0000-4000-8000-000000000000/new-staging", `{"size":1}`, "k"},
		{"ErrSpace", http.MethodPost, "/v1/workspaces", body, "a b"},
		{"ErrNotASCII", http.MethodPost, "/v1/workspaces", body, "clé"},
		{"ErrLong", http.MethodPost, "/v1/workspaces", body, strings.Repeat("k", 256)},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			fails(t, do(t, tc.method, h.url+tc.path, tc.body, cairn.HeaderIdempotencyKey, tc.key), 400, "invalid_parameters")
		})
	}
}
