package tuitest

import (
	"context"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Epoch is the fixed time tests start at.
func Epoch() time.Time { return time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC) }

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Clipboard records what was copied.
type Clipboard struct {
	mu     sync.Mutex
	copies []string
}

// Copy records text.
func (c *Clipboard) Copy(_ context.Context, text string) error {
	c.mu.Lock()
	c.copies = append(c.copies, text)
	c.mu.Unlock()
	return nil
}

// Copies returns everything copied, in order.
func (c *Clipboard) Copies() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.copies...)
}

// Config returns the defaults with a test server and unicode glyphs.
func Config() *config.Config {
	c := config.Defaults()
	c.Server = "http://cairn.test:8080"
	c.Glyphs = "unicode"
	return &c
}

// Theme returns the theme for goldens: colourless (the test sets the
// Ascii profile), in the given glyph set.
func Theme(ascii bool) *theme.Theme {
	g := theme.Unicode()
	if ascii {
		g = theme.ASCII()
	}
	t := theme.New("dark", g)
	t.Plain = true
	return t
}

// Size is a terminal size.
type Size struct{ W, H int }

// Sizes are the terminal sizes the view goldens are drawn at: the three
// layouts, below the minimum, and before the first WindowSizeMsg.
func Sizes() []Size { return []Size{{60, 16}, {100, 30}, {160, 50}, {59, 15}, {0, 0}} }

// Layouts are the sizes that draw a screen (the minimum and up).
func Layouts() []Size { return []Size{{60, 16}, {100, 30}, {160, 50}} }
