package clienttest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
)

// The lists a conditional GET can ask about: every workspace, and one
// workspace's artifacts.
const workspaceList = "workspaces"

func artifactList(wsID string) string { return "artifacts/" + wsID }

// bump records that list changed; the caller holds mu.
func (s *Server) bump(list string) { s.versions[list]++ }

// listTag is the entity tag of list as query asks for it: it moves with
// every change to the list and differs between queries, which is all a
// client may rely on. The caller holds mu.
func (s *Server) listTag(list string, query url.Values) string {
	sum := sha256.Sum256([]byte(list + "?" + query.Encode()))
	return `W/"` + strconv.FormatInt(s.versions[list], 10) + "-" + hex.EncodeToString(sum[:8]) + `"`
}

// notModified answers 304 when the request names tag as the list it has.
func notModified(w http.ResponseWriter, r *http.Request, tag string) bool {
	if r.Header.Get("If-None-Match") != tag {
		return false
	}
	w.Header().Set("ETag", tag)
	w.WriteHeader(http.StatusNotModified)
	return true
}

// listed answers a list page under key, tagged; an empty page omits key,
// as the server does.
func listed[T any](w http.ResponseWriter, tag, key string, rows []T) {
	w.Header().Set("ETag", tag)
	out := map[string]any{}
	if len(rows) > 0 {
		out[key] = rows
	}
	reply(w, out)
}
