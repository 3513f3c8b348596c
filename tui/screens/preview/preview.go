// Package preview is the screen that shows an artifact's first bytes
// without downloading it, or a volume file's first bytes read through the
// files route: text, sanitised against terminal injection, soft-wrapped and
// searchable; anything else as a card with a hex dump. The root fetches the
// bytes; this screen only shows them.
package preview

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// CardBytes is how much of a non-text artifact the card dumps.
const CardBytes = 256

// FileBytes is the most of a volume file a preview reads: one read of the
// files route, far below its 1 MiB bound.
const FileBytes = 64 << 10

// Msg is the root's answer to a preview's fetch. A Msg that does not
// match the open preview's artifact, updated_at and request (a file's
// workspace, path and request) is stale. ContentType is a file's type as
// the server sniffed it.
type Msg struct {
	ArtifactID  string
	UpdatedAt   time.Time
	WorkspaceID string
	Path        string
	Req         int
	Data        []byte
	Total       int64
	ContentType string
	Err         error
}

type state uint8

const (
	loading state = iota
	failed
	text
	card
)

// Screen previews one artifact or one volume file.
type Screen struct {
	c    *deps.Deps
	art  *cairn.Artifact // nil for a volume file
	wsID string          // a volume file's workspace and path
	path string
	name string // the artifact's or file's, sanitised for the screen
	mime string // its type without parameters, unsanitised
	req  int
	text bool // the MIME type may show as text

	state     state
	failure   string
	why       string // why the card, not the text
	data      []byte
	total     int64
	lines     []string // sanitised source lines
	plain     []string // the same, unstyled and lower-cased
	wrap      bool
	vp        viewport.Model
	rendered  renderKey
	pieces    [][]string // display rows of each source line at the rendered width
	firstRow  []int      // first display row of each source line
	searching bool
	input     textinput.Model
	query     string
	hits      []int // source lines holding the query
	hit       int   // index into hits of the current one, -1 before n

	width, height int
}

type renderKey struct {
	width int
	wrap  bool
}

// New opens a preview of a awaiting request req; text says whether its
// MIME type may show as text.
func New(c *deps.Deps, a *cairn.Artifact, req int, text bool) *Screen {
	return &Screen{c: c, art: a, name: termkit.Sanitize(a.Name), mime: mimeOf(a.MIMEType), req: req, text: text, wrap: true, hit: -1,
		vp: newPager(c.Keys), input: form.NewTextInput(c.Theme, "", 256)}
}

// NewFile opens a preview of the volume file p of workspace wsID awaiting
// request req; its type comes with the bytes.
func NewFile(c *deps.Deps, wsID, p string, req int) *Screen {
	return &Screen{c: c, wsID: wsID, path: p, name: termkit.Sanitize(path.Base(p)), req: req, wrap: true, hit: -1,
		vp: newPager(c.Keys), input: form.NewTextInput(c.Theme, "", 256)}
}

// Artifact is the previewed artifact as it was when opened; nil for a
// volume file.
func (s *Screen) Artifact() *cairn.Artifact { return s.art }

// File is the previewed volume file's workspace and path ("" for an
// artifact).
func (s *Screen) File() (workspaceID, path string) { return s.wsID, s.path }

// Matches reports whether m answers this preview's request.
func (s *Screen) Matches(m Msg) bool {
	if s.art == nil {
		return m.ArtifactID == "" && m.WorkspaceID == s.wsID && m.Path == s.path && m.Req == s.req
	}
	return m.ArtifactID == s.art.ID && m.UpdatedAt.Equal(s.art.UpdatedAt) && m.Req == s.req
}

// load takes the fetched bytes.
func (s *Screen) load(m Msg) {
	if m.Err != nil {
		s.state, s.failure = failed, errtext.Sentence(m.Err, errtext.Subject{Artifact: s.name, Scope: "read"})
		return
	}
	s.data, s.total = m.Data, m.Total
	if s.art == nil {
		s.mime = mimeOf(m.ContentType)
		s.text = deps.TextType(m.ContentType, s.c.Config.PreviewMIMEAllow)
	}
	switch {
	case !s.text:
		s.state, s.why = card, "its type "+termkit.Sanitize(s.mime)+" is not shown as text"
	case Binary(m.Data):
		s.state, s.why = card, "its first bytes are not UTF-8 text"
	default:
		s.state = text
		s.lines, s.plain = Sanitize(m.Data, func(e string) string { return s.c.Theme.Dim.Render(e) })
	}
	s.rendered = renderKey{}
	s.layout()
}

func mimeOf(mime string) string {
	t, _, _ := strings.Cut(mime, ";")
	return strings.TrimSpace(t)
}

// Truncated reports a text preview of fewer bytes than the artifact has.
func (s *Screen) Truncated() bool { return s.state == text && int64(len(s.data)) < s.total }

