package audit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// The metadata keys with a column of their own; SUMMARY shows the rest.
const (
	keyWorkspace = "workspace_id"
	keyRequest   = "request_id"
)

// maxSummary bounds a summary cell's text.
const maxSummary = 240

// row is one event with the untrusted text its cells show sanitised once,
// when it is built (the workspace's name is read at render time: a rename
// shows at once).
type row struct {
	ev         *cairn.AuditEvent
	key        string
	typ, actor string // actor "" for null
	wsID       string // raw metadata.workspace_id
	requestID  string // raw metadata.request_id
	request    string // short, sanitised
	summary    string
	sortKey    table.Key
}

func newRow(ev *cairn.AuditEvent) *row {
	r := &row{
		ev:        ev,
		typ:       termkit.Sanitize(string(ev.Type)),
		actor:     termkit.Sanitize(optional.String(ev.Actor)),
		wsID:      text(ev.Metadata[keyWorkspace]),
		requestID: text(ev.Metadata[keyRequest]),
		summary:   Summary(ev.Metadata),
		sortKey:   table.Key{N: -ev.CreatedAt.UnixNano(), S: descending(ev.ID)},
	}
	r.request = shortID(r.requestID)
	r.key = strings.ToLower(strings.Join([]string{string(ev.Type), optional.String(ev.Actor), r.wsID, r.requestID, r.summary}, "\n"))
	return r
}

func (r *row) RowID() string     { return r.ev.ID }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.ev.ID }

// newestFirst orders events as the API lists them with order=desc:
// created_at, then ID, both descending.
func newestFirst(r *row) table.Key { return r.sortKey }

// descending maps a string to one that sorts the other way among strings
// of its length (IDs are ULIDs: one length).
func descending(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = 0xff - b[i]
	}
	return string(b)
}

// text is a metadata value as text: a string as it is, anything else as
// JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Summary is the metadata's keys but the workspace and request IDs, in
// key order, as "key=value" pairs, sanitised and bounded.
func Summary(meta map[string]any) string {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		if k != keyWorkspace && k != keyRequest {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + text(meta[k])
	}
	out := termkit.Sanitize(strings.Join(parts, " "))
	if len(out) > maxSummary {
		out = strings.ToValidUTF8(out[:maxSummary], "") + "…"
	}
	return out
}

func columns(c *deps.Deps, every bool) []table.Column[*row] {
	dash := func(s string) string {
		if s == "" {
			return c.Theme.Glyphs.Dash
		}
		return s
	}
	cols := []table.Column[*row]{
		{Title: "TIME", Min: 15, Cell: func(r *row) string { return when(c, r) }},
		{Title: "TYPE", Min: 12, Max: 23, Flex: true, Fit: true, Cell: func(r *row) string { return r.typ }},
		{Title: "ACTOR", Min: 8, Max: 20, Flex: true, Fit: true, Drop: 4, Cell: func(r *row) string { return dash(r.actor) }},
	}
	if every {
		cols = append(cols, table.Column[*row]{Title: "WORKSPACE", Min: 10, Max: 30, Flex: true, Fit: true, Drop: 2,
			Cell: func(r *row) string { return dash(workspaceName(c, r.wsID)) }})
	}
	return append(cols,
		table.Column[*row]{Title: "REQUEST", Min: 8, Drop: 3, Cell: func(r *row) string { return dash(r.request) }},
		table.Column[*row]{Title: "SUMMARY", Min: 12, Flex: true, Drop: 1, Cell: func(r *row) string { return r.summary }},
	)
}

// when is the event's local time and age: "08-14 10:00 2h".
func when(c *deps.Deps, r *row) string {
	return r.ev.CreatedAt.Local().Format("01-02 15:04") + " " + termkit.Age(c.Data.Now(), r.ev.CreatedAt)
}

// stamp is what a row's cells read besides the row: its age and its
// workspace's name.
func stamp(c *deps.Deps, r *row) string {
	return termkit.Age(c.Data.Now(), r.ev.CreatedAt) + "|" + workspaceName(c, r.wsID)
}

// workspaceName is the workspace's sanitised name, or its short ID when the
// store does not know it; "" for "".
func workspaceName(c *deps.Deps, id string) string {
	if w, ok := c.Data.Store().Workspace(id); ok {
		return termkit.Sanitize(w.Name)
	}
	return shortID(id)
}

// shortID is the first 8 characters of an ID, sanitised first.
func shortID(id string) string {
	r := []rune(termkit.Sanitize(id))
	return string(r[:min(8, len(r))])
}
