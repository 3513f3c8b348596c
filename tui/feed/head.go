package feed

import (
	"bytes"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/screen"
)

// headMsg is the first bytes of an artifact read for the detail pane.
type headMsg struct {
	id   string
	at   time.Time
	data []byte
	err  error
}

// ReadHead reads the first preview.inline_max_bytes of an artifact the
// cursor rested on, unless they are cached.
func (f *Feed) ReadHead(h screen.HeadMsg) tea.Cmd {
	if _, ok := f.heads.Get(h.ArtifactID, h.UpdatedAt); ok {
		return nil
	}
	b, ctx, n := f.backend, f.ctx, f.c.Config.PreviewInlineMaxBytes
	return func() tea.Msg {
		data, _, err := b.ReadHead(ctx, h.ArtifactID, n)
		return headMsg{id: h.ArtifactID, at: h.UpdatedAt, data: data, err: err}
	}
}

// onHead caches the head as sanitised lines; a failed read shows nothing
// (the preview says why when asked).
func (f *Feed) onHead(h headMsg) {
	dim := f.c.Theme.Dim
	switch {
	case h.err != nil:
		// Said once, not retried on every rest: the preview says why.
		f.heads.Put(h.id, h.at, []string{dim.Render("(could not read it — p previews and says why)")})
	case !utf8.Valid(h.data) || bytes.IndexByte(h.data, 0) >= 0:
		f.heads.Put(h.id, h.at, []string{dim.Render("(binary content — p shows a hex card)")})
	default:
		f.heads.Put(h.id, h.at, termkit.SanitizeLines(string(h.data), func(s string) string { return dim.Render(s) }))
	}
}

// Head is the sanitised first lines of a small text artifact's content at
// updatedAt, once read.
func (f *Feed) Head(id string, updatedAt time.Time) ([]string, bool) {
	return f.heads.Get(id, updatedAt)
}
