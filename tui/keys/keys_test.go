package keys_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/keys"
)

func TestDefaultsHaveNoConflict(t *testing.T) {
	t.Parallel()
	m, warnings, err := keys.New(nil)
	require.NoError(t, err)
	require.Empty(t, warnings)
	id, ok := m.Lookup(keys.ScopeWorkspaces, "D")
	require.True(t, ok)
	require.Equal(t, keys.WsDelete, id)
	id, _ = m.Lookup(keys.ScopeArtifacts, "delete")
	require.Equal(t, keys.ArtDelete, id)
}

func TestOverrides(t *testing.T) {
	t.Parallel()
	m, warnings, err := keys.New(map[string][]string{
		"ws_delete": {"X", "delete"},
		"no_such":   {"z"},
		"ws_new":    {"ctrl+bogus!"},
		"zoom":      {"Z"},
	})
	require.NoError(t, err)
	require.Len(t, warnings, 2)
	require.Contains(t, warnings[0], "no_such")
	require.Contains(t, warnings[1], "ws_new")
	id, ok := m.Lookup(keys.ScopeWorkspaces, "X")
	require.True(t, ok)
	require.Equal(t, keys.WsDelete, id)
	_, ok = m.Lookup(keys.ScopeWorkspaces, "D")
	require.False(t, ok, "replaced, not added")
	require.Equal(t, []string{"n"}, m.Action(keys.WsNew).Keys(), "unparsable keeps the default")
	id, _ = m.Lookup(keys.ScopeNav, "Z")
	require.Equal(t, keys.Zoom, id)
	require.Equal(t, "Z", m.Action(keys.Zoom).KeyList())
}

func TestConflicts(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string][]string{
		"GlobalAndScreen":   {"ws_new": {"q"}},
		"NavAndScreen":      {"missing_only": {"j"}},
		"SameScreen":        {"ws_edit": {"D"}},
		"SharedAndScreen":   {"shell": {"m"}},     // s-scope lists meets missing_only on artifacts
		"PreviewAndNav":     {"hit_next": {"j"}},  // a preview has the navigation keys
		"TransfersAndNav":   {"tr_cancel": {"g"}}, // so do the transfers
		"GlobalAndShared":   {"vol_save": {"t"}},  // t is global
		"PreviewAndGlobal":  {"wrap": {"r"}},
		"FilesAndNav":       {"files_save": {"h"}},       // h goes up in the files pane
		"FilesAndGlobal":    {"files_unpack": {"t"}},     // t is global
		"FilesInOnePane":    {"files_load": {"p"}},       // p previews there
		"SharedAndFiles":    {"files": {"n"}},            // f's replacement meets ws_new
		"FilesParentAndNav": {"files_parent": {"enter"}}, // enter opens
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := keys.New(o)
			var ce *keys.ConflictError
			require.ErrorAs(t, err, &ce)
		})
	}
	t.Run("OtherScreenIsFine", func(t *testing.T) {
		t.Parallel()
		_, _, err := keys.New(map[string][]string{"ws_new": {"m"}}) // m is missing_only on artifacts only
		require.NoError(t, err)
		_, _, err = keys.New(map[string][]string{"wrap": {"u"}}) // u is art_upload, never in a preview
		require.NoError(t, err)
		_, _, err = keys.New(map[string][]string{"files_unpack": {"m"}}) // m is missing_only, an artifacts key
		require.NoError(t, err)
	})
	t.Run("IndistinctKeysRefused", func(t *testing.T) {
		t.Parallel()
		for _, k := range []string{"ctrl+i", "ctrl+m", "ctrl+[", "ctrl+h"} {
			_, _, err := keys.New(map[string][]string{"zoom": {k}})
			require.Error(t, err, k)
		}
	})
}

func TestContextStates(t *testing.T) {
	t.Parallel()
	m, _, err := keys.New(nil)
	require.NoError(t, err)
	ctx := keys.Context{Bindings: m.Enabled(keys.ScopeWorkspaces)}
	ctx.Disable(keys.WsProvision, "ws-alpha already has a volume")
	st, ok := ctx.Find(keys.WsProvision)
	require.True(t, ok)
	require.False(t, st.Enabled)
	require.Equal(t, "ws-alpha already has a volume", st.Reason)
	ctx.ReadOnly()
	for _, b := range ctx.Bindings {
		require.True(t, b.Hidden && !b.Enabled, b.ID)
	}
}

