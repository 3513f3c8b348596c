package preview

import (
	"strings"

	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// pager is a scrolled window over display rows. (bubbles' viewport is
// what TUI.md §1.4 names, but bubbles is not in this build's go.sum; the
// preview needs only this much of it, and binds no key itself.)
type pager struct {
	rows          []string
	YOffset       int
	Width, Height int
}

func (p *pager) SetContent(rows []string) {
	p.rows = rows
	p.SetYOffset(p.YOffset)
}

func (p *pager) maxOffset() int { return max(0, len(p.rows)-p.Height) }

func (p *pager) SetYOffset(n int) { p.YOffset = max(0, min(n, p.maxOffset())) }

func (p *pager) ScrollDown(n int) { p.SetYOffset(p.YOffset + n) }
func (p *pager) ScrollUp(n int)   { p.SetYOffset(p.YOffset - n) }
func (p *pager) GotoTop()         { p.YOffset = 0 }
func (p *pager) GotoBottom()      { p.YOffset = p.maxOffset() }
func (p *pager) HalfPageDown()    { p.ScrollDown(max(1, p.Height/2)) }
func (p *pager) HalfPageUp()      { p.ScrollUp(max(1, p.Height/2)) }
func (p *pager) PageDown()        { p.ScrollDown(max(1, p.Height)) }
func (p *pager) PageUp()          { p.ScrollUp(max(1, p.Height)) }

// View is exactly Height rows of Width columns.
func (p *pager) View(ellipsis string) string {
	out := make([]string, p.Height)
	for i := range out {
		row := ""
		if j := p.YOffset + i; j < len(p.rows) {
			row = p.rows[j]
		}
		out[i] = table.Pad(row, p.Width, false, ellipsis)
	}
	return strings.Join(out, "\n")
}
