package rest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRegisterKeys checks the two key generations register accepts:
// a key minted today is the artifact's object where
// it lies; one minted under the staging prefix before the upgrade is still
// copied to a final key and its staging object deleted.
func TestRegisterKeys(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})

	t.Run("OKLegacyStagingKey", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		key := "staging/" + ws + "/" + newULID()
		body := []byte("%PDF-1.4\nminted before the upgrade\n")
		h.putDirect(t, key, body)

		a := h.artifactOf(t, h.register(t, ws, key, "old-client"))
		require.Regexp(t, `^store/`+ws+`/`+ulidPattern+`$`, a.ObjectKey)
		require.Equal(t, "application/pdf", a.MIMEType)
		_, _, found := h.head(t, key)
		require.False(t, found, "a legacy staging object is deleted once copied and recorded")
		status, _, got := fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, body, got)
	})

	t.Run("ErrUsedKeyOnReplace", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "one", []byte("one"))
		b := h.upload(t, ws, "two", []byte("two"))
		e := h.failsArt(t, h.replace(t, b.ID, a.ObjectKey), http.StatusConflict, "staging_key_used")
		require.Equal(t, "staging object key '"+a.ObjectKey+"' was already registered", e.Detail)

		// A released key (its artifact deleted, its object in its grace)
		// never comes back either.
		do(t, http.MethodDelete, h.url+"/v1/artifacts/"+a.ID, "")
		h.failsArt(t, h.register(t, ws, a.ObjectKey, "three"), http.StatusConflict, "staging_key_used")
		require.Equal(t, 1, h.rows(t, ws))
	})
}
