package footer_test

import (
	"os"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/footer"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// setup is the artifacts hints in the order the root hands them over:
// the screen's, then the globals with help and quit last.
func setup(t *testing.T) (*theme.Theme, keys.Context) {
	t.Helper()
	km, _, err := keys.New(nil)
	require.NoError(t, err)
	var last []keys.State
	ctx := keys.Context{Bindings: km.Enabled(keys.ScopeTransfers)}
	for _, b := range km.Enabled(keys.ScopeGlobal) {
		if b.ID == keys.Help || b.ID == keys.QuitOrBack {
			last = append(last, b)
			continue
		}
		ctx.Bindings = append(ctx.Bindings, b)
	}
	ctx.Bindings = append(ctx.Bindings, last...)
	return theme.New("dark", theme.Unicode()), ctx
}

func TestView(t *testing.T) {
	t.Parallel()
	t.Run("AllFit", func(t *testing.T) {
		t.Parallel()
		th, ctx := setup(t)
		require.Equal(t, "x cancel · c clear · r refresh · t transfers · : command · ? help · q quit", footer.View(th, ctx.Bindings, 120))
	})
	t.Run("LowestPriorityDropsFirst", func(t *testing.T) {
		t.Parallel()
		th, ctx := setup(t)
		// refresh (20) goes, then transfers (25), then clear (50).
		require.Equal(t, "x cancel · c clear · t transfers · ? help · q quit", footer.View(th, ctx.Bindings, 55))
		require.Equal(t, "x cancel · c clear · ? help · q quit", footer.View(th, ctx.Bindings, 40))
		require.Equal(t, "x cancel · ? help · q quit", footer.View(th, ctx.Bindings, 30))
	})
	t.Run("HelpAlwaysKept", func(t *testing.T) {
		t.Parallel()
		th, ctx := setup(t)
		require.Equal(t, "? help", footer.View(th, ctx.Bindings, 8), "quit has a lower priority than help")
	})
	t.Run("DisabledAndHiddenOmitted", func(t *testing.T) {
		t.Parallel()
		th, ctx := setup(t)
		ctx.Disable(keys.TrCancel, "the transfer is done")
		for i := range ctx.Bindings {
			if ctx.Bindings[i].ID == keys.Refresh {
				ctx.Bindings[i].Hidden = true
			}
		}
		require.Equal(t, "c clear · t transfers · : command · ? help · q quit", footer.View(th, ctx.Bindings, 120))
	})
	t.Run("RemappedKeyShows", func(t *testing.T) {
		t.Parallel()
		km, _, err := keys.New(map[string][]string{"help": {"f1", "?"}})
		require.NoError(t, err)
		th := theme.New("dark", theme.ASCII())
		require.Equal(t, "f1 help | q quit", footer.View(th, []keys.State{
			{Action: km.Action(keys.Help), Enabled: true}, {Action: km.Action(keys.QuitOrBack), Enabled: true},
		}, 80))
	})
}
