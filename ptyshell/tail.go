package ptyshell

import "sync"

// TailScreen is the fallback Screen when no virtual terminal is wired in:
// it keeps the last Limit bytes of output, raw, and renders them as they
// are. A reattach then replays recent output (including what was printed
// while nobody was attached, such as the first prompt) rather than a
// redrawn screen; a replay that starts inside an escape sequence may show
// a stray character. Memory is bounded by Limit.
type TailScreen struct {
	Limit int

	mu  sync.Mutex
	buf []byte
}

// DefaultTailBytes is TailScreen's Limit when zero.
const DefaultTailBytes = 64 << 10

// NewTailScreen is a HubOptions NewScreen making TailScreens of
// DefaultTailBytes.
func NewTailScreen(int, int) Screen { return &TailScreen{Limit: DefaultTailBytes} }

func (s *TailScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := s.Limit
	if limit <= 0 {
		limit = DefaultTailBytes
	}
	if len(p) >= limit {
		s.buf = append(s.buf[:0], p[len(p)-limit:]...)
		return len(p), nil
	}
	if over := len(s.buf) + len(p) - limit; over > 0 {
		s.buf = append(s.buf[:0], s.buf[over:]...)
	}
	s.buf = append(s.buf, p...)
	return len(p), nil
}

// Resize does nothing: raw bytes have no size.
func (s *TailScreen) Resize(int, int) {}

// Render returns a copy of the bytes kept.
func (s *TailScreen) Render() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.buf...)
}
