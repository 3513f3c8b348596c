package choice_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/choice"
)

func offer(later string) *choice.Model {
	body := func(int, int) []string { return []string{"what now?"} }
	m := choice.New(modeltest.Theme(), "Question", body, later,
		choice.Option{Key: "o", Word: "overwrite", Value: "over"},
		choice.Option{Key: "d", Word: "discard", Value: "drop"})
	m.SetSize(80, 20)
	return m
}

// An option's key answers with its value; a stray key answers nothing.
func TestChoiceAnswers(t *testing.T) {
	t.Parallel()
	m := offer("later")
	modeltest.Press(m.Update, "x", "enter")
	_, done := m.Result()
	require.False(t, done, "a stray key answers nothing")
	modeltest.Press(m.Update, "d")
	res, done := m.Result()
	require.True(t, done)
	require.Equal(t, screen.Result{OK: true, Values: map[string]string{"choice": "drop"}}, res)
}

// esc is "not now" when the offer has one; a question without one waits
// for an option and does not offer esc.
func TestChoiceEsc(t *testing.T) {
	t.Parallel()
	later := offer("later")
	require.Equal(t, "o overwrite · d discard · esc later", later.Hint())
	modeltest.Press(later.Update, "esc")
	res, done := later.Result()
	require.True(t, done)
	require.False(t, res.OK)

	must := offer("")
	require.Equal(t, "o overwrite · d discard", must.Hint())
	require.NotContains(t, must.View(), "esc")
	modeltest.Press(must.Update, "esc")
	_, done = must.Result()
	require.False(t, done, "esc does not answer a question without a not now")
}
