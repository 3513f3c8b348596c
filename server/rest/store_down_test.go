package rest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

// TestArtifactStoreDown stops a private store under a running server.
// Every route that calls the store answers 502 store_unavailable in
// bounded time and writes nothing; presigning is local to the server (no
// network), so new-staging and the presigned GET still answer 200 with
// URLs that work once the store is back. After a restart the same calls
// succeed.
func TestArtifactStoreDown(t *testing.T) {
	t.Parallel()
	startCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw := stacktest.PrivateS3(t)
	bucket := "down-" + strings.ToLower(ulid.Make().String())
	require.NoError(t, gw.CreateBucket(startCtx, bucket))
	h := setupArtifacts(t, artConfig{gw: gw, bucket: bucket})

	ws := h.newWorkspace(t)
	oldBody := []byte("uploaded before the outage")
	a := h.upload(t, ws, "before", oldBody)
	registerBody := []byte("staged before the outage, registered during it")
	registerKey := h.stage(t, ws, registerBody)
	replaceBody := []byte("staged before the outage, replacing during it")
	replaceKey := h.stage(t, ws, replaceBody)

	tables := []string{"artifacts", "audit_system_events", "released_objects"}
	before := map[string]string{}
	for _, table := range tables {
		before[table] = h.b.snapshot(t, table)
	}

	// timed sends one request and checks that it came back in bounded time.
	timed := func(t *testing.T, method, url, body string) *response {
		t.Helper()
		start := time.Now()
		r := do(t, method, url, body)
		elapsed := time.Since(start)
		t.Logf("%s %s answered %d after %v", method, strings.TrimPrefix(url, h.url), r.status, elapsed)
		require.Less(t, elapsed, 40*time.Second, "a store outage fails fast, not at the request deadline")
		return r
	}

	var duringOutage *staging
	var outageGetURL string
	// The subtests run in order, not in parallel: they share the outage.
	require.NoError(t, gw.Stop())

	t.Run("ErrStoreUnavailableRegister", func(t *testing.T) {
		e := h.failsArt(t, timed(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
			sprintf(`{"staging_object_key":%q,"name":"during"}`, registerKey)), http.StatusBadGateway, "store_unavailable")
		require.Equal(t, "Failed to register artifact 'during' in workspace "+ws, e.Message)
		require.NotEmpty(t, e.Detail)
	})

	t.Run("ErrStoreUnavailableReplace", func(t *testing.T) {
		e := h.failsArt(t, timed(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/content",
			sprintf(`{"staging_object_key":%q}`, replaceKey)), http.StatusBadGateway, "store_unavailable")
		require.Equal(t, "Failed to update artifact "+a.ID+" content", e.Message)
	})

	// Observed behaviour: minting signs locally (the SDK's presigner makes
	// no call), so it succeeds during the outage; the URL is usable once the
	// store is back, within its TTL.
	t.Run("OKMintWithoutTheStore", func(t *testing.T) {
		start := time.Now()
		duringOutage = h.mint(t, ws, []byte("minted in the dark"))
		require.Less(t, time.Since(start), 40*time.Second)
	})

	// Observed behaviour: a presigned GET is signed locally too, so the
	// route answers 200 without checking the object; the download itself
	// fails until the store is back.
	t.Run("OKPresignWithoutTheStore", func(t *testing.T) {
		env := h.okArt(t, timed(t, http.MethodGet, h.url+"/v1/artifacts/"+a.ID+"?presign", ""))
		require.NotNil(t, env.GetURL)
		outageGetURL = *env.GetURL
	})

	t.Run("OKDatabaseOnlyReads", func(t *testing.T) {
		got, u := h.getArtifact(t, a.ID, "")
		require.Nil(t, u)
		require.Equal(t, a.raw, got.raw)
		list := h.okArt(t, timed(t, http.MethodGet, h.url+"/v1/workspaces/"+ws+"/artifacts", ""))
		require.Len(t, decodeArtifacts(t, list.Artifacts), 1)
	})

	t.Run("OKNoRowChanged", func(t *testing.T) {
		for _, table := range tables {
			require.Equal(t, before[table], h.b.snapshot(t, table), "%s changed during the outage", table)
		}
	})

	require.NoError(t, gw.Restart(startCtx))

	t.Run("OKRegisterAfterRestart", func(t *testing.T) {
		r := h.artifactOf(t, h.register(t, ws, registerKey, "during"))
		require.Equal(t, int64(len(registerBody)), r.Size)
		status, _, got := fetch(t, h.presign(t, r.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, registerBody, got)
	})

	t.Run("OKReplaceAfterRestart", func(t *testing.T) {
		r := h.artifactOf(t, h.replace(t, a.ID, replaceKey))
		require.Equal(t, int64(len(replaceBody)), r.Size)
		require.Equal(t, []string{a.ObjectKey}, h.released(t, ws))
		status, _, got := fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, replaceBody, got)
	})

	t.Run("OKURLsMintedDuringOutage", func(t *testing.T) {
		require.NotNil(t, duringOutage)
		body := []byte("minted in the dark")
		status, resp := put(t, duringOutage.PutURL, body, sha256B64(body))
		require.Equal(t, http.StatusOK, status, resp)
		r := h.artifactOf(t, h.register(t, ws, duringOutage.Key, "dark"))
		require.Equal(t, "text/plain; charset=utf-8", r.MIMEType)

		// The GET URL minted during the outage names the old key, released
		// by the replace above but kept through the grace window.
		status, _, got := fetch(t, outageGetURL)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, oldBody, got)
	})

	require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT", "NEW_ARTIFACT", "UPDATE_ARTIFACT_OBJECT", "NEW_ARTIFACT"},
		h.b.auditTypes(t, ws))
}
