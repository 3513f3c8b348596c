// Package cast records a shell session as an asciicast v2 file and plays
// one back.
//
// The file is one JSON header line, then one JSON array per event:
// [seconds since the start, code, data]. Codes written: "o" output, "r"
// resize ("COLSxROWS"), "m" marker (the truncation notice), and "i" input
// only when EnableInput was called: what a person types may hold
// passwords and tokens, so it is off by default.
//
// UTF-8: event data is a JSON string. A multi-byte character cut by the
// end of one Output is held (at most 3 bytes) and written with the next
// Output, so valid UTF-8 split across reads is not mangled; bytes that are
// not valid UTF-8 become U+FFFD, as encoding/json writes them. Close
// writes what is still held.
//
// Bound: the file, header included, never exceeds maxBytes. The event
// that would pass it is not written; a marker "recording truncated at N
// bytes" is, and nothing after it (Truncated reports it).
package cast

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// MIME is the media type of an asciicast file.
const MIME = "application/x-asciicast"

// DefaultMaxBytes bounds a recording when New is given zero or less.
const DefaultMaxBytes = 64 << 20

// markerRoom is kept free for the truncation marker.
const markerRoom = 96

// Header is the first line of an asciicast v2 file.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// Recorder writes one session's events. Its methods may be called from
// several goroutines.
type Recorder struct {
	mu        sync.Mutex
	w         io.Writer
	start     time.Time
	max       int64
	n         int64
	held      []byte // the start of a character cut by the last Output
	input     bool
	truncated bool
	err       error
}

// New writes the header to w and returns the recorder. env is reduced to
// TERM and SHELL. maxBytes bounds the file (DefaultMaxBytes when zero or
// less); start is the time events count from.
func New(w io.Writer, cols, rows int, maxBytes int64, start time.Time, env map[string]string) (*Recorder, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	h := Header{Version: 2, Width: cols, Height: rows, Timestamp: start.Unix(), Env: map[string]string{}}
	for _, k := range []string{"TERM", "SHELL"} {
		if v, ok := env[k]; ok {
			h.Env[k] = v
		}
	}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if int64(len(line))+markerRoom > maxBytes {
		return nil, fmt.Errorf("cast: maxBytes %d leaves no room for the header", maxBytes)
	}
	r := &Recorder{w: w, start: start, max: maxBytes}
	if err := r.put(line); err != nil {
		return nil, err
	}
	return r, nil
}

// EnableInput makes Input record what is typed.
func (r *Recorder) EnableInput() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.input = true
}

// Output records bytes the session printed at time at.
func (r *Recorder) Output(at time.Time, p []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	data := append(r.held, p...)
	cut := completeUpTo(data)
	r.held = append([]byte(nil), data[cut:]...)
	return r.event(at, "o", data[:cut])
}

// Input records typed bytes, when EnableInput was called.
func (r *Recorder) Input(at time.Time, p []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.input {
		return r.err
	}
	return r.event(at, "i", p)
}

// Resize records a new terminal size.
func (r *Recorder) Resize(at time.Time, cols, rows int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.event(at, "r", fmt.Appendf(nil, "%dx%d", cols, rows))
}

// Close writes the bytes of a cut character still held (as U+FFFD). It
// does not close the underlying writer.
func (r *Recorder) Close(at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	held := r.held
	r.held = nil
	return r.event(at, "o", held)
}

// Truncated reports whether the bound stopped the recording.
func (r *Recorder) Truncated() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.truncated
}

// Size is the number of bytes written so far.
func (r *Recorder) Size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// event writes one event line, or the truncation marker when the line
// would pass the bound.
func (r *Recorder) event(at time.Time, code string, data []byte) error {
	if r.err != nil || r.truncated || len(data) == 0 {
		return r.err
	}
	line := eventLine(r.elapsed(at), code, data)
	if r.n+int64(len(line))+markerRoom > r.max {
		r.truncated = true
		return r.put(eventLine(r.elapsed(at), "m", fmt.Appendf(nil, "recording truncated at %d bytes", r.n)))
	}
	return r.put(line)
}

func (r *Recorder) elapsed(at time.Time) float64 {
	return max(at.Sub(r.start).Seconds(), 0)
}

func (r *Recorder) put(line []byte) error {
	n, err := r.w.Write(line)
	r.n += int64(n)
	if err != nil {
		r.err = fmt.Errorf("cast: %w", err)
	}
	return r.err
}

// eventLine is `[seconds, "code", "data"]` and a newline.
func eventLine(sec float64, code string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	b.WriteString(strconv.FormatFloat(sec, 'f', 6, 64))
	b.WriteString(`, "` + code + `", `)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(data)) // a string always encodes; it ends in '\n'
	b.Truncate(b.Len() - 1)
	b.WriteString("]\n")
	return b.Bytes()
}

// completeUpTo returns the length of p without a valid but unfinished
// multi-byte character at its end.
func completeUpTo(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return len(p)
}

// errFormat is returned for a file that is not asciicast v2.
var errFormat = errors.New("cast: not an asciicast v2 file")
