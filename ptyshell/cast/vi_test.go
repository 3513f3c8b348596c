package cast

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/screen"
	"github.com/creack/pty"
)

// TestRecordingOfViEndsOnItsLastScreen records a real vi session (typing,
// a resize, more typing), plays the file into a fresh Screen and compares
// it with the Screen that was fed live.
func TestRecordingOfViEndsOnItsLastScreen(t *testing.T) {
	if _, err := exec.LookPath("vi"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("vi is required under CI=true: %v", err)
		}
		t.Skipf("vi is not installed (set CI=true to fail instead): %v", err)
	}
	var file bytes.Buffer
	clock := t0
	tick := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	rec, err := New(&file, 80, 24, 0, t0, map[string]string{"TERM": "xterm-256color"})
	if err != nil {
		t.Fatal(err)
	}
	live := screen.New(80, 24, 1000)
	var mu sync.Mutex
	cmd := exec.Command("vi", "-u", "NONE", "-N", "-i", "NONE", "notes.txt")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"TERM=xterm-256color", "HOME=" + cmd.Dir, "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			_, _ = live.Write(buf[:n])
			_ = rec.Output(tick(), buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = ptmx.Close(); <-done; _ = cmd.Wait() })
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !ok(live.State().Text) {
			if time.Now().After(deadline) {
				t.Fatalf("waited for %s; screen:\n%s", what, live.State().Text)
			}
			time.Sleep(20 * time.Millisecond) // polling interval
		}
	}
	waitText := func(s string) {
		t.Helper()
		waitFor(s, func(text string) bool { return strings.Contains(text, s) })
	}
	waitText("notes.txt")
	_, _ = ptmx.WriteString("iline one, 日本語\rline two")
	waitText("line two")
	mu.Lock()
	live.Resize(100, 30)
	_ = rec.Resize(tick(), 100, 30)
	_ = pty.Setsize(ptmx, &pty.Winsize{Cols: 100, Rows: 30})
	mu.Unlock()
	// vi redraws at the new size before it reads keys again (typed
	// earlier, they can be taken for a terminal's answer).
	waitFor("the redraw at 30 rows", func(text string) bool {
		lines := strings.Split(text, "\n")
		return len(lines) == 30 && strings.Contains(lines[29], "-- INSERT --")
	})
	_, _ = ptmx.WriteString("\rafter the resize")
	waitText("after the resize")
	mu.Lock()
	_ = rec.Close(tick())
	want, wantRender := live.State(), live.Render()
	recorded := bytes.Clone(file.Bytes())
	mu.Unlock()

	played := screen.New(1, 1, 1000)
	cols, rows, err := Play(bytes.NewReader(recorded), played)
	if err != nil || cols != 100 || rows != 30 {
		t.Fatalf("Play: %dx%d %v", cols, rows, err)
	}
	if got := played.State(); got != want {
		t.Fatalf("played screen differs:\n--- played\n%s\n%+v\n--- live\n%s\n%+v", got.Text, got, want.Text, want)
	}
	if !bytes.Equal(played.Render(), wantRender) {
		t.Fatal("played screen renders differently from the live one")
	}
}
