package shells

import (
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// row is one shell with the untrusted text its cells show sanitised once,
// when it is built: the workspace's name, the container, the token, the
// replica.
type row struct {
	sh                         *cairn.Shell
	key                        string
	ws, id, container, by, rep string
}

func newRow(c *deps.Deps, sh *cairn.Shell) *row {
	ws := workspaceName(c, sh.WorkspaceID)
	return &row{
		sh:        sh,
		key:       strings.ToLower(strings.Join([]string{ws, sh.ID, sh.Container, sh.TokenName, sh.Instance}, "\n")),
		ws:        ws,
		id:        termkit.Sanitize(sh.ID),
		container: shortContainer(sh.Container),
		by:        orDash(c, termkit.Sanitize(sh.TokenName)),
		rep:       orDash(c, termkit.Sanitize(sh.Instance)),
	}
}

func (r *row) RowID() string     { return r.sh.ID }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.sh.ID }

// label names the shell in the kill confirmation.
func (r *row) label() string {
	return "shell " + ShortID(r.sh.ID) + " on " + r.ws
}

// shortContainer is a container ID's first 12 characters, as docker ps
// shows it; a name is kept whole.
func shortContainer(s string) string {
	if len(s) == 64 && strings.Trim(s, "0123456789abcdef") == "" {
		s = s[:12]
	}
	return termkit.Sanitize(s)
}

func orDash(c *deps.Deps, s string) string {
	if s == "" {
		return c.Theme.Glyphs.Dash
	}
	return s
}

// idle is the time since the shell's last input, known only on the
// replica serving it.
func idle(c *deps.Deps, sh *cairn.Shell) string {
	if !sh.Local || sh.LastInputAt == nil {
		return c.Theme.Glyphs.Dash
	}
	return termkit.Age(c.Data.Now(), *sh.LastInputAt)
}

// attachment says whether a v2 shell has its writer ("attached",
// "detached") and how many watch; a dash where it is not known (v1, or
// another replica's).
func attachment(c *deps.Deps, sh *cairn.Shell) string {
	if sh.Detached == nil {
		return c.Theme.Glyphs.Dash
	}
	text := "attached"
	if *sh.Detached {
		text = "detached"
	}
	if sh.Watchers > 0 {
		text += " +" + strconv.Itoa(sh.Watchers)
	}
	return text
}

func columns(c *deps.Deps, every bool) []table.Column[*row] {
	var cols []table.Column[*row]
	if every {
		cols = append(cols, table.Column[*row]{Title: "WORKSPACE", Min: 12, Max: 40, Flex: true, Fit: true,
			Cell: func(r *row) string { return r.ws }})
	}
	return append(cols,
		table.Column[*row]{Title: "SHELL", Min: 10, Max: 26, Flex: true, Fit: true, Cell: func(r *row) string { return r.id }},
		table.Column[*row]{Title: "CONTAINER", Min: 12, Max: 40, Flex: true, Fit: true, Drop: 2, Cell: func(r *row) string { return r.container }},
		table.Column[*row]{Title: "WRITER", Min: 8, Drop: 6, Cell: func(r *row) string { return attachment(c, r.sh) }},
		table.Column[*row]{Title: "STARTED", Min: 7, Drop: 3, Cell: func(r *row) string { return termkit.Age(c.Data.Now(), r.sh.StartedAt) }},
		table.Column[*row]{Title: "IDLE", Min: 6, Drop: 5, Cell: func(r *row) string { return idle(c, r.sh) }},
		table.Column[*row]{Title: "BY", Min: 8, Max: 24, Flex: true, Fit: true, Drop: 4, Cell: func(r *row) string { return r.by }},
		table.Column[*row]{Title: "REPLICA", Min: 10, Max: 24, Flex: true, Drop: 1, Cell: func(r *row) string { return r.rep }},
	)
}

// stamp is what a row's cells read besides the row: its ages.
func stamp(c *deps.Deps, r *row) string {
	return termkit.Age(c.Data.Now(), r.sh.StartedAt) + "|" + idle(c, r.sh) + "|" + attachment(c, r.sh)
}

// byStart orders shells as the API lists them: oldest first (ties by ID).
func byStart(r *row) table.Key { return table.Key{N: r.sh.StartedAt.UnixNano()} }
