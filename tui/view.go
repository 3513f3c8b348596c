package tui

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/footer"
	"github.com/cairn-dev/cairn/tui/widgets/header"
	"github.com/cairn-dev/cairn/tui/widgets/table"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// View draws the frame: header, body (or the modal in its place), hint
// line and status line. It only reads.
func (m *Model) View() string {
	if m.width == 0 && m.height == 0 {
		return "starting…"
	}
	if m.tooSmall() {
		x := m.c.Theme.Glyphs.Times
		return fmt.Sprintf("cairn-tui needs 60%s16 — now %d%s%d", x, m.width, x, m.height)
	}
	lines := []string{header.View(m.c.Theme, m.stack.Crumbs(), m.badges(), m.width), m.body()}
	lines = append(lines, m.xfer.TrayView(m.width, m.height, m.sh.Frame())...)
	lines = append(lines, pad(m.c.Theme, m.hints(), m.width), pad(m.c.Theme, m.status(), m.width))
	return strings.Join(lines, "\n")
}

func pad(th *theme.Theme, s string, width int) string {
	return table.Pad(s, width, false, th.Glyphs.Ellipsis)
}

// body is the active screen, or the modal centred in its place.
func (m *Model) body() string {
	h := m.bodyHeight()
	if m.modal == nil {
		return m.stack.Top().View()
	}
	box := strings.Split(m.modal.View(), "\n")
	if len(box) > h {
		box = box[:h]
	}
	return lipgloss.Place(m.width, h, lipgloss.Center, lipgloss.Center, strings.Join(box, "\n"))
}

func (m *Model) hints() string {
	if m.modal != nil {
		return m.c.Theme.Hint.Render(m.modal.Hint())
	}
	if m.xfer.TrayFocused() {
		ks := m.c.Keys
		return m.c.Theme.Hint.Render(fmt.Sprintf("transfers tray: %s/%s select %s %s cancel %s %s/%s back",
			ks.Action(keys.Up).FirstKey(), ks.Action(keys.Down).FirstKey(), m.c.Theme.Glyphs.Dot,
			ks.Action(keys.TrCancel).FirstKey(), m.c.Theme.Glyphs.Dot, ks.Action(keys.FocusNext).FirstKey(), ks.Action(keys.Back).FirstKey()))
	}
	if m.stack.Top().Capturing() {
		return m.c.Theme.Hint.Render("type to filter · enter keeps · esc clears")
	}
	bindings := append(m.stack.Top().Keys().Bindings, m.globalKeys()...)
	// help and quit always close the line.
	ordered := make([]keys.State, 0, len(bindings))
	var last []keys.State
	for _, b := range bindings {
		if b.ID == keys.Help || b.ID == keys.QuitOrBack {
			last = append(last, b)
			continue
		}
		ordered = append(ordered, b)
	}
	return footer.View(m.c.Theme, append(ordered, last...), m.width)
}

// status is the newest toast, else the running tasks.
func (m *Model) status() string {
	if t, ok := m.notes.Toasts().Current(); ok {
		return toast.Line(t, m.c.Theme)
	}
	return m.ops.StatusLine(m.c.Theme, m.sh.Frame())
}

// badges are missing, read-only, connection and server, right to left in
// importance: the server goes first when space is short.
func (m *Model) badges() []header.Badge {
	th := m.c.Theme
	var out []header.Badge
	if n, ok := m.sh.st.MissingTotal(); !ok {
		out = append(out, header.Badge{Text: th.Glyphs.Ellipsis + " missing", Style: th.Dim})
	} else if n > 0 {
		out = append(out, header.Badge{Text: th.Glyphs.Missing + " " + termkit.Count(n) + " missing", Style: th.Bad})
	}
	if m.c.Config.ReadOnly {
		out = append(out, header.Badge{Text: "[read-only]", Style: th.Warn})
	}
	out = append(out, connBadge(th, m.feed.Conn(), m.sh.now, m.c.Config.PollInterval))
	if name := m.c.Config.Context; name != "" {
		// The context names the server the operator acts on: it never goes.
		out = append(out, header.Badge{Text: "ctx " + termkit.Sanitize(name), Style: th.Bold})
	}
	return append(out, header.Badge{Text: serverLabel(m.c.Config.Server), Style: th.Dim, Droppable: true})
}

// connBadge is the header's connection badge at model time now.
func connBadge(th *theme.Theme, c feed.Conn, now time.Time, poll time.Duration) header.Badge {
	g := th.Glyphs
	kind := c.Kind
	if c.RESTFailing && kind != feed.Live && kind != feed.Off && kind != feed.Rejected {
		kind = feed.Offline // REST failing too
	}
	switch kind {
	case feed.Live:
		return header.Badge{Text: g.Live + " live", Style: th.Good}
	case feed.Reconnecting:
		secs := int((max(0, c.RetryAt.Sub(now)) + time.Second - 1) / time.Second)
		return header.Badge{Text: fmt.Sprintf("%s reconnecting %ds", g.Connecting, secs), Style: th.Warn}
	case feed.Offline:
		text := g.Offline + " offline"
		if !c.LastGood.IsZero() {
			text += " " + g.Dot + " " + termkit.Age(now, c.LastGood) + " stale"
		}
		return header.Badge{Text: text, Style: th.Bad}
	case feed.Polling:
		return header.Badge{Text: fmt.Sprintf("%s polling %s", g.Polling, poll), Style: th.Warn}
	case feed.Off:
		return header.Badge{Text: g.Off + " events off", Style: th.Dim}
	case feed.Rejected:
		if c.RejectedBy == cairn.ReasonForbidden {
			return header.Badge{Text: g.Offline + " token lacks read", Style: th.Bad}
		}
		return header.Badge{Text: g.Offline + " token rejected", Style: th.Bad}
	}
	return header.Badge{Text: g.Connecting + " connecting", Style: th.Dim}
}

// serverLabel is host:port, with https:// kept for TLS.
func serverLabel(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ansi.Strip(server)
	}
	if u.Scheme == "https" {
		return "https://" + u.Host
	}
	return u.Host
}
