package typed_test

import (
	"os"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func setup(t *testing.T) *typed.Model {
	t.Helper()
	th := modeltest.Theme()
	m := typed.New(th, "Delete ws-alpha", "This deletes ws-alpha.", "ws-alpha")
	m.SetSize(100, 30)
	return m
}

func TestTyped(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		modeltest.Type(m.Update, "ws-alpha")
		require.Contains(t, m.View(), "> ws-alpha_")
		m.Update(modeltest.Key("enter"))
		r, done := m.Result()
		require.True(t, done)
		require.True(t, r.OK)
	})
	t.Run("MismatchStays", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		modeltest.Type(m.Update, "ws-alph")
		m.Update(modeltest.Key("enter"))
		_, done := m.Result()
		require.False(t, done)
		require.Contains(t, m.View(), "does not match")
		modeltest.Type(m.Update, "a")
		require.NotContains(t, m.View(), "does not match", "an edit clears the mismatch")
	})
	t.Run("QTypes", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		modeltest.Type(m.Update, "q")
		_, done := m.Result()
		require.False(t, done)
		require.Contains(t, m.View(), "> q_")
	})
	t.Run("EscCancels", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		m.Update(modeltest.Key("esc"))
		r, done := m.Result()
		require.True(t, done)
		require.False(t, r.OK)
	})
}
