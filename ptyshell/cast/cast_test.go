package cast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func record(t *testing.T, maxBytes int64) (*Recorder, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	r, err := New(&buf, 80, 24, maxBytes, t0, map[string]string{"TERM": "xterm-256color", "SHELL": "/bin/sh", "TOKEN": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return r, &buf
}

func TestFormat(t *testing.T) {
	r, buf := record(t, 0)
	_ = r.Output(at(250), []byte("$ ls\r\n\x1b[1;34mdir\x1b[m <&>\r\n"))
	_ = r.Resize(at(1500), 100, 30)
	_ = r.Input(at(1600), []byte("hidden\r"))
	r.EnableInput()
	_ = r.Input(at(1700), []byte("exit\r"))
	want := `{"version":2,"width":80,"height":24,"timestamp":1772366400,"env":{"SHELL":"/bin/sh","TERM":"xterm-256color"}}
[0.250000, "o", "$ ls\r\n\u001b[1;34mdir\u001b[m <&>\r\n"]
[1.500000, "r", "100x30"]
[1.700000, "i", "exit\r"]
`
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf, want)
	}
}

func TestUTF8SplitAcrossWrites(t *testing.T) {
	r, buf := record(t, 0)
	text := []byte("日本語 é €")
	for i := range text { // one byte an Output: every character is cut
		_ = r.Output(at(i), text[i:i+1])
	}
	_ = r.Close(at(100))
	if got := outputOf(t, buf); got != string(text) {
		t.Fatalf("played %q, want %q", got, text)
	}
}

func TestInvalidUTF8StaysJSON(t *testing.T) {
	r, buf := record(t, 0)
	_ = r.Output(at(1), []byte("a\xff\xfeb\xe2\x82"))
	_ = r.Close(at(2))
	if got := outputOf(t, buf); got != "a\ufffd\ufffdb\ufffd\ufffd" { // one U+FFFD a byte, as encoding/json writes it
		t.Fatalf("played %q", got)
	}
}

func TestBound(t *testing.T) {
	const limit = 2000
	r, buf := record(t, limit)
	for i := range 100 {
		if err := r.Output(at(i), []byte(strings.Repeat("x", 50)+"\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	if !r.Truncated() {
		t.Fatal("not truncated")
	}
	if buf.Len() > limit || int64(buf.Len()) != r.Size() {
		t.Fatalf("file %d bytes, Size %d, limit %d", buf.Len(), r.Size(), limit)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"m", "recording truncated at `) {
		t.Fatalf("last line %s", last)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("invalid JSON line %s", l)
		}
	}
}

func TestHeaderMustFit(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, 80, 24, 50, t0, nil); err == nil {
		t.Fatal("a bound smaller than the header was accepted")
	}
}

type sizedBuffer struct {
	bytes.Buffer
	sizes []string
}

func (s *sizedBuffer) Resize(c, r int) {
	s.sizes = append(s.sizes, fmt.Sprintf("%dx%d", c, r))
}

func TestPlayResizes(t *testing.T) {
	r, buf := record(t, 0)
	_ = r.Output(at(1), []byte("a"))
	_ = r.Resize(at(2), 120, 40)
	_ = r.Output(at(3), []byte("b"))
	var into sizedBuffer
	cols, rows, err := Play(buf, &into)
	if err != nil || cols != 120 || rows != 40 {
		t.Fatalf("Play: %d %d %v", cols, rows, err)
	}
	if into.String() != "ab" || strings.Join(into.sizes, " ") != "80x24 120x40" {
		t.Fatalf("played %q, sizes %v", into.String(), into.sizes)
	}
}

func TestPlayRejectsOtherFiles(t *testing.T) {
	if _, _, err := Play(strings.NewReader(`{"version":1}`+"\n"), &bytes.Buffer{}); err == nil {
		t.Fatal("version 1 accepted")
	}
}

func outputOf(t *testing.T, buf *bytes.Buffer) string {
	t.Helper()
	var out bytes.Buffer
	if _, _, err := Play(bytes.NewReader(buf.Bytes()), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
