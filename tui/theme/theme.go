package theme

import "github.com/charmbracelet/lipgloss"

// Theme is the styles and glyphs every component draws with. It is built
// once, before the program starts, and never changes.
type Theme struct {
	Glyphs Glyphs
	// Plain is set without colour: no SGR at all, so reverse video is gone
	// too and the input cursor is drawn as a character.
	Plain bool

	Header, Crumb, Dim, Bold lipgloss.Style
	Good, Bad, Warn          lipgloss.Style
	ColumnHeader, Selected   lipgloss.Style
	Changed, Pending         lipgloss.Style
	Key, Hint, Label         lipgloss.Style
	ToastOK, ToastInfo       lipgloss.Style
	ToastWarn, ToastError    lipgloss.Style
	Modal, ModalTitle, Field lipgloss.Style
	FieldFocus, FieldError   lipgloss.Style
	Banner, Cursor           lipgloss.Style

	renderer *lipgloss.Renderer
	kind     string
	// barFull and barEmpty colour the progress bar, which bubbles draws
	// through termenv rather than a lipgloss style.
	barFull, barEmpty lipgloss.AdaptiveColor
}

// palette is one set of colours; good and bad contrast blue with orange,
// never red with green alone.
type palette struct {
	fg, dim, accent, good, bad, warn, selFg, selBg lipgloss.TerminalColor
	goodPair, dimPair                              lipgloss.AdaptiveColor
}

func adaptive(light, dark string) lipgloss.AdaptiveColor {
	return lipgloss.AdaptiveColor{Light: light, Dark: dark}
}

// pick resolves a light/dark pair for an explicit theme; auto keeps the
// adaptive pair, which lipgloss resolves against the detected background.
func pick(kind string, c lipgloss.AdaptiveColor) lipgloss.TerminalColor {
	switch kind {
	case "dark":
		return lipgloss.Color(c.Dark)
	case "light":
		return lipgloss.Color(c.Light)
	}
	return c
}

func paletteFor(kind string) palette {
	if kind == "high-contrast" {
		return palette{
			fg: lipgloss.Color("15"), dim: lipgloss.Color("7"), accent: lipgloss.Color("14"),
			good: lipgloss.Color("12"), bad: lipgloss.Color("208"), warn: lipgloss.Color("11"),
			selFg: lipgloss.Color("0"), selBg: lipgloss.Color("15"),
			goodPair: adaptive("12", "12"), dimPair: adaptive("7", "7"),
		}
	}
	good, dim := adaptive("25", "39"), adaptive("244", "243")
	return palette{
		fg:       pick(kind, adaptive("235", "252")),
		dim:      pick(kind, dim),
		accent:   pick(kind, adaptive("25", "75")),
		good:     pick(kind, good),
		bad:      pick(kind, adaptive("166", "208")),
		warn:     pick(kind, adaptive("130", "214")),
		selFg:    pick(kind, adaptive("255", "16")),
		selBg:    pick(kind, adaptive("25", "75")),
		goodPair: good, dimPair: dim,
	}
}

// New builds the theme on the default renderer: kind is auto, dark, light
// or high-contrast.
func New(kind string, glyphs Glyphs) *Theme {
	return NewFor(lipgloss.DefaultRenderer(), kind, glyphs)
}

// NewFor builds the theme on r, whose colour profile it renders with.
func NewFor(r *lipgloss.Renderer, kind string, glyphs Glyphs) *Theme {
	p := paletteFor(kind)
	s := r.NewStyle
	return &Theme{
		Glyphs:       glyphs,
		Header:       s().Foreground(p.fg).Bold(true),
		Crumb:        s().Foreground(p.accent).Bold(true),
		Dim:          s().Foreground(p.dim),
		Bold:         s().Bold(true),
		Good:         s().Foreground(p.good),
		Bad:          s().Foreground(p.bad).Bold(true),
		Warn:         s().Foreground(p.warn),
		ColumnHeader: s().Foreground(p.dim).Bold(true),
		Selected:     s().Foreground(p.selFg).Background(p.selBg).Bold(true),
		Changed:      s().Foreground(p.accent).Bold(true),
		Pending:      s().Foreground(p.dim).Italic(true),
		Key:          s().Foreground(p.accent).Bold(true),
		Hint:         s().Foreground(p.dim),
		Label:        s().Foreground(p.dim),
		ToastOK:      s().Foreground(p.good),
		ToastInfo:    s().Foreground(p.fg),
		ToastWarn:    s().Foreground(p.warn).Bold(true),
		ToastError:   s().Foreground(p.bad).Bold(true),
		Modal:        s().Border(borderFor(glyphs)).BorderForeground(p.accent).Padding(0, 1),
		ModalTitle:   s().Foreground(p.accent).Bold(true),
		Field:        s().Foreground(p.fg),
		FieldFocus:   s().Foreground(p.accent).Bold(true),
		FieldError:   s().Foreground(p.bad),
		Banner:       s().Foreground(p.selFg).Background(p.bad).Bold(true),
		Cursor:       s().Reverse(true),
		renderer:     r, kind: kind, barFull: p.goodPair, barEmpty: p.dimPair,
	}
}

// borderFor draws boxes with plain ASCII for the ascii glyph set.
func borderFor(g Glyphs) lipgloss.Border {
	if g.VBar != "|" {
		return lipgloss.RoundedBorder()
	}
	return lipgloss.Border{
		Top: "-", Bottom: "-", Left: "|", Right: "|",
		TopLeft: "+", TopRight: "+", BottomLeft: "+", BottomRight: "+",
	}
}