func TestBindings(t *testing.T) {
	t.Parallel()
	m, _, err := keys.New(map[string][]string{"ws_delete": {"X", "delete"}})
	require.NoError(t, err)
	t.Run("OverrideMatches", func(t *testing.T) {
		t.Parallel()
		b := m.Binding(keys.WsDelete)
		require.True(t, key.Matches(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("X")}, b))
		require.True(t, key.Matches(tea.KeyMsg{Type: tea.KeyDelete}, b))
		require.False(t, key.Matches(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("D")}, b), "replaced, not added")
		require.Equal(t, key.Help{Key: "X", Desc: "delete"}, b.Help())
	})
	t.Run("SpaceShowsByName", func(t *testing.T) {
		t.Parallel()
		b := m.Binding(keys.Mark)
		require.True(t, key.Matches(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")}, b))
		require.Equal(t, "space", b.Help().Key)
	})
	t.Run("StateDisablesAndRelabels", func(t *testing.T) {
		t.Parallel()
		ctx := keys.Context{Bindings: m.Enabled(keys.ScopeNav)}
		ctx.Disable(keys.Down, "nothing below")
		st, _ := ctx.Find(keys.Down)
		require.False(t, st.Binding().Enabled())
		require.False(t, key.Matches(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")}, st.Binding()))
		st, _ = ctx.Find(keys.Filter)
		st.Short = "search"
		require.True(t, st.Binding().Enabled())
		require.Equal(t, key.Help{Key: "/", Desc: "search"}, st.Binding().Help())
		require.Equal(t, "filter", m.Binding(keys.Filter).Help().Desc, "the registry's own binding is untouched")
	})
	t.Run("HiddenIsDisabled", func(t *testing.T) {
		t.Parallel()
		ctx := keys.Context{Bindings: m.Enabled(keys.ScopeWorkspaces)}
		ctx.ReadOnly()
		for _, b := range ctx.ShortHelp() {
			require.False(t, b.Enabled(), b.Help())
		}
	})
}

// TestCheatSheetCurrent fails when the key table of docs/tui.md drifts
// from the registry; run `go generate ./tui/keys`.
func TestCheatSheetCurrent(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", keys.DocPath))
	require.NoError(t, err)
	table, err := keys.Between(string(b))
	require.NoError(t, err)
	require.Equal(t, keys.Markdown(), table, "run go generate ./tui/keys")
}

func TestSpliceReplacesOnlyBetweenTheMarkers(t *testing.T) {
	t.Parallel()
	doc := "# Title\n\nprose\n" + keys.BeginMarker + "\nold table\n" + keys.EndMarker + "\nmore prose\n"
	out, err := keys.Splice(doc, "new\ntable\n")
	require.NoError(t, err)
	require.Equal(t, "# Title\n\nprose\n"+keys.BeginMarker+"\nnew\ntable\n"+keys.EndMarker+"\nmore prose\n", out)
	table, err := keys.Between(out)
	require.NoError(t, err)
	require.Equal(t, "new\ntable\n", table)

	for name, bad := range map[string]string{
		"NoBegin":      "prose\n" + keys.EndMarker + "\n",
		"NoEnd":        keys.BeginMarker + "\ntable\n",
		"EndFirst":     keys.EndMarker + "\n" + keys.BeginMarker + "\n",
		"TwoBegins":    keys.BeginMarker + "\n" + keys.BeginMarker + "\n" + keys.EndMarker + "\n",
		"TwoEnds":      keys.BeginMarker + "\n" + keys.EndMarker + "\n" + keys.EndMarker + "\n",
		"NotOwnLine":   "see " + keys.BeginMarker + "\ntable\n" + keys.EndMarker + "\n",
		"NoNewlineEnd": keys.BeginMarker + "\ntable\n" + keys.EndMarker,
	} {
		_, err := keys.Splice(bad, "x\n")
		require.Error(t, err, name)
	}
}
