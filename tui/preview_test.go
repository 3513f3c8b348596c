package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/screens/preview"
)

// openPreviewOf opens the preview of report_csv holding content.
func openPreviewOf(t *testing.T, h *harness, content string, mime string) *cairn.Artifact {
	t.Helper()
	_, report, _ := readyArtifacts(t, h)
	h.b.World.SetContent(report.ID, []byte(content))
	if mime != "" {
		h.b.World.UpdateArtifact(report.ID, func(a *cairn.Artifact) { a.MIMEType = mime })
		h.key("r")
	}
	cursorOn(t, h, "report_csv")
	h.key("enter")
	_, ok := h.m.stack.Top().(*preview.Screen)
	require.True(t, ok, "enter on an artifact previews it")
	return report
}

func TestPreviewText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openPreviewOf(t, h, "id,name\n1,alpha\n2,beta\n", "")
	v := h.view()
	require.Contains(t, h.header(), "cairn ▸ ws-alpha ▸ artifacts (2 · 1 missing) ▸ report_csv ▸ preview")
	require.Contains(t, v, "  1,alpha")
	require.NotContains(t, v, "first ", "no banner when everything was read")
	h.key("esc")
	_, ok := h.m.stack.Top().(*preview.Screen)
	require.False(t, ok, "esc goes back")
}

func TestPreviewTruncated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.PreviewMaxBytes = 8 })
	var asked int64
	h.b.ReadHeadFunc = func(ctx context.Context, id string, n int64) ([]byte, int64, error) {
		asked = n
		return []byte("id,name\n1,alpha\n")[:n], 16, nil
	}
	openPreviewOf(t, h, "", "")
	require.Equal(t, int64(8), asked, "only preview.max_bytes are fetched")
	require.Contains(t, h.view(), "first 8 B of 16 B — d downloads all")
}

func TestPreviewBinaryCard(t *testing.T) {
	t.Parallel()
	t.Run("ByContent", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		openPreviewOf(t, h, "PK\x03\x04\x00\x00binary", "")
		v := h.view()
		require.Contains(t, v, "its first bytes are not UTF-8 text — d to download")
		require.Contains(t, v, "00000000  50 4b 03 04 00 00 62 69  6e 61 72 79")
		require.Contains(t, v, "|PK....binary|")
	})
	t.Run("ByType", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		var asked int64
		h.b.ReadHeadFunc = func(ctx context.Context, id string, n int64) ([]byte, int64, error) {
			asked = n
			return []byte("plain words"), 11, nil
		}
		openPreviewOf(t, h, "", "application/octet-stream")
		require.Equal(t, int64(preview.CardBytes), asked, "a card needs 256 bytes only")
		require.Contains(t, h.view(), "its type application/octet-stream is not shown as text")
	})
}

func TestPreviewEscapesControls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openPreviewOf(t, h, "safe \x1b]52;c;cm0gLXJm\x07 \x1b[2J\u009b\u202eevil\r\n", "")
	v := h.view()
	require.NotContains(t, v, "\x1b", "nothing from the content reaches the terminal as a sequence")
	require.NotContains(t, v, "\u009b")
	require.NotContains(t, v, "\u202e")
	require.Contains(t, v, `safe ^[]52;c;cm0gLXJm^G ^[[2J\x9b\u202eevil`)
}

func TestPreviewSearchAndWrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("w", 200)
	openPreviewOf(t, h, "alpha\nbeta\n"+long+"\nALPHA again\n", "")
	h.key("/").typeText("alpha")
	require.True(t, h.m.stack.Top().Capturing())
	require.Contains(t, h.header(), "preview /alpha 2 hits")
	h.key("q")
	require.False(t, h.quit, "q types into the search")
	h.key("backspace", "enter")
	require.False(t, h.m.stack.Top().Capturing())
	require.Contains(t, h.view(), "» alpha")
	require.Contains(t, h.view(), "» ALPHA again")
	require.Contains(t, h.view(), "hit 1 of 2")
	h.key("n")
	require.Contains(t, h.view(), "hit 2 of 2")
	h.key("N")
	require.Contains(t, h.view(), "hit 1 of 2")
	require.Contains(t, h.view(), strings.Repeat("w", 118), "wrapped at the width")
	h.key("w")
	require.Contains(t, h.view(), strings.Repeat("w", 117)+"…", "cut without wrap")
	h.key("esc")
	require.NotContains(t, h.header(), "/alpha", "esc clears the search first")
	_, ok := h.m.stack.Top().(*preview.Screen)
	require.True(t, ok)
}

