package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/screens/preview"
)

// openPreview pushes the preview of a RECORDED artifact and fetches its
// head: up to preview.max_bytes of a text type, the card's 256 bytes of
// anything else (TUI.md §1.4).
func (m *Model) openPreview(a *cairn.Artifact) tea.Cmd {
	if a.State != cairn.ArtifactRecorded {
		return m.toast(common.LevelInfo, "no object to preview — U to replace")
	}
	text := textType(a.MIMEType, m.c.Config.PreviewMIMEAllow)
	n := int64(preview.CardBytes)
	if text {
		n = m.c.Config.PreviewMaxBytes
	}
	req := m.id()
	s := preview.New(m.c, a, req, text)
	s.SetSize(m.width, m.bodyHeight())
	m.stack = append(m.stack, s)
	b, ctx, id, at := m.backend, m.ctx, a.ID, a.UpdatedAt
	return func() tea.Msg {
		data, total, err := b.ReadHead(ctx, id, n)
		return preview.Msg{ArtifactID: id, UpdatedAt: at, Req: req, Data: data, Total: total, Err: err}
	}
}

// onPreview gives the bytes to the preview that asked; any other answer
// (the preview was closed, or another opened) is dropped.
func (m *Model) onPreview(msg preview.Msg) tea.Cmd {
	for i, s := range m.stack {
		if p, ok := s.(*preview.Screen); ok && p.Matches(msg) {
			m.stack[i], _ = p.Update(msg)
		}
	}
	return nil
}

// textType reports a MIME type shown as text: text/*, or one of
// preview.mime_allow.
func textType(mime string, allow []string) bool {
	t, _, _ := strings.Cut(mime, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	if strings.HasPrefix(t, "text/") {
		return true
	}
	for _, a := range allow {
		if strings.EqualFold(a, t) {
			return true
		}
	}
	return false
}
