package preview

import (
	"github.com/charmbracelet/bubbles/viewport"

	"github.com/cairn-dev/cairn/tui/keys"
)

// newPager is the bubbles viewport the text scrolls in. Its KeyMap comes
// from the registry, so remapped movement keys scroll it too; the default
// one binds d u f b h l and space, which here download, go back or do
// nothing. Left and right stay unbound: lines wrap or are cut, never
// scrolled sideways. g/G are the screen's: the viewport's KeyMap has no
// top or bottom.
func newPager(km *keys.Map) viewport.Model {
	vp := viewport.New(0, 1)
	vp.MouseWheelEnabled = false // the mouse is off
	vp.KeyMap = viewport.KeyMap{
		Down:         km.Binding(keys.Down),
		Up:           km.Binding(keys.Up),
		HalfPageDown: km.Binding(keys.HalfDown),
		HalfPageUp:   km.Binding(keys.HalfUp),
		PageDown:     km.Binding(keys.PageDown),
		PageUp:       km.Binding(keys.PageUp),
	}
	return vp
}

// scrolls reports the actions the viewport's KeyMap handles.
func scrolls(id keys.ID) bool {
	switch id {
	case keys.Down, keys.Up, keys.HalfDown, keys.HalfUp, keys.PageDown, keys.PageUp:
		return true
	}
	return false
}