func TestPreviewStaleReplyDropped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := openPreviewOf(t, h, "current", "")
	p := h.m.stack.Top().(*preview.Screen)
	h.send(preview.Msg{ArtifactID: a.ID, UpdatedAt: p.Artifact().UpdatedAt, Req: -1, Data: []byte("stale bytes"), Total: 11})
	require.Contains(t, h.view(), "current")
	require.NotContains(t, h.view(), "stale bytes")
}

func TestPreviewRefusesMissing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	cursorOn(t, h, "model_bin")
	h.key("enter")
	_, ok := h.m.stack.Top().(*preview.Screen)
	require.False(t, ok)
	require.Equal(t, "i no object to preview — U to replace", h.statusLine())
}

func TestPreviewDownloadKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openPreviewOf(t, h, "x", "")
	h.key("d")
	require.Contains(t, h.view(), "Download report_csv")
}

// restTimers fires the artifacts screen's 300 ms cursor-rest timers.
func restTimers(h *harness) int { return h.fire(named("artifacts.headRestMsg")) }

// TestDetailShowsTheFirstLines: after the cursor rests on a small text
// artifact, the detail pane shows its first lines, escaped, read once per
// content; MISSING, binary or large ones read nothing.
func TestDetailShowsTheFirstLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
	big := h.b.World.AddArtifact(w.ID, "big_log", cairn.ArtifactRecorded, 64<<10, "")
	h.b.World.AddArtifact(w.ID, "gone_txt", cairn.ArtifactMissingObject, 10, "")
	notes := h.b.World.AddArtifact(w.ID, "notes_md", cairn.ArtifactRecorded, 30, "")
	reads := map[string]int{}
	h.b.ReadHeadFunc = func(_ context.Context, id string, n int64) ([]byte, int64, error) {
		reads[id]++
		require.Equal(t, int64(16<<10), n, "at most preview.inline_max_bytes")
		return []byte("# plan\n\x1b[31mred\x1b[0m\nthird\n"), 30, nil
	}
	h.size(160, 50).hello()
	h.key("enter")

	cursorOn(t, h, "big_log")
	require.Zero(t, restTimers(h), "64 KiB is past preview.inline_max_bytes")
	cursorOn(t, h, "gone_txt")
	require.Zero(t, restTimers(h), "MISSING has no content")
	cursorOn(t, h, "notes_md")
	require.NotContains(t, h.view(), "# plan", "nothing is read before the cursor rests")
	require.Equal(t, 1, restTimers(h))
	v := h.view()
	require.Contains(t, v, "# plan")
	require.Contains(t, v, "^[[31mred^[[0m", "escapes show, never reach the terminal")
	require.Equal(t, 1, reads[notes.ID])

	h.key("k").key("j")
	restTimers(h)
	require.Equal(t, 1, reads[notes.ID], "cached by (ID, updated_at)")
	require.Zero(t, reads[big.ID])
}

// TestDetailReadsOnOpeningACachedSet: opening a workspace whose artifacts
// are cached (no list, so no data message) still starts the rest on the
// row the cursor opens on — found in a real terminal, where the detail
// said "reading…" until a key moved nothing; a failed read says so once.
func TestDetailReadsOnOpeningACachedSet(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
	h.b.World.AddArtifact(w.ID, "notes_md", cairn.ArtifactRecorded, 30, "")
	fail, reads := true, 0
	h.b.ReadHeadFunc = func(context.Context, string, int64) ([]byte, int64, error) {
		reads++
		if fail {
			return nil, 0, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 503}
		}
		return []byte("# plan\n"), 7, nil
	}
	h.size(160, 50).hello()
	h.key("enter")
	require.Equal(t, 1, restTimers(h))
	require.Equal(t, 1, reads)
	require.Contains(t, h.view(), "(could not read it — p previews and says why)")
	h.key("esc")
	require.True(t, h.m.Store().Cached(w.ID))

	fail = false
	h.key("enter") // the set is cached: no list, no data message
	require.Equal(t, 1, restTimers(h), "the rest starts on opening")
	require.Equal(t, 1, reads, "the failed read is kept for this content, not retried on every rest")
}
