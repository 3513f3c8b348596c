package clienttest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
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

// answerList answers a list's page p, tagged: "not modified" when the
// request holds tag already, else the page of rows in creation order under
// key (omitted when empty, as the server does). created is a row's creation
// time and ID, which orders the rows created at once.
func answerList[T any](w http.ResponseWriter, r *http.Request, tag, key string, rows []T, p cairn.Page,
	created func(T) (time.Time, string)) {
	w.Header().Set("ETag", tag)
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	slices.SortFunc(rows, func(a, b T) int {
		ta, ia := created(a)
		tb, ib := created(b)
		return cmp.Or(ta.Compare(tb), cmp.Compare(ia, ib))
	})
	out := map[string]any{}
	if page := window(rows, p); len(page) > 0 {
		out[key] = page
	}
	reply(w, out)
}

// window is the page p of rows.
func window[T any](rows []T, p cairn.Page) []T {
	off := min(p.Offset, len(rows))
	end := len(rows)
	if p.Limit > 0 {
		end = min(end, off+p.Limit)
	}
	return rows[off:end]
}