// Update handles keys and the fetched bytes.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case Msg:
		if s.Matches(msg) {
			s.load(msg)
		}
	case tea.KeyMsg:
		return s, s.key(msg)
	case screen.BackMsg:
		if s.query != "" || s.searching {
			s.clearSearch()
			return s, nil
		}
		return s, screen.Send(screen.NavMsg{Kind: screen.NavPop})
	}
	return s, nil
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	if s.searching {
		s.searchKey(k)
		return nil
	}
	return pane.Dispatch(s.c.Keys, k, s.Keys, func(id keys.ID) tea.Cmd {
		if scrolls(id) {
			s.vp, _ = s.vp.Update(k) // its KeyMap is the registry's
			return nil
		}
		return s.action(id)
	}, keys.ScopeNav, keys.ScopePreview)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	switch id {
	case keys.Top:
		s.vp.GotoTop()
	case keys.Bottom:
		s.vp.GotoBottom()
	case keys.Filter:
		s.searching = true
		s.input.Focus()
		s.layout()
	case keys.HitNext:
		s.jump(1)
	case keys.HitPrev:
		s.jump(-1)
	case keys.Wrap:
		s.wrap = !s.wrap
		s.layout()
	case keys.BackNav:
		return screen.Send(screen.NavMsg{Kind: screen.NavPop})
	case keys.CopyName:
		if s.art == nil {
			return screen.Send(screen.CopyMsg{Label: "name", Value: path.Base(s.path)})
		}
		return screen.Send(screen.CopyMsg{Label: "name", Value: s.art.Name})
	case keys.CopyID:
		if s.art == nil {
			return screen.Send(screen.CopyMsg{Label: "path", Value: s.path})
		}
		return screen.Send(screen.CopyMsg{Label: "ID", Value: s.art.ID})
	case keys.PvDownload:
		return screen.Send(screen.ActionMsg{ID: keys.ArtDownload, WorkspaceID: s.art.WorkspaceID, ArtifactID: s.art.ID})
	}
	return nil
}

// searchKey edits the query: every edit searches, enter keeps it and
// jumps to the first hit, esc clears it.
func (s *Screen) searchKey(k tea.KeyMsg) {
	switch k.String() {
	case "enter":
		s.searching = false
		s.input.Blur()
		s.hit = -1
		s.jump(1)
		s.layout()
		return
	case "esc":
		s.clearSearch()
		return
	}
	before := s.input.Value()
	s.input, _ = s.input.Update(k) // paste is off: no Cmd to run
	if s.input.Value() != before {
		s.query = strings.ToLower(s.input.Value())
		s.find()
	}
}

func (s *Screen) clearSearch() {
	s.searching, s.query, s.hits, s.hit = false, "", nil, -1
	s.input.Reset()
	s.input.Blur()
	s.layout()
}

// find collects the source lines holding the query.
func (s *Screen) find() {
	s.hits, s.hit = nil, -1
	if s.query != "" {
		for i, l := range s.plain {
			if strings.Contains(l, s.query) {
				s.hits = append(s.hits, i)
			}
		}
	}
	s.fill()
}

// jump moves to the next (dir 1) or previous (-1) hit, wrapping around,
// and scrolls it into view.
func (s *Screen) jump(dir int) {
	if len(s.hits) == 0 {
		return
	}
	if s.hit < 0 {
		top := s.vp.YOffset
		s.hit = 0
		for i, l := range s.hits {
			if s.firstRow[l] >= top {
				s.hit = i
				break
			}
		}
		if dir < 0 {
			s.hit = (s.hit - 1 + len(s.hits)) % len(s.hits)
		}
	} else {
		s.hit = (s.hit + dir + len(s.hits)) % len(s.hits)
	}
	row := s.firstRow[s.hits[s.hit]]
	if row < s.vp.YOffset || row >= s.vp.YOffset+s.vp.Height {
		s.vp.SetYOffset(row - s.vp.Height/3)
	}
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) {
	s.width, s.height = width, height
	s.layout()
}

// topLines are the banner and the search prompt.
func (s *Screen) topLines() int {
	n := 0
	if s.Truncated() {
		n++
	}
	if s.searching || s.query != "" {
		n++
	}
	return n
}

// layout sizes the viewport and, when width or wrap changed, wraps the
// lines again (once per content and width).
func (s *Screen) layout() {
	s.vp.Width, s.vp.Height = max(1, s.width), max(1, s.height-s.topLines())
	if s.state != text {
		return
	}
	key := renderKey{width: s.width, wrap: s.wrap}
	if key != s.rendered {
		s.rendered = key
		s.wrapLines()
	}
	s.fill()
}

func (s *Screen) wrapLines() {
	cw := max(1, s.width-2) // the hit gutter
	s.pieces = make([][]string, len(s.lines))
	for i, l := range s.lines {
		switch {
		case !s.wrap:
			s.pieces[i] = []string{ansi.Truncate(l, cw, s.c.Theme.Glyphs.Ellipsis)}
		case ansi.StringWidth(l) <= cw:
			s.pieces[i] = []string{l}
		default:
			s.pieces[i] = strings.Split(ansi.Hardwrap(l, cw, true), "\n")
		}
	}
}

// fill gives the viewport the display rows: the gutter marks hit lines.
func (s *Screen) fill() {
	if s.state != text {
		return
	}
	hit := s.c.Theme.Key.Render(table.Pad(s.c.Theme.Glyphs.Hit, 2, false, ""))
	var rows []string
	s.firstRow = make([]int, len(s.pieces))
	for i, ps := range s.pieces {
		s.firstRow[i] = len(rows)
		gutter := "  "
		if _, found := slices.BinarySearch(s.hits, i); found {
			gutter = hit
		}
		for j, p := range ps {
			if j > 0 {
				gutter = "  "
			}
			rows = append(rows, gutter+p)
		}
	}
	s.vp.SetContent(strings.Join(rows, "\n"))
	s.vp.SetYOffset(s.vp.YOffset) // fewer rows (wrap off) keep a full window
}

// Capturing reports the search input having the keys.
func (s *Screen) Capturing() bool { return s.searching }

// Scopes is nothing: a preview lists no scope of its own.
func (s *Screen) Scopes() []store.Scope { return nil }

// Crumbs is the artifact, "preview" and the search.
func (s *Screen) Crumbs() []string {
	crumb := "preview"
	if s.query != "" || s.searching {
		crumb += fmt.Sprintf(" /%s %d %s", s.input.Value(), len(s.hits), plural(len(s.hits), "hit", "hits"))
	}
	return []string{s.name, crumb}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
