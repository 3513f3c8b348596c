package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screens/artifacts"
	"github.com/cairn-dev/cairn/tui/tuitest"
	"github.com/cairn-dev/cairn/tui/widgets/footer"
)

func TestEscOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openArtifacts(t, h, cairn.ArtifactRecorded, cairn.ArtifactRecorded)
	h.key("/").typeText("report_1").key("enter")
	require.Contains(t, h.header(), "/report_1 1 of 2")
	require.Nil(t, h.m.notes.ErrorFor(&cairn.Error{Reason: cairn.ReasonInternal, Status: 500}, commonSubject()), "errors never expire")
	h.key("?")
	require.NotNil(t, h.m.modal)

	h.key("esc") // 1. the modal
	require.Nil(t, h.m.modal)
	require.Contains(t, h.statusLine(), "✕ error:")
	h.key("esc") // 2. the error toast
	require.Empty(t, h.statusLine())
	require.Contains(t, h.header(), "/report_1")
	h.key("esc") // 3. the filter
	require.NotContains(t, h.header(), "/report_1")
	require.Equal(t, 2, h.m.stack.Depth())
	h.key("esc") // 4. the screen
	require.Equal(t, 1, h.m.stack.Depth())
}

func TestQuitAndBack(t *testing.T) {
	t.Parallel()
	t.Run("QNeverQuitsFromAnInput", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.key("/", "q")
		require.False(t, h.quit)
		require.Contains(t, h.header(), "/q 0 of 1")
	})
	t.Run("QPopsThenQuits", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		openArtifacts(t, h)
		h.key("q")
		require.Equal(t, 1, h.m.stack.Depth())
		require.False(t, h.quit)
		h.key("q")
		require.True(t, h.quit)
	})
	t.Run("CtrlCFirstClosesAModal", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.key("n", "ctrl+c")
		require.Nil(t, h.m.modal)
		require.False(t, h.quit)
		h.key("ctrl+c")
		require.True(t, h.quit)
	})
	t.Run("ConfirmQuit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *config.Config) { c.ConfirmQuit = true })
		h.seed()
		h.key("q")
		require.False(t, h.quit)
		require.Contains(t, h.view(), "Quit cairn-tui?")
		h.key("y")
		require.True(t, h.quit)
		require.Equal(t, tea.QuitMsg{}, h.m.filter(tea.QuitMsg{}), "a confirmed quit passes the filter")
	})
	t.Run("SignalQuitAsksWithConfirmQuit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *config.Config) { c.ConfirmQuit = true })
		require.Equal(t, quitRequestMsg{}, h.m.filter(tea.QuitMsg{}))
	})
	t.Run("BackNavAndJumps", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		openArtifacts(t, h)
		h.key("h")
		require.Equal(t, 1, h.m.stack.Depth())
		h.key("2")
		require.Equal(t, 2, h.m.stack.Depth())
		h.key("1")
		require.Equal(t, 1, h.m.stack.Depth())
	})
}

func TestFilterAndSort(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.b.World.AddWorkspace("zulu", cairn.VolumeNone, "Has the Report")
	h.b.World.AddWorkspace("alpha", cairn.VolumeNone, "")
	h.b.World.AddWorkspace("mike", cairn.VolumeNone, "")
	h.size(120, 40).hello()
	h.key("/").typeText("REPORT")
	require.Contains(t, h.header(), "/REPORT 1 of 3", "case-insensitive over name and description")
	require.Contains(t, h.view(), "zulu")
	require.NotContains(t, h.view(), "mike")
	h.key("enter", "j")
	require.Contains(t, h.header(), "/REPORT", "enter keeps the filter")
	h.key("esc")
	rows := tableNames(h)
	require.Equal(t, []string{"alpha", "mike", "zulu"}, rows, "by name")
	h.key("O")
	require.Equal(t, []string{"zulu", "mike", "alpha"}, tableNames(h), "reversed")
	h.key("O", "o", "o") // created
	require.Equal(t, []string{"zulu", "alpha", "mike"}, tableNames(h))
}

// tableNames reads the workspace names off the body, top to bottom.
func tableNames(h *harness) []string {
	var out []string
	for _, line := range strings.Split(h.view(), "\n")[2:] {
		f := strings.Fields(strings.TrimLeft(line, "▸• "))
		if len(f) > 1 && (f[1] == "○" || f[1] == "●") {
			out = append(out, f[0])
		}
	}
	return out
}

func TestMissingOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openArtifacts(t, h, cairn.ArtifactRecorded, cairn.ArtifactMissingObject, cairn.ArtifactRecorded)
	h.size(80, 20) // one pane: only rows name artifacts
	h.key("m")
	require.Contains(t, h.header(), "[missing]")
	require.Equal(t, 1, strings.Count(h.view(), "report_"))
	h.key("m")
	require.Equal(t, 3, strings.Count(h.view(), "report_"))
}

func TestMinimumSize(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-alpha")
	h.size(52, 14)
	require.Equal(t, "cairn-tui needs 60×16 — now 52×14", h.view())
	h.events(upserted(h.b.World.AddWorkspace("ws-beta", cairn.VolumeNone, "")))
	h.key("n")
	require.Nil(t, h.m.modal, "only quit works")
	h.size(120, 40)
	require.Contains(t, h.view(), "ws-beta", "data kept flowing")
	h.size(52, 14).key("q")
	require.True(t, h.quit)
}

func TestStartingBeforeTheFirstSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, "starting…", newHarness(t).view())
}

func TestSuspendResyncsOnResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha")
	_, cmd := h.m.Update(modeltest.Key("ctrl+z"))
	require.NotNil(t, cmd)
	h.b.World.UpdateWorkspace(ws[0].ID, func(w *cairn.Workspace) { w.Name = "while-away" })
	h.send(tea.ResumeMsg{})
	require.Contains(t, h.view(), "while-away")
}

func TestKeyConflictRefusesToStart(t *testing.T) {
	t.Parallel()
	cfg := tuitest.Config()
	cfg.Keys = map[string][]string{"ws_new": {"j"}}
	_, err := New(Options{Config: cfg, Backend: tuitest.NewBackend(t, tuitest.NewClock(tuitest.Epoch()))})
	require.ErrorContains(t, err, `key "j" is bound to both`)
}

func TestRemappedKeyWorks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Keys = map[string][]string{"ws_delete": {"X"}} })
	h.seed("ws-alpha")
	h.key("D")
	require.Nil(t, h.m.modal)
	h.key("X")
	require.NotNil(t, h.m.modal)
	require.Contains(t, hintLineOf(h), "X delete")
}

func hintLineOf(h *harness) string {
	h.key("esc")
	return hintLine(h)
}

// TestHintCounts pins how many hints each screen shows at 120 columns, as
// k9s pins its menus.
func TestHintCounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openArtifacts(t, h, cairn.ArtifactRecorded)
	art := h.m.stack.Top().(*artifacts.Screen)
	require.Len(t, footer.Shown(h.m.c.Theme, append(art.Keys().Bindings, h.m.globalKeys()...), 120), 11)
	require.Equal(t, "enter preview · h back · / filter · e edit · D delete · m missing · u upload · U replace · d download · ? help · q quit", strings.TrimSpace(hintLine(h)))
	h.key("esc")
	require.Equal(t, "enter open · / filter · y copy · n new · e edit · v provision · D delete · r refresh · t transfers · ? help · q quit", strings.TrimSpace(hintLine(h)))
	h.size(60, 16)
	require.Equal(t, "enter open · / filter · n new · e edit · ? help · q quit", strings.TrimSpace(hintLine(h)))
}

func TestHelpListsDisabledWithReason(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-alpha")
	h.key("?")
	v := h.view()
	require.Contains(t, v, "Global")
	helpTo(h, "This screen (workspaces)")
	helpTo(h, "tear down the volume — ws-alpha has no volume — v provisions one")
	h.key("G")
	require.Contains(t, h.view(), ":ctx NAME", "the palette's commands too")
	h.key("q")
	require.Nil(t, h.m.modal, "q closes help")
	require.False(t, h.quit)
}

// helpTo scrolls the open help down until text shows, failing if it never
// does.
func helpTo(h *harness, text string) {
	h.t.Helper()
	for range 100 {
		if strings.Contains(h.view(), text) {
			return
		}
		h.key("j")
	}
	require.Contains(h.t, h.view(), text)
}

func TestMessagesLog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-alpha")
	h.key("y")
	h.m.notes.ErrorFor(&cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 502, RequestID: "req-9"}, commonSubject())
	h.key("!")
	v := h.view()
	require.Contains(t, v, "Messages")
	require.Contains(t, v, "✓ copied name ws-alpha")
	require.Contains(t, v, "(request ID req-9)")
}

func TestConfigWarningsAreOneToast(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) {
		c.Warnings = []string{"file: unknown key tui.colour ignored", "tui.keys.no_such: unknown action; ignored"}
	})
	h.size(120, 40)
	require.Equal(t, "! warning: 2 configuration warnings — ! lists them", h.statusLine())
	require.Len(t, h.m.notes.Toasts().Log(), 3)
}
