package form_test

import (
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// nameField is the new-workspace form's name field as the root builds it:
// the domain's rule ([A-Za-z0-9_-], 1–128 characters) and a warning for a
// name a known row has.
func nameField(known ...string) form.Field {
	return form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength,
		Validate: func(v string) string {
			if err := cairn.ValidateName("workspace", v); err != nil {
				return cairn.ErrorDetail(err)
			}
			return ""
		},
		Warn: func(v string) string {
			for _, k := range known {
				if k == v {
					return "a workspace named " + v + " already exists"
				}
			}
			return ""
		},
	}
}

func setup(t *testing.T, fields ...form.Field) *form.Model {
	t.Helper()
	m := form.New(modeltest.Theme(), "New workspace", fields...)
	m.SetSize(100, 30)
	return m
}

func values(t *testing.T, m *form.Model) screen.Result {
	t.Helper()
	modeltest.Press(m.Update, "enter")
	r, ok := m.Result()
	require.True(t, ok, "submitted")
	return r
}

func TestNamesCheckedAsTyped(t *testing.T) {
	t.Parallel()
	t.Run("ErrorWhileTyping", func(t *testing.T) {
		t.Parallel()
		m := setup(t, nameField())
		require.NotContains(t, m.View(), "must not be empty", "an untouched field shows no error")
		modeltest.Type(m.Update, "ws alpha")
		require.Contains(t, m.View(), "may only contain", "the space is outside the name set, before any enter")
		modeltest.Press(m.Update, "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
		require.NotContains(t, m.View(), "may only contain", "ws is a valid name")
		modeltest.Press(m.Update, "backspace", "backspace")
		require.Contains(t, m.View(), "must not be empty")
		modeltest.Press(m.Update, "backspace") // on the empty field: the error stays
		require.Contains(t, m.View(), "must not be empty")
	})
	t.Run("WarningWhileTyping", func(t *testing.T) {
		t.Parallel()
		m := setup(t, nameField("ws-alpha"))
		modeltest.Type(m.Update, "ws-alph")
		require.NotContains(t, m.View(), "already exists")
		modeltest.Type(m.Update, "a")
		require.Contains(t, m.View(), "a workspace named ws-alpha already exists")
		r := values(t, m)
		require.Equal(t, "ws-alpha", r.Values["name"], "a warning does not block")
	})
	t.Run("LimitIsRunes", func(t *testing.T) {
		t.Parallel()
		m := setup(t, nameField())
		modeltest.Type(m.Update, strings.Repeat("a", 130))
		require.Equal(t, strings.Repeat("a", 128), values(t, m).Values["name"])
	})
}

func TestEnterOnInvalidFormJumpsToField(t *testing.T) {
	t.Parallel()
	m := setup(t, nameField(), form.Field{Key: "description", Label: "Description"})
	modeltest.Press(m.Update, "tab")
	modeltest.Type(m.Update, "about")
	modeltest.Press(m.Update, "enter")
	_, ok := m.Result()
	require.False(t, ok, "an empty name does not submit")
	require.Contains(t, m.View(), "must not be empty", "every field's error shows after enter")
	modeltest.Type(m.Update, "ws") // the focus is back on the name
	require.NotContains(t, m.View(), "must not be empty")
	r := values(t, m)
	require.Equal(t, "ws", r.Values["name"])
	require.Equal(t, "about", r.Values["description"])
}

func TestExplicitModes(t *testing.T) {
	t.Parallel()
	t.Run("QTypes", func(t *testing.T) {
		t.Parallel()
		m := setup(t, form.Field{Key: "description", Label: "Description"})
		modeltest.Type(m.Update, "q?!/")
		_, done := m.Result()
		require.False(t, done)
		require.Equal(t, "q?!/", values(t, m).Values["description"])
	})
	t.Run("EscCancels", func(t *testing.T) {
		t.Parallel()
		m := setup(t, nameField())
		modeltest.Type(m.Update, "ws")
		modeltest.Press(m.Update, "esc")
		r, done := m.Result()
		require.True(t, done)
		require.False(t, r.OK)
	})
	t.Run("SpaceToggles", func(t *testing.T) {
		t.Parallel()
		m := setup(t, form.Field{Key: "name", Label: "Name"}, form.Field{Key: "provision", Label: "provision volume now", Check: true})
		modeltest.Type(m.Update, "a b")
		modeltest.Press(m.Update, "down", " ")
		require.Contains(t, m.View(), "[x] provision volume now")
		r := values(t, m)
		require.Equal(t, "a b", r.Values["name"], "a space in a text field is text")
		require.True(t, r.Checks["provision"])
	})
	t.Run("BusyTakesOnlyEsc", func(t *testing.T) {
		t.Parallel()
		m := setup(t, form.Field{Key: "name", Label: "Name"})
		m.Busy(0)
		modeltest.Type(m.Update, "x")
		require.Contains(t, m.View(), "⠋ saving…", "spinner frame 0")
		m.Fail("name", "already taken")
		require.Contains(t, m.View(), "already taken")
		modeltest.Type(m.Update, "y")
		require.NotContains(t, m.View(), "already taken", "an edit replaces the refusal")
		require.Equal(t, "y", values(t, m).Values["name"], "typed while busy was dropped")
	})
}

func TestCursorIsStatic(t *testing.T) {
	t.Parallel()
	m := setup(t, form.Field{Key: "name", Label: "Name"}, form.Field{Key: "description", Label: "Description"})
	require.Nil(t, modeltest.Type(m.Update, "ab"), "no blink Cmd: nothing animates when idle")
	require.Contains(t, m.View(), "> ab_", "without colour the cursor is an underscore")
	modeltest.Press(m.Update, "down")
	view := m.View()
	require.Contains(t, view, "> ab ", "a field without focus has no cursor")
	require.Contains(t, view, "> _")
}

func TestDeriveFollowsUntilEdited(t *testing.T) {
	t.Parallel()
	m := setup(t,
		form.Field{Key: "path", Label: "Local file"},
		form.Field{Key: "name", Label: "Name", From: "path", Derive: func(p string) string {
			return strings.ReplaceAll(p[strings.LastIndex(p, "/")+1:], ".", "_")
		}})
	modeltest.Type(m.Update, "/tmp/report.csv")
	require.Equal(t, "report_csv", values(t, m).Values["name"])
	modeltest.Press(m.Update, "down", "backspace", "backspace", "backspace")
	modeltest.Press(m.Update, "shift+tab")
	modeltest.Type(m.Update, "x")
	require.Equal(t, "report_", values(t, m).Values["name"], "edited: the path no longer drives it")
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	asked := ""
	m := setup(t, form.Field{Key: "path", Label: "Local file", Complete: func(v string) tea.Cmd {
		asked = v
		return func() tea.Msg { return nil }
	}}, form.Field{Key: "name", Label: "Name"})
	modeltest.Type(m.Update, "~/re")
	_, cmd := m.Update(modeltest.Key("tab"))
	require.NotNil(t, cmd, "tab asks for the completion")
	require.Equal(t, "~/re", asked)
	m.Update(form.CompletedMsg{Key: "path", From: "~/re", Value: "~/report", Candidates: []string{"report.csv", "report.txt", "reports/"}})
	require.Contains(t, m.View(), "report.csv  report.txt  reports/", "candidates under the field")
	modeltest.Type(m.Update, ".t") // the cursor is at the end of the completed text
	require.NotContains(t, m.View(), "reports/", "an edit drops the candidates")
	m.Update(form.CompletedMsg{Key: "path", From: "~/re", Value: "~/stale"})
	require.Equal(t, "~/report.t", values(t, m).Values["path"], "a completion of an older value is dropped")
}

func TestDeriveFromSeveralFields(t *testing.T) {
	t.Parallel()
	join := func(value func(string) string) string { return value("path") + "+" + value("format") }
	m := setup(t,
		form.Field{Key: "path", Label: "Path"},
		form.Field{Key: "format", Label: "Format"},
		form.Field{Key: "name", Label: "Name", Sources: []string{"path", "format"}, DeriveFrom: join})
	modeltest.Type(m.Update, "out")
	require.Equal(t, "out+", values(t, m).Values["name"])
	modeltest.Press(m.Update, "down")
	modeltest.Type(m.Update, "zip")
	require.Equal(t, "out+zip", values(t, m).Values["name"], "an edit of either source derives it again")
	modeltest.Press(m.Update, "down", "backspace")
	modeltest.Press(m.Update, "up", "up")
	modeltest.Type(m.Update, "2")
	require.Equal(t, "out+zi", values(t, m).Values["name"], "edited: its sources no longer drive it")
}

func TestBusyLineStaysInView(t *testing.T) {
	t.Parallel()
	fields := []form.Field{{Key: "a", Label: "A"}, {Key: "b", Label: "B"}, {Key: "c", Label: "C"}}
	tall := setup(t, fields...)
	tall.Busy(0)
	lines := strings.Split(tall.View(), "\n")
	require.Contains(t, lines[len(lines)-2], "⠋ saving…", "under the fields when the box fits")
	short := form.New(modeltest.Theme(), "New workspace", fields...)
	short.SetSize(100, 12)
	short.Busy(0)
	lines = strings.Split(short.View(), "\n")
	require.Contains(t, lines[3], "⠋ saving…", "right under the title when the box would be cut")
}
