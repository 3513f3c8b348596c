package preview

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// Keys is the movement, search and preview bindings; the list-only ones
// (sort, focus, zoom, open) do nothing here.
func (s *Screen) Keys() keys.Context {
	help := map[keys.ID]pane.Help{
		keys.Filter:   {Short: "search", Long: "search the text; enter keeps, esc clears"},
		keys.CopyName: {Long: "copy the artifact's name"},
	}
	if s.art == nil {
		help[keys.CopyName] = pane.Help{Long: "copy the file's name"}
		help[keys.CopyID] = pane.Help{Short: "copy path", Long: "copy the file's full path"}
	}
	ctx := pane.Bindings(s.c.Keys, "preview", help, keys.ScopeNav, keys.ScopePreview)
	for i := range ctx.Bindings {
		switch b := &ctx.Bindings[i]; b.ID {
		case keys.Open, keys.SortNext, keys.SortReverse, keys.FocusNext, keys.FocusPrev, keys.Zoom:
			b.Enabled, b.Hidden, b.Reason = false, true, "not in a preview"
		}
	}
	if s.art == nil {
		ctx.Disable(keys.PvDownload, "a volume file leaves through an artifact — i in the files pane saves it")
	}
	if s.state != text {
		for _, id := range []keys.ID{keys.Filter, keys.HitNext, keys.HitPrev, keys.Wrap} {
			ctx.Disable(id, "no text to search")
		}
	} else if len(s.hits) == 0 {
		ctx.Disable(keys.HitNext, "no search hits")
		ctx.Disable(keys.HitPrev, "no search hits")
	}
	if s.c.Remote {
		ctx.Hide(keys.PvDownload)
	}
	return ctx
}

// View draws the banner, the search prompt and the text, or the card.
func (s *Screen) View() string {
	th := s.c.Theme
	var top []string
	if s.Truncated() {
		rest := "d downloads all"
		if s.art == nil {
			rest = "i in the files pane saves it whole"
		}
		top = append(top, th.Banner.Render(table.Pad(fmt.Sprintf(" first %s of %s — %s",
			termkit.Size(int64(len(s.data))), termkit.Size(s.total), rest), s.width, false, th.Glyphs.Ellipsis)))
	}
	if s.searching || s.query != "" {
		query := s.input.Value() // kept: no cursor cell after it
		if s.searching {
			query = s.input.View()
		}
		prompt := th.Key.Render("/") + query
		if !s.searching && len(s.hits) > 0 {
			prompt += th.Dim.Render(fmt.Sprintf("   hit %d of %d %s n/N", max(1, s.hit+1), len(s.hits), th.Glyphs.Dot))
		}
		top = append(top, table.Pad(prompt, s.width, false, th.Glyphs.Ellipsis))
	}
	var body string
	switch s.state {
	case loading:
		body = block([]string{"", "  loading " + s.name + "…"}, s.width, s.height-len(top), th.Glyphs.Ellipsis)
	case failed:
		body = block([]string{"", "  cannot preview " + s.name + ": " + s.failure, "  esc goes back"}, s.width, s.height-len(top), th.Glyphs.Ellipsis)
	case card:
		body = block(s.card(), s.width, s.height-len(top), th.Glyphs.Ellipsis)
	default:
		body = s.vp.View()
	}
	return strings.Join(append(top, body), "\n")
}

// card is the non-text view: MIME, size, a 256-byte hex dump, the way to
// the bytes.
func (s *Screen) card() []string {
	th := s.c.Theme
	mime, way := s.mime, "d to download"
	if s.art != nil {
		mime = s.art.MIMEType
	} else {
		way = "i in the files pane saves it"
	}
	lines := []string{
		" " + th.Bold.Render(s.name),
		pane.Field(th, "MIME", termkit.Sanitize(mime)),
		pane.Field(th, "Size", termkit.Size(s.total)+" ("+termkit.Count(s.total)+" bytes)"),
		"",
		" " + th.Dim.Render("not shown as text: "+s.why+" — "+way),
		"",
	}
	head := s.data[:min(len(s.data), CardBytes)]
	for _, l := range HexDump(head) {
		lines = append(lines, " "+l)
	}
	return lines
}

// block pads or cuts lines to exactly w×h.
func block(lines []string, w, h int, ellipsis string) string {
	out := make([]string, max(0, h))
	for i := range out {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		out[i] = table.Pad(line, w, false, ellipsis)
	}
	return strings.Join(out, "\n")
}
