package tui

import (
	"bytes"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/screens/preview"
)

// openPreview pushes the preview of a RECORDED artifact and fetches its
// head: up to preview.max_bytes of a text type, the card's 256 bytes of
// anything else (TUI.md §1.4).
func (m *Model) openPreview(a *cairn.Artifact) tea.Cmd {
	if a.State != cairn.ArtifactRecorded {
		return m.notes.Show(common.LevelInfo, "no object to preview — U to replace")
	}
	text := common.TextType(a.MIMEType, m.c.Config.PreviewMIMEAllow)
	n := int64(preview.CardBytes)
	if text {
		n = m.c.Config.PreviewMaxBytes
	}
	req := m.id()
	s := preview.New(m.c, a, req, text)
	m.stack.Push(s)
	b, ctx, id, at := m.backend, m.ctx, a.ID, a.UpdatedAt
	return func() tea.Msg {
		data, total, err := b.ReadHead(ctx, id, n)
		return preview.Msg{ArtifactID: id, UpdatedAt: at, Req: req, Data: data, Total: total, Err: err}
	}
}

// headMsg is the first bytes of an artifact read for the detail pane.
type headMsg struct {
	id   string
	at   time.Time
	data []byte
	err  error
}

// readHead reads the first preview.inline_max_bytes of an artifact the
// cursor rested on, unless they are cached (TUI.md §1.3).
func (m *Model) readHead(h common.HeadMsg) tea.Cmd {
	if _, ok := m.sh.heads.Get(h.ArtifactID, h.UpdatedAt); ok {
		return nil
	}
	b, ctx, n := m.backend, m.ctx, m.c.Config.PreviewInlineMaxBytes
	return func() tea.Msg {
		data, _, err := b.ReadHead(ctx, h.ArtifactID, n)
		return headMsg{id: h.ArtifactID, at: h.UpdatedAt, data: data, err: err}
	}
}

// onHead caches the head as sanitised lines; a failed read shows nothing
// (the preview says why when asked).
func (m *Model) onHead(h headMsg) {
	if h.err != nil || !utf8.Valid(h.data) || bytes.IndexByte(h.data, 0) >= 0 {
		return
	}
	dim := m.c.Theme.Dim
	m.sh.heads.Put(h.id, h.at, termkit.SanitizeLines(string(h.data), func(s string) string { return dim.Render(s) }))
}
