package rest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// listFormat names the list answers' JSON shape inside their tags. Change
// it with the shape, so that no client keeps an answer of the old shape
// through a 304.
const listFormat = "cairn-list-1"

// listQuery is a list request reduced to what its rows depend on: the
// route, the workspace, the filter sets (sorted, without repeats: they are
// OR'ed, so neither order nor repeats change the rows) and the page.
type listQuery struct {
	Format    string   `json:"f"`
	Route     string   `json:"r"`
	Workspace string   `json:"w,omitempty"`
	Names     []string `json:"n,omitempty"`
	States    []string `json:"s,omitempty"`
	Offset    int      `json:"o"`
	Limit     int      `json:"l"`
}

// listTag is the entity tag of a list at version v for query q: the
// version in clear, so that two versions never share a tag, and a hash of
// the query, so that two queries never do. It is weak (RFC 9110, section
// 8.8.1): equal tags promise the same rows, not the same bytes, since every
// envelope carries its own request ID.
func listTag(v int64, q listQuery) string {
	q.Format = listFormat
	q.Names, q.States = normalized(q.Names), normalized(q.States)
	key, _ := json.Marshal(q) // strings and ints only: cannot fail
	sum := sha256.Sum256(key)
	return `W/"` + strconv.FormatInt(v, 10) + "-" + hex.EncodeToString(sum[:8]) + `"`
}

func normalized(set []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(set)))
}

// ifNoneMatch is a request's If-None-Match (RFC 9110, section 13.1.2):
// "*", or the entity tags it lists.
type ifNoneMatch struct {
	any  bool
	tags []string // opaque tags, quotes kept, W/ dropped
}

// parseIfNoneMatch reads every If-None-Match line of h as one
// comma-separated list. A malformed member ends the list: what was read
// before it still counts, the rest does not.
func parseIfNoneMatch(h http.Header) ifNoneMatch {
	var c ifNoneMatch
	for _, line := range h.Values("If-None-Match") {
		for s := line; ; {
			s = strings.TrimLeft(s, " \t,")
			if s == "" {
				break
			}
			if s[0] == '*' {
				c.any, s = true, s[1:]
				continue
			}
			tag, rest, ok := scanETag(s)
			if !ok {
				break
			}
			c.tags, s = append(c.tags, tag), rest
		}
	}
	return c
}

// scanETag reads one entity tag at the start of s and returns its opaque
// part (quotes kept, W/ dropped) and what follows it.
func scanETag(s string) (opaque, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80: // etagc
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// matches reports whether the request lists tag, compared weakly (the W/
// prefix of either side ignored), as RFC 9110 has If-None-Match compare.
// "*" is not a match here: it asks whether the list exists at all, which
// only running it tells.
func (c ifNoneMatch) matches(tag string) bool {
	if tag == "" {
		return false
	}
	opaque := strings.TrimPrefix(tag, "W/")
	return slices.Contains(c.tags, opaque)
}
