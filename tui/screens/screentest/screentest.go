// Package screentest builds a screen's deps.Deps for tests, without the
// root model: a real store, a fixed clock, the default keys and config,
// and the plain unicode theme (modeltest.Theme). Set lipgloss's colour
// profile to Ascii in the test's TestMain for views without SGR.
package screentest

import (
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/transfer"
)

// Epoch is the time of every Data.
var Epoch = time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)

// Hostile is untrusted text that reaches for the terminal: ESC opening an
// SGR sequence, BEL, a raw C1 byte (CSI) and U+202E (right-to-left
// override).
const Hostile = "a\x1b[31mb\x07c\x9bd\u202ee"

// HostileShown is Hostile as a screen must show it, every control a
// visible escape (termkit.Sanitize).
const HostileShown = `a^[[31mb^Gc\x9bd\u202ee`

// Raw is each control of Hostile as it is encoded; none may reach a view.
var Raw = []string{"\x1b", "\x07", "\x9b", "\u202e"}

// Data is what screens read, over a real store at Epoch: nothing is
// pending, listing or blocked, and no head has been read.
type Data struct {
	St    *store.Store
	Xfers []*transfer.Transfer
}

var _ deps.Data = (*Data)(nil)

func (d *Data) Store() deps.Store                       { return d.St }
func (d *Data) Pending(string) string                   { return "" }
func (d *Data) Now() time.Time                          { return Epoch }
func (d *Data) Frame() int                              { return 0 }
func (d *Data) List(store.Scope) deps.ListStatus        { return deps.ListStatus{} }
func (d *Data) Transfers() []*transfer.Transfer         { return d.Xfers }
func (d *Data) ShellBlocked() string                    { return "" }
func (d *Data) Head(string, time.Time) ([]string, bool) { return nil, false }

// New returns the Deps of a screen over an empty Data; its After
// schedules nothing.
func New(t testing.TB) (*deps.Deps, *Data) {
	t.Helper()
	km, _, err := keys.New(nil)
	require.NoError(t, err)
	cfg := config.Defaults()
	th := modeltest.Theme()
	d := &Data{St: store.New(1000)}
	after := func(time.Duration, func() tea.Msg) tea.Cmd { return nil }
	return &deps.Deps{Theme: th, Keys: km, Config: &cfg, Data: d, After: after}, d
}

// Main runs a screen package's tests without the theme's SGR: the Ascii
// colour profile, as the goldens use. Call it from TestMain.
func Main(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// Shown is one place untrusted text reaches (a row, a detail pane, the
// crumbs) and what it must show there.
type Shown struct {
	Name string
	Text string
	Want []string
}

// RequireAllShown runs RequireShown on each place as a parallel subtest:
// the sanitisation test every screen has.
func RequireAllShown(t *testing.T, places ...Shown) {
	t.Helper()
	for _, p := range places {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			RequireShown(t, p.Text, p.Want...)
		})
	}
}

// RequireShown fails unless view shows each of want and holds none of
// Raw.
func RequireShown(t testing.TB, view string, want ...string) {
	t.Helper()
	for _, w := range want {
		require.Contains(t, view, w)
	}
	for _, r := range Raw {
		require.NotContains(t, view, r, "a raw control reached the view")
	}
}

// SeedWorkspaces lists ws into the store, as a complete first list.
func (d *Data) SeedWorkspaces(ws ...*cairn.Workspace) {
	sc := store.Workspaces()
	gen := d.St.BeginList(sc)
	d.St.WorkspacePage(gen, ws, Epoch)
	d.St.FinishList(sc, gen)
}

// SeedArtifacts lists arts into the store as workspace wsID's complete
// set.
func (d *Data) SeedArtifacts(wsID string, arts ...*cairn.Artifact) {
	sc := store.Artifacts(wsID)
	gen := d.St.BeginList(sc)
	d.St.ArtifactPage(wsID, gen, arts, Epoch)
	d.St.FinishList(sc, gen)
}
