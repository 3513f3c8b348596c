package cast

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// maxLine bounds one line of a file being played: an event written from a
// 32 KiB read is at most 6 × 32 KiB of JSON.
const maxLine = 4 << 20

// Resizer is what Play resizes: a terminal emulator, say.
type Resizer interface {
	Resize(cols, rows int)
}

// Play writes the output events of an asciicast v2 file into into, in
// order. When into is a Resizer it is sized from the header first and
// resized at each "r" event. Play returns the size the recording ended at.
func Play(r io.Reader, into io.Writer) (cols, rows int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	if !sc.Scan() {
		return 0, 0, firstErr(sc.Err(), errFormat)
	}
	var h Header
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Version != 2 {
		return 0, 0, errFormat
	}
	cols, rows = h.Width, h.Height
	resize(into, cols, rows)
	for line := 2; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := playEvent(sc.Bytes(), into, &cols, &rows); err != nil {
			return cols, rows, fmt.Errorf("cast: line %d: %w", line, err)
		}
	}
	return cols, rows, sc.Err()
}

func playEvent(line []byte, into io.Writer, cols, rows *int) error {
	var ev [3]any
	if err := json.Unmarshal(line, &ev); err != nil {
		return err
	}
	code, _ := ev[1].(string)
	data, ok := ev[2].(string)
	if !ok {
		return errFormat
	}
	switch code {
	case "o":
		_, err := io.WriteString(into, data)
		return err
	case "r":
		if _, err := fmt.Sscanf(data, "%dx%d", cols, rows); err != nil {
			return err
		}
		resize(into, *cols, *rows)
	}
	return nil
}

func resize(into io.Writer, cols, rows int) {
	if z, ok := into.(Resizer); ok && cols > 0 && rows > 0 {
		z.Resize(cols, rows)
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
