package screen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// colored is n lines of seq-like output with SGR, as ls --color or a
// compiler prints them.
func colored(n int) []byte {
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, "%6d \x1b[1;3%dmitem\x1b[m \x1b[38;5;%dm%s\x1b[0m\x1b[K\r\n", i, i%8, i%256, bytes.Repeat([]byte("x"), i%90))
	}
	return b
}

// feedBoth writes data in random chunks into a Screen and into one whose
// emulator sees every byte, and fails when their renders differ.
func feedBoth(t *testing.T, data []byte, seed uint64) {
	t.Helper()
	fast, ref := New(80, 24, 100), newScreen(80, 24, 100, false)
	r := rand.New(rand.NewPCG(seed, 1))
	for len(data) > 0 {
		n := min(len(data), 1+r.IntN(5000))
		_, _ = fast.Write(data[:n])
		_, _ = ref.Write(data[:n])
		data = data[n:]
	}
	if got, want := fast.Render(), ref.Render(); !bytes.Equal(got, want) {
		t.Fatalf("renders differ:\nfast %q\n ref %q", tail(got), tail(want))
	}
	if fast.State() != ref.State() {
		t.Fatalf("states differ:\nfast %+v\n ref %+v", fast.State(), ref.State())
	}
}

func tail(b []byte) []byte { return b[max(0, len(b)-600):] }

func TestFeederEndsWhereTheEmulatorEnds(t *testing.T) {
	long := colored(3000)
	cases := map[string][]byte{
		"plain lines":          long,
		"pen left set":         append(append([]byte{}, long...), "\x1b[1;31mstill red"...),
		"pen set long ago":     append([]byte("\x1b[4;35m"), bytes.Repeat([]byte("u\r\n"), 2000)...),
		"cursor moves between": bytes.Join([][]byte{long[:len(long)/2], []byte("\x1b[5;5Hmoved\x1b]2;title\x07"), long[len(long)/2:]}, nil),
		"alternate screen":     bytes.Join([][]byte{long, []byte("\x1b[?1049h\x1b[2;2Halt"), long[:5000], []byte("\x1b[?1049l")}, nil),
		"scroll region":        bytes.Join([][]byte{[]byte("\x1b[5;10r"), long, []byte("\x1b[r")}, nil),
		"utf-8 and wide":       bytes.Repeat([]byte("日本語 é ü \xe2\x82\xac\r\n"), 1500),
		"bare line feeds":      bytes.Repeat([]byte("lf only\n"), 2000),
		"broken utf-8":         bytes.Repeat([]byte("a\xe2\r\nb\xc3(\r\n"), 1000),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(4) {
				feedBoth(t, data, seed)
			}
		})
	}
}

func TestFeederHoldsBoundedBytes(t *testing.T) {
	s := New(80, 24, 1000)
	line := bytes.Repeat([]byte("y"), 4000) // few line starts: nothing to drop
	for range 600 {
		_, _ = s.Write(append(line, '\r', '\n'))
		if n := len(s.feed.pend); n > maxPend+maxChunk {
			t.Fatalf("pend holds %d bytes", n)
		}
	}
	for range 20 {
		_, _ = s.Write(colored(5000))
		if n := len(s.feed.bnd); n > 2*s.feed.keep()+maxChunk {
			t.Fatalf("%d line starts held", n)
		}
	}
}

func TestPenOf(t *testing.T) {
	got := penOf([]byte("a\x1b[1mb\x1b[Kc\x1b[0;32md\x1b[4me"))
	if string(got) != "\x1b[0;32m\x1b[4m" {
		t.Fatalf("pen %q", got)
	}
}
