// Package toast keeps cairn-tui's toasts: the newest active one shows on
// the status line, every one goes to a log of the last 100. Expiry is by
// ID, so an old timer never removes a newer toast.
package toast

import (
	"time"

	"github.com/cairn-dev/cairn/tui/theme"
)

// Level is a toast's severity.
type Level uint8

const (
	LevelOK Level = iota + 1
	LevelInfo
	LevelWarn
	LevelError
)

// Toast is one message.
type Toast struct {
	ID        int
	Level     Level
	Text      string
	At        time.Time
	RequestID string
	// Detail is what the server said behind a sentence — its message and
	// detail (the shells holding a volume, say) — shown only in the log.
	Detail string
}

// LogSize is how many toasts the log keeps.
const LogSize = 100

// Model holds the active toasts and the log.
type Model struct {
	nextID int
	active []Toast
	log    []Toast
}

// Lifetime is how long a toast of a level shows; 0 means until dismissed.
func Lifetime(l Level) time.Duration {
	switch l {
	case LevelOK, LevelInfo:
		return 4 * time.Second
	case LevelWarn:
		return 8 * time.Second
	}
	return 0
}

// Push adds a toast and returns it. A new error replaces an older one.
func (m *Model) Push(level Level, text string, at time.Time, requestID string) Toast {
	m.nextID++
	t := Toast{ID: m.nextID, Level: level, Text: text, At: at, RequestID: requestID}
	if level == LevelError {
		m.dropErrors()
	}
	m.active = append(m.active, t)
	m.log = append(m.log, t)
	if len(m.log) > LogSize {
		m.log = m.log[len(m.log)-LogSize:]
	}
	return t
}

// Attach sets the detail of the logged toast id (the messages log shows
// it under the sentence).
func (m *Model) Attach(id int, detail string) {
	for i := range m.log {
		if m.log[i].ID == id {
			m.log[i].Detail = detail
		}
	}
}

// Note adds an entry to the log only (the lines behind a summary toast).
func (m *Model) Note(level Level, text string, at time.Time) {
	m.nextID++
	m.log = append(m.log, Toast{ID: m.nextID, Level: level, Text: text, At: at})
	if len(m.log) > LogSize {
		m.log = m.log[len(m.log)-LogSize:]
	}
}

// Log is the last toasts, oldest first.
func (m *Model) Log() []Toast { return m.log }

// Expire removes the toast with id, if it is still active.
func (m *Model) Expire(id int) {
	for i, t := range m.active {
		if t.ID == id {
			m.active = append(m.active[:i], m.active[i+1:]...)
			return
		}
	}
}

// DismissError removes the active error toast; false when there is none.
func (m *Model) DismissError() bool {
	n := len(m.active)
	m.dropErrors()
	return len(m.active) != n
}

// ShowsError reports whether an error toast is active.
func (m *Model) ShowsError() bool {
	for _, t := range m.active {
		if t.Level == LevelError {
			return true
		}
	}
	return false
}

func (m *Model) dropErrors() {
	kept := m.active[:0]
	for _, t := range m.active {
		if t.Level != LevelError {
			kept = append(kept, t)
		}
	}
	m.active = kept
}

// Current is the newest active toast.
func (m *Model) Current() (Toast, bool) {
	if len(m.active) == 0 {
		return Toast{}, false
	}
	return m.active[len(m.active)-1], true
}

// Line renders a toast as the status line shows it.
func Line(t Toast, th *theme.Theme) string {
	g := th.Glyphs
	switch t.Level {
	case LevelOK:
		return th.ToastOK.Render(g.OK + " " + t.Text)
	case LevelInfo:
		return th.ToastInfo.Render(g.Info + " " + t.Text)
	case LevelWarn:
		return th.ToastWarn.Render(g.Warn + " " + t.Text)
	}
	return th.ToastError.Render(g.Error + " " + t.Text)
}
