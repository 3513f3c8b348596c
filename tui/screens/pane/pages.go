package pane

import (
	"cmp"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/keys"
)

// Pages is a list read a page at a time, as the cursor nears the end of
// what is loaded (the audit trail, a directory of the files pane), up to
// a bound. It numbers each listing, so that the screen drops an answer of
// an older one; it keeps the row the cursor stood on across a listing
// again from the top, and lists as many rows as were loaded before.
//
// The screen does no I/O: ask builds the Cmd that requests the first
// page of the current listing or the next one, and the screen hands each
// answer of the current listing (Req) to Take. While rows remain past
// those loaded, a line under the list says so.
type Pages[T Row] struct {
	list *List[T]
	Paging
	ask func(next bool) tea.Cmd // the first page, or the one after those loaded

	req       int    // the current listing's number
	loading   bool   // a page of it is on its way
	again     bool   // a refresh came while a page ran: list again after it
	listed    bool   // its first page arrived
	loaded    int    // rows it holds
	more      bool   // its last page said more remain
	want      int    // rows to load before waiting for the cursor
	keep      string // the row the cursor goes back to once listed
	keepAgain string // the row the listing after the running page keeps ("": the cursor's then)
	err       error  // the last page's failure
}

// Paging is how a list is read and what its footer says.
type Paging struct {
	Size, Most int    // rows per page; rows held at most
	Noun       string // what the rows are: "more events: moving down lists the next 200"
	Bound      string // the footer once Most rows are held
}

// NewPages reads l's rows as p says, through ask.
func NewPages[T Row](l *List[T], p Paging, ask func(next bool) tea.Cmd) *Pages[T] {
	return &Pages[T]{list: l, Paging: p, ask: ask, want: p.Size}
}

// Req is the current listing's number; an answer carrying another is
// stale.
func (p *Pages[T]) Req() int { return p.req }

// Listed reports that the current listing's first page arrived.
func (p *Pages[T]) Listed() bool { return p.listed }

// Loaded is how many rows the listing holds.
func (p *Pages[T]) Loaded() int { return p.loaded }

// Err is the last page's failure, nil once a page arrived after it.
func (p *Pages[T]) Err() error { return p.err }

// Count is the rows loaded as a crumb shows them: "1 204", with a "+"
// while more remain.
func (p *Pages[T]) Count() string {
	count := termkit.Count(int64(p.loaded))
	if p.more {
		count += "+"
	}
	return count
}

// Start asks for the first page of the current listing.
func (p *Pages[T]) Start() tea.Cmd {
	defer p.showFooter()
	return p.request(false)
}

func (p *Pages[T]) request(next bool) tea.Cmd {
	p.loading = true
	return p.ask(next)
}

// Restart begins a new listing with nothing loaded (another directory,
// another type); the cursor goes to the row keep once it is listed.
func (p *Pages[T]) Restart(keep string) tea.Cmd {
	defer p.showFooter()
	p.req++
	p.listed, p.loaded, p.more, p.err, p.keep, p.want, p.again, p.keepAgain = false, 0, false, nil, keep, p.Size, false, ""
	p.list.Table.SetRows(nil)
	return p.request(false)
}

// Refresh lists again from the top, keeping the cursor's row and as many
// rows as were loaded; the rows shown stay until the first page arrives.
// A refresh while a page runs waits for it, so that refreshes in a burst
// cost one listing.
func (p *Pages[T]) Refresh() tea.Cmd { return p.RefreshTo("") }

// RefreshTo is Refresh with the cursor going to the row keep once it is
// listed (a row just written); "" keeps the cursor's.
func (p *Pages[T]) RefreshTo(keep string) tea.Cmd {
	defer p.showFooter()
	if p.loading {
		p.again = true
		if keep != "" {
			p.keepAgain = keep
		}
		return nil
	}
	p.req++
	p.keep = cmp.Or(keep, p.list.Table.CursorID())
	p.want = max(p.Size, p.loaded)
	p.more = false
	return p.request(false)
}

// Take applies a page of the current listing: the first (next false)
// replaces what was shown, the others add to it; more says whether rows
// remain after it. The cursor goes back to the row to keep once that is
// listed. It returns the request of the next page while the listing wants
// more.
func (p *Pages[T]) Take(next bool, rows []T, more bool, err error) tea.Cmd {
	defer p.showFooter()
	p.loading = false
	if p.again {
		keep := p.keepAgain
		p.again, p.keepAgain = false, ""
		return p.RefreshTo(keep)
	}
	if err != nil {
		p.err = err
		return nil
	}
	p.err = nil
	if next {
		p.list.Table.Upsert(rows...)
		p.loaded += len(rows)
	} else {
		p.list.Table.SetRows(rows)
		p.listed, p.loaded = true, len(rows)
	}
	p.more = more
	if _, ok := p.list.Table.Get(p.keep); ok {
		p.list.Table.SetCursor(p.keep)
		p.keep = ""
	}
	return p.next()
}

// next asks for the next page while the listing wants more: the rows the
// cursor came near, or the row to keep (up to the bound).
func (p *Pages[T]) next() tea.Cmd {
	limit := min(p.want, p.Most)
	if p.keep != "" {
		limit = p.Most
	}
	if !p.more || p.loading || p.loaded >= limit {
		if !p.more || p.loaded >= p.Most {
			p.keep = ""
		}
		return nil
	}
	return p.request(true)
}

// Nav handles a navigation action as List.Nav does: a cursor the operator
// moved forgets the row to keep, and one within a page of the last loaded
// row asks for the next page.
func (p *Pages[T]) Nav(id keys.ID) (cmd tea.Cmd, handled bool) {
	defer p.showFooter()
	handled, moved := p.list.Nav(id)
	if !handled {
		return nil, false
	}
	if moved {
		p.keep = "" // the operator chose another row meanwhile
	}
	t := p.list.Table
	if !p.more || t.CursorIndex() < t.Len()-t.Page() {
		return nil, true
	}
	p.want = max(p.want, p.loaded+p.Size)
	return p.next(), true
}

// showFooter puts the line under the list while rows remain past those
// loaded (none when none do): that more are listed as the cursor moves
// down, that they are being listed, or past the bound the Bound sentence.
func (p *Pages[T]) showFooter() {
	e := p.list.C.Theme.Glyphs.Ellipsis
	line := ""
	switch {
	case !p.more:
	case p.loaded >= p.Most:
		line = e + " " + p.Bound
	case p.loading:
		line = fmt.Sprintf("%s listing more (%s so far)%s", e, termkit.Count(int64(p.loaded)), e)
	default:
		line = fmt.Sprintf("%s more %s: moving down lists the next %s", e, p.Noun, termkit.Count(int64(p.Size)))
	}
	p.list.SetFooter(line)
}
